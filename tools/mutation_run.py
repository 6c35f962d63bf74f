"""Mutation run of `cutile-transpile verify` over the corpus: mutants of the generated entries, verified in
batched rounds; prints the figures and every survivor with its change.

    python3 tools/mutation_run.py [--seed 20261201] [--per-op 2] [--kernels all|N|name,name]
                                  [--no-hand] [--dtypes f16,bf16,f32] [--results run.jsonl] [--out DIR]

Mutants (transpiler/verify/mutants.py): up to --per-op mechanical mutants per (kernel, operator), drawn
with the seed (operators with few, important sites such as deleted stores get more), every class
(value, hint, memsem: must be killed; equiv: equivalent by construction), plus the hand mutants. A mutant
is killed (`different`), rejected (rustc or cuTile Rust refuses the Rust), allowed (equivalent and in
rules/equivalent_mutants.toml), equivalent by construction (class equiv), or it survived. Kill rate =
(killed + rejected) / mutants of the must-kill classes.

--results FILE appends one JSON line per verified mutant and skips the mutants already in it, so an
interrupted run resumes where it stopped (same seed and options). --out verifies a copy of an existing
output directory instead of the corpus translated afresh. Exit code 1 when a mutant survived.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transpiler.verify import mutants as M  # noqa: E402


def translate_corpus(base: Path) -> Path:
    from transpiler.pipeline import run, write_outputs
    src = base / "corpus"
    shutil.copytree(ROOT / "corpus", src)
    out = base / "rust"
    result, outputs = run([src], out)
    bad = [k.name for k in result.kernels if k.status != "translated"]
    if bad:
        raise SystemExit(f"corpus kernels not translated: {bad}")
    write_outputs(outputs)
    return out


def select(out: Path, args) -> list[M.Mutant]:
    names = [k["name"] for _, k in M.manifest_kernels(out)]
    if args.kernels == "all":
        kernels = names
    elif args.kernels.isdigit():
        import random
        kernels = sorted(random.Random(f"{args.seed}/kernels").sample(names, min(int(args.kernels), len(names))))
    else:
        kernels = [k for k in args.kernels.split(",") if k]
        unknown = sorted(set(kernels) - set(names))
        if unknown:
            raise SystemExit(f"unknown kernels: {', '.join(unknown)}")
    mutants = M.sample(M.generate(out, kernels), args.seed, args.per_op)
    if args.hand:
        hand, problems = M.hand_mutants(out)
        for p in problems:
            print(f"warning: {p}", file=sys.stderr)
        mutants = [m for m in hand if m.kernel in set(kernels)] + mutants
    return mutants


def report(results: list[M.Result], seconds: float, rounds: int, controls: dict[str, str]) -> int:
    f = M.figures(results)
    outcomes = ("killed", "rejected", "equivalent", "not_verified", "error")
    for key, label, order in ((lambda r: r.mutant.cls, "class", ("value", "hint", "memsem", "equiv")),
                              (lambda r: r.mutant.op, "operator", None)):
        groups: dict[str, Counter] = defaultdict(Counter)
        for r in results:
            groups[key(r)][r.outcome] += 1
        print(f"\n| {label} | mutants | " + " | ".join(outcomes) + " |")
        print("|---|---|" + "---|" * len(outcomes))
        for name in order or sorted(groups):
            c = groups.get(name, Counter())
            print(f"| {name} | {sum(c.values())} | " + " | ".join(str(c[o]) for o in outcomes) + " |")
    survivors = [r for r in results if not r.accepted]
    stale = [r for r in results if r.outcome != "equivalent" and M.allowed_reason(r.mutant, M.load_allow_list())]
    print()
    for r in survivors:
        print(f"SURVIVED {r.mutant.describe()}\n  verdict: {r.outcome}{': ' + r.detail[:1200] if r.detail else ''}")
        print(f"  change: -{r.mutant.old!r}\n          +{r.mutant.new!r}")
    for r in stale:
        print(f"note: allow-listed {r.mutant.id} is now {r.outcome} (the entry may be removed)")
    bad_controls = {k: v for k, v in controls.items() if v != "equivalent"}
    for k, v in bad_controls.items():
        print(f"CONTROL {k}: {v} (an unmutated kernel must stay equivalent)")
    print()
    print(f"mutants {f['mutants']} (must-kill {f['must_kill']}), killed {f['killed']}, rejected {f['rejected']}, "
          f"allowed-equivalent {f['allowed']}, equivalent by construction {f['equiv_by_construction']}, "
          f"survived {f['survived']}; kill rate {100 * f['kill_rate']:.1f}% of must-kill; "
          f"{rounds} rounds, {seconds:.0f} s")
    return 1 if survivors or bad_controls else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--per-op", type=int, default=2, help="mutants per (kernel, operator) (default 2)")
    ap.add_argument("--kernels", default="all", help="all, a number of kernels drawn by the seed, or names")
    ap.add_argument("--no-hand", dest="hand", action="store_false", help="leave the hand mutants out")
    ap.add_argument("--dtypes", default=None, help="verify generic kernels at these dtypes only (default: all)")
    ap.add_argument("--results", type=Path, default=None, help="JSON lines of results; resumes from it")
    ap.add_argument("--out", type=Path, default=None, help="an output directory to mutate (a copy of it)")
    ap.add_argument("--max-per-round", type=int, default=None, help="mutated kernels per round (default: all)")
    ap.add_argument("--list", action="store_true", help="print the mutants and stop")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()

    t0 = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="mutation-run-"))
    try:
        src = args.out.resolve() if args.out else translate_corpus(base)
        mutants = select(src, args)
        if args.list:
            for m in mutants:
                print(m.describe())
            print(f"{len(mutants)} mutants", Counter(m.cls for m in mutants))
            return 0
        allow = M.load_allow_list()
        done: dict[str, dict] = {}
        if args.results and args.results.exists():
            for line in args.results.read_text().splitlines():
                if line.strip():
                    rec = json.loads(line)
                    done[rec["id"]] = rec
        todo = [m for m in mutants if m.id not in done]
        print(f"{len(mutants)} mutants ({len(mutants) - len(todo)} already in {args.results}), "
              f"{len({m.kernel for m in mutants})} kernels, seed {args.seed}", flush=True)
        out = M.prepare_copy(src, base / "mutated", {m.kernel for m in mutants})

        def on_result(r: M.Result) -> None:
            if not args.quiet:
                print(f"{r.mutant.id:60s} {r.mutant.cls:6s} {r.outcome:12s} {r.mutant.note[:70]}", flush=True)
            if args.results:
                with args.results.open("a") as fh:
                    fh.write(json.dumps(r.to_json()) + "\n")

        log = None if args.quiet else (lambda s: print(f"  [{time.monotonic() - t0:6.0f} s] {s}", flush=True))
        camp = M.run_campaign(out, todo, allow, controls=1, log=log, on_result=on_result,
                              max_per_round=args.max_per_round, dtypes=args.dtypes.split(",") if args.dtypes else None)
        by_id = {r.mutant.id: r for r in camp.results}
        results = []
        for m in mutants:
            if m.id in by_id:
                results.append(by_id[m.id])
            elif m.id in done:
                rec = done[m.id]
                results.append(M.Result(m, rec["outcome"], rec.get("detail", ""),
                                        M.allowed_reason(m, allow) if rec["outcome"] == "equivalent" else "",
                                        rec.get("round", 0)))
        return report(results, time.monotonic() - t0, camp.rounds, camp.controls)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

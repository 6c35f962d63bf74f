"""Catch rate of the Tile IR interpreter's numeric check (transpiler/verify/interpret) over value-changing edits
of the generated Triton ports: operator swaps, mask edits and stride/index edits, drawn by the mutation
operators of transpiler/verify/mutants.py (their `value` class) with a seed, a few per kernel, each of
another operator.

    python3 tools/interpret_mutants.py [--out DIR] [--per-kernel 3] [--seed 20261205] [--kernels a,b]
                                       [--results results/interpret_mutants.json]

Without --out the Triton corpus is translated afresh into a temporary folder. Mutants are applied in rounds
(at most one per kernel per round) to OUT, the mutated kernels' reference cases interpreted (no crate build:
each entry is compiled by itself), the pristine files put back. Outcome per mutant: `killed` (a case of its
entry: numbers_differ), `rejected` (cuTile Rust refuses the mutated entry), `survived` (every case of its entry
matches), `unexercised` (no reference case runs its entry, or the edit lies in a constant branch no case
takes), `ordering_only` (the edit changes a memory token, i.e. ordering, not a value), `equivalent` (a survivor
that cannot change any output: its entry compiles to the same Tile IR as the pristine one at every case, or it
is one of the REVIEWED_EQUIVALENT edits, each with its argument), `not_interpreted`.
Catch rate = (killed + rejected) / (the mutants less the unexercised, ordering-only and equivalent ones);
`catch_rate_with_equivalent` counts the equivalent ones as survivors. Prints every survivor with its edit.

A pin_generic mutant is equivalent only where the constant cannot take another value (a derived constant of
literals, `C0_MUL_0 = 0 * 0`); otherwise an unchanged IR means that every case uses the pinned value, and it
stays a survivor: a case with another value is missing.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transpiler.verify import mutants as M  # noqa: E402

# the mechanical operators that change what a kernel computes (not hints, orderings or rounding modes)
VALUE_OPERATORS = {
    "operator swap": ("binop", "fn_swap", "fn_swap_exp2", "fn_swap_exp", "fn_swap_rsqrt", "select_swap", "cmp_swap",
                      "div_swap", "fma_split", "enum_atomic", "neg_inf", "float_literal", "delete_update"),
    "mask edit": ("enum_predicate", "mask_drop", "int_literal", "enum_padding", "delete_store_ptr", "delete_store",
                  "delete_store_view"),
    "stride/index edit": ("index_swap", "pin_generic", "block_id_axis", "permute", "swap_operands", "enum_reverse"),
}
FAMILY = {op: fam for fam, ops in VALUE_OPERATORS.items() for op in ops}

# Survivors that no input can kill, each read from the generated Rust and its Triton source (mutant id, the
# edit's old and new text, why). Matched on all three: a retranslation that moves a site drops the entry and
# the mutant counts as a survivor again until re-reviewed. A listed mutant that is killed is reported killed.
REVIEWED_EQUIVALENT: dict[str, tuple[str, str, str]] = {
    "cross_entropy_kernel:float_literal:2": (
        "0.0", "1.0", "the online log-sum-exp's initial d: the first block rescales it by exp(m - m_new) with "
        "m = -inf, i.e. by 0 (the first block always holds a column < n_cols, so m_new is finite)"),
    "attn_fwd_kernel__is_causal__e_f16_bf16:float_literal:1": (
        "0.0", "1.0", "the online softmax's initial l_i: the first key block rescales it by exp2(m_i - m_new) "
        "with m_i = -inf, i.e. by 0 (causal: every query row's first block holds key 0, so m_new is finite)"),
    "attn_fwd_kernel__not_is_causal__e_f32:neg_inf:0": (
        "f32::NEG_INFINITY", "-3.0e38f32", "the initial running max m_i: exp2(-3e38 - m_new) is 0 as exp2(-inf) "
        "is, and max(-3e38, a row max of finite scores) is that row max"),
    "rms_norm_bwd_kernel:float_literal:2": (
        "0.0", "1.0", "`other` of w's masked load: masked lanes of w only meet dy's masked lanes (0.0) in "
        "w * dy, and dx / dw are stored under the mask"),
    "rope_kernel:float_literal:1": (
        "0.0", "1.0", "`other` of the two masked loads of k (x1 and x2 read one value: the port reuses an equal "
        "value), whose masked lanes are stored under the same mask"),
    "moe_align_kernel:fn_swap:1": (
        "reduce_sum", "reduce_max", "the sum of a one-hot select of non-negative padded counts (the other "
        "lanes 0): sum and max agree"),
    "matmul_kernel__e_f16_bf16:enum_predicate:5": (
        "LessThan", "LessThanOrEqual", "B's column mask offs_n < N -> <= N in the non-unit-stride load's "
        "select: it admits column N only, whose products reach only C's column N, which the store masks off "
        "(and the load's own mask still reads 0 there)"),
}


def translate_triton(base: Path) -> Path:
    from transpiler.pipeline import run, write_outputs
    src = base / "corpus"
    shutil.copytree(ROOT / "corpus", src)
    out = base / "rust"
    result, outputs = run([src / "triton"], out)
    write_outputs(outputs)
    return out


def draw(out: Path, seed: int, per_kernel: int, kernels: list[str] | None) -> list[M.Mutant]:
    from transpiler.verify.interpret.driver import references_for
    manifest = json.loads((out / "manifest.json").read_text())
    names = [k["name"] for m in manifest["modules"] for k in m["kernels"] if k.get("frontend") == "triton"
             and references_for(out, m, k, None) and (not kernels or k["name"] in kernels)]
    mutants = [mu for mu in M.generate(out, names) if mu.cls == "value" and mu.op in FAMILY]
    return M.sample_spread(mutants, seed, per_kernel, classes=("value",))


def case_values(out: Path, module: dict, kernel: dict, entry_name: str) -> list[dict]:
    """The constants (generics by their Rust names) of each reference case that runs `entry_name`."""
    from transpiler.verify.interpret.cases import case_dtype, case_spec
    from transpiler.verify.interpret.driver import references_for
    from transpiler.verify.entries import select_entry
    from transpiler.verify.specs import verified_generics
    found = []
    for ref in references_for(out, module, kernel, None):
        spec = case_spec(kernel, ref.case, (out / module["source"]).resolve())
        dtype = case_dtype(kernel, ref.case)
        entry = select_entry(kernel["entries"], spec, dtype)
        if entry["name"] == entry_name:
            gen = dict(zip(entry["generics"], verified_generics(kernel, entry, spec, dtype)))
            found.append({k: int(v) for k, v in {**spec, **gen}.items() if str(v).lstrip("-").isdigit()})
    return found


def const_ifs(text: str, start: int, end: int) -> list:
    """`if NAME OP LITi32 {` blocks of a body, as `mutants.const_ifs` finds them, for any constant's name: that
    one reads upper-case names only, and misses the hidden unit-stride flags (`stride_cn_IS_1`), whose arms
    (the non-unit-stride paths) would count as run. A runtime scalar's name is harmless here: only names with
    a case value are looked at."""
    out = []
    for m in re.finditer(r"\bif ([A-Za-z_]\w*) (==|>|<|>=|<=|!=) (-?\d+)i32 \{\n", text[start:end]):
        ts = start + m.end()
        te = M._block_end(text, ts)
        els = None
        if text.startswith(" else {", te + 1):
            es = te + 1 + len(" else {")
            els = (es, M._block_end(text, es))
        out.append(((m.group(1), m.group(2), int(m.group(3))), (ts, te), els))
    return out


def runs_at_some_case(mu: M.Mutant, text: str, cases: list[dict]) -> bool:
    """Whether the edited site lies in arms of constant `if`s (`if NAME OP LIT {`) that some case takes."""
    bs, be = M.entries_of(text)[mu.entry]
    ifs = const_ifs(text, bs, be)
    for values in cases:
        taken = True
        for (name, op, lit), then_r, else_r in ifs:
            if name not in values:
                continue
            cond = M._CMP[op](values[name], lit)
            if (then_r[0] <= mu.start < then_r[1] and not cond) or (else_r and else_r[0] <= mu.start < else_r[1]
                                                                    and cond):
                taken = False
        if taken:
            return True
    return False


def constant_generic(out: Path, mu: M.Mutant) -> bool:
    """Whether a pinned generic is a derived constant of literals only (no other constant in its expression)."""
    manifest = json.loads((out / "manifest.json").read_text())
    name = re.match(r"\w+", mu.old).group()
    for m in manifest["modules"]:
        for k in m["kernels"]:
            for e in k["entries"]:
                if e["name"] == mu.entry and name in e.get("derived", {}):
                    return not re.search(r"[A-Za-z_]", e["derived"][name])
    return False


def classify_equivalent(out: Path, results: list[dict], mutants: list[M.Mutant], mutated_ir: dict, irdump: Path,
                        log=print) -> None:
    """Survivors that cannot change an output become `equivalent`: the reviewed ones, and those whose entry
    compiles to the pristine Tile IR at every case (see the module docstring for pin_generic)."""
    from transpiler.verify.interpret.driver import numeric_checks
    by_id = {mu.id: mu for mu in mutants}
    survivors = [r for r in results if r["outcome"] == "survived"]
    if not survivors:
        return
    manifest = json.loads((out / "manifest.json").read_text())
    records = {k["name"]: (m, k) for m in manifest["modules"] for k in m["kernels"]}
    pristine: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory(prefix="interp-mutants-") as tmp:
        numeric_checks(out, [records[k] for k in sorted({r["kernel"] for r in survivors})], irdump, Path(tmp),
                       ir_texts=pristine)
    for r in survivors:
        mu = by_id[r["id"]]
        reviewed = REVIEWED_EQUIVALENT.get(mu.id)
        texts = mutated_ir.get(mu.id, {})
        same_ir = bool(texts) and all(t is not None and t == pristine.get(cid) for cid, t in texts.items())
        if reviewed and (mu.old, mu.new) == reviewed[:2]:
            r["outcome"], r["detail"] = "equivalent", "reviewed: " + reviewed[2]
        elif mu.op == "pin_generic" and constant_generic(out, mu):
            r["outcome"], r["detail"] = "equivalent", "a derived constant of literals, pinned to its only value"
        elif same_ir and mu.op != "pin_generic":
            r["outcome"], r["detail"] = "equivalent", "the mutated entry compiles to the pristine Tile IR at every case"
        elif same_ir:
            r["detail"] += "; Tile IR unchanged: every case uses the pinned value"
    log(f"equivalent: {sum(r['outcome'] == 'equivalent' for r in results)} of {len(survivors)} survivors")


def run_rounds(out: Path, mutants: list[M.Mutant], log=print) -> list[dict]:
    from transpiler.verify.interpret.driver import numeric_checks
    from transpiler.verify.toolchain import cargo_env, irdump_binary
    irdump = irdump_binary(cargo_env())
    mutated_ir: dict[str, dict[str, str | None]] = {}
    manifest = json.loads((out / "manifest.json").read_text())
    records = {k["name"]: (m, k) for m in manifest["modules"] for k in m["kernels"]}
    by_kernel: dict[str, list[M.Mutant]] = {}
    for mu in mutants:
        by_kernel.setdefault(mu.kernel, []).append(mu)
    rounds = max((len(v) for v in by_kernel.values()), default=0)
    results = []
    for r in range(rounds):
        batch = [v[r] for v in by_kernel.values() if len(v) > r]
        t0 = time.monotonic()
        pristine: dict[str, str] = {}
        try:
            files: dict[str, list[M.Mutant]] = {}
            for mu in batch:
                files.setdefault(mu.rust, []).append(mu)
            for rel, mus in files.items():
                text = pristine.setdefault(rel, (out / rel).read_text())
                for mu in sorted(mus, key=lambda x: x.start, reverse=True):
                    text = mu.apply(text)
                (out / rel).write_text(text)
            ir_texts: dict[str, str | None] = {}
            with tempfile.TemporaryDirectory(prefix="interp-mutants-") as tmp:
                found = numeric_checks(out, [records[mu.kernel] for mu in batch], irdump, Path(tmp),
                                       ir_texts=ir_texts)
        finally:
            for rel, text in pristine.items():
                (out / rel).write_text(text)
        for mu in batch:
            cases = [c for c in found.get(mu.kernel, []) if c.entry == mu.entry]
            mutated_ir[mu.id] = {c.case: ir_texts.get(c.case) for c in cases}
            module, kernel = records[mu.kernel]
            if not cases:
                outcome, detail = "unexercised", "no reference case runs this entry"
            elif not runs_at_some_case(mu, pristine.get(mu.rust) or (out / mu.rust).read_text(),
                                       case_values(out, module, kernel, mu.entry)):
                outcome, detail = "unexercised", "in a constant branch no reference case takes"
            elif re.search(r"\w*tok\w*", mu.old + mu.new) and mu.op in ("delete_update", "mask_drop"):
                # a memory token (`x_tok_store = x_tok`, `Some(x_tok_store)`): the order of accesses, which the
                # interpreter runs in program order anyway, not a value
                outcome, detail = "ordering_only", "edits a memory token, not a value"
            elif any(c.verdict == "numbers_differ" for c in cases):
                outcome, detail = "killed", next(c.detail for c in cases if c.verdict == "numbers_differ")
            elif any("compile failed" in c.detail for c in cases):
                outcome, detail = "rejected", next(c.detail for c in cases if "compile failed" in c.detail)
            elif all(c.verdict == "numbers_match" for c in cases):
                outcome, detail = "survived", f"{len(cases)} cases match"
            else:
                outcome, detail = "not_interpreted", next(c.detail for c in cases if c.verdict == "not_interpreted")
            results.append({"id": mu.id, "kernel": mu.kernel, "family": FAMILY[mu.op], "op": mu.op,
                            "edit": mu.describe(), "outcome": outcome, "detail": detail[:500]})
        log(f"round {r + 1}/{rounds}: {len(batch)} mutants, {time.monotonic() - t0:.0f} s")
    classify_equivalent(out, results, mutants, mutated_ir, irdump, log)
    return results


def figures(results: list[dict]) -> dict:
    counted = [r for r in results if r["outcome"] not in ("unexercised", "ordering_only", "equivalent")]
    caught = sum(r["outcome"] in ("killed", "rejected") for r in counted)
    with_equivalent = len(counted) + sum(r["outcome"] == "equivalent" for r in results)
    by_family = {}
    for fam in VALUE_OPERATORS:
        rs = [r for r in counted if r["family"] == fam]
        by_family[fam] = f"{sum(r['outcome'] in ('killed', 'rejected') for r in rs)}/{len(rs)}"
    return {"mutants": len(results), "outcomes": dict(Counter(r["outcome"] for r in results)),
            "kernels": len({r["kernel"] for r in results}), "caught": caught, "exercised": len(counted),
            "catch_rate": caught / len(counted) if counted else 0.0,
            "catch_rate_with_equivalent": caught / with_equivalent if with_equivalent else 0.0,
            "by_family": by_family}


def report(fig: dict, results: list[dict]) -> str:
    lines = ["# Value-changing edits of the Triton ports, caught by the Tile IR interpreter", "",
             f"Generated by `{fig['command'].strip()}` ({fig['seconds']:.0f} s).", "",
             f"**{fig['caught']}/{fig['exercised']} caught ({100 * fig['catch_rate']:.1f}%)** over {fig['mutants']} mutants "
             f"of {fig['kernels']} kernels ({100 * fig['catch_rate_with_equivalent']:.1f}% counting the equivalent "
             f"ones as survivors); outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(fig["outcomes"].items()))
             + "; by family: " + ", ".join(f"{k} {v}" for k, v in fig["by_family"].items()) + ".", "",
             "| outcome | mutant | detail |", "|---|---|---|"]
    for r in results:
        if r["outcome"] not in ("killed", "rejected"):
            cell = r["edit"].replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {r['outcome']} | {cell[:300]} | {r['detail'][:200].replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="a translated Triton corpus (default: translate it afresh)")
    ap.add_argument("--per-kernel", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20261205)
    ap.add_argument("--kernels", default="")
    ap.add_argument("--results", type=Path)
    opts = ap.parse_args(argv)
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed run still puts the pristine files back
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="interp-mutants-out-") as tmp:
        out = opts.out
        if out is None:
            out = translate_triton(Path(tmp))
        mutants = draw(out, opts.seed, opts.per_kernel, [k for k in opts.kernels.split(",") if k] or None)
        print(f"{len(mutants)} mutants over {len({m.kernel for m in mutants})} kernels", flush=True)
        results = run_rounds(out, mutants)
    fig = figures(results)
    fig["seconds"] = round(time.monotonic() - t0, 1)
    fig["command"] = "python3 tools/interpret_mutants.py " + " ".join(argv if argv is not None else sys.argv[1:])
    for r in results:
        if r["outcome"] not in ("killed", "rejected"):
            print(f"{r['outcome']}: {r['edit']} - {r['detail'][:200]}")
    print(json.dumps(fig, indent=1))
    if opts.results:
        opts.results.parent.mkdir(parents=True, exist_ok=True)
        opts.results.write_text(json.dumps({"figures": fig, "mutants": results}, indent=1) + "\n")
        opts.results.with_suffix(".md").write_text(report(fig, results))
    return 0 if fig["catch_rate"] >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())

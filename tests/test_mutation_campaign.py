"""A bounded, seeded mutation run of the verifier (issue 10 item 4; transpiler/verify/mutants.py).

Every hand mutant, plus two mechanical must-kill mutants (of two operators) of each of ten kernels drawn by
the seed, plus one mutant of every operator that guards a normalizer rule, are written into a copy of the
corpus output, at most one per kernel per round, and verified once per round. Each must be `different`,
rejected by rustc / cuTile Rust, or allow-listed in rules/equivalent_mutants.toml with its reason. An
unmutated kernel verified in each round must stay `equivalent` (verdicts are attributed per kernel).

The run verifies the mutated kernels at f16 only (kernels generic over E; every specialization and the
coverage probes are kept) and leaves the C ABI layer out of the copy's build, to stay within about three
minutes; `python3 tools/mutation_run.py` runs longer samples at every dtype and prints the kill rate.
`CUTILE_MUTATION_SEED` picks another seed.
"""

from __future__ import annotations

import os
import time

import pytest

from conftest import requires_toolchain
from transpiler.verify import mutants as M
from transpiler.verify.normalize import RULES

SEED = int(os.environ.get("CUTILE_MUTATION_SEED", "20261201"))
KERNELS, PER_KERNEL = 10, 2

# Normalizer rules that no mutant guards, and why. A rule added to normalize.RULES must come with a guard
# in mutants.RULE_GUARDS (a mutant that the rule must not hide) instead of an entry here.
UNGUARDED = {
    "N3": "entry symbol names carry no semantics",
    "N10": "whitespace carries no semantics",
}


@pytest.fixture(scope="module")
def allow():
    return M.load_allow_list()


@pytest.fixture(scope="module")
def ci_mutants(corpus_out, allow):
    return M.ci_sample(corpus_out, SEED, KERNELS, PER_KERNEL, allow)


# ------------------------------------------------------------------------- no toolchain needed

def test_sample_is_seeded(corpus_out, allow, ci_mutants):
    again = M.ci_sample(corpus_out, SEED, KERNELS, PER_KERNEL, allow)
    assert [m.id for m in again] == [m.id for m in ci_mutants]
    other = M.ci_sample(corpus_out, SEED + 1, KERNELS, PER_KERNEL, allow)
    assert [m.id for m in other] != [m.id for m in ci_mutants]
    mech = [m for m in ci_mutants if m.op != "hand"]
    assert len({m.op for m in mech}) >= 8, sorted({m.op for m in mech})
    assert len({m.kernel for m in mech}) >= KERNELS
    # every mechanical mutant is one change inside its entry's body, and differs from the original
    for m in mech:
        assert m.old != m.new, m.describe()


def test_every_operator_finds_sites_in_the_corpus(corpus_out):
    """An operator whose pattern no longer matches the generated Rust (after a change of names or formatting)
    would silently drop all its mutants: each one must find sites in the corpus port."""
    from collections import Counter
    counts = Counter(m.op for m in M.generate(corpus_out))
    assert not [o for o in M.OPERATOR_NAMES if not counts[o]], counts


def test_hand_mutants_still_apply(corpus_out):
    hand, problems = M.hand_mutants(corpus_out)
    assert not problems, "\n".join(problems)
    assert len(hand) == len(M.HAND_MUTANTS)


def test_every_normalizer_rule_has_a_guard(corpus_out, ci_mutants):
    rules = {name.split("-")[0] for name in RULES}
    missing = sorted(rules - set(M.RULE_GUARDS) - set(UNGUARDED))
    assert not missing, (f"normalizer rules without a mutant they must not hide: {missing} "
                         "(add one to transpiler/verify/mutants.py RULE_GUARDS)")
    assert not set(UNGUARDED) & set(M.RULE_GUARDS), "a guarded rule is still listed as unguarded"
    hand_ids = {f"hand:{h.name}" for h in M.HAND_MUTANTS}
    for rule, guards in M.RULE_GUARDS.items():
        assert rule in rules, f"RULE_GUARDS names {rule}, which normalize.RULES no longer has"
        for g in guards:
            assert g in hand_ids or g in M.OPERATOR_NAMES, (rule, g)
            # the CI run holds every guard
            assert any(m.id == g or m.op == g for m in ci_mutants), (rule, g)


def test_allow_list_entries_are_valid(corpus_out, allow):
    pool = M.generate(corpus_out) + M.hand_mutants(corpus_out)[0]
    assert allow, "rules/equivalent_mutants.toml has no entry"
    for a in allow:
        assert len(a.reason) >= 40, f"{a.mutation}: give the reason why it is equivalent"
        assert any(a.matches(m) for m in pool), f"allow-list entry {a.kernel} {a.mutation} matches no mutant: remove it"


def test_classify_counts_invalid_tile_ir_as_rejected_and_nothing_else():
    """A mutant whose Tile IR the Tile IR verifier refuses cannot run (rejected); any other not_verified
    reason stays a survivor, so a verifier that gives up is never counted as a kill."""
    from types import SimpleNamespace as NS
    from transpiler.verify.entries import Check

    def kv(detail):
        return NS(verdict="not_verified", reason="", checks=[Check("k", {}, "f16", "not_verified", detail)])
    invalid = ("tileirdisasm failed on 56.rs.tileirbc: error: 'cuda_tile.ftof' op failed to verify that all of "
               "{from, to} have same shape")
    assert M.classify(kv(invalid))[0] == "rejected"
    assert M.classify(kv("tileirdisasm failed on 3.rs.tileirbc: cannot open file"))[0] == "not_verified"
    assert M.classify(kv("cuTile Python compile failed: failed to verify"))[0] == "not_verified"
    assert M.classify(kv("cuTile Rust compile failed: type mismatch"))[0] == "rejected"


# ------------------------------------------------------------------------- the verified run

@pytest.fixture(scope="module")
def campaign(corpus_out, ci_mutants, allow, tmp_path_factory):
    out = M.prepare_copy(corpus_out, tmp_path_factory.mktemp("mutation") / "rust", {m.kernel for m in ci_mutants})
    t0 = time.monotonic()
    camp = M.run_campaign(out, ci_mutants, allow, controls=1, dtypes=("f16",))
    f = M.figures(camp.results)
    print(f"\nmutation campaign (seed {SEED}): {f['mutants']} mutants in {camp.rounds} rounds, {f['killed']} killed, "
          f"{f['rejected']} rejected, {f['allowed']} allowed-equivalent, {f['survived']} survived, "
          f"{time.monotonic() - t0:.0f} s")
    return camp


@requires_toolchain
def test_every_mutant_is_killed_rejected_or_allowed(campaign, ci_mutants):
    assert [r.mutant.id for r in campaign.results] == [m.id for m in ci_mutants]
    bad = [r for r in campaign.results if not r.accepted]
    assert not bad, "mutants the verifier did not catch (a verifier hole, or an equivalent mutant to allow-list " \
        "in rules/equivalent_mutants.toml with its proof):\n" + "\n\n".join(
            f"{r.mutant.describe()}\n  -> {r.outcome}: {r.detail[:1500]}" for r in bad)


@requires_toolchain
def test_unmutated_kernels_stay_equivalent(campaign):
    assert campaign.controls and campaign.rounds >= 1
    assert all(v == "equivalent" for v in campaign.controls.values()), campaign.controls


@requires_toolchain
def test_allow_list_entries_are_still_needed(campaign, allow):
    # each entry is checked on at least one mutant of the run; one whose mutant is now caught must go
    stale = []
    for a in allow:
        hits = [r for r in campaign.results if a.matches(r.mutant)]
        assert hits, f"allow-list entry {a.kernel} {a.mutation} was not exercised by the run"
        caught = [r for r in hits if r.outcome != "equivalent"]
        if caught:
            stale.append(f"{a.kernel} {a.mutation}: {', '.join(f'{r.mutant.id} is {r.outcome}' for r in caught)}")
    assert not stale, "allow-list entries no longer needed (remove them from rules/equivalent_mutants.toml):\n" + \
        "\n".join(stale)


@requires_toolchain
def test_rejections_name_the_compiler(campaign):
    for r in campaign.results:
        if r.outcome == "rejected":
            assert "does not build" in r.detail or "cuTile Rust compile failed" in r.detail or \
                ("tileirdisasm failed" in r.detail and "failed to verify" in r.detail), r.detail[:500]

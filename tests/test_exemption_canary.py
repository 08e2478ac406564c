"""The exemption canary: no shipped findings file may hide a known-bad variant of the reference.

Every ``bad-*`` target (``harness.targets.variants``) runs once on the regression files and every
fourth scenario of the generated ci sample (what ``check --profile ci`` runs; see ``EVERY``); the
same histories are then judged against every findings file in ``scenarios/findings/`` as if the
variant were that file's target: its regression findings (by name and digest) and its classes (on
the generated scenarios).  Each variant must still fail with a violation no witness matches: an
exemption broad enough to excuse a known bug of the reference wholesale would excuse a new bug of
the SDK the same way.

And each shipped class is shown to reject a look-alike: a violation of a known-bad variant of the
same invariant, at a step of the same kind, in a generated scenario the class's scenario classes
admit, that none of the class's witnesses names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checkers import check
from harness.commands.planning import generated as generated_sample
from harness.findings import (
    FINDINGS,
    FindingsFile,
    Observed,
    judge_findings,
    observe,
    read_findings_file,
)
from harness.runner import run_scenario
from harness.targets import registry
from scenarios.loading import load_all, regression_files

FILES = sorted(FINDINGS.glob("*.yaml"))
# variants whose bug no scenario here can show, so no exemption can hide it: each is caught by a
# campaign that findings files do not excuse (and the test below checks it still shows nothing)
CAUGHT_ELSEWHERE = {
    "bad-no-write-ahead": "needs a crash inside an answer: the crash campaign catches it "
    "(tests/test_variants.py)",
}
VARIANTS = sorted(registry.variants())


# Every EVERY-th scenario of the ci sample.  A part of the sample is as strict as the whole, and
# stricter: a findings file hides a variant when it excuses *all* of the variant's violations, and
# what excuses all of them on the whole sample excuses all of them on any part of it; a class's
# look-alike found in a part is one in the whole.  The part can only fail where the whole would
# pass (the variant's unexcused violations all fall outside it), never the other way round.
EVERY = 4


@pytest.fixture(scope="module")
def variant_runs() -> dict[str, list[Observed]]:
    """Each variant's runs of the regression files and a part of the ci sample (run once,
    judged often)."""
    regressions = load_all(regression_files())
    generated = generated_sample("ci", None, "")[::EVERY]
    drawn = {name for name, _ in generated}
    runs: dict[str, list[Observed]] = {}
    for variant in VARIANTS:
        target = registry.get(variant)
        runs[variant] = [
            observe(history, scenario, check(history), generated=name in drawn)
            for name, scenario in regressions + generated
            for history in [run_scenario(target, scenario, name)]
        ]
    return runs


def document(path: Path) -> FindingsFile:
    return read_findings_file(path)


def test_every_shipped_findings_file_is_challenged() -> None:
    assert len(FILES) >= 6
    assert {path.stem.rsplit("-", 1)[0] for path in FILES} >= {
        "strands",
        "langgraph",
        "langgraph-subgraph-node",
        "openai-agents",
    }
    assert len(VARIANTS) >= 12


def test_a_variant_left_out_is_one_no_scenario_here_can_show(
    variant_runs: dict[str, list[Observed]],
) -> None:
    for variant in CAUGHT_ELSEWHERE:
        assert not any(run.violations for run in variant_runs[variant]), variant


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_no_findings_file_hides_a_known_bad_variant(
    path: Path, variant_runs: dict[str, list[Observed]]
) -> None:
    recorded = document(path)
    hidden = []
    for variant, runs in variant_runs.items():
        if variant in CAUGHT_ELSEWHERE:
            continue
        violations = sum(len(run.violations) for run in runs)
        assert violations, f"{variant} shows no violation at all: it cannot be a canary"
        verdict = judge_findings(recorded, runs)
        if not verdict.new:
            hidden.append(f"{variant} (all {violations} violations excused)")
    assert not hidden, f"{path.name} hides known-bad variants: {', '.join(hidden)}"


CLASSES = [(path, found.name) for path in FILES for found in read_findings_file(path).classes]


@pytest.mark.parametrize(
    ("path", "name"), CLASSES, ids=[f"{path.stem}:{name}" for path, name in CLASSES]
)
def test_each_class_rejects_a_look_alike_from_a_known_bad_variant(
    path: Path, name: str, variant_runs: dict[str, list[Observed]]
) -> None:
    """A variant's violation of an invariant the class witnesses, at a step of a kind it
    witnesses there, in a generated scenario the class's scenario classes admit, that none of its
    witnesses names: the class is narrower than its scenario classes and invariants."""
    [found] = [found for found in document(path).classes if found.name == name]
    witnessed = {(witness.invariant, witness.step) for witness in found.witnesses}
    rejected = [
        (variant, run.scenario, violation)
        for variant, runs in variant_runs.items()
        for run in runs
        if run.generated and found.narrows_to(run.classes)
        for violation, kind in run.violations
        if (violation.invariant, kind) in witnessed
        and not any(witness.matches(violation, kind, run.errors) for witness in found.witnesses)
    ]
    assert rejected, f"{path.name}: class {name} rejects no look-alike of a known-bad variant"

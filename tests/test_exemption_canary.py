"""The exemption canary: no shipped findings file may hide a known-bad variant of the reference.

Every ``bad-*`` target (``harness.targets.variants``) runs on the regression files and every fourth
scenario of the generated ci sample (what ``check --profile ci`` runs; see ``EVERY``), each run
made once, when a test first needs it; the histories are judged against every findings file in
``scenarios/findings/`` as if the variant were that file's target: its regression findings (by
name and digest) and its classes (on the generated scenarios).  A variant whose bug only a real
restart shows (``REAL_RESTART_ONLY``: module state) runs with ``--isolation fork``.  Each variant
must still fail with a violation no witness matches: an exemption broad enough to excuse a known
bug of the reference wholesale would excuse a new bug of the SDK the same way.

And each shipped class is shown to reject a look-alike: a violation of a known-bad variant of the
same invariant, at a step of the same kind, in a generated scenario the class's scenario classes
admit, that none of the class's witnesses names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from harness.checkers import check
from harness.checkers.violation import Violation
from harness.commands.planning import generated as generated_sample
from harness.findings import (
    FINDINGS,
    FindingsFile,
    Observed,
    judge_findings,
    observe,
    read_findings_file,
)
from harness.forking import ForkIsolated
from harness.runner import run_scenario
from harness.targets import registry
from harness.targets.base import Target
from harness.targets.variants import REAL_RESTART_ONLY
from scenarios.classes import classes_of
from scenarios.loading import REGRESSIONS, load_all, regression_files
from scenarios.model import Scenario

FILES = sorted(FINDINGS.glob("*.yaml"))
COVERAGE_REGRESSIONS = REGRESSIONS / "coverage"
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


class VariantRuns:
    """Each variant's runs of the regression files and a part of the ci sample, each run the
    first time a test asks for it and kept for the others.

    The tests below ask whether *some* run shows something (a violation a findings file does not
    excuse, a class's look-alike) and stop at the first that does, so most runs are never needed;
    a question with no answer asks for every run, which is the whole set, as before.  Which runs
    were made first changes how many are made, never an answer."""

    def __init__(self, scenarios: list[tuple[str, Scenario, bool]]) -> None:
        self.scenarios = scenarios  # name, scenario, whether it is generated
        self.classes = [frozenset(classes_of(scenario)) for _, scenario, _ in scenarios]
        self._targets: dict[str, Target] = {}
        self._made: dict[str, dict[int, Observed]] = {variant: {} for variant in VARIANTS}

    def of(
        self, variant: str, admitted: Callable[[int], bool] = lambda position: True
    ) -> Iterator[Observed]:
        """The variant's runs in order, of the scenarios whose position is ``admitted``."""
        made = self._made[variant]
        for position, (name, scenario, generated) in enumerate(self.scenarios):
            if not admitted(position):
                continue
            if position not in made:
                if variant not in self._targets:
                    target = registry.get(variant)
                    if variant in REAL_RESTART_ONLY:  # its bug is module state: restart for real
                        target = ForkIsolated(variant, target)
                    self._targets[variant] = target
                history = run_scenario(self._targets[variant], scenario, name)
                made[position] = observe(history, scenario, check(history), generated=generated)
            yield made[position]

    def made(self, variant: str) -> Iterator[Observed]:
        """The variant's runs made so far, running nothing."""
        return iter(self._made[variant].values())


@pytest.fixture(scope="module")
def variant_runs() -> VariantRuns:
    # the coverage regression files too: the only scenarios here that show the coverage variants
    regressions = load_all(regression_files()) + load_all(regression_files(COVERAGE_REGRESSIONS))
    generated = generated_sample("ci", None, "")[::EVERY]
    return VariantRuns(
        [(name, scenario, False) for name, scenario in regressions]
        + [(name, scenario, True) for name, scenario in generated]
    )


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


def test_a_variant_left_out_is_one_no_scenario_here_can_show(variant_runs: VariantRuns) -> None:
    for variant in CAUGHT_ELSEWHERE:
        assert not any(run.violations for run in variant_runs.of(variant)), variant


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_no_findings_file_hides_a_known_bad_variant(path: Path, variant_runs: VariantRuns) -> None:
    recorded = document(path)
    hidden = []
    for variant in VARIANTS:
        if variant in CAUGHT_ELSEWHERE:
            continue
        # which violations a findings file excuses is decided run by run
        if any(judge_findings(recorded, [run]).new for run in variant_runs.of(variant)):
            continue
        violations = sum(len(run.violations) for run in variant_runs.of(variant))
        assert violations, f"{variant} shows no violation at all: it cannot be a canary"
        hidden.append(f"{variant} (all {violations} violations excused)")
    assert not hidden, f"{path.name} hides known-bad variants: {', '.join(hidden)}"


CLASSES = [(path, found.name) for path in FILES for found in read_findings_file(path).classes]


@pytest.mark.parametrize(
    ("path", "name"), CLASSES, ids=[f"{path.stem}:{name}" for path, name in CLASSES]
)
def test_each_class_rejects_a_look_alike_from_a_known_bad_variant(
    path: Path, name: str, variant_runs: VariantRuns
) -> None:
    """A variant's violation of an invariant the class witnesses, at a step of a kind it
    witnesses there, in a generated scenario the class's scenario classes admit, that none of its
    witnesses names: the class is narrower than its scenario classes and invariants."""
    [found] = [found for found in document(path).classes if found.name == name]
    witnessed = {(witness.invariant, witness.step) for witness in found.witnesses}

    def admitted(position: int) -> bool:
        return variant_runs.scenarios[position][2] and found.narrows_to(
            variant_runs.classes[position]
        )

    def look_alikes(runs: Iterable[Observed]) -> Iterator[tuple[str, Violation]]:
        for run in runs:
            for violation, kind in run.violations:
                if (violation.invariant, kind) in witnessed and not any(
                    witness.matches(violation, kind, run.steps) for witness in found.witnesses
                ):
                    yield run.scenario, violation

    def shows_a_witnessed_invariant(variant: str) -> bool:
        made = variant_runs.made(variant)
        return any((v.invariant, kind) in witnessed for run in made for v, kind in run.violations)

    # the variants whose runs so far break an invariant the class witnesses are searched first
    searched = sorted(VARIANTS, key=lambda variant: not shows_a_witnessed_invariant(variant))
    rejected = next(
        (
            look_alike
            for variant in searched
            for look_alike in look_alikes(variant_runs.of(variant, admitted))
        ),
        None,
    )
    assert rejected, f"{path.name}: class {name} rejects no look-alike of a known-bad variant"

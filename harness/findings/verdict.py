"""The verdict: each violation of a run matched against the recorded witnesses (excused, or new),
and each recorded witness that no longer shows (disappeared), with the records that no longer
apply (stale)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.checkers.violation import Violation
from harness.findings.document import (
    Evidence,
    FindingClass,
    FindingEntry,
    FindingsFile,
    Witness,
    first_match,
    scenario_digest,
)
from harness.history import History, StepRecord
from scenarios.classes import COVERAGE, classes_of, in_coverage_sample
from scenarios.model import Scenario


@dataclass(frozen=True)
class Observed:
    """One scenario's run on one target, as the findings judge it."""

    scenario: str
    digest: str
    classes: frozenset[str]  # the scenario's classes (scenarios.classes.classes_of)
    violations: tuple[tuple[Violation, str], ...]  # each with its step's kind (or "none")
    steps: tuple[Evidence, ...] = ()  # what each step of the run recorded (never the control's)
    generated: bool = False  # drawn by the generator: classes may cover it, findings never


@dataclass(frozen=True)
class Excused:
    """A violation matched by a recorded witness."""

    scenario: str
    violation: Violation
    explanation: str
    recorded_class: str | None = None
    witness: int = 0  # its position in the finding's (or class's) witnesses

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "scenario": self.scenario,
            "invariant": self.violation.invariant,
            "step": self.violation.step,
            "explanation": self.explanation,
        }
        if self.recorded_class is not None:
            shown["class"] = self.recorded_class
        return shown


@dataclass(frozen=True)
class Missing:
    """A recorded witness that matched nothing: in its scenario, or (a class's) in the sample."""

    witness: Witness
    explanation: str
    scenario: str | None = None
    recorded_class: str | None = None

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "invariant": self.witness.invariant,
            "witness": self.witness.describe(),
            "explanation": self.explanation,
        }
        if self.scenario is not None:
            shown["scenario"] = self.scenario
        if self.recorded_class is not None:
            shown["class"] = self.recorded_class
        return shown


@dataclass(frozen=True)
class Conflict:
    """A violation the witnesses of two recorded classes both name: which bug it is must be
    decided (one class narrowed), or the second class's witness could hide a new bug."""

    scenario: str
    violation: Violation
    classes: tuple[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "invariant": self.violation.invariant,
            "step": self.violation.step,
            "classes": list(self.classes),
        }


@dataclass(frozen=True)
class Verdict:
    expected: tuple[Excused, ...] = ()  # violations a recorded witness matched
    new: tuple[tuple[str, Violation], ...] = ()  # (scenario, violation) no witness matched
    disappeared: tuple[Missing, ...] = ()  # recorded witnesses that no longer show
    stale: tuple[tuple[str, str], ...] = ()  # (scenario, why its record does not apply)
    # class witnesses that match no violation of the class's own shown_by regression files
    undemonstrated: tuple[Missing, ...] = ()
    # Reported, not failing: violations two classes' witnesses both name
    conflicts: tuple[Conflict, ...] = ()

    @property
    def passes(self) -> bool:
        return not (self.new or self.disappeared or self.stale or self.undemonstrated)

    @property
    def unresolved(self) -> int:
        """Records to resolve that do not fail the run: conflicts between classes."""
        return len(self.conflicts)

    def excused_by(self) -> dict[tuple[str, str | None], int]:
        """How many violations each (scenario or class, class) excused."""
        counts: dict[tuple[str, str | None], int] = {}
        for item in self.expected:
            key = (item.recorded_class or item.scenario, item.recorded_class)
            counts[key] = counts.get(key, 0) + 1
        return counts


def observe(
    history: History, scenario: Scenario, violations: Iterable[Violation], *, generated: bool
) -> Observed:
    """What the findings judge of one run: its violations with their steps' kinds."""
    return Observed(
        history.scenario_name,
        scenario_digest(scenario),
        frozenset(classes_of(scenario)),
        tuple((violation, step_kind(history, violation)) for violation in violations),
        step_evidence(history, violations),
        generated,
    )


def judge_findings(document: FindingsFile | None, runs: Iterable[Observed]) -> Verdict:
    """Match every violation of ``runs`` against the recorded witnesses.

    A regression finding whose scenario was not run is neither seen nor missing; one whose
    scenario ran with another content is stale (it excuses nothing, and the run fails until it is
    re-recorded).  A class's witnesses must show only where the generated sample it was
    triaged against ran (``_sample_ran``).
    """
    runs = list(runs)
    findings = () if document is None else document.findings
    classes = () if document is None else document.classes
    expected: list[Excused] = []
    new: list[tuple[str, Violation]] = []
    disappeared: list[Missing] = []
    stale: list[tuple[str, str]] = []
    by_digest = {entry.digest: entry.scenario for entry in findings}
    ran = {run.scenario for run in runs if not run.generated}
    class_hits: dict[tuple[str, int], int] = {}
    for run in runs:
        entry = None
        if not run.generated:
            entry = next((e for e in findings if e.scenario == run.scenario), None)
            if entry is not None and entry.digest != run.digest:
                stale.append(
                    (run.scenario, "its content changed since it was recorded: re-record it")
                )
                entry = None
            elif entry is None and run.digest in by_digest and by_digest[run.digest] not in ran:
                stale.append(
                    (
                        run.scenario,
                        f"has the content recorded as {by_digest[run.digest]!r}: "
                        "renamed? re-record it under its new name",
                    )
                )
        fitting = [found for found in classes if run.generated and found.narrows_to(run.classes)]
        shown: set[int] = set()
        for violation, kind in run.violations:
            excused = _excuse(entry, fitting, run, violation, kind)
            if excused is None:
                new.append((run.scenario, violation))
                continue
            expected.append(excused)
            if excused.recorded_class is None:
                shown.add(excused.witness)
            else:
                key = (excused.recorded_class, excused.witness)
                class_hits[key] = class_hits.get(key, 0) + 1
        if entry is not None:
            disappeared += [
                Missing(witness, entry.explanation, scenario=entry.scenario)
                for position, witness in enumerate(entry.witnesses)
                if position not in shown and not witness.sometimes
            ]
    disappeared += [
        Missing(witness, found.explanation, recorded_class=found.name)
        for found in classes
        if _sample_ran(found, runs)
        for position, witness in enumerate(found.witnesses)
        if not class_hits.get((found.name, position)) and not witness.sometimes
    ]
    undemonstrated = _demonstrations(classes, runs)
    conflicts = [
        conflict
        for run in runs
        if run.generated
        for violation, kind in run.violations
        for conflict in _conflicts(classes, run, violation, kind)
    ]
    return Verdict(
        tuple(expected),
        tuple(new),
        tuple(disappeared),
        tuple(stale),
        tuple(undemonstrated),
        tuple(conflicts),
    )


def _sample_ran(found: FindingClass, runs: Sequence[Observed]) -> bool:
    """Whether the generated sample ``found`` was triaged against ran, so that each of its
    witnesses must show: a class narrowed to a shape of the coverage sample (a class of
    ``COVERAGE`` in its ``scenario_classes``) is judged where the coverage sample ran, any other
    where a profile's sample ran.  Each sample is judged only by itself: a check of the coverage
    sample alone does not find the ci sample's classes dead, nor a check of the ci sample the
    coverage sample's."""
    of_coverage = not set(found.scenario_classes).isdisjoint(COVERAGE)
    return any(run.generated and in_coverage_sample(run.scenario) == of_coverage for run in runs)


def _demonstrations(classes: Sequence[FindingClass], runs: Sequence[Observed]) -> list[Missing]:
    """The class witnesses that no run of their class's ``shown_by`` files shows, where those
    files all ran: a class may not excuse what its demonstration never showed (they fail)."""
    by_name = {run.scenario: run for run in runs if not run.generated}
    return [
        Missing(witness, found.explanation, recorded_class=found.name)
        for found in classes
        if all(name in by_name for name in found.shown_by)
        for witness in found.witnesses
        if not _demonstrated(witness, [by_name[name] for name in found.shown_by])
    ]


def _demonstrated(witness: Witness, shown_by: Sequence[Observed]) -> bool:
    """Whether ``witness`` names a violation of one of its class's ``shown_by`` runs: a class is
    only as wide as what its demonstration shows."""
    return any(
        witness.matches(violation, kind, run.steps)
        for run in shown_by
        for violation, kind in run.violations
    )


def _conflicts(
    classes: Sequence[FindingClass], run: Observed, violation: Violation, kind: str
) -> list[Conflict]:
    """The first class that names ``violation`` against each other class that names it too."""
    naming = [
        found.name
        for found in classes
        if found.narrows_to(run.classes)
        and first_match(found.witnesses, violation, kind, run.steps) is not None
    ]
    return [Conflict(run.scenario, violation, (naming[0], other)) for other in naming[1:]]


def _excuse(
    entry: FindingEntry | None,
    classes: Sequence[FindingClass],
    run: Observed,
    violation: Violation,
    kind: str,
) -> Excused | None:
    """The first recorded witness that names ``violation``: its regression finding's, else a
    class's (in the file's order)."""
    if entry is not None:
        position = first_match(entry.witnesses, violation, kind, run.steps)
        if position is not None:
            return Excused(run.scenario, violation, entry.explanation, None, position)
    for found in classes:
        position = first_match(found.witnesses, violation, kind, run.steps)
        if position is not None:
            explanation = f"in the recorded class `{found.name}` (shown by " + (
                ", ".join(found.shown_by) + ")"
            )
            return Excused(run.scenario, violation, explanation, found.name, position)
    return None


def step_evidence(history: History, violations: Iterable[Violation] = ()) -> tuple[Evidence, ...]:
    """What each step of the run recorded, for a witness's anchors: its error
    (``observed["error"]``) and each model request the scripted provider refused during it, as
    "agent: refusal" (recorded even when the framework swallowed the failure); the tool results its
    model requests carried, as "agent: result"; what the SDK logged at WARNING
    (``observed["warnings"]``); whose sub-agent turns the store held (``stored_turns``); the
    questions shown so far (``shown_so_far``); the invariants of ``violations`` (the run's own)
    shown at it, one per violation, with what each saw, for a witness that stands beside
    another.  Notes,
    which every corruption leaves, are not errors, and the restart-free control's steps are not the
    run's."""
    violated: dict[int, tuple[Violation, ...]] = {}
    for violation in violations:
        if violation.step is not None:
            violated[violation.step] = (*violated.get(violation.step, ()), violation)
    return tuple(
        Evidence(
            step.kind,
            errors=recorded_errors(step),
            results=tuple(
                f"{request.get('agent')}: {result}"
                for request in step.requests
                for result in (request.get("results") or {}).values()
            ),
            warnings=tuple(str(warning) for warning in step.observed.get("warnings", ())),
            stored=stored_turns(step),
            shown=shown,
            violated=tuple(each.invariant for each in violated.get(index, ())),
            violated_seen=tuple(each.seen for each in violated.get(index, ())),
        )
        for index, (step, shown) in enumerate(
            zip(history.steps, shown_so_far(history), strict=True)
        )
    )


def stored_turns(step: StepRecord) -> tuple[str, ...]:
    """Whose sub-agent turns the target's store held when ``step`` ended, as one text: the
    owners in the order the target lists them, or ``nothing``; no text where the target does not
    say what it stored.  A bug that loses a turn at a restart because nothing was stored shows
    ``nothing`` here; one that stored the turn and lost it otherwise does not."""
    if step.stored is None or "continuations" not in step.stored:
        return ()
    owners = [str(entry.get("owner")) for entry in step.stored["continuations"]]
    return (", ".join(owners) if owners else "nothing",)


def shown_so_far(history: History) -> tuple[tuple[str, ...], ...]:
    """Per step, the questions shown at the root from the run's start to that step's end, as one
    text: ``label as 'id'`` each, in the order first shown (a question shown again under the same
    id at a later step is not repeated; two shown at once under one id both are), or
    ``nothing``.  Two questions shown under one id, at once or one after the other, are a cause
    the SDK logs nothing for, which a pattern with a backreference names."""
    seen: list[str] = []
    found = []
    for step in history.steps:
        now = [
            f"{question.get('label')} as '{question.get('id')}'"
            for question in step.observed.get("pending") or ()
        ]
        for item in dict.fromkeys(now):  # each as often as it was ever shown at once
            seen += [item] * (now.count(item) - seen.count(item))
        found.append((", ".join(seen) if seen else "nothing",))
    return tuple(found)


def recorded_errors(step: StepRecord) -> tuple[str, ...]:
    """The errors one step recorded: its own (``error``, then every further ERROR record,
    ``more_errors``), then the model requests the provider refused."""
    first = () if step.observed.get("error") is None else (str(step.observed["error"]),)
    own = first + tuple(str(error) for error in step.observed.get("more_errors", ()))
    refused = tuple(
        f"{request.get('agent')}: {request['refused']}"
        for request in step.requests
        if request.get("refused") is not None
    )
    return own + refused


def step_kind(history: History, violation: Violation) -> str:
    """The kind of the step a violation showed at (``none`` for a run-wide one)."""
    if violation.step is None or not 0 <= violation.step < len(history.steps):
        return "none"
    return history.steps[violation.step].kind

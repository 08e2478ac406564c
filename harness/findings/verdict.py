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
from harness.history import History
from scenarios.classes import classes_of
from scenarios.model import Scenario


@dataclass(frozen=True)
class Observed:
    """One scenario's run on one target, as the findings judge it."""

    scenario: str
    digest: str
    classes: frozenset[str]  # the scenario's classes (scenarios.classes.classes_of)
    violations: tuple[tuple[Violation, str], ...]  # each with its step's kind (or "none")
    errors: tuple[str, ...]  # the errors the run (and its control) recorded, not notes
    generated: bool = False  # drawn by the generator: classes may cover it, findings never
    results: tuple[str, ...] = ()  # the tool results the run's model requests carried
    warnings: tuple[str, ...] = ()  # what the SDK logged at WARNING during the run

    @property
    def evidence(self) -> Evidence:
        return Evidence(self.errors, self.results, self.warnings)


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
class Verdict:
    expected: tuple[Excused, ...] = ()  # violations a recorded witness matched
    new: tuple[tuple[str, Violation], ...] = ()  # (scenario, violation) no witness matched
    disappeared: tuple[Missing, ...] = ()  # recorded witnesses that no longer show
    stale: tuple[tuple[str, str], ...] = ()  # (scenario, why its record does not apply)

    @property
    def passes(self) -> bool:
        return not self.new and not self.disappeared and not self.stale

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
        recorded_errors(history),
        generated,
        carried_results(history),
        logged_warnings(history),
    )


def judge_findings(document: FindingsFile | None, runs: Iterable[Observed]) -> Verdict:
    """Match every violation of ``runs`` against the recorded witnesses.

    A regression finding whose scenario was not run is neither seen nor missing; one whose
    scenario ran with another content is stale (it excuses nothing, and the run fails until it is
    re-recorded).  Classes are judged only when a generated scenario ran.
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
    if any(run.generated for run in runs):
        disappeared += [
            Missing(witness, found.explanation, recorded_class=found.name)
            for found in classes
            for position, witness in enumerate(found.witnesses)
            if not class_hits.get((found.name, position)) and not witness.sometimes
        ]
    return Verdict(tuple(expected), tuple(new), tuple(disappeared), tuple(stale))


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
        position = first_match(entry.witnesses, violation, kind, run.evidence)
        if position is not None:
            return Excused(run.scenario, violation, entry.explanation, None, position)
    for found in classes:
        position = first_match(found.witnesses, violation, kind, run.evidence)
        if position is not None:
            explanation = f"in the recorded class `{found.name}` (shown by " + (
                ", ".join(found.shown_by) + ")"
            )
            return Excused(run.scenario, violation, explanation, found.name, position)
    return None


def recorded_errors(history: History) -> tuple[str, ...]:
    """The errors a run recorded (each step's ``observed["error"]``, then each model request the
    provider refused, as "agent: refusal", which the framework may have swallowed; then the
    control's); notes, which every corruption leaves, are not errors."""
    own = tuple(
        str(step.observed["error"])
        for step in history.steps
        if step.observed.get("error") is not None
    )
    refused = tuple(
        f"{request.get('agent')}: {request['refused']}"
        for step in history.steps
        for request in step.requests
        if request.get("refused") is not None
    )
    return own + refused + (() if history.control is None else recorded_errors(history.control))


def carried_results(history: History) -> tuple[str, ...]:
    """The tool results the run's model requests carried, each as "agent: result", in the order
    the requests were made (the restart-free control's are not the run's: a witness anchored on a
    result names what this run's models were told)."""
    return tuple(
        f"{request.get('agent')}: {result}"
        for step in history.steps
        for request in step.requests
        for result in (request.get("results") or {}).values()
    )


def logged_warnings(history: History) -> tuple[str, ...]:
    """What the SDK logged at WARNING during the run's steps (each step's
    ``observed["warnings"]``), in order; the restart-free control's are not the run's."""
    return tuple(
        str(warning) for step in history.steps for warning in step.observed.get("warnings", ())
    )


def step_kind(history: History, violation: Violation) -> str:
    """The kind of the step a violation showed at (``none`` for a run-wide one)."""
    if violation.step is None or not 0 <= violation.step < len(history.steps):
        return "none"
    return history.steps[violation.step].kind

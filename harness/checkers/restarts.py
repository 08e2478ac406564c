"""Checkers that compare a run with restarts to its restart-free control: restart transparency
(I5) and the differential check (D).

The control has no restart steps; the n-th step of the run that is not a restart corresponds to
the n-th step of the control.  Each compared field is read as a short sentence, so two steps
differ exactly where their sentences do.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.checkers.records import (
    error_of,
    executed,
    listing,
    shown,
    shown_text,
    without_restarts,
)
from harness.checkers.violation import Invariant, Violation
from harness.history import History, StepRecord

RESTART_TRANSPARENCY = Invariant("I5", "restart-transparency")
DIFFERENTIAL = Invariant("D", "differential")

Compared = tuple[str, Callable[[StepRecord], str]]  # a field and how to read it

EXECUTED: Compared = ("ran", lambda step: listing(executed(step)))
PENDING: Compared = ("pending", lambda step: listing(map(shown_text, shown(step))))
STOP_REASON: Compared = ("stop reason", lambda step: str(step.observed.get("stop_reason")))
FINAL_ANSWER: Compared = ("final answer", lambda step: repr(step.observed.get("final_answer")))
ERROR: Compared = ("error", lambda step: "an error" if error_of(step) is not None else "no error")
REQUESTS: Compared = ("model requests", lambda step: str(len(step.requests)))
EVENTS: Compared = ("public events", lambda step: str(len(step.events)))

TRANSPARENCY_FIELDS = (EXECUTED, PENDING, STOP_REASON, FINAL_ANSWER, ERROR)
DIFFERENTIAL_FIELDS = (STOP_REASON, PENDING, FINAL_ANSWER, ERROR, EXECUTED, REQUESTS, EVENTS)


def restart_transparency(history: History) -> list[Violation]:
    """I5: inserting restarts at interrupt boundaries changes nothing observable.

    Every step other than a restart shows what its control step showed: the same actions ran,
    the same pending questions under the same ids, the same stop reason and final answer, and an
    error exactly when the control had one.  One violation per step, for its first difference.
    """
    if history.control is None:
        return []
    found: list[Violation] = []
    for ours, theirs in _aligned(history):
        violation = _first_difference(RESTART_TRANSPARENCY, TRANSPARENCY_FIELDS, ours, theirs)
        if violation is not None:
            found.append(violation)
    return found + _length_difference(RESTART_TRANSPARENCY, history)


def differential(history: History) -> list[Violation]:
    """D: the run with restarts and its control agree step for step on the whole observable
    record (also the number of model requests and public events); only the first divergence is
    reported, since everything after it follows from it."""
    if history.control is None:
        return []
    for ours, theirs in _aligned(history):
        violation = _first_difference(DIFFERENTIAL, DIFFERENTIAL_FIELDS, ours, theirs)
        if violation is not None:
            return [violation]
    return _length_difference(DIFFERENTIAL, history)


def _aligned(history: History) -> list[tuple[StepRecord, StepRecord]]:
    control = () if history.control is None else history.control.steps
    return list(zip(without_restarts(history.steps), control, strict=False))


def _first_difference(
    invariant: Invariant, fields: tuple[Compared, ...], ours: StepRecord, theirs: StepRecord
) -> Violation | None:
    for name, read in fields:
        seen, expected = read(ours), read(theirs)
        if seen != expected:
            return invariant.violation(
                ours.index, f"{name}: {expected} (as without restarts)", f"{name}: {seen}"
            )
    return None


def _length_difference(invariant: Invariant, history: History) -> list[Violation]:
    ours = len(without_restarts(history.steps))
    theirs = 0 if history.control is None else len(history.control.steps)
    if ours == theirs:
        return []
    return [
        invariant.violation(
            None, f"{theirs} steps besides restarts (as without restarts)", f"{ours} steps"
        )
    ]

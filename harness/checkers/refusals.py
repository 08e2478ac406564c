"""Checker for answers that name no pending question: they are refused (I14).

An answer naming a question that is not pending (an id the human was never shown as pending, or
one whose question was answered already, as an answer re-sent after it was carried out) must be
refused loudly and change nothing: no action runs, and every pending question stays pending
under the id it had.  Which steps carry such an answer is the oracle's word, recorded in the
history (``unknown_answer``), never the target's: a target that accepts the answer silently, or
applies it to another question, cannot make the step look like an ordinary one.
"""

from __future__ import annotations

from harness.checkers.records import changed_by, error_of, is_conversation, shown
from harness.checkers.violation import Invariant, Violation
from harness.history import History, StepRecord

UNKNOWN_ANSWERS_REFUSED = Invariant("I14", "unknown-answers-refused")

REFUSED = "the answer is refused loudly (it names no pending question)"


def unknown_answers_refused(history: History) -> list[Violation]:
    """I14: in every step whose answer names no pending question, an error is raised or logged,
    nothing runs, and the pending questions are exactly those, with the same ids, that the run,
    answer or resend before it left pending (a failed one included: adapters read what a failed
    step leaves pending from the framework, so a question an earlier failure lost is not this
    step's doing)."""
    found: list[Violation] = []
    before: list[tuple[str, int, str]] = []
    for step in history.steps:
        if step.expected.get("unknown_answer"):
            found.extend(_judged(step, before))
        if is_conversation(step):
            before = shown(step)
    return found


def _judged(step: StepRecord, before: list[tuple[str, int, str]]) -> list[Violation]:
    found: list[Violation] = []
    error = error_of(step)
    if error is None or not error.strip():
        stop_reason = step.observed.get("stop_reason")
        seen = "accepted without an error" + (
            f" (stop reason {stop_reason})" if stop_reason is not None else ""
        )
        # which answer it was and why it names no pending question, so a recorded witness
        # excuses its own kind of answer only (an id answered already is not one never shown)
        cause = step.expected.get("failure_cause")
        required = REFUSED if cause is None else f"the answer is refused loudly ({cause})"
        found.append(UNKNOWN_ANSWERS_REFUSED.violation(step.index, required, seen))
    found += [
        UNKNOWN_ANSWERS_REFUSED.violation(step.index, expected, seen)
        for expected, seen in changed_by(step, before)
    ]
    return found

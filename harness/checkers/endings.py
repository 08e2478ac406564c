"""Checker for how each conversation step ends: visibly (I13).

A run, answer or resend ends in exactly one of three ways a person can see: an interrupt with
the questions it asks, a final answer, or a loud error.  What the target *claims* is not enough:
a stop reason of ``interrupt`` with nothing pending asks nothing, and ``end_turn`` without a final
answer answers nothing.  This checker reads only what the step showed, never what the oracle
expected of it: whether the ending was the *right* one is I3's and O's business.
"""

from __future__ import annotations

from harness.checkers.records import error_of, is_conversation, listing, shown, shown_text
from harness.checkers.violation import Invariant, Violation
from harness.history import History, StepRecord

EVERY_STEP_ENDS_VISIBLY = Invariant("I13", "every-step-ends-visibly")

ENDINGS = "an interrupt with its questions, a final answer, or an error"


def every_step_ends_visibly(history: History) -> list[Violation]:
    """I13: every run, answer and resend ends in an interrupt with pending questions, a final
    answer, or a loud error (raised, or logged at ERROR level); one violation per step that
    ends otherwise, saying what it showed instead."""
    found: list[Violation] = []
    for step in history.steps:
        if not is_conversation(step):
            continue
        seen = _silent_ending(step)
        if seen is not None:
            found.append(EVERY_STEP_ENDS_VISIBLY.violation(step.index, ENDINGS, seen))
    return found


def _silent_ending(step: StepRecord) -> str | None:
    """What ``step`` showed instead of a visible ending; None when its ending is visible."""
    error = error_of(step)
    if error is not None and error.strip():
        return None  # loud: whatever else it shows, the person was told it failed
    stop_reason = step.observed.get("stop_reason")
    final_answer = step.observed.get("final_answer")
    pending = shown(step)
    if stop_reason == "interrupt" and pending:
        return None
    if stop_reason == "end_turn" and final_answer is not None and not pending:
        return None
    parts = [f"stop reason {stop_reason}" if stop_reason is not None else "no stop reason"]
    parts.append("no error" if error is None else "an empty error")
    parts.append("no final answer" if final_answer is None else f"final answer {final_answer!r}")
    parts.append("pending " + listing(map(shown_text, pending)))
    return ", ".join(parts)

"""Checker for a continuation that cannot be restored (I9): the failure is loud and safe."""

from __future__ import annotations

from harness.checkers.records import changed_by, error_of, shown, succeeded
from harness.checkers.violation import Invariant, Violation
from harness.history import History

LOUD_SAFE_FAILURE = Invariant("I9", "loud-safe-failure")


def loud_safe_failure(history: History) -> list[Violation]:
    """I9: a continuation that cannot be restored fails loudly and safely.

    In every step that must fail: an error is raised or logged, nothing runs, and the pending
    interrupts are exactly those shown by the last step that succeeded (same questions, same
    ids).  That none of them carries a stale response is checked once, by I12, at every step
    (``naming.fresh_questions``): here it would report the same defect a second time.  A step
    that must fail because its answer names no pending question is I14's alone
    (``refusals.unknown_answers_refused``), whatever the store holds.
    """
    found: list[Violation] = []
    last_shown: list[tuple[str, int, str]] = []
    for step in history.steps:
        if step.expected["error"] == "required" and not step.expected.get("unknown_answer"):
            if error_of(step) is None:
                # why the step had to fail, so a recorded witness excuses its own cause only
                cause = step.expected.get("failure_cause")
                required = "an error is raised or logged" + ("" if cause is None else f": {cause}")
                silent = LOUD_SAFE_FAILURE.violation(step.index, required, "failure was silent")
                found.append(silent)
            found += [
                LOUD_SAFE_FAILURE.violation(step.index, expected, seen)
                for expected, seen in changed_by(step, last_shown)
            ]
        if succeeded(step):
            last_shown = shown(step)
    return found

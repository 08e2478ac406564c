"""Checkers for answers travelling down: exact delivery (I2), partial answers (I3), isolation
(I10).

They compare what ran and what stayed pending with what the oracle derived from the scenario.
"""

from __future__ import annotations

from collections import Counter

from harness.checkers.records import (
    UNLABELLED,
    Served,
    call_text,
    executed,
    expected_executed,
    expected_questions,
    expected_served,
    is_conversation,
    listing,
    question_text,
    served,
    shown,
    shown_questions,
    succeeded,
    times,
)
from harness.checkers.violation import Invariant, Violation
from harness.history import History

EXACT_DELIVERY_DOWN = Invariant("I2", "exact-delivery-down")
PARTIAL_ANSWERS = Invariant("I3", "partial-answers")
ISOLATION = Invariant("I10", "isolation")


def exact_delivery_down(history: History) -> list[Violation]:
    """I2: one approval executes exactly its own protected action, never a sibling's.

    In every answer and resend step the actions that ran are exactly the expected ones: a label
    that ran more often than expected is a sibling's action running, one that ran less often is
    an approval that was not delivered.  In a step that had to be refused (a corrupted store,
    an answer naming no pending question) nothing is expected to run, and whatever ran is I9's
    or I14's finding.

    Judged per call too: where a label ran as often as expected, each run must serve the call
    (its agent's path and prompt) the approval was meant for; a run that served a twin call
    instead is an answer delivered to the wrong call, and its sentence names both calls.  A
    ledger record that does not name its call (a target that cannot tell) is not judged so.
    """
    found: list[Violation] = []
    for step in history.steps:
        if step.kind not in ("answer", "resend"):
            continue
        ran = Counter(executed(step)) if step.expected["error"] != "required" else Counter()
        due = Counter(expected_executed(step))
        if ran == due:
            found.extend(_misdelivered(step.index, served(step), expected_served(step)))
        for label in sorted(ran - due):
            expected = f"{label} runs {times(due[label])}"
            if not due[label]:
                expected = f"{label} does not run in this step"
            seen = f"{label} ran {times(ran[label])}: a sibling's action ran"
            found.append(EXACT_DELIVERY_DOWN.violation(step.index, expected, seen))
        for label in sorted(due - ran):
            seen = f"{label} ran {times(ran[label])}: approval not delivered"
            expected = f"{label} runs {times(due[label])}"
            found.append(EXACT_DELIVERY_DOWN.violation(step.index, expected, seen))
    return found


def _misdelivered(
    index: int, ran: list[Served] | None, due: list[Served] | None
) -> list[Violation]:
    """Runs that served another call of the same action than the one the approval was for."""
    if ran is None or due is None:
        return []
    wrong = Counter(ran) - Counter(due)
    missed = Counter(due) - Counter(ran)
    found: list[Violation] = []
    for meant in sorted(missed.elements()):
        took = next((call for call in sorted(wrong.elements()) if call[0] == meant[0]), None)
        if took is None:
            continue
        wrong[took] -= 1
        found.append(
            EXACT_DELIVERY_DOWN.violation(
                index,
                f"{meant[0]} runs for {call_text(meant)}",
                f"{meant[0]} ran for {call_text(took)}: the approval reached a twin call",
            )
        )
    return found


def partial_answers(history: History) -> list[Violation]:
    """I3: answering a subset settles exactly that subset; the rest stays pending, same id.

    After every run, answer or resend that did not fail, the pending questions are the expected
    ones; and a question shown before the step, not answered in it and still expected pending,
    is shown again under the same root-visible id.
    """
    found: list[Violation] = []
    before: list[tuple[str, int, str]] = []
    for step in history.steps:
        if not is_conversation(step):
            continue
        if succeeded(step):
            expected = expected_questions(step)
            pending = shown_questions(step)
            if pending != expected:
                found.append(
                    PARTIAL_ANSWERS.violation(
                        step.index,
                        "pending " + listing(map(question_text, expected)),
                        "pending " + listing(map(question_text, pending)),
                    )
                )
            answered = {answer.get("label") for answer in step.answered}
            now = shown(step)
            for label, number, interrupt_id in before:
                if label in answered or (label, number) not in expected:
                    continue
                if (label, number, interrupt_id) in now:
                    continue
                renamed = [other for lab, num, other in now if (lab, num) == (label, number)]
                seen = (
                    f"{label}#{number} now pending as {listing(map(repr, renamed))}"
                    if renamed
                    else f"{label}#{number} no longer pending"
                )
                expected_text = f"{label}#{number} stays pending as {interrupt_id!r}"
                found.append(PARTIAL_ANSWERS.violation(step.index, expected_text, seen))
        before = shown(step)
    return found


def isolation(history: History) -> list[Violation]:
    """I10: a sub-agent never picks up an interrupt or response of another caller.

    At every step no action is pending more often than expected (a sub-agent that took another
    caller's turn raises it twice) and none runs more often than expected in that step (except
    in a step that had to be refused: what runs there is I9's or I14's finding).
    """
    found: list[Violation] = []
    for step in history.steps:
        pending = Counter(label for label, _ in shown_questions(step) if label != UNLABELLED)
        allowed = Counter(label for label, _ in expected_questions(step))
        for label in sorted(pending - allowed):
            found.append(
                ISOLATION.violation(
                    step.index,
                    f"{label} pending {times(allowed[label])}",
                    f"{label} pending {times(pending[label])}",
                )
            )
        ran = Counter(executed(step)) if step.expected["error"] != "required" else Counter()
        due = Counter(expected_executed(step))
        for label in sorted(ran - due):
            found.append(
                ISOLATION.violation(
                    step.index,
                    f"{label} runs {times(due[label])} in this step",
                    f"{label} ran {times(ran[label])}",
                )
            )
    return found

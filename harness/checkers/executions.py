"""Checker for what runs (I4): no protected action without an approval, none twice for one."""

from __future__ import annotations

from collections import Counter

from harness.checkers.records import executed, expected_executed, times
from harness.checkers.violation import Invariant, Violation
from harness.history import History

AT_MOST_ONCE = Invariant("I4", "at-most-once")


def at_most_once(history: History) -> list[Violation]:
    """I4: no protected action runs without an approval, none runs twice for one approval.

    Nothing runs during a restart, a corruption or a repair; an action never approved anywhere
    in the scenario never runs; and up to every step, each action has run at most as often as
    the approvals so far allow (re-sending an answer does not run it again).  An approved action
    run by an answer that had to be refused (a corrupted store, or an answer naming no pending
    question) is I9's or I14's finding, not this one's;
    it counts here all the same, so running it again later is caught as running twice.
    """
    approved = Counter(label for step in history.steps for label in expected_executed(step))
    ran: Counter[str] = Counter()
    allowed: Counter[str] = Counter()
    found: list[Violation] = []
    for step in history.steps:
        here = Counter(executed(step))
        ran.update(here)
        allowed.update(expected_executed(step))
        for label in sorted(here):
            if step.kind in ("restart", "corrupt", "repair"):
                expected = f"nothing runs during a {step.kind}"
                seen = f"{label} ran {times(here[label])}"
            elif not approved[label]:
                expected = f"{label} never runs (never approved)"
                seen = f"{label} ran {times(ran[label])}"
            elif ran[label] > allowed[label] and step.expected["error"] != "required":
                expected = f"{label} runs at most {times(allowed[label])} so far"
                seen = f"{label} ran {times(ran[label])}"
            else:
                continue
            found.append(AT_MOST_ONCE.violation(step.index, expected, seen))
    return found

"""Checkers for the names the human sees: unique root-visible ids (I1), fresh questions (I12)."""

from __future__ import annotations

from collections import defaultdict

from fakes.protected import question_name
from harness.checkers.records import UNLABELLED, label_of, listing, question_of, shown
from harness.checkers.violation import Invariant, Violation
from harness.history import History

UNIQUE_NAMES_UP = Invariant("I1", "unique-names-up")
FRESH_QUESTIONS = Invariant("I12", "fresh-questions")


def unique_names_up(history: History) -> list[Violation]:
    """I1: distinct pending interrupts never share a root-visible id, and each keeps its name.

    At every step the ids of the interrupts the root shows are pairwise distinct; one violation
    per step, naming each shared id and the questions shown under it.  Renaming up changes the
    id only: a question shown at the root carries the name it was asked under (``approval``,
    ``approval-2``, ...), once per question and name seen.
    """
    found: list[Violation] = []
    misnamed: set[tuple[str, int, object]] = set()
    for step in history.steps:
        for pending in step.pending:
            label, number, name = label_of(pending), question_of(pending), pending.get("name")
            if number and name != question_name(number) and (label, number, name) not in misnamed:
                misnamed.add((label, number, name))
                found.append(
                    UNIQUE_NAMES_UP.violation(
                        step.index,
                        f"{label}#{number} shown as {question_name(number)!r}",
                        f"{label}#{number} shown as {name!r}",
                    )
                )
        questions_by_id: dict[str, list[str]] = defaultdict(list)
        for label, number, interrupt_id in shown(step):
            questions_by_id[interrupt_id].append(f"{label}#{number}")
        shared = [
            f"{interrupt_id!r} shown for {listing(questions)}"
            for interrupt_id, questions in sorted(questions_by_id.items())
            if len(questions) > 1
        ]
        if shared:
            seen = "; ".join(shared)
            found.append(UNIQUE_NAMES_UP.violation(step.index, "distinct root-visible ids", seen))
    return found


def fresh_questions(history: History) -> list[Violation]:
    """I12: a resumed sub-agent that asks again raises a new question, never a stale approval.

    Every pending interrupt the root shows carries no response, at every step, failed ones
    included (this is the one check for a stale response: I9 leaves it here); and over the whole
    history, question n+1 of an action is never shown under an id that question n of it was
    shown under.
    """
    found: list[Violation] = []
    ids: dict[tuple[str, int], set[str]] = defaultdict(set)
    reported: set[tuple[str, int, str]] = set()
    for step in history.steps:
        for pending in step.pending:
            response = pending.get("response")
            if response is not None:
                question = f"{label_of(pending)}#{question_of(pending)}"
                found.append(
                    FRESH_QUESTIONS.violation(
                        step.index,
                        f"{question} shown without an answer attached",
                        f"{question} shown with response {response!r}",
                    )
                )
        for label, number, interrupt_id in shown(step):
            if label == UNLABELLED:
                continue
            for neighbour in (number - 1, number + 1):
                first = min(number, neighbour)
                key = (label, first, interrupt_id)
                if first >= 1 and interrupt_id in ids[(label, neighbour)] and key not in reported:
                    reported.add(key)
                    found.append(
                        FRESH_QUESTIONS.violation(
                            step.index,
                            f"{label}#{first + 1} asked under a new id",
                            f"{label}#{first + 1} asked under {interrupt_id!r}, "
                            f"the id of {label}#{first}",
                        )
                    )
            ids[(label, number)].add(interrupt_id)
    return found

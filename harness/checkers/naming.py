"""Checkers for the names the human sees: unique root-visible ids (I1), fresh questions (I12)."""

from __future__ import annotations

from collections import defaultdict

from fakes.protected import question_name
from harness.checkers.records import (
    UNLABELLED,
    label_of,
    listing,
    question_of,
    shown,
    tree_of,
)
from harness.checkers.violation import Invariant, Violation
from harness.history import History
from scenarios.tree import Agent

UNIQUE_NAMES_UP = Invariant("I1", "unique-names-up")
FRESH_QUESTIONS = Invariant("I12", "fresh-questions")


def unique_names_up(history: History) -> list[Violation]:
    """I1: distinct pending interrupts never share a root-visible id, and each keeps its name.

    At every step the ids of the interrupts the root shows are pairwise distinct; one violation
    per step, naming each shared id and the questions shown under it.  Renaming up changes the
    id only: a question shown at the root carries the name it was asked under (``approval``,
    ``approval-2``, ...), once per question and name seen.  And a gated sub-agent's questions
    (any label below it) are never shown under an id its gate's question was shown under, at
    any step: the gate is answered before they are asked, so the two are never pending together,
    but an answer by id must still name one of them only.
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
    found.extend(_gate_ids_reused(history))
    return sorted(found, key=lambda violation: violation.step or 0)


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


def _gated_labels(tree: Agent) -> dict[str, frozenset[str]]:
    """Each gate's label, with the labels of every question asked below its sub-agent."""
    gated: dict[str, frozenset[str]] = {}
    for agent, _ in tree.walk():
        if agent.gate is not None:
            below = {action.label for inner, _ in agent.walk() for action in inner.actions}
            below |= {inner.gate for inner, _ in agent.walk() if inner.gate and inner is not agent}
            gated[agent.gate] = frozenset(below)
    return gated


def _gate_ids_reused(history: History) -> list[Violation]:
    """A question below a gated sub-agent shown under an id its gate was shown under: one
    violation per (question, id), at the first step it shows."""
    gated = _gated_labels(tree_of(history))
    if not gated:
        return []
    gate_ids: dict[str, str] = {}  # id -> the gate first shown under it
    found: list[Violation] = []
    reported: set[tuple[str, int, str]] = set()
    for step in history.steps:
        for label, _, interrupt_id in shown(step):
            if label in gated:
                gate_ids.setdefault(interrupt_id, label)
        for item in shown(step):
            label, number, interrupt_id = item
            gate = gate_ids.get(interrupt_id)
            if gate is None or label not in gated[gate] or item in reported:
                continue
            reported.add(item)
            found.append(
                UNIQUE_NAMES_UP.violation(
                    step.index,
                    f"{label}#{number} asked under an id other than its gate {gate}'s",
                    f"{label}#{number} asked under {interrupt_id!r}, the id of gate {gate}#1",
                )
            )
    return found

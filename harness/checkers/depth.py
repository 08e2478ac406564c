"""Checker for depth (I11): delivery and partial answers, restricted to the deep and mixed part.

I2 and I3 already cover every action; this restriction lets a report show separately whether an
implementation breaks at depth 3 and beyond, or when ordinary and nested interrupts share a turn.
"""

from __future__ import annotations

from harness.checkers.records import (
    executed,
    expected_executed,
    expected_questions,
    is_conversation,
    listing,
    pending_texts,
    question_text,
    shown_questions,
    succeeded,
    tree_of,
)
from harness.checkers.violation import Invariant, Violation
from harness.history import History
from scenarios.tree import Agent

DEPTH = Invariant("I11", "depth")


def watched_labels(tree: Agent) -> frozenset[str]:
    """Labels of actions at depth 3 or more, plus the root's own actions when the root mixes
    them with nested ones (some sub-agent below it has actions)."""
    agents = list(tree.walk())
    deep = {action.label for agent, depth in agents if depth >= 3 for action in agent.actions}
    nested = any(agent.actions for agent, depth in agents if depth >= 2)
    ordinary = {action.label for action in tree.actions} if nested else set()
    return frozenset(deep | ordinary)


def depth(history: History) -> list[Violation]:
    """I11: all of the above hold at depth 3 and beyond, and with nested and ordinary interrupts
    mixed in one turn.

    For the watched actions (see ``watched_labels``), every run, answer or resend shows the
    expected pending questions (when it did not fail) and runs the expected actions.
    """
    watched = watched_labels(tree_of(history))
    if not watched:
        return []
    found: list[Violation] = []
    for step in history.steps:
        if not is_conversation(step):
            continue
        if succeeded(step):
            expected = [question for question in expected_questions(step) if question[0] in watched]
            pending = [question for question in shown_questions(step) if question[0] in watched]
            if pending != expected:
                found.append(
                    DEPTH.violation(
                        step.index,
                        *pending_texts(map(question_text, expected), map(question_text, pending)),
                    )
                )
        due = [label for label in expected_executed(step) if label in watched]
        ran = [label for label in executed(step) if label in watched]
        if ran != due:
            found.append(DEPTH.violation(step.index, "ran " + listing(due), "ran " + listing(ran)))
    return found

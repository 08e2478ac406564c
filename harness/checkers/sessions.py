"""Two root sessions judged apart: a history whose steps talk to root sessions `a` and `b` (two
users of one deployment, whose orchestrators call the same agent-tool objects) is judged as two
histories, each session's steps with the restarts that rebuild both (a restart naming a session,
which rebuilds that session's orchestrator alone, is that session's), and its control likewise.

Every invariant then says of each session what it says of a run alone: a question raised in one
session must show only there (else the other's steps show a question the oracle, judging that
session alone, does not expect: O), an answer in one session settles only that session's
questions (else an action runs in a step that did not approve it: I2, I4, O), and a restart
leaves each session's pending questions as they were (I5, D).  The oracle judged each step in
its own session (``scenarios.oracle``), so the expectations recorded already are each
session's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Final

from harness.checkers.violation import Violation
from harness.history import History, StepRecord

SESSIONS: Final = ("a", "b")
BOTH: Final = frozenset({"restart", "corrupt", "repair"})  # steps that rebuild every session


def session_of(step: StepRecord) -> str:
    """The root session a recorded step talks to (a restart of both: `a`, where it is
    recorded)."""
    return str(step.step.get("session", "a"))


def _in_view(step: StepRecord, session: str) -> bool:
    """Whether ``step`` belongs to ``session``'s history: its own steps, and every step that
    rebuilds both sessions (a restart naming no session, a corruption, a repair)."""
    if step.kind in BOTH and "session" not in step.step:
        return True
    return session_of(step) == session


def views(history: History) -> list[History]:
    """``history`` itself, or with two root sessions one history per session."""
    if all(session_of(step) == "a" for step in history.steps):
        return [history]
    return [_view(history, session) for session in SESSIONS]


def _view(history: History, session: str) -> History:
    steps = tuple(step for step in history.steps if _in_view(step, session))
    control = None if history.control is None else _view(history.control, session)
    return replace(history, steps=steps, control=control)


def per_session(
    function: Callable[[History], list[Violation]],
) -> Callable[[History], list[Violation]]:
    """``function`` applied to each session's history, its violations in step order (a
    violation both sessions show, at a restart, once)."""

    def judged(history: History) -> list[Violation]:
        found = views(history)
        if len(found) == 1:
            return function(history)
        violations = list(dict.fromkeys(v for view in found for v in function(view)))
        return sorted(violations, key=lambda v: -1 if v.step is None else v.step)

    judged.__name__ = getattr(function, "__name__", "judged")
    judged.__doc__ = function.__doc__
    return judged

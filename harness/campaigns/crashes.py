"""Crash points: the process dies inside an answer, at every boundary the target passes.

For each scenario, a crash-free run counts the boundaries (``fakes.crash``) each answer passes:
model requests sent, protected actions run, writes to storage.  Then, for every one of them, the
scenario is run again with a crash there; the process restarts from what was persisted and the
client re-sends the same answer (it never got a reply), and the scenario goes on.  At the end the
ledger says whether any action ran more often than the human approved it (the verdict: at most
once, or can run an action twice) and whether an approval was lost (ran less often).  The
approvals allowed come from the oracle, never from the target.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from fakes.crash import SimulatedCrash
from fakes.effects import is_effect
from harness.execution import IN_PROCESS, Execution
from harness.runner import Recorder
from harness.scratch import RUN, scratch_directory
from harness.targets.base import Target
from scenarios.model import Answer, Resend, Scenario
from scenarios.oracle import expectations


@runtime_checkable
class CrashableSession(Protocol):
    def arm_crash(self, boundary: str, occurrence: int) -> None: ...

    def count_boundaries(self) -> None: ...

    def boundaries_reached(self) -> dict[str, int]: ...

    def crashed(self) -> str | None: ...


@dataclass(frozen=True)
class CrashPoint:
    step: int  # the answer (or resend) step the crash cuts short
    boundary: str  # model | action | persist
    occurrence: int  # 1-based, within that step

    def __str__(self) -> str:
        return f"step {self.step}, {self.boundary} #{self.occurrence}"


@dataclass(frozen=True)
class CrashCase:
    scenario: str
    point: CrashPoint
    crashed: bool
    restart_error: str | None
    ran: dict[str, int]
    approved: dict[str, int]

    @property
    def twice(self) -> list[str]:
        """Actions that ran more often than approved."""
        return sorted(label for label, n in self.ran.items() if n > self.approved.get(label, 0))

    @property
    def lost(self) -> list[str]:
        """Approved actions that ran less often than approved."""
        return sorted(label for label, n in self.approved.items() if self.ran.get(label, 0) < n)


def crash_points(target: Target, scenario: Scenario) -> list[CrashPoint]:
    """Every boundary the scenario's answers pass on ``target`` without a crash; empty if the
    target's sessions cannot crash on request."""
    points: list[CrashPoint] = []
    with scratch_directory(RUN) as workdir:
        session = target.start(scenario, Path(workdir))
        if not isinstance(session, CrashableSession):
            return []
        recorder = Recorder(session, scenario)
        for index, step in enumerate(scenario.steps):
            session.count_boundaries()
            recorder.step(index, step)
            if isinstance(step, Answer | Resend):
                for boundary, count in sorted(session.boundaries_reached().items()):
                    points += [CrashPoint(index, boundary, n) for n in range(1, count + 1)]
    return points


def run_with_crash(target: Target, scenario: Scenario, name: str, point: CrashPoint) -> CrashCase:
    """``scenario`` on ``target`` with a crash at ``point``, restarted and the answer re-sent.
    The approvals allowed are the oracle's, step by step as the human answered: an answer by id
    approves the question shown under that id (``expectations`` alone would take every id of an
    ``answer_ids`` step as naming no question)."""
    expected = {index: step.executions for index, step in enumerate(expectations(scenario))}
    crashed, restart_error = False, None
    with scratch_directory(RUN) as workdir:
        session: Any = target.start(scenario, Path(workdir))
        recorder = Recorder(session, scenario)
        for index, step in enumerate(scenario.steps):
            if index == point.step:
                session.arm_crash(point.boundary, point.occurrence)
            # the process died there (the code under test may have swallowed the crash, too)
            with contextlib.suppress(SimulatedCrash):
                recorder.step(index, step)
            if index in recorder.judged:
                expected[index] = recorder.judged[index].executions
            if session.crashed() is not None:
                crashed = True
                session.count_boundaries()  # a new process
                restart_error = session.restart()
                recorder.retry(index)
        ran = Counter(
            str(record["action"]) for record in session.executions() if not is_effect(record)
        )
    approved = Counter(label for labels in expected.values() for label in labels)
    return CrashCase(name, point, crashed, restart_error, dict(ran), dict(approved))


def points_of(target: Target, scenario: str) -> list[CrashPoint]:
    """``crash_points`` as a task (``harness.execution``): the scenario's JSON in."""
    return crash_points(target, Scenario.model_validate_json(scenario))


def crashed_run(target: Target, case: tuple[str, str, CrashPoint]) -> CrashCase:
    """``run_with_crash`` as a task: the scenario's name, its JSON and the crash point in."""
    name, scenario, point = case
    return run_with_crash(target, Scenario.model_validate_json(scenario), name, point)


def crash_campaign(
    target: Target, scenarios: list[tuple[str, Scenario]], execution: Execution = IN_PROCESS
) -> list[CrashCase]:
    """Every crash point of every scenario on ``target`` (each scenario's crash-free count a
    task, then each crash point a task)."""
    given = [(name, scenario.model_dump_json()) for name, scenario in scenarios]
    found = execution.map(points_of, [(target, scenario) for _, scenario in given])
    cases = [
        (name, scenario, point)
        for (name, scenario), points in zip(given, found, strict=True)
        for point in points
    ]
    return list(execution.map(crashed_run, [(target, case) for case in cases]))

"""Checker for an agent's key/value state carried across a question (I17): every tally effect
reads the count its agent's state must hold.

A tally effect (``Effect.tally``) reads a counter from its agent's key/value state, records the
value it read in the ledger (``seen``) and writes it back plus one.  What it must read comes from
the oracle alone (``expected["tallies"]``): the count of the earlier runs in the same state (the
same call of an ephemeral sub-agent; every call of a preserve_context sub-agent or the root),
carried across the question, the resume and a restart.  A state dropped on restore, or shared
between calls that each start anew, reads another count.

Runs are compared per step and per (agent, tool, toolUseId), as a multiset: twin calls sharing
ids may run in either order.  Where the step ran that call another number of times than the
oracle says, the runs are I15's to report, not compared here; an expectation the oracle does
not predict (after a deploy) is not compared either.
"""

from __future__ import annotations

from collections import defaultdict

from fakes.effects import EFFECT, SEEN, is_effect
from harness.checkers.records import Run, run_text
from harness.checkers.violation import Invariant, Violation
from harness.history import History, StepRecord

STATE_CARRIED = Invariant("I17", "state-carried")


def state_carried(history: History) -> list[Violation]:
    """I17: every run of a tally effect reads the count its agent's key/value state holds."""
    found: list[Violation] = []
    for step in history.steps:
        expected = _expected(step)
        seen = _seen(step)
        for run in sorted(expected):
            counts = expected[run]
            read = seen.get(run, [])
            if None in counts or len(read) != len(counts):
                continue
            if sorted(read, key=repr) != sorted(counts, key=repr):
                found.append(
                    STATE_CARRIED.violation(
                        step.index,
                        f"{run_text(run)} reads {_counts(counts)} from its agent's state",
                        f"it read {_counts(read)}",
                    )
                )
    return found


def _expected(step: StepRecord) -> dict[Run, list[int | None]]:
    found: dict[Run, list[int | None]] = defaultdict(list)
    for agent, tool, tool_use_id, count in step.expected.get("tallies", ()):
        found[(str(agent), str(tool), str(tool_use_id))].append(count)
    return found


def _seen(step: StepRecord) -> dict[Run, list[int | None]]:
    found: dict[Run, list[int | None]] = defaultdict(list)
    for record in step.executions:
        if is_effect(record):
            run = (str(record.get("agent")), str(record[EFFECT]), str(record.get("tool_use_id")))
            value = record.get(SEEN)
            found[run].append(value if isinstance(value, int) else None)
    return found


def _counts(counts: list[int | None]) -> str:
    shown = ["nothing" if count is None else str(count) for count in sorted(counts, key=repr)]
    return ", then ".join(shown) if len(shown) > 1 else shown[0]

"""Checker for an agent's state carried across a question (I17): every tally effect reads the
count its agent's key/value state must hold, and in an agent with a sliding window the model
calls its window must have counted (its conversation-manager state).

A tally effect (``Effect.tally``) reads a counter from its agent's key/value state, records the
value it read in the ledger (``seen``) and writes it back plus one.  What it must read comes from
the oracle alone (``expected["tallies"]``): the count of the earlier runs in the same state (the
same call of an ephemeral sub-agent; every call of a preserve_context sub-agent or the root),
carried across the question, the resume and a restart.  A state dropped on restore, or shared
between calls that each start anew, reads another count.

Runs are compared per step and per (agent, tool, toolUseId), as a multiset: twin calls sharing
ids may run in either order.  Where the step ran that call another number of times than the
oracle says, the runs are I15's to report, not compared here; an expectation the oracle does
not predict (after a deploy) is not compared either.  The window's counts
(``expected["window_calls"]``, the ledger's ``window_calls``) are compared the same way: a
restore that drops the conversation-manager state, or takes it for the initial one, reads
another count, even where the window has trimmed nothing yet (so what the model is sent, which
I6 compares, is the same).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Final

from fakes.effects import EFFECT, SEEN, WINDOW_CALLS, is_effect
from harness.checkers.records import Run, run_text
from harness.checkers.violation import Invariant, Violation
from harness.history import History, StepRecord

STATE_CARRIED = Invariant("I17", "state-carried")


# what is read, where the oracle's expectation and the ledger's record of it are, and how a
# violation names it
READS: Final = (
    ("tallies", SEEN, "{counts} from its agent's state"),
    (
        "window_calls",
        WINDOW_CALLS,
        "{counts} model call(s) from its agent's window (its conversation-manager state)",
    ),
)


def state_carried(history: History) -> list[Violation]:
    """I17: every run of a tally effect reads the count its agent's key/value state holds, and
    the model calls its agent's window counted."""
    found: list[Violation] = []
    for step in history.steps:
        for expectation, field, what in READS:
            expected = _expected(step, expectation)
            seen = _seen(step, field)
            for run in sorted(expected):
                counts = expected[run]
                read = seen.get(run, [])
                if None in counts or len(read) != len(counts):
                    continue
                if sorted(read, key=repr) != sorted(counts, key=repr):
                    found.append(
                        STATE_CARRIED.violation(
                            step.index,
                            f"{run_text(run)} reads {what.format(counts=_counts(counts))}",
                            f"it read {_counts(read)}",
                        )
                    )
    return found


def _expected(step: StepRecord, expectation: str) -> dict[Run, list[int | None]]:
    found: dict[Run, list[int | None]] = defaultdict(list)
    for agent, tool, tool_use_id, count in step.expected.get(expectation, ()):
        found[(str(agent), str(tool), str(tool_use_id))].append(count)
    return found


def _seen(step: StepRecord, field: str) -> dict[Run, list[int | None]]:
    found: dict[Run, list[int | None]] = defaultdict(list)
    for record in step.executions:
        if is_effect(record):
            run = (str(record.get("agent")), str(record[EFFECT]), str(record.get("tool_use_id")))
            value = record.get(field)
            found[run].append(value if isinstance(value, int) else None)
    return found


def _counts(counts: list[int | None]) -> str:
    shown = ["nothing" if count is None else str(count) for count in sorted(counts, key=repr)]
    return ", then ".join(shown) if len(shown) > 1 else shown[0]

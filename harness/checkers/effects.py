"""Checker for ordinary tools with a side effect (I15): each scripted call runs exactly once.

What must run comes from the oracle alone (``expected["effects"]``: the calls each step plays
for the first time); what ran is the ledger's ``effect`` records.  A run beyond what the steps so
far allow (again on resume, during a restart, after a restart) is reported at the step where it
happened; a call that never ran at all is reported at the last step.
"""

from __future__ import annotations

from collections import Counter

from harness.checkers.records import Run, effects_run, expected_effects, run_text, times
from harness.checkers.violation import Invariant, Violation
from harness.history import History

SIDE_EFFECTS_ONCE = Invariant("I15", "side-effects-run-once")


def side_effects_run_once(history: History) -> list[Violation]:
    """I15: every scripted call of an ordinary tool runs once, never again on resume or after
    a restart, and none runs that the scenario never plays."""
    ran: Counter[Run] = Counter()
    allowed: Counter[Run] = Counter()
    found: list[Violation] = []
    for step in history.steps:
        here = Counter(effects_run(step))
        ran.update(here)
        allowed.update(expected_effects(step))
        for run in sorted(here):
            if ran[run] > allowed[run]:
                found.append(
                    SIDE_EFFECTS_ONCE.violation(
                        step.index,
                        f"{run_text(run)} {_at_most(allowed[run])}",
                        f"it ran {times(ran[run])}",
                    )
                )
    if history.steps:
        last = history.steps[-1].index
        for run in sorted(allowed):
            if ran[run] < allowed[run]:
                found.append(
                    SIDE_EFFECTS_ONCE.violation(
                        last,
                        f"{run_text(run)} runs {times(allowed[run])} over the scenario",
                        f"it ran {times(ran[run])}" if ran[run] else "it never ran",
                    )
                )
    return found


def _at_most(count: int) -> str:
    return "does not run yet" if count == 0 else f"runs at most {times(count)} so far"

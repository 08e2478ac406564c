"""Ordinary tools with a side effect: a lookup, a write.  They ask nothing and run at once.

Every run is appended to the same ledger as the protected actions' (it outlives restarts), as a
record ``{"effect": tool, "agent": agent path, "tool_use_id": id}``, so "each scripted call ran
exactly once, never again on resume" is checkable.  A protected action's record has an
``action`` key instead; ``is_effect`` tells them apart.  A tally effect's record also has
``seen``: the counter it read from its agent's key/value state before writing it back plus one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from fakes.protected import Ledger

EFFECT: Final = "effect"
SEEN: Final = "seen"  # a tally effect's record: the counter it read from its agent's state


def is_effect(record: dict[str, Any]) -> bool:
    """Whether a ledger record is an ordinary tool's run (not a protected action's)."""
    return EFFECT in record


@dataclass(frozen=True)
class OrdinaryTool:
    tool: str

    def run(self, ledger: Ledger, *, agent: str, tool_use_id: str, seen: int | None = None) -> str:
        """Run it: record the run in the ledger, say what it did.  A tally effect passes the
        counter it read from its agent's key/value state as ``seen``, recorded with the run."""
        record: dict[str, Any] = {EFFECT: self.tool, "agent": agent, "tool_use_id": tool_use_id}
        if seen is not None:
            record[SEEN] = seen
        ledger.log.append(record)
        return f"{self.tool}: done"


def read_tally(state: Any, key: str) -> int:
    """The counter under ``key`` of a key/value state's value (0 when absent or not a count)."""
    value = state.get(key) if state is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0

"""Ordinary tools with a side effect: a lookup, a write.  They ask nothing and run at once.

Every run is appended to the same ledger as the protected actions' (it outlives restarts), as a
record ``{"effect": tool, "agent": agent path, "tool_use_id": id}``, so "each scripted call ran
exactly once, never again on resume" is checkable.  A protected action's record has an
``action`` key instead; ``is_effect`` tells them apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from fakes.protected import Ledger

EFFECT: Final = "effect"


def is_effect(record: dict[str, Any]) -> bool:
    """Whether a ledger record is an ordinary tool's run (not a protected action's)."""
    return EFFECT in record


@dataclass(frozen=True)
class OrdinaryTool:
    tool: str

    def run(self, ledger: Ledger, *, agent: str, tool_use_id: str) -> str:
        """Run it: record the run in the ledger, say what it did."""
        ledger.log.append({EFFECT: self.tool, "agent": agent, "tool_use_id": tool_use_id})
        return f"{self.tool}: done"

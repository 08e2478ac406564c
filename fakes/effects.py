"""Ordinary tools with a side effect: a lookup, a write.  They ask nothing and run at once.

Every run is appended to the same ledger as the protected actions' (it outlives restarts), as a
record ``{"effect": tool, "agent": agent path, "tool_use_id": id}``, so "each scripted call ran
exactly once, never again on resume" is checkable.  A protected action's record has an
``action`` key instead; ``is_effect`` tells them apart.  A tally effect's record also has
``seen``: the counter it read from its agent's key/value state before writing it back plus one,
and in an agent with a sliding window ``window_calls``: the model calls the window had counted
(its conversation-manager state).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from fakes.protected import Ledger

EFFECT: Final = "effect"
SEEN: Final = "seen"  # a tally effect's record: the counter it read from its agent's state
WINDOW_CALLS: Final = "window_calls"  # and the model calls its agent's window had counted


def is_effect(record: dict[str, Any]) -> bool:
    """Whether a ledger record is an ordinary tool's run (not a protected action's)."""
    return EFFECT in record


@dataclass(frozen=True)
class OrdinaryTool:
    tool: str

    def run(
        self,
        ledger: Ledger,
        *,
        agent: str,
        tool_use_id: str,
        seen: int | None = None,
        window_calls: int | None = None,
    ) -> str:
        """Run it: record the run in the ledger, say what it did.  A tally effect passes the
        counter it read from its agent's key/value state as ``seen``, and in an agent with a
        window the model calls the window counted as ``window_calls``, recorded with the run."""
        record: dict[str, Any] = {EFFECT: self.tool, "agent": agent, "tool_use_id": tool_use_id}
        if seen is not None:
            record[SEEN] = seen
        if window_calls is not None:
            record[WINDOW_CALLS] = window_calls
        ledger.log.append(record)
        return f"{self.tool}: done"


def read_window_calls(state: Any) -> int | None:
    """The model calls a sliding window's state counted (``model_call_count``), None when the
    state holds no count (no window)."""
    value = state.get("model_call_count") if isinstance(state, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_tally(state: Any, key: str) -> int:
    """The counter under ``key`` of a key/value state's value (0 when absent or not a count)."""
    value = state.get(key) if state is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0

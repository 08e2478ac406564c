"""Where strands-agents keeps a sub-agent's interrupted turn in its session files, how the
corruption campaigns damage it, and how stored documents are read and measured
(``harness.targets.strands`` stores and restores them)."""

from __future__ import annotations

import json
from typing import Any, Final

from fakes.corruption import CorruptionNotApplicable, damage_envelope

TURNS_KEY: Final = "sub_agent_interrupted_turns"  # where 1.59+ keeps an ephemeral turn


class StrandsContinuationFormat:
    """Where 1.59+ keeps an ephemeral sub-agent's turn in a session file, and its damages."""

    def locate(self, document: Any) -> list[tuple[Any, ...]]:
        found: list[tuple[Any, ...]] = []
        find_turns(document, (), found)
        return found

    def damage(self, corruption: str, entry: Any) -> Any:
        if damage_envelope(corruption, entry):
            return entry
        data = entry["data"]
        if corruption == "field_missing":
            entry.pop("created_at", None)
        elif corruption == "previous_shape":
            return {"session_snapshot": data}
        elif corruption == "conversation_manager_other":
            manager = data.get("conversation_manager_state")
            if isinstance(manager, dict):
                manager["__name__"] = (
                    "NullConversationManager"
                    if manager.get("__name__") != "NullConversationManager"
                    else "SlidingWindowConversationManager"
                )
        else:
            raise CorruptionNotApplicable(f"unknown corruption {corruption!r}")
        return entry


def find_turns(value: Any, path: tuple[Any, ...], found: list[tuple[Any, ...]]) -> None:
    if isinstance(value, dict):
        for key in sorted(value):
            here = (*path, key)
            if key == TURNS_KEY and isinstance(value[key], dict):
                for call in sorted(value[key]):
                    found.append((*here, call))
                    find_turns(value[key][call], (*here, call), found)
            else:
                find_turns(value[key], here, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            find_turns(item, (*path, index), found)


def dig(stored: bytes | None, *path: str) -> Any:
    """The value at ``path`` in a stored JSON document; None if absent or damaged."""
    try:
        value = json.loads(stored or b"{}")
        for key in path:
            value = value[key]
    except (ValueError, KeyError, TypeError):
        return None
    return value


SOME_TIME: Final = "2000-01-01T00:00:00.000000Z"  # the usual width of a snapshot's created_at


def timeless(value: Any) -> Any:
    """``value`` with every ``created_at`` timestamp replaced by one of the same usual width:
    the SDK drops the microseconds when they happen to be zero, and a size must not depend on
    the clock."""
    if isinstance(value, dict):
        return {
            key: SOME_TIME if key == "created_at" and isinstance(item, str) else timeless(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [timeless(item) for item in value]
    return value

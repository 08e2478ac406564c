"""Continuations: an ephemeral sub-agent's interrupted turn, stored as data in its parent.

Invariants kept here (docs/invariants.md: I6, I7 and I9):

* **Fidelity.** ``restore(store(s), manager) == s`` for every parked agent state ``s``: messages,
  key/value state, model state, conversation-manager state and interrupt state (which carries the
  pending tool call, hence the original toolUseId) all come back, equal and unshared.
* **Bounded.** A continuation holds one parked turn of an agent that starts every call empty, so
  its size does not depend on how many calls came before; the parent drops it once consumed.
* **Loud, atomic failure.** ``restore`` either returns a complete state or raises
  ``ContinuationError`` naming what is wrong; it never returns a partly restored agent.  Unknown
  schema versions, missing or extra fields, wrong types, the previous revision's shape, another
  call's turn and a conversation-manager type other than the rebuilt sub-agent's are refused.
  Each entry carries the SHA-256 digest of its own canonical JSON, so damage the shape checks
  cannot see (a key deleted or a value changed deep inside messages or state) is refused too,
  before anything of the turn is used.

Pure functions over JSON-shaped data: no state, no I/O.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Final

from harness.reference.state import JSON, AgentState, copy_json

SCHEMA_VERSION: Final = "1"
ENTRY_FIELDS: Final = frozenset(
    {"schema_version", "owner", "conversation_manager", "data", "digest"}
)
DATA_FIELDS: Final = {
    "model_turns": int,
    "messages": list,
    "state": dict,
    "model_state": dict,
    "conversation_manager_state": dict,
    "interrupt_state": dict,
}
INTERRUPT_STATE_FIELDS: Final = {"activated": bool, "interrupts": list, "context": dict}
INTERRUPT_FIELDS: Final = {"id": str, "name": str}


class ContinuationError(ValueError):
    """A stored continuation cannot be restored; nothing was applied."""


def store(parked: AgentState, owner: JSON, conversation_manager_type: str) -> dict[str, JSON]:
    """The continuation of a parked turn, as one JSON-shaped entry bound to its ``owner`` call."""
    if not parked.interrupt_state.activated:
        raise ValueError("only a parked (interrupted) turn has a continuation")
    entry: dict[str, JSON] = {
        "schema_version": SCHEMA_VERSION,
        "owner": copy_json(owner),
        "conversation_manager": conversation_manager_type,
        "data": parked.to_json(),
    }
    entry["digest"] = digest(entry)
    return entry


def digest(entry: Mapping[str, JSON]) -> str:
    """SHA-256 of the entry's canonical JSON, its own digest left out."""
    content = {name: value for name, value in entry.items() if name != "digest"}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def restore(entry: JSON, owner: JSON, conversation_manager_type: str) -> AgentState:
    """The parked state held by ``entry`` for the call ``owner``, onto a sub-agent rebuilt with
    that conversation-manager type."""
    _require(isinstance(entry, dict), "the stored turn is not an object")
    fields = set(entry)
    if "schema_version" not in fields and {"messages", "interrupt_state"} <= fields:
        raise ContinuationError("the stored turn has the previous revision's shape (no schema)")
    _require(fields == ENTRY_FIELDS, f"the stored turn has fields {sorted(fields)}")
    version = entry["schema_version"]
    _require(version == SCHEMA_VERSION, f"unsupported schema version {version!r}")
    _require(
        entry["digest"] == digest(entry),
        "the stored turn does not match its digest: it was changed in storage",
    )
    _require(
        entry["owner"] == owner, f"the stored turn belongs to {entry['owner']!r}, not {owner!r}"
    )
    stored_type = entry["conversation_manager"]
    _require(
        stored_type == conversation_manager_type,
        f"stored for conversation manager {stored_type!r}, "
        f"the sub-agent now has {conversation_manager_type!r}",
    )
    data = entry["data"]
    _require_fields(data, DATA_FIELDS, "data")
    interrupt_state = data["interrupt_state"]
    _require_fields(interrupt_state, INTERRUPT_STATE_FIELDS, "data.interrupt_state")
    _require(interrupt_state["activated"], "the stored turn is not parked")
    for index, interrupt in enumerate(interrupt_state["interrupts"]):
        where = f"data.interrupt_state.interrupts[{index}]"
        _require_fields(interrupt, INTERRUPT_FIELDS, where, exact=False)
        _require({"reason", "response"} <= set(interrupt), f"{where} lacks reason or response")
    return AgentState.from_json(data)


def _require(condition: object, problem: str) -> None:
    if not condition:
        raise ContinuationError(problem)


def _require_fields(
    value: JSON, expected: Mapping[str, type], where: str, *, exact: bool = True
) -> None:
    _require(isinstance(value, dict), f"{where} is not an object")
    missing = sorted(set(expected) - set(value))
    _require(not missing, f"{where} lacks {missing}")
    extra = sorted(set(value) - set(expected))
    _require(not exact or not extra, f"{where} has unexpected fields {extra}")
    for name, kind in expected.items():
        _require(isinstance(value[name], kind), f"{where}.{name} is not a {kind.__name__}")

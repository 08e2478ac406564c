"""Named corruptions of a stored continuation: what a real database and a version skew do to it.

Each name describes damage in terms every target understands; a target's ``ContinuationFormat``
says where its continuations sit inside its stored documents and how the format-specific damages
look in its own shape (its schema-version field, its previous revision's shape, ...).  The generic
ones (``truncated``, ``deleted``, ``foreign``) are applied here the same way for every format.
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal, Protocol, get_args

Corruption = Literal[
    "schema_version_other",
    "schema_version_missing",
    "payload_missing",
    "field_missing",
    "type_swap",
    "previous_shape",
    "conversation_manager_other",
    "truncated",
    "deleted",
    "foreign",
]
CORRUPTIONS: Final[tuple[str, ...]] = get_args(Corruption)
FORMAT_SPECIFIC: Final = frozenset(
    {
        "schema_version_other",
        "schema_version_missing",
        "payload_missing",
        "field_missing",
        "type_swap",
        "previous_shape",
        "conversation_manager_other",
    }
)
DESCRIPTIONS: Final[dict[str, str]] = {
    "schema_version_other": "the schema version is one the code does not know",
    "schema_version_missing": "the schema version field is gone",
    "payload_missing": "the turn's payload (the agent's data) is gone",
    "field_missing": "a required field inside the payload is gone",
    "type_swap": "a list inside the payload holds a string instead",
    "previous_shape": "the turn is stored in the previous revision's shape",
    "conversation_manager_other": "the turn was stored for another conversation-manager type",
    "truncated": "the stored turn is cut in half (its JSON text, kept as a string)",
    "deleted": "the stored turn is gone",
    "foreign": "the stored turn is another call's",
}


class CorruptionNotApplicable(ValueError):
    """The stored data has nothing this corruption can apply to."""


class ContinuationFormat(Protocol):
    def locate(self, document: Any) -> list[tuple[Any, ...]]:
        """Paths (keys and indexes) to each continuation inside one stored JSON document."""

    def damage(self, corruption: str, entry: Any) -> Any:
        """The entry with a format-specific corruption applied (may modify it in place)."""


def damage_envelope(corruption: str, entry: Any) -> bool:
    """Apply, in place, a damage every versioned ``{"schema_version", "data"}`` envelope shares
    (the reference's and Strands' snapshots are both such envelopes); False if not one of those."""
    if not isinstance(entry, dict) or not isinstance(entry.get("data"), dict):
        raise CorruptionNotApplicable(f"{corruption}: the stored turn is already damaged")
    if corruption == "schema_version_other":
        entry["schema_version"] = "2.0"
    elif corruption == "schema_version_missing":
        entry.pop("schema_version", None)
    elif corruption == "payload_missing":
        del entry["data"]
    elif corruption == "type_swap":
        entry["data"]["messages"] = json.dumps(entry["data"].get("messages"))
    else:
        return False
    return True


def apply(
    corruption: str,
    continuation_format: ContinuationFormat,
    document: Any,
    path: tuple[Any, ...],
    others: list[tuple[Any, tuple[Any, ...]]],
) -> None:
    """Corrupt the continuation at ``path`` in ``document`` in place."""
    if corruption not in CORRUPTIONS:
        raise CorruptionNotApplicable(f"unknown corruption {corruption!r}")
    container = document
    for step in path[:-1]:
        container = container[step]
    last = path[-1]
    entry = container[last]
    if corruption == "deleted":
        del container[last]
    elif corruption == "truncated":
        text = json.dumps(entry, sort_keys=True)
        container[last] = text[: len(text) // 2]
    elif corruption == "foreign":
        if not others:
            raise CorruptionNotApplicable("foreign: only one continuation is stored")
        other_document, other_path = others[0]
        other = other_document
        for step in other_path:
            other = other[step]
        container[last] = json.loads(json.dumps(other))
    else:
        container[last] = continuation_format.damage(corruption, entry)

"""Named corruptions of a stored continuation: what a real database and a version skew do to it.

Each name describes damage in terms every target understands; a target's ``ContinuationFormat``
says where its continuations sit inside its stored documents and how the format-specific damages
look in its own shape (its schema-version field, its previous revision's shape, ...).  The generic
ones (``truncated``, ``deleted``, ``foreign``, and the fuzzing damages ``key_deleted`` and
``value_swapped``) are applied here the same way for every format.

The fuzzing damages take a ``pick``: which node of the stored turn they hit, counted in a fixed
depth-first order over its keys and list items (modulo their number), so "any key at any depth"
is one integer that hypothesis shrinks toward the first node.  ``document_truncated`` cuts the
whole stored document (not just the turn) at byte ``pick``; the store applies it, since it is
damage to bytes, not to JSON.
"""

from __future__ import annotations

import json
from typing import Any, Final, Protocol, get_args

# the names and what each means are part of the scenario language
from scenarios.corruptions import CORRUPTIONS, FormatSpecificCorruption

FORMAT_SPECIFIC: Final = frozenset(get_args(FormatSpecificCorruption))
# what any stored JSON document can suffer, whatever its format
GENERIC: Final = frozenset(CORRUPTIONS) - FORMAT_SPECIFIC


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
    elif corruption == "schema_version_newer":
        entry["schema_version"] = newer_version(entry.get("schema_version"))
    elif corruption == "payload_missing":
        del entry["data"]
    elif corruption == "type_swap":
        entry["data"]["messages"] = json.dumps(entry["data"].get("messages"))
    else:
        return False
    return True


def newer_version(version: Any) -> str:
    """The version after ``version``: "1" -> "2", "1.0" -> "1.1" (the last number goes up)."""
    text = str(version)
    head, _, last = text.rpartition(".")
    if not last.isdigit():
        return text + ".1"
    return f"{head}.{int(last) + 1}" if head else str(int(last) + 1)


def nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key and list item inside ``value``, depth first, keys in sorted order."""
    found: list[tuple[Any, ...]] = []
    children: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        children = sorted(value.items(), key=lambda item: str(item[0]))
    elif isinstance(value, list):
        children = list(enumerate(value))
    for key, child in children:
        found.append((*path, key))
        found.extend(nodes(child, (*path, key)))
    return found


def swapped(value: Any) -> Any:
    """A value of another JSON type, derived from ``value`` (never equal to it)."""
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return {str(index): item for index, item in enumerate(value)}
    return list(value.values()) if isinstance(value, dict) else None


def _damage_node(corruption: str, entry: Any, pick: int) -> str:
    """Delete or swap the ``pick``-th node of ``entry`` in place; the path it hit."""
    found = nodes(entry)
    if not found:
        raise CorruptionNotApplicable(f"{corruption}: the stored turn has no keys")
    path = found[pick % len(found)]
    parent = entry
    for step in path[:-1]:
        parent = parent[step]
    if corruption == "key_deleted":
        del parent[path[-1]]
    else:
        parent[path[-1]] = swapped(parent[path[-1]])
    return ".".join(str(step) for step in path)


def apply(
    corruption: str,
    continuation_format: ContinuationFormat,
    document: Any,
    path: tuple[Any, ...],
    others: list[tuple[Any, tuple[Any, ...]]],
    pick: int = 0,
) -> str:
    """Corrupt the continuation at ``path`` in ``document`` in place; what was hit, if more
    precise than the continuation itself (the path of a fuzzed node), else ""."""
    if corruption not in CORRUPTIONS or corruption == "document_truncated":
        raise CorruptionNotApplicable(f"{corruption!r} is not damage to a stored turn")
    container = document
    for step in path[:-1]:
        container = container[step]
    last = path[-1]
    entry = container[last]
    if corruption in ("key_deleted", "value_swapped"):
        return _damage_node(corruption, entry, pick)
    if corruption == "deleted":
        del container[last]
    elif corruption == "truncated":
        text = json.dumps(entry, sort_keys=True)
        container[last] = text[: len(text) // 2]
    elif corruption == "foreign":
        if not others:
            raise CorruptionNotApplicable("foreign: only one continuation is stored")
        other_document, other_path = others[pick % len(others)]
        other = other_document
        for step in other_path:
            other = other[step]
        container[last] = json.loads(json.dumps(other))
    else:
        container[last] = continuation_format.damage(corruption, entry)
    return ""

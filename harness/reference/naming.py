"""Naming, the upward direction: how an interrupt raised deep in the tree is named at the root.

Invariant kept here (docs/invariants.md: I1, "unique names up"):

    root_visible_id(outer, local) == root_visible_id(outer2, local2)
        only if outer == outer2 and local == local2

because ``split_root_visible_id`` is its exact inverse.  The outer toolUseId is percent-quoted with
no safe characters, so it never contains the ``:`` separator, and the local id is kept verbatim as
the tail.  Names compose per level: a nested id is itself a valid local id for the level above.

Ordinary tool interrupts get a local id from the toolUseId and the interrupt name, built the same
way, under a different prefix, so a nested id can never equal an ordinary one.

Pure functions over strings: no state, no I/O.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

NESTED_PREFIX = "sub:"
TOOL_PREFIX = "tool:"


class NotANestedId(ValueError):
    """The id was not produced by ``root_visible_id``."""


def _quote(text: str) -> str:
    return quote(text, safe="")


def tool_interrupt_id(tool_use_id: str, interrupt_name: str) -> str:
    """The local id of an interrupt raised by an ordinary tool call."""
    return f"{TOOL_PREFIX}{_quote(tool_use_id)}:{_quote(interrupt_name)}"


def root_visible_id(outer_tool_use_id: str, local_id: str) -> str:
    """The id the parent shows for an interrupt its sub-agent raised under ``local_id``."""
    return f"{NESTED_PREFIX}{_quote(outer_tool_use_id)}:{local_id}"


def split_root_visible_id(nested_id: str) -> tuple[str, str]:
    """The exact inverse of ``root_visible_id``: ``(outer_tool_use_id, local_id)``."""
    if not nested_id.startswith(NESTED_PREFIX):
        raise NotANestedId(nested_id)
    quoted_outer, separator, local_id = nested_id[len(NESTED_PREFIX) :].partition(":")
    if not separator or quote(unquote(quoted_outer), safe="") != quoted_outer:
        raise NotANestedId(nested_id)
    return unquote(quoted_outer), local_id


def raised_by_call(interrupt_id: str, call: str) -> bool:
    """Whether ``interrupt_id`` was raised by the tool call ``call``: its own question
    (``tool_interrupt_id``), or one its sub-agent raised under it (``root_visible_id``)."""
    own = interrupt_id.startswith(f"{TOOL_PREFIX}{_quote(call)}:")
    return own or owned_by_call(interrupt_id, call)


def owned_by_call(nested_id: str, outer_tool_use_id: str) -> bool:
    """Whether ``nested_id`` names an interrupt raised under the tool call ``outer_tool_use_id``."""
    try:
        outer, _ = split_root_visible_id(nested_id)
    except NotANestedId:
        return False
    return outer == outer_tool_use_id

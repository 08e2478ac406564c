"""Routing, the downward direction: which of the parent's answers belong to one sub-agent call.

Invariants kept here (docs/invariants.md: I2, I3 and I10):

* **Exact delivery.** ``responses_for_call(parent, outer)`` holds exactly the answered parent
  interrupts whose root-visible id was minted under ``outer`` by ``naming.root_visible_id``, each
  under the local id it had in the sub-agent (``naming.split_root_visible_id``).  No other call's
  answers, no unanswered questions.
* **Ownership.** ``owns_pending_turn(parent, outer)`` is true only when the parent holds an
  interrupt under ``outer``'s prefix.  A sub-agent resumes only for a call that owns its parked
  turn, so it never picks up another caller's turn.
* **Resume is decided by state, not by answers.** Whether a call resumes is for the sub-agent's
  interrupt state to say; an empty answer set is a valid resume (the sub-agent asks again).

Pure functions over interrupts: no state, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.reference.naming import owned_by_call, split_root_visible_id
from harness.reference.state import JSON, Interrupt


def owns_pending_turn(parent_interrupts: Iterable[Interrupt], outer_tool_use_id: str) -> bool:
    """Whether the parent holds any interrupt raised under the call ``outer_tool_use_id``."""
    return any(owned_by_call(interrupt.id, outer_tool_use_id) for interrupt in parent_interrupts)


def responses_for_call(
    parent_interrupts: Iterable[Interrupt], outer_tool_use_id: str
) -> dict[str, JSON]:
    """The parent's answers owned by one call, keyed by the sub-agent's local interrupt ids."""
    local_responses: dict[str, JSON] = {}
    for interrupt in parent_interrupts:
        if interrupt.response is None or not owned_by_call(interrupt.id, outer_tool_use_id):
            continue
        _, local_id = split_root_visible_id(interrupt.id)
        local_responses[local_id] = interrupt.response
    return local_responses

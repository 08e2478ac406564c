"""The plain data an agent is made of: messages, key/value state, model state,
conversation-manager state and interrupt state.

Everything here is JSON-shaped and copied on the way in and out, so no two agents (and no agent
and its stored continuation) ever share a mutable object.  Sharing by reference is exactly the
bug the reference exists to rule out: a resume must work from data alone.
"""

from __future__ import annotations

import marshal
from dataclasses import dataclass, field
from typing import Any

JSON = Any  # a value json.dumps accepts: None, bool, int, float, str, list and dict of those
Message = dict[str, Any]  # {"role": "user" | "assistant", "content": [content block, ...]}


def copy_json(value: JSON) -> JSON:
    """A copy of JSON-shaped ``value`` that shares no dict or list with it.

    ``copy.deepcopy`` does the same for any object, at several times the cost: it keeps a memo of
    every object it met (for cycles and shared references, which JSON cannot have).  A container
    goes through ``marshal`` (C, about twice as fast as walking it here); format version 2 writes
    no back-references, so two equal parts of the copy are two objects, as in JSON.  A container
    holding something marshal cannot write (a subclass of dict, say) is walked.
    """
    if isinstance(value, (dict, list, tuple)):
        try:
            return marshal.loads(marshal.dumps(value, _NO_SHARING))
        except ValueError:
            pass
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    if isinstance(value, tuple):
        return tuple(copy_json(item) for item in value)
    return value  # None, bool, int, float, str: immutable


_NO_SHARING = 2  # marshal's last format without references to objects written before


@dataclass(frozen=True)
class Interrupt:
    """A named question raised by a tool, waiting for a human's response."""

    id: str
    name: str
    reason: JSON
    response: JSON = None

    def to_json(self) -> dict[str, JSON]:
        return copy_json(self.view())  # type: ignore[no-any-return]

    def view(self) -> dict[str, JSON]:
        """``to_json`` without the copy: it shares this object's values; read it only."""
        return {"id": self.id, "name": self.name, "reason": self.reason, "response": self.response}

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> Interrupt:
        return cls.owning(copy_json(data))

    @classmethod
    def owning(cls, data: dict[str, JSON]) -> Interrupt:
        """``from_json`` of data nothing else holds: its values are taken, not copied."""
        return cls(
            id=data["id"], name=data["name"], reason=data["reason"], response=data["response"]
        )


@dataclass
class InterruptState:
    """Whether the agent's turn is parked, on which questions, with what the loop needs to resume.

    ``interrupts`` keeps answered questions too: a tool that asked twice is re-run from the start
    on resume and must get its first answer back.  ``pending`` is what the human still owes.
    ``context`` is the parked turn's scratch space; keys the loop did not create survive parking.
    """

    activated: bool = False
    interrupts: list[Interrupt] = field(default_factory=list)
    context: dict[str, JSON] = field(default_factory=dict)

    @property
    def pending(self) -> list[Interrupt]:
        return [interrupt for interrupt in self.interrupts if interrupt.response is None]

    def to_json(self) -> dict[str, JSON]:
        return copy_json(self.view())  # type: ignore[no-any-return]

    def view(self) -> dict[str, JSON]:
        """``to_json`` without the copy: it shares this object's values; read it only."""
        return {
            "activated": self.activated,
            "interrupts": [interrupt.view() for interrupt in self.interrupts],
            "context": self.context,
        }

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> InterruptState:
        return cls.owning(copy_json(data))

    @classmethod
    def owning(cls, data: dict[str, JSON]) -> InterruptState:
        """``from_json`` of data nothing else holds: its values are taken, not copied."""
        return cls(
            activated=data["activated"],
            interrupts=[Interrupt.owning(item) for item in data["interrupts"]],
            context=data["context"],
        )


@dataclass
class AgentState:
    """Everything about one agent that must survive a restart for its turn to resume."""

    messages: list[Message] = field(default_factory=list)
    state: dict[str, JSON] = field(default_factory=dict)
    model_state: dict[str, JSON] = field(default_factory=dict)
    conversation_manager_state: dict[str, JSON] = field(default_factory=dict)
    interrupt_state: InterruptState = field(default_factory=InterruptState)
    model_turns: int = 0  # model turns so far: part of every tool call's identity (agent.py)

    def to_json(self) -> dict[str, JSON]:
        return copy_json(self.view())  # type: ignore[no-any-return]

    def view(self) -> dict[str, JSON]:
        """``to_json`` without the copy: it shares this object's values; read it only."""
        return {
            "model_turns": self.model_turns,
            "messages": self.messages,
            "state": self.state,
            "model_state": self.model_state,
            "conversation_manager_state": self.conversation_manager_state,
            "interrupt_state": self.interrupt_state.view(),
        }

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> AgentState:
        return cls.owning(copy_json(data))

    @classmethod
    def owning(cls, data: dict[str, JSON]) -> AgentState:
        """``from_json`` of data nothing else holds (one copy of the whole, not one per part):
        its values are taken, not copied."""
        return cls(
            messages=data["messages"],
            state=data["state"],
            model_state=data["model_state"],
            conversation_manager_state=data["conversation_manager_state"],
            interrupt_state=InterruptState.owning(data["interrupt_state"]),
            model_turns=data["model_turns"],
        )

    def copy(self) -> AgentState:
        """A copy sharing nothing with this state (``from_json`` copies what it reads)."""
        return AgentState.from_json(self.view())

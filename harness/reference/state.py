"""The plain data an agent is made of: messages, key/value state, model state,
conversation-manager state and interrupt state.

Everything here is JSON-shaped and copied on the way in and out, so no two agents (and no agent
and its stored continuation) ever share a mutable object.  Sharing by reference is exactly the
bug the reference exists to rule out: a resume must work from data alone.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

JSON = Any  # a value json.dumps accepts: None, bool, int, float, str, list and dict of those
Message = dict[str, Any]  # {"role": "user" | "assistant", "content": [content block, ...]}


@dataclass(frozen=True)
class Interrupt:
    """A named question raised by a tool, waiting for a human's response."""

    id: str
    name: str
    reason: JSON
    response: JSON = None

    def to_json(self) -> dict[str, JSON]:
        return {
            "id": self.id,
            "name": self.name,
            "reason": copy.deepcopy(self.reason),
            "response": copy.deepcopy(self.response),
        }

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> Interrupt:
        return cls(
            id=data["id"],
            name=data["name"],
            reason=copy.deepcopy(data["reason"]),
            response=copy.deepcopy(data["response"]),
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
        return {
            "activated": self.activated,
            "interrupts": [interrupt.to_json() for interrupt in self.interrupts],
            "context": copy.deepcopy(self.context),
        }

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> InterruptState:
        return cls(
            activated=data["activated"],
            interrupts=[Interrupt.from_json(item) for item in data["interrupts"]],
            context=copy.deepcopy(data["context"]),
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
        return {
            "model_turns": self.model_turns,
            "messages": copy.deepcopy(self.messages),
            "state": copy.deepcopy(self.state),
            "model_state": copy.deepcopy(self.model_state),
            "conversation_manager_state": copy.deepcopy(self.conversation_manager_state),
            "interrupt_state": self.interrupt_state.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> AgentState:
        return cls(
            messages=copy.deepcopy(data["messages"]),
            state=copy.deepcopy(data["state"]),
            model_state=copy.deepcopy(data["model_state"]),
            conversation_manager_state=copy.deepcopy(data["conversation_manager_state"]),
            interrupt_state=InterruptState.from_json(data["interrupt_state"]),
            model_turns=data["model_turns"],
        )

    def copy(self) -> AgentState:
        return AgentState.from_json(self.to_json())

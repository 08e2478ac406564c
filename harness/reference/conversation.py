"""Conversation managers: what part of the history the model is sent.

The sliding window trims the oldest messages, but only every ``per_turn`` model calls, so its
call counter is state: a restored agent that lost the counter trims at different calls and sends
the model different messages (the bug the review thread measured with ``per_turn=2``).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.reference.state import JSON, Message


@dataclass(frozen=True)
class NullConversationManager:
    """Sends the whole history; has no state."""

    type_name = "null"

    def initial_state(self) -> dict[str, JSON]:
        return {}

    def before_model_call(
        self, messages: list[Message], state: dict[str, JSON]
    ) -> tuple[list[Message], dict[str, JSON]]:
        return messages, state


@dataclass(frozen=True)
class SlidingWindow:
    """Keeps at most ``size`` messages, trimming before every ``per_turn``-th model call."""

    size: int
    per_turn: int = 1
    type_name = "sliding_window"

    def __post_init__(self) -> None:
        if self.size < 1 or self.per_turn < 1:
            raise ValueError("a sliding window needs size >= 1 and per_turn >= 1")

    def initial_state(self) -> dict[str, JSON]:
        return {"model_call_count": 0, "removed_message_count": 0}

    def before_model_call(
        self, messages: list[Message], state: dict[str, JSON]
    ) -> tuple[list[Message], dict[str, JSON]]:
        calls = int(state["model_call_count"]) + 1
        removed = int(state["removed_message_count"])
        kept = list(messages)
        if calls % self.per_turn == 0:
            cut = max(0, len(kept) - self.size)
            # never start the window on tool results whose tool call was cut away
            while cut < len(kept) - 1 and _is_tool_result(kept[cut]):
                cut += 1
            kept = kept[cut:]
            removed += cut
        return kept, {"model_call_count": calls, "removed_message_count": removed}


ConversationManager = NullConversationManager | SlidingWindow


def _is_tool_result(message: Message) -> bool:
    return any("toolResult" in block for block in message["content"])

"""Reading a Bedrock-style message list (the shape the reference and Strands share) as what the
scripted model needs: which messages are prompts and which are its own marked replies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fakes.model import Prompt, Reply, Said


def conversation_of(messages: Sequence[dict[str, Any]]) -> list[Said]:
    said: list[Said] = []
    for message in messages:
        blocks = message.get("content", [])
        texts = [block["text"] for block in blocks if isinstance(block, dict) and "text" in block]
        if message.get("role") == "assistant" and texts:
            said.append(Reply(texts[0]))
        elif message.get("role") == "user" and texts and not _has_tool_result(blocks):
            said.append(Prompt(texts[0]))
        else:
            said.append(None)
    return said


def _has_tool_result(blocks: Sequence[Any]) -> bool:
    return any(isinstance(block, dict) and "toolResult" in block for block in blocks)

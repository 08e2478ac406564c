"""Reading a Bedrock-style message list (the shape the reference and Strands share) as what the
scripted model needs: which messages are prompts, which are its own marked replies (and the
tool calls they make), and which carry tool results (with their texts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fakes.model import Prompt, Reply, Results, Said


def conversation_of(messages: Sequence[dict[str, Any]]) -> list[Said]:
    said: list[Said] = []
    for message in messages:
        blocks = message.get("content", [])
        texts = [block["text"] for block in blocks if isinstance(block, dict) and "text" in block]
        uses = tuple(_uses(blocks))
        if message.get("role") == "assistant" and (texts or uses):
            said.append(Reply(texts[0] if texts else "", uses))
        elif _has_tool_result(blocks):
            said.append(Results(tuple(_results(blocks))))
        elif message.get("role") == "user" and texts:
            said.append(Prompt(texts[0]))
        else:
            said.append(None)
    return said


def _uses(blocks: Sequence[Any]) -> list[str]:
    """The toolUseId of each tool call in an assistant message's blocks, in order."""
    return [
        str(block["toolUse"].get("toolUseId"))
        for block in blocks
        if isinstance(block, dict) and isinstance(block.get("toolUse"), dict)
    ]


def _has_tool_result(blocks: Sequence[Any]) -> bool:
    return any(isinstance(block, dict) and "toolResult" in block for block in blocks)


def _results(blocks: Sequence[Any]) -> list[tuple[str, str]]:
    """Each tool result's toolUseId and text (its text blocks, one line each)."""
    found = []
    for block in blocks:
        result = block.get("toolResult") if isinstance(block, dict) else None
        if isinstance(result, dict):
            found.append((str(result.get("toolUseId")), text_of(result.get("content"))))
    return found


def text_of(content: Any) -> str:
    """The text of a tool result's content: a string, or its text blocks, one line each."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(block["text"])
        for block in content
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    )

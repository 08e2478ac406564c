"""The scripted model (``fakes.model``) behind the OpenAI Agents SDK's model interface.

An ``agents.models.interface.Model`` whose ``get_response`` and ``stream_response`` return the
SDK's own response types, reading the Responses-format input items it is sent.  It is built on
first use, so the harness imports without the SDK installed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from fakes.model import Answer, Prompt, Reply, Results, Said, ScriptedModel
from harness.targets.fake_model import text_of


def conversation_of(items: Sequence[Any]) -> list[Said]:
    """Responses-format input items as the scripted model reads them (a function call as a reply
    with no text that makes that call, its output as a tool result)."""
    said: list[Said] = []
    for item in items:
        kind = item.get("type", "message") if isinstance(item, dict) else None
        role = item.get("role") if isinstance(item, dict) else None
        text = _text_of(item.get("content")) if kind == "message" else None
        if role == "assistant" and text is not None:
            said.append(Reply(text))
        elif role == "user" and text is not None:
            said.append(Prompt(text))
        elif kind == "function_call":  # a call is an item of its own, after its message
            said.append(Reply("", (str(item.get("call_id")),)))
        elif kind == "function_call_output":
            output = item.get("output")
            said.append(Results(((str(item.get("call_id")), text_of(output)),)))
        else:
            said.append(None)
    return said


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                return str(part["text"])
    return None


@functools.cache
def model_class() -> type:
    """The scripted model as an ``agents.models.interface.Model``, built on first use so this
    module imports without the SDK installed.

    Built once per process: a class definition holds no run's state (every build of a tree makes
    its own instances), and defining it again for every session cost up to a tenth of a short
    scenario's run."""
    from agents import Usage
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from openai.types.responses import (
        Response,
        ResponseCompletedEvent,
        ResponseCreatedEvent,
        ResponseFunctionToolCall,
        ResponseOutputItemAddedEvent,
        ResponseOutputItemDoneEvent,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    class ScriptedOpenAIModel(Model):  # type: ignore[misc]
        """The scripted model core behind the SDK's real model interface."""

        def __init__(self, core: ScriptedModel) -> None:
            self.core = core

        def _output(self, items: Any) -> tuple[list[Any], str]:
            listed = [{"role": "user", "content": items}] if isinstance(items, str) else items
            listed = [plain(item) for item in listed]
            scripted = self.core.next_turn(conversation_of(listed), len(listed), {})
            if isinstance(scripted.turn, Answer):
                return [_message(f"{scripted.marker} {scripted.turn.text}")], scripted.response_id
            output: list[Any] = [_message(scripted.marker)]
            for call in scripted.turn.calls:
                output.append(
                    ResponseFunctionToolCall(
                        type="function_call",
                        id=f"fc_{call.tool_use_id}",
                        call_id=call.tool_use_id,
                        name=call.tool,
                        arguments=json.dumps(dict(call.input)),
                        status="completed",
                    )
                )
            return output, scripted.response_id

        async def get_response(
            self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
        ) -> Any:
            output, response_id = self._output(input)
            return ModelResponse(output=output, usage=Usage(), response_id=response_id)

        async def stream_response(
            self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
        ) -> AsyncIterator[Any]:
            output, response_id = self._output(input)
            response = Response(
                id=response_id,
                created_at=0,
                model="scripted",
                object="response",
                output=output,
                parallel_tool_calls=True,
                tool_choice="auto",
                tools=[],
            )
            number = 0
            yield ResponseCreatedEvent(
                type="response.created", response=response, sequence_number=number
            )
            for index, item in enumerate(output):
                number += 1
                yield ResponseOutputItemAddedEvent(
                    type="response.output_item.added",
                    item=item,
                    output_index=index,
                    sequence_number=number,
                )
                number += 1
                yield ResponseOutputItemDoneEvent(
                    type="response.output_item.done",
                    item=item,
                    output_index=index,
                    sequence_number=number,
                )
            yield ResponseCompletedEvent(
                type="response.completed", response=response, sequence_number=number + 1
            )

    def _message(text: str) -> Any:
        return ResponseOutputMessage(
            id="msg_scripted",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
        )

    return ScriptedOpenAIModel


def plain(item: Any) -> Any:
    """An SDK object (a pydantic model) as JSON data; anything else as it is."""
    dump = getattr(item, "model_dump", None)
    return dump(mode="json") if callable(dump) else item

"""The scripted model (``fakes.model``) behind Google ADK's model interface.

A ``google.adk.models.BaseLlm`` (a pydantic model) whose ``generate_content_async`` yields one
``LlmResponse``, read off the ``types.Content`` list ADK sends.  ADK strips the ``adk-…`` call
ids it drew itself before a request leaves it, so a result whose call had no id of the model's
reads as a result of id ``""``; the ids the scripted model gives its calls are kept.  The class is
built on first use, so the harness imports without the SDK installed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from fakes.model import Answer, Prompt, Reply, Results, Said, ScriptedModel
from harness.targets.adapter import UUID


def conversation_of(contents: Sequence[Any]) -> list[Said]:
    """ADK's request contents as the scripted model reads them: a model turn by its first text
    (where the marker is) with the ids of the function calls it makes (``""`` where ADK stripped
    its own), a user turn carrying function responses as tool results, a user's text as a
    prompt."""
    said: list[Said] = []
    for content in contents:
        parts = list(getattr(content, "parts", None) or ())
        texts = [part.text for part in parts if getattr(part, "text", None)]
        responses = [part.function_response for part in parts if part.function_response]
        uses = tuple(
            str(part.function_call.id or "")
            for part in parts
            if getattr(part, "function_call", None) is not None
        )
        if content.role == "model" and (texts or uses):
            said.append(Reply(texts[0] if texts else "", uses))
        elif responses:
            said.append(
                Results(
                    tuple((str(reply.id or ""), result_text(reply.response)) for reply in responses)
                )
            )
        elif content.role == "user" and texts:
            said.append(Prompt(texts[0]))
        else:
            said.append(None)
    return said


def result_text(response: Any) -> str:
    """A function response's text: its ``result`` when that is a string (how ADK wraps a tool's
    plain return value), else the whole response as JSON (an ``error``, a structured result).
    The ids ADK drew itself (``adk-<uuid4>``, quoted in AgentTool's error result) read as
    ``<uuid>``: the model's choice never depends on them, and the journal keeps what it reads."""
    if isinstance(response, dict) and isinstance(response.get("result"), str):
        text = str(response["result"])
    else:
        text = json.dumps(response, sort_keys=True, ensure_ascii=False, default=str)
    return UUID.sub("<uuid>", text)


@functools.cache
def model_class() -> type:
    """The scripted model as a ``BaseLlm``, defined once per process (a class holds no run's
    state: every build of a tree makes its own instances)."""
    from google.adk.models import BaseLlm, LlmResponse
    from google.genai import types
    from pydantic import ConfigDict

    class ScriptedAdkModel(BaseLlm):  # type: ignore[misc]
        """The scripted model core behind ADK's real model interface."""

        model_config = ConfigDict(arbitrary_types_allowed=True)
        core: Any = None  # the ScriptedModel (pydantic keeps it as it is)

        async def generate_content_async(
            self, llm_request: Any, stream: bool = False
        ) -> AsyncIterator[Any]:
            contents = list(llm_request.contents or ())
            core: ScriptedModel = self.core
            scripted = core.next_turn(conversation_of(contents), len(contents), {})
            if isinstance(scripted.turn, Answer):
                parts = [types.Part(text=f"{scripted.marker} {scripted.turn.text}")]
            else:
                parts = [types.Part(text=scripted.marker)] + [
                    types.Part(
                        function_call=types.FunctionCall(
                            name=call.tool, id=call.tool_use_id, args=dict(call.input)
                        )
                    )
                    for call in scripted.turn.calls
                ]
            yield LlmResponse(
                content=types.Content(role="model", parts=parts),
                # a provider reports usage; without it ADK's telemetry warns on every turn
                usage_metadata=types.GenerateContentResponseUsageMetadata(
                    prompt_token_count=0, candidates_token_count=0, total_token_count=0
                ),
            )

    return ScriptedAdkModel

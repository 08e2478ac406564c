"""The scripted model (``fakes.model``) behind LangChain's chat-model interface, for LangGraph.

A ``BaseChatModel`` with ``bind_tools`` and ``_generate`` returning ``AIMessage`` with
``tool_calls``.  A stateful provider's response id rides in the ``AIMessage``'s
``response_metadata`` and the next request reads it off the latest assistant message (see the
langgraph adapter's docstring).  It is built on first use, so the harness imports without
LangChain installed.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Final

from fakes.model import Answer, Prompt, Reply, Results, Said, ScriptedModel
from harness.reference.state import copy_json

RESPONSE_ID: Final = "response_id"  # where the fake provider's id rides in response_metadata


def conversation_of(messages: Sequence[Any]) -> list[Said]:
    """LangChain messages as the scripted model reads them: prompts, its own marked replies (with
    their ``tool_calls``' ids), and tool results (a ``ToolMessage`` each)."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    said: list[Said] = []
    for message in messages:
        text = message.text if isinstance(message.text, str) else message.text()
        uses = tuple(str(call.get("id")) for call in getattr(message, "tool_calls", None) or ())
        if isinstance(message, AIMessage) and (text or uses):
            said.append(Reply(text, uses))
        elif isinstance(message, HumanMessage) and text:
            said.append(Prompt(text))
        elif isinstance(message, ToolMessage):
            said.append(Results(((str(message.tool_call_id), text),)))
        else:
            said.append(None)
    return said


def provider_state(messages: Sequence[Any]) -> dict[str, Any]:
    """What a stateful provider's client sends along: the id of the latest response."""
    from langchain_core.messages import AIMessage

    for message in reversed(messages):
        if isinstance(message, AIMessage):
            found = message.response_metadata.get(RESPONSE_ID)
            return {} if found is None else {RESPONSE_ID: found}
    return {}


@functools.cache
def model_class() -> type:
    """The scripted model as a ``BaseChatModel`` subclass, built on first use so this module
    imports without LangChain installed.

    Built once per process: a class definition holds no run's state (every build of a tree makes
    its own instances), and defining it again for every session cost up to a tenth of a short
    scenario's run."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from pydantic import ConfigDict

    class ScriptedChatModel(BaseChatModel):  # type: ignore[misc]
        """The scripted model core behind LangChain's real chat-model interface."""

        model_config = ConfigDict(arbitrary_types_allowed=True)
        core: ScriptedModel

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
            return self.bind(tools=[_openai_schema(tool) for tool in tools], **kwargs)

        def _generate(
            self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> Any:
            model_state = provider_state(messages)
            scripted = self.core.next_turn(conversation_of(messages), len(messages), model_state)
            metadata = {RESPONSE_ID: model_state[RESPONSE_ID]} if model_state else {}
            if isinstance(scripted.turn, Answer):
                message = AIMessage(
                    content=f"{scripted.marker} {scripted.turn.text}", response_metadata=metadata
                )
            else:
                message = AIMessage(
                    content=scripted.marker,
                    tool_calls=[
                        {
                            "name": call.tool,
                            "args": dict(call.input),
                            "id": call.tool_use_id,
                            "type": "tool_call",
                        }
                        for call in scripted.turn.calls
                    ],
                    response_metadata=metadata,
                )
            return ChatResult(generations=[ChatGeneration(message=message)])

    return ScriptedChatModel


_OPENAI_SCHEMAS: dict[tuple[str, str, Any], dict[str, Any]] = {}


def _openai_schema(tool: Any) -> dict[str, Any]:
    """What ``bind_tools`` sends the model for ``tool``: converting a tool builds a pydantic model
    of its own, so a tool with the same name, description and arguments is converted once."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    if isinstance(tool, dict):
        converted: dict[str, Any] = convert_to_openai_tool(tool)
        return converted
    key = (tool.name, tool.description, tool.args_schema)
    if key not in _OPENAI_SCHEMAS:
        _OPENAI_SCHEMAS[key] = convert_to_openai_tool(tool)
    copied: dict[str, Any] = copy_json(_OPENAI_SCHEMAS[key])
    return copied

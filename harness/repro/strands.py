"""The reproducer's strands-agents section: a ``strands.models.Model`` streaming the SDK's own
event shapes, protected actions as ``@tool(context=True)`` tools asking through
``ToolContext.interrupt``, sub-agents wrapped with ``Agent.as_tool``, and a ``FileSessionManager``
for the orchestrator and every preserve_context sub-agent, so a rebuild restores them (as
``harness.targets.strands`` drives the SDK, written out without the harness)."""

from __future__ import annotations

from typing import Final

DISTRIBUTION: Final = "strands-agents"

IMPORTS: Final = """\
import asyncio
import json
import logging
import re
import subprocess  #?restart
import sys  #?restart
import tempfile
from collections import namedtuple

from strands import Agent, ToolContext, tool
from strands.models import Model
from strands.session.file_session_manager import FileSessionManager
"""

SECTION: Final = r'''
class ScriptedModel(Model):  # the LLM's stand-in: it streams the turn its script has
    def __init__(self, agent: dict, path: str) -> None:
        self.agent, self.path, self.config = agent, path, {"model_id": "scripted"}

    def update_config(self, **config: object) -> None: self.config.update(config)
    def get_config(self) -> dict: return self.config
    def structured_output(self, *args: object, **kwargs: object) -> None: raise NotImplementedError

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        said = [(m["role"], b["text"]) for m in messages for b in m["content"] if "text" in b]
        text, calls = next_turn(self.agent, self.path, said)
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        yield {"contentBlockDelta": {"delta": {"text": text}}}
        yield {"contentBlockStop": {}}
        for name, use_id, arguments in calls:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": use_id, "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if calls else "end_turn"}}


def action(name: str, label: str, questions: int = 1):
    async def run(call: str, tool_context: ToolContext) -> str:
        """A protected action: it runs only with a human's approval."""
        #?questions{
        for number in range(1, questions + 1):
            reason = {"action": label, "question": number, "prompt": call}
            asked = "approval" if number == 1 else f"approval-{number}"
            if tool_context.interrupt(asked, reason=reason) != "approve":
                return f"{label}: refused"
        #?}
        #?!questions{
        reason = {"action": label, "question": 1, "prompt": call}
        if tool_context.interrupt("approval", reason=reason) != "approve":
            return f"{label}: refused"
        #?}
        RAN.append(label)
        return f"{label}: done"

    return tool(name=name, context=True)(run)


def build(store: str, spec: dict = TREE, path: str = "") -> Agent:
    """The agent and its sub-agents; those that keep a session restore it from ``store``."""
    path = f"{path}/{spec['name']}".lstrip("/")
    #?questions{
    actions, asks = spec.get("actions", {}), spec.get("questions", {})
    tools = [action(name, label, asks.get(label, 1)) for name, label in actions.items()]
    #?}
    tools = [action(name, label) for name, label in spec.get("actions", {}).items()]  #?!questions
    for sub in spec.get("subs", []):
        as_tool = build(store, sub, path).as_tool
        tools.append(as_tool(name=sub["name"], preserve_context=sub.get("preserve", False)))
    key, kept = path.replace("/", "--"), {}
    if "/" not in path or spec.get("preserve"):
        kept["session_manager"] = FileSessionManager(session_id=key, storage_dir=store)
    model = ScriptedModel(spec, path)
    return Agent(model=model, tools=tools, agent_id=key, callback_handler=None, **kept)


def advance(root: Agent, given: str | list) -> tuple:
    """One step: (stop reason, questions pending, final answer, error, public events)."""
    if not isinstance(given, str):
        given = [{"interruptResponse": {"interruptId": key, "response": r}} for key, r in given]
    errors, events, handler = [], [], logging.Handler(logging.ERROR)
    handler.emit = lambda record: errors.append(record.getMessage())

    async def drive():
        async for event in root.stream_async(given):
            events.append(event)
        return events[-1]["result"]

    logging.getLogger("strands").addHandler(handler)
    try:
        result = asyncio.run(drive())
    except Exception as failure:
        return None, [], None, f"{type(failure).__name__}: {failure}", events
    finally:
        logging.getLogger("strands").removeHandler(handler)
    final, error = None, errors[0] if errors else None
    if result.stop_reason == "end_turn":
        final = "".join(b["text"] for b in result.message["content"] if "text" in b)
    pending = [Pending(item.id, **item.reason) for item in result.interrupts or ()]
    return str(result.stop_reason), pending, final, error, events
'''

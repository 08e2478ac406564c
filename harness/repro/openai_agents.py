"""The reproducer's openai-agents section (as ``harness.targets.openai_agents`` drives the SDK,
written out without the harness): an ``agents.models.interface.Model`` answering with the SDK's
own response items, protected actions as ``function_tool(needs_approval=True)``, sub-agents
wrapped with ``Agent.as_tool`` (a ``SQLiteSession`` for preserve_context).  The SDK has no
interrupt ids: a pending approval is shown as its agent, tool and call id, and answered with
``RunState.approve`` / ``reject``.  After every step that stops for approvals, the run's
``RunState.to_json()`` is written to a file; a restart rebuilds the tree and reads it back with
``RunState.from_json``.  No public events are read (the script runs ``Runner.run_sync``)."""

from __future__ import annotations

from typing import Final

DISTRIBUTION: Final = "openai-agents"

IMPORTS: Final = """\
import asyncio  #?restart
import json
import logging
import re
import subprocess  #?restart
import sys  #?restart
import tempfile
from collections import Counter, namedtuple
from pathlib import Path

from agents import Agent, Model, ModelResponse, Runner, RunState, Usage, function_tool  #?restart
from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool  #?!restart
from agents.memory import SQLiteSession  #?preserve
from agents.tracing import set_tracing_disabled
from openai.types import responses
"""

SECTION: Final = r'''
class ScriptedModel(Model):  # the LLM's stand-in: it answers the turn its script has
    def __init__(self, agent: dict, path: str) -> None:
        self.agent, self.path = agent, path

    async def stream_response(self, *args: object, **kwargs: object): raise NotImplementedError

    async def get_response(self, system_instructions: object, input: object, *args, **kwargs):
        said = []
        for item in [{"role": "user", "content": input}] if isinstance(input, str) else input:
            item = item.model_dump() if hasattr(item, "model_dump") else item
            content = item.get("content")
            parts = content if isinstance(content, list) else [{"text": content}]
            said += [(item.get("role"), part.get("text")) for part in parts if "text" in part]
        text, calls = next_turn(self.agent, self.path, said)
        content = [responses.ResponseOutputText(type="output_text", text=text, annotations=[])]
        output = [responses.ResponseOutputMessage(id="msg", type="message", role="assistant",
                                                  status="completed", content=content)]
        output += [responses.ResponseFunctionToolCall(
            type="function_call", id=f"fc_{use_id}", call_id=use_id, name=name, status="completed",
            arguments=json.dumps(arguments)) for name, use_id, arguments in calls]
        return ModelResponse(output=output, usage=Usage(), response_id=None)


def action(name: str, label: str):
    async def perform(call: str) -> str:
        """A protected action: it runs only with a human's approval."""
        RAN.append(label)
        return f"{label}: done"

    return function_tool(perform, name_override=name, needs_approval=True)


def agent(spec: dict, path: str, store: str) -> Agent:
    tools = [action(name, label) for name, label in spec.get("actions", {}).items()]
    for sub in spec.get("subs", []):
        as_tool = agent(sub, f"{path}/{sub['name']}", store).as_tool
        #?preserve{
        kept = {}
        if sub.get("preserve"):
            key = f"{path}/{sub['name']}".replace("/", "--")
            kept["session"] = SQLiteSession(session_id=key, db_path=f"{store}/sessions.sqlite3")
        tools.append(as_tool(tool_name=sub["name"], tool_description="A sub-agent.", **kept))
        #?}
        tools.append(as_tool(tool_name=sub["name"], tool_description="A sub-agent."))  #?!preserve
    return Agent(name=spec["name"], model=ScriptedModel(spec, path), tools=tools)  #?!agent
    own = spec.get("agent", spec["name"])  # its own name, apart from its tool's  #?agent
    return Agent(name=own, model=ScriptedModel(spec, path), tools=tools)  #?agent


def build(store: str) -> dict:
    """The tree, and the interrupted run read back from its stored RunState, if any."""
    set_tracing_disabled(True)  # no trace export: nothing leaves this process
    root, saved = agent(TREE, TREE["name"], store), Path(store, "run_state.json")
    state = None  #?!restart
    #?restart{
    state = saved.exists() and asyncio.run(RunState.from_json(root, json.loads(saved.read_text())))
    #?}
    return {"root": root, "state": state, "saved": saved}


def pending_of(state) -> dict:
    """Each pending approval by what a human sees of it: agent, tool, call id (numbered)."""
    seen, shown = Counter(), {}
    for item in state.get_interruptions() if state else []:
        key = f"{item.agent.name}:{item.tool_name}:{getattr(item.raw_item, 'call_id', None)}"
        seen[key] += 1
        shown[key if seen[key] == 1 else f"{key}#{seen[key] - 1}"] = item
    return shown


def shown(state) -> list:
    #?by_call{
    return [Pending(key, item.agent.model.agent["actions"][item.tool_name], 1,
                    json.loads(item.raw_item.arguments or "{}").get("call"))
            for key, item in pending_of(state).items()]
    #?}
    #?!by_call{
    return [Pending(key, item.agent.model.agent["actions"][item.tool_name], 1, None)
            for key, item in pending_of(state).items()]
    #?}


def advance(app: dict, given: str | list) -> tuple:
    """One step: (stop reason, questions pending, final answer, error, public events)."""
    errors, handler = [], logging.Handler(logging.ERROR)
    handler.emit = lambda record: errors.append(record.getMessage())
    logging.getLogger("openai.agents").addHandler(handler)
    try:
        if isinstance(given, list):  # approve or reject each pending approval named
            current, state = pending_of(app["state"]), app["state"]
            unknown = sorted(key for key, _ in given if key not in current)
            if unknown or not given:
                raise LookupError(f"no pending approval matches {unknown}: nothing was answered")
            for key, response in given:
                (state.approve if response == "approve" else state.reject)(current[key])
        elif app["state"]:  #?rerun
            raise RuntimeError("a run is waiting for approvals: answer it first")  #?rerun
        result = Runner.run_sync(app["root"], given if isinstance(given, str) else app["state"])
    except Exception as failure:
        return None, shown(app["state"]), None, f"{type(failure).__name__}: {failure}", []
    finally:
        logging.getLogger("openai.agents").removeHandler(handler)
    error = errors[0] if errors else None
    if result.interruptions:
        app["state"] = result.to_state()
        app["saved"].write_text(json.dumps(app["state"].to_json()))  #?restart
        return "interrupt", shown(app["state"]), None, error, []
    app["state"] = None
    app["saved"].unlink(missing_ok=True)  #?restart
    return "end_turn", [], str(result.final_output), error, []
'''

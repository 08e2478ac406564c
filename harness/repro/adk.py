"""The reproducer's Google ADK section, in both shapes the harness drives (as
``harness.targets.adk`` does, written out without the harness): a ``google.adk.models.BaseLlm``
answering with ``LlmResponse`` function calls, protected actions as
``FunctionTool(fn, require_confirmation=True)``, a resumable ``App`` on a ``Runner`` whose
``SqliteSessionService`` keeps the one session in a file that a rebuild opens again.  ``adk``: a
sub-agent is an ``AgentTool`` among its caller's tools; ``adk-single-turn``: it is among its
caller's ``sub_agents`` with ``mode='single_turn'``.

ADK asks with a function call ``adk_request_confirmation`` whose id it draws (``adk-<uuid4>``);
the human answers with a user ``Content`` holding a ``FunctionResponse`` of that name and id,
``{'confirmed': bool}``, sent to ``run_async(invocation_id=...)`` of the paused invocation.  What
is pending is read from the stored session's events at every step: the confirmation requests
that no function response answered, an earlier invocation's too (a new prompt leaves the paused
one resumable beside it).  Each request is shown as a stable handle ``confirm-<n>``, the n-th
request the stored session holds, so a new process numbers them as the one that asked did (the
adapter's handles, numbered in the same order).

The scripts read no public events (``Hook.events``): an ``AgentTool`` keeps no sub-agent turn
that could show again, and the privacy check would take the longest ``single_turn`` script past
the 200 lines; the harness's ``run`` judges I8 on both."""

from __future__ import annotations

from typing import Final

DISTRIBUTION: Final = "google-adk"

IMPORTS: Final = """\
import asyncio
import json
import logging
import re
import subprocess  #?restart
import sys  #?restart
import tempfile
from collections import namedtuple

from google.adk import Agent, Runner
from google.adk.apps import App, ResumabilityConfig
from google.adk.models import BaseLlm, LlmResponse
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools import AgentTool, FunctionTool  #?agent_tool
from google.adk.tools import FunctionTool  #?!agent_tool
from google.genai import types
"""

SECTION: Final = r'''
ASK = "adk_request_confirmation"  # the function call by which ADK asks for a confirmation
LABELS: dict = {}  # (agent, tool) -> the protected action's label


class ScriptedModel(BaseLlm):  # the LLM's stand-in: it answers the turn its script has
    agent: dict
    path: str

    async def generate_content_async(self, llm_request, stream: bool = False):
        said = [(c.role.replace("model", "assistant"), texts[0]) for c in llm_request.contents
                if (texts := [part.text for part in c.parts or () if part.text])]
        text, calls = next_turn(self.agent, self.path, said)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text), *(
            types.Part(function_call=types.FunctionCall(name=name, id=use_id, args=(
                {"request": arguments["input"]} if "input" in arguments else arguments)))
            for name, use_id, arguments in calls)]))


def action(agent: str, name: str, label: str) -> FunctionTool:
    def run(call: str) -> str:
        RAN.append(label)
        return f"{label}: done"

    run.__name__, run.__doc__, LABELS[agent, name] = name, f"Protected action {label}.", label
    return FunctionTool(run, require_confirmation=True)


def agent(spec: dict, path: str) -> Agent:
    tools = [action(spec["name"], name, label) for name, label in spec.get("actions", {}).items()]
    subs = [agent(sub, f"{path}/{sub['name']}") for sub in spec.get("subs", [])]
    shape = {"tools": [*tools, *map(AgentTool, subs)]}  #?agent_tool
    #?!agent_tool{
    shape = {"tools": tools, "sub_agents": subs, "mode": "single_turn" if "/" in path else None}
    #?}
    return Agent(name=spec["name"], model=ScriptedModel(model="-", agent=spec, path=path), **shape)


def build(store: str) -> Runner:  # a new App and session service over the same sqlite file
    app = App(name="repro", root_agent=agent(TREE, TREE["name"]),
              resumability_config=ResumabilityConfig(is_resumable=True))
    return Runner(app=app, session_service=SqliteSessionService(f"{store}/sessions.sqlite3"))


def requests(events: list) -> dict:
    """Each stored confirmation request by a stable handle: (event, call, whether it waits)."""
    answered = {reply.id for event in events for reply in event.get_function_responses()}
    asked = [(e, call) for e in events for call in e.get_function_calls() if call.name == ASK]
    ids = list(dict.fromkeys(call.id for _, call in asked))
    return {f"confirm-{ids.index(call.id) + 1}": (event, call, call.id not in answered)
            for event, call in asked}


def waiting(events: list) -> list:  # of any invocation, answered by no function response
    return [Pending(handle, LABELS[event.author, asked["name"]], 1, asked["args"].get("call"))
            for handle, (event, call, waits) in requests(events).items() if waits
            for asked in [call.args["originalFunctionCall"]]]


async def drive(runner: Runner, given: str | list) -> tuple:  # one run_async; what it stored
    key, options = {"app_name": "repro", "user_id": "human", "session_id": "s"}, {}
    service = runner.session_service
    events = (await service.get_session(**key) or await service.create_session(**key)).events
    message = types.Content(role="user", parts=[types.Part(text=str(given))])
    if isinstance(given, list):
        if not (waiting(events) and given):
            raise LookupError("no confirmation is pending, or no response is given: no answer")
        known = {handle: call.id for handle, (_, call, _) in requests(events).items()}
        message.parts = [types.Part(function_response=types.FunctionResponse(
            name=ASK, id=known.get(handle, handle), response={"confirmed": response == "approve"}))
            for handle, response in given]
        options["invocation_id"] = events[-1].invocation_id
    return [event async for event in runner.run_async(user_id="human", session_id="s",
            new_message=message, **options)], (await service.get_session(**key)).events


def advance(runner: Runner, given: str | list) -> tuple:
    """One step: (stop reason, questions pending, final answer, error, public events)."""
    errors, handler = [], logging.Handler(logging.ERROR)
    handler.emit = lambda record: errors.append(record.getMessage())
    logging.getLogger("google_adk").addHandler(handler)
    try:
        events, stored = asyncio.run(drive(runner, given))
    except Exception as failure:
        return None, [], None, f"{type(failure).__name__}: {failure}", []
    finally:
        logging.getLogger("google_adk").removeHandler(handler)
    errors += [f"{e.error_code}: {e.error_message}" for e in events if e.error_message]
    said = [e.content.parts[0].text for e in events if e.author == TREE["name"] and e.content
            and e.content.parts and e.is_final_response() and not e.long_running_tool_ids]
    final = None if (shown := waiting(stored)) else [None, *said][-1]
    return "interrupt" if shown else "end_turn", shown, final, (errors or [None])[0], []
'''

SHAPES: Final = ("adk", "adk-single-turn")
# the AgentTool shape imports and builds AgentTool; the single_turn one sub_agents
ALWAYS: Final = {"adk": frozenset({"agent_tool"}), "adk-single-turn": frozenset()}

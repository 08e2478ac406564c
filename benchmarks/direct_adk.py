"""``OVERHEAD_TREE`` (``benchmarks/direct.py``), driven straight through Google ADK's public API,
as an application that asks a human between two requests would drive it: a resumable ``App``
whose sub-agent is a ``single_turn`` sub-agent (an ``AgentTool`` would drop its pause), a
``SqliteSessionService`` in a scratch folder, a ``Runner`` per request; run, find the
confirmation request in the stored session, confirm it, resume that invocation.  No runner of the
harness, no oracle, no recording beyond what the fake model and the action do.  The harness
overhead on adk-single-turn is the time of ``run_scenario`` on its target over this."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

from benchmarks.direct import overhead_scenario
from fakes.log import AppendOnlyLog
from fakes.model import ScriptedModel
from fakes.protected import CALL_FIELD
from harness.scratch import scratch_directory
from harness.targets.adapter import quiet_sdk_logs
from harness.targets.adk import CONFIRMATION, INPUT_FIELD, SDK_LOGGER
from harness.targets.adk_model import model_class
from harness.targets.reference import agent_script


def run_directly() -> str:
    """Build the tree with ADK, run the prompt, confirm the question and resume; return the
    root's last answer."""
    from google.adk.agents import LlmAgent
    from google.adk.apps import App, ResumabilityConfig
    from google.adk.runners import Runner
    from google.adk.sessions.sqlite_session_service import SqliteSessionService
    from google.adk.tools import FunctionTool, ToolContext
    from google.genai import types

    quiet_sdk_logs(SDK_LOGGER)  # as the target does: ADK's log lines are not the work
    scenario = overhead_scenario()
    journal = AppendOnlyLog()
    model = model_class()
    clerk_spec = scenario.tree.sub_agents[0]
    ran: list[str] = []

    async def file_form(call: str, tool_context: ToolContext) -> str:
        """Protected action file: runs only with a human's confirmation.

        Args:
            call: the prompt of the call it serves.
        """
        ran.append("file")
        return "file: done"

    file_form.__annotations__ = {CALL_FIELD: str, "tool_context": ToolContext, "return": str}

    def build(database: str) -> Runner:
        clerk = LlmAgent(
            name="clerk",
            description="Agent clerk: give it a task as its request.",
            model=model(
                model="orchestrator/clerk",
                core=ScriptedModel(
                    "orchestrator/clerk", agent_script(clerk_spec, INPUT_FIELD), journal
                ),
            ),
            tools=[FunctionTool(file_form, require_confirmation=True)],
            mode="single_turn",
        )
        root = LlmAgent(
            name="orchestrator",
            model=model(
                model="orchestrator",
                core=ScriptedModel(
                    "orchestrator", agent_script(scenario.tree, INPUT_FIELD), journal
                ),
            ),
            sub_agents=[clerk],
        )
        with warnings.catch_warnings():  # ResumabilityConfig is marked experimental
            warnings.simplefilter("ignore")
            app = App(
                name="direct",
                root_agent=root,
                resumability_config=ResumabilityConfig(is_resumable=True),
            )
        return Runner(app=app, session_service=SqliteSessionService(database))

    async def drive(runner: Runner, message: Any, invocation: str | None) -> str | None:
        answer = None
        options = {} if invocation is None else {"invocation_id": invocation}
        async for event in runner.run_async(
            user_id="human", session_id="s", new_message=message, **options
        ):
            parts = event.content.parts if event.content else None
            if event.author == "orchestrator" and parts and parts[0].text:
                answer = parts[0].text
        return answer

    async def first(database: str) -> tuple[str, str]:
        runner = build(database)
        await runner.session_service.create_session(
            app_name="direct", user_id="human", session_id="s"
        )
        await drive(runner, types.Content(role="user", parts=[types.Part(text="file it")]), None)
        session = await runner.session_service.get_session(
            app_name="direct", user_id="human", session_id="s"
        )
        assert session is not None
        asked = [
            (event.invocation_id, part.function_call.id)
            for event in session.events
            for part in (event.content.parts or () if event.content else ())
            if part.function_call and part.function_call.name == CONFIRMATION
        ]
        invocation, call = asked[-1]
        return str(invocation), str(call)

    async def confirm(database: str, invocation: str, call: str) -> str | None:
        reply = types.FunctionResponse(name=CONFIRMATION, id=call, response={"confirmed": True})
        message = types.Content(role="user", parts=[types.Part(function_response=reply)])
        return await drive(build(database), message, invocation)  # a new runner: a new request

    with scratch_directory("direct-adk-") as directory:
        database = f"{directory}/sessions.sqlite3"
        invocation, call = asyncio.run(first(database))
        answer = asyncio.run(confirm(database, invocation, call))
    assert ran == ["file"], ran
    return str(answer)

"""``OVERHEAD_TREE`` (``benchmarks/direct.py``), driven straight through the OpenAI Agents SDK's
public API, as an application that asks a human between two requests would drive it: run, keep
the interrupted run's ``RunState`` as JSON, approve, resume. No runner, no oracle, no recording
beyond what the fake model and the action do. The harness overhead on openai-agents is the time of
``run_scenario`` on its target over this."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from benchmarks.direct import overhead_scenario
from fakes.log import AppendOnlyLog
from fakes.model import ScriptedModel
from fakes.protected import CALL_FIELD
from harness.targets.openai_agents import INPUT_FIELD
from harness.targets.openai_agents_model import model_class
from harness.targets.reference import agent_script


def run_directly() -> str:
    """Build the tree with the SDK, run the prompt, store the run state, approve the question
    and resume; return the final output."""
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)
    scenario = overhead_scenario()
    journal = AppendOnlyLog()
    model = model_class()
    clerk_spec = scenario.tree.sub_agents[0]
    ran: list[str] = []

    async def file_form(call: str) -> str:
        """Protected action file: runs only with a human's approval.

        Args:
            call: the prompt of the call it serves.
        """
        ran.append("file")
        return "file: done"

    file_form.__annotations__ = {CALL_FIELD: str, "return": str}  # read at run time (PEP 563)
    clerk = Agent(
        name="clerk",
        model=model(
            ScriptedModel("orchestrator/clerk", agent_script(clerk_spec, INPUT_FIELD), journal)
        ),
        tools=[function_tool(file_form, name_override="file_form", needs_approval=True)],
    )
    root = Agent(
        name="orchestrator",
        model=model(
            ScriptedModel("orchestrator", agent_script(scenario.tree, INPUT_FIELD), journal)
        ),
        tools=[clerk.as_tool(tool_name="clerk", tool_description="Sub-agent clerk.")],
    )

    async def drive() -> Any:
        first = await Runner.run(root, "file it")
        state = first.to_state()
        json.dumps(state.to_json())  # what the application keeps between the two requests
        for item in first.interruptions:
            state.approve(item)
        return await Runner.run(root, state)

    result = asyncio.run(drive())
    assert ran == ["file"], ran
    return str(result.final_output)

"""The same tree as ``OVERHEAD_TREE``, driven straight through the Strands SDK's public API: no
runner, no oracle, no recording beyond what the fake model and the action itself do.  The
harness overhead is the time of ``run_scenario`` on the strands target over this."""

from __future__ import annotations

from typing import Any, Final

from fakes.log import AppendOnlyLog
from fakes.model import ScriptedModel
from harness.scratch import scratch_directory
from harness.targets.reference import agent_script
from harness.targets.strands import INPUT_FIELD
from harness.targets.strands_model import model_class
from scenarios.loading import parse_scenario
from scenarios.model import Scenario

# each target whose SDK the tree is also driven straight through, with the module that does it
DRIVES: Final = {
    "strands": "benchmarks.direct",
    "langgraph": "benchmarks.direct_langgraph",
    "langgraph-subgraph-node": "benchmarks.direct_langgraph_subgraph",
    "openai-agents": "benchmarks.direct_openai_agents",
    "adk-single-turn": "benchmarks.direct_adk",
}

OVERHEAD_TREE: dict[str, Any] = {
    "description": "one orchestrator, one ephemeral sub-agent asking once; run, then approve",
    "source": "benchmarks/direct.py",
    "tree": {
        "name": "orchestrator",
        "turns": [[{"tool": "clerk", "id": "c1", "prompt": "file the form"}]],
        "sub_agents": [
            {
                "name": "clerk",
                "actions": [{"tool": "file_form", "label": "file"}],
                "turns": [[{"tool": "file_form", "id": "t1"}]],
            }
        ],
    },
    "steps": [{"run": "file it"}, {"answer": {"file": "approve"}}],
}


def overhead_scenario() -> Scenario:
    return parse_scenario(OVERHEAD_TREE, "overhead")


def run_directly() -> str:
    """Build the tree with the SDK, run the prompt, approve the question, return the answer."""
    from strands import Agent, ToolContext, tool
    from strands.session.file_session_manager import FileSessionManager

    scenario = overhead_scenario()
    journal = AppendOnlyLog()
    model = model_class()
    clerk_spec = scenario.tree.sub_agents[0]
    ran: list[str] = []

    async def file_form(tool_context: ToolContext) -> str:
        """Protected action file: runs only with a human's approval."""
        answer = tool_context.interrupt("approval", reason={"action": "file"})
        if answer == "approve":
            ran.append("file")
            return "file: done"
        return "file: refused"

    # the SDK reads the annotations at run time; this module's are strings (PEP 563)
    file_form.__annotations__ = {"tool_context": ToolContext, "return": str}
    action = tool(name="file_form", context=True)(file_form)

    clerk = Agent(
        model=model(
            ScriptedModel("orchestrator/clerk", agent_script(clerk_spec, INPUT_FIELD), journal)
        ),
        tools=[action],
        name="clerk",
        callback_handler=None,
    )
    with scratch_directory("direct-") as directory:
        root = Agent(
            model=model(
                ScriptedModel("orchestrator", agent_script(scenario.tree, INPUT_FIELD), journal)
            ),
            tools=[clerk.as_tool(name="clerk", preserve_context=False)],
            name="orchestrator",
            agent_id="orchestrator",
            session_manager=FileSessionManager(session_id="orchestrator", storage_dir=directory),
            callback_handler=None,
        )
        first = root("file it")
        responses = [
            {"interruptResponse": {"interruptId": interrupt.id, "response": "approve"}}
            for interrupt in first.interrupts
        ]
        result = root(responses)
    assert ran == ["file"], ran
    return str(result.stop_reason)

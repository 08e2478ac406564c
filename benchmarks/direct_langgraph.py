"""``OVERHEAD_TREE`` (``benchmarks/direct.py``), driven straight through LangGraph's public API,
as an application that asks a human between two requests would drive it: the sub-agent a compiled
ReAct graph called from a tool of its caller's, checkpoints in SQLite on a file, the question an
``interrupt``, the answer a ``Command(resume=...)``.  No runner, no oracle, no recording beyond
what the fake model and the action do.  The harness overhead on langgraph is the time of
``run_scenario`` on its target (the ``tools`` shape) over this."""

from __future__ import annotations

import sqlite3
import warnings
from functools import cache
from typing import Any

from benchmarks.direct import overhead_scenario
from fakes.log import AppendOnlyLog
from fakes.model import ScriptedModel
from fakes.protected import CALL_FIELD
from harness.scratch import scratch_directory
from harness.targets.langgraph_graphs import INPUT_FIELD
from harness.targets.langgraph_model import model_class
from harness.targets.reference import agent_script


@cache
def _arguments(field: str) -> Any:
    """A tool's argument schema, made once per process as an application defines its tools once
    (LangChain would otherwise build a pydantic model for every tool at every build)."""
    from pydantic import create_model

    fields: dict[str, Any] = {field: (str, ...)}
    return create_model(f"{field.title()}Arguments", **fields)


def file_form_tool(ran: list[str]) -> Any:
    """The protected action of the overhead tree: asks with ``interrupt``, notes in ``ran`` that
    it ran once approved."""
    from langchain_core.tools import StructuredTool
    from langgraph.types import interrupt

    def file_form(call: str) -> str:
        if interrupt({"action": "file", CALL_FIELD: call}) == "approve":
            ran.append("file")
            return "file: done"
        return "file: refused"

    return StructuredTool.from_function(
        file_form,
        name="file_form",
        description="Protected action file: asks first.",
        args_schema=_arguments(CALL_FIELD),
    )


def run_directly() -> str:
    """Build the tree with LangGraph, run the prompt, approve the question from the checkpoint,
    return the final answer."""
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import StructuredTool
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.prebuilt import create_react_agent
    from langgraph.types import Command

    scenario = overhead_scenario()
    journal = AppendOnlyLog()
    model = model_class()
    clerk_spec = scenario.tree.sub_agents[0]
    ran: list[str] = []

    def react(name: str, path: str, spec: Any, tools: list[Any], checkpointer: Any) -> Any:
        core = ScriptedModel(path, agent_script(spec, prompt_field=INPUT_FIELD), journal)
        with warnings.catch_warnings():  # deprecated for another package's agent, not removed
            warnings.simplefilter("ignore")
            return create_react_agent(model(core=core), tools, checkpointer=checkpointer, name=name)

    action = file_form_tool(ran)
    clerk = react("clerk", "orchestrator/clerk", clerk_spec, [action], None)

    def call_clerk(input: str) -> str:
        output = clerk.invoke({"messages": [HumanMessage(input)]})
        return str(output["messages"][-1].content)

    clerk_tool = StructuredTool.from_function(
        call_clerk,
        name="clerk",
        description="Ask the sub-agent clerk to do its part.",
        args_schema=_arguments(INPUT_FIELD),
    )
    config = {"configurable": {"thread_id": "overhead"}}
    with scratch_directory("direct-") as directory:
        connection = sqlite3.connect(f"{directory}/checkpoints.sqlite", check_same_thread=False)
        try:
            root = react(
                "orchestrator", "orchestrator", scenario.tree, [clerk_tool], SqliteSaver(connection)
            )
            first = root.invoke({"messages": [HumanMessage("file it")]}, config)
            [asked] = first["__interrupt__"]
            result = root.invoke(Command(resume={asked.id: "approve"}), config)
        finally:
            connection.close()
    assert ran == ["file"], ran
    return str(result["messages"][-1].content)

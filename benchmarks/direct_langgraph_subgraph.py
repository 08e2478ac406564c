"""``OVERHEAD_TREE`` (``benchmarks/direct.py``), driven straight through LangGraph's public API in
the ``subgraph-node`` shape, as an application that builds its own graphs would drive it: each
agent a ``StateGraph`` of a model node and one ``Send`` per tool call, the sub-agent a node that
invokes its compiled graph, the protected action a tool of a ``ToolNode`` that asks with
``interrupt``, checkpoints in SQLite on a file, the answer a ``Command(resume=...)``.  No runner,
no oracle, no recording beyond what the fake model and the action do.  The harness overhead on
langgraph-subgraph-node is the time of ``run_scenario`` on its target over this."""

from __future__ import annotations

import sqlite3
from typing import Any

from benchmarks.direct import overhead_scenario
from benchmarks.direct_langgraph import _arguments, file_form_tool
from fakes.log import AppendOnlyLog
from fakes.model import ScriptedModel
from harness.scratch import scratch_directory
from harness.targets.langgraph_graphs import INPUT_FIELD
from harness.targets.langgraph_model import model_class
from harness.targets.reference import agent_script


def run_directly() -> str:
    """Build the graphs, run the prompt, approve the question from the checkpoint, return the
    final answer."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode
    from langgraph.types import Command, Send

    scenario = overhead_scenario()
    journal = AppendOnlyLog()
    model = model_class()
    clerk_spec = scenario.tree.sub_agents[0]
    ran: list[str] = []

    def agent(
        name: str, path: str, spec: Any, tools: list[Any], subs: dict[str, Any], saver: Any
    ) -> Any:
        """An agent's graph: its model node, then a ``Send`` per tool call, to the ``ToolNode``
        or to a sub-agent's node."""
        core = ScriptedModel(path, agent_script(spec, prompt_field=INPUT_FIELD), journal)
        bound = model(core=core).bind_tools([*tools, *(_asking(sub) for sub in subs)])

        def call_model(state: dict[str, Any]) -> dict[str, Any]:
            return {"messages": [bound.invoke(state["messages"])]}

        def route(state: dict[str, Any]) -> Any:
            last = state["messages"][-1]
            if not isinstance(last, AIMessage) or not last.tool_calls:
                return END
            return [
                Send(f"agent-{call['name']}" if call["name"] in subs else "tools", [call])
                for call in last.tool_calls
            ]

        def runs(sub: str, graph: Any) -> Any:
            def run_sub_agent(calls: Any) -> dict[str, Any]:
                [call] = calls
                prompt = HumanMessage(str(call["args"].get(INPUT_FIELD, "")))
                output = graph.invoke({"messages": [prompt]})
                result = str(output["messages"][-1].content)
                return {"messages": [ToolMessage(content=result, tool_call_id=call["id"])]}

            return run_sub_agent

        builder = StateGraph(MessagesState)
        builder.add_node("model", call_model)
        builder.add_edge(START, "model")
        if tools:
            builder.add_node("tools", ToolNode(tools))
            builder.add_edge("tools", "model")
        for sub, graph in subs.items():
            builder.add_node(f"agent-{sub}", runs(sub, graph))
            builder.add_edge(f"agent-{sub}", "model")
        ends = [*(["tools"] if tools else []), *(f"agent-{sub}" for sub in subs), END]
        builder.add_conditional_edges("model", route, ends)
        return builder.compile(checkpointer=saver, name=name)

    action = file_form_tool(ran)
    # the clerk inherits the root's checkpointer, scoped to one call
    clerk = agent("clerk", "orchestrator/clerk", clerk_spec, [action], {}, None)
    config = {"configurable": {"thread_id": "overhead"}}
    with scratch_directory("direct-") as directory:
        connection = sqlite3.connect(f"{directory}/checkpoints.sqlite", check_same_thread=False)
        try:
            saver = SqliteSaver(connection)
            root = agent("orchestrator", "orchestrator", scenario.tree, [], {"clerk": clerk}, saver)
            first = root.invoke({"messages": [HumanMessage("file it")]}, config)
            [asked] = first["__interrupt__"]
            result = root.invoke(Command(resume={asked.id: "approve"}), config)
        finally:
            connection.close()
    assert ran == ["file"], ran
    return str(result["messages"][-1].content)


def _asking(sub: str) -> Any:
    """The tool a model calls to ask the sub-agent ``sub``: only its schema is used, the call
    goes to the sub-agent's node."""
    from langchain_core.tools import StructuredTool

    def ask(input: str) -> str:
        raise AssertionError(f"{sub} is run by its node, not as a tool")

    return StructuredTool.from_function(
        ask,
        name=sub,
        description=f"Ask the sub-agent {sub} to do its part.",
        args_schema=_arguments(INPUT_FIELD),
    )

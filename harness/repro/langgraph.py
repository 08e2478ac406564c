"""The reproducer's LangGraph section, in both shapes the harness drives (as
``harness.targets.langgraph`` and ``langgraph_graphs`` do, written out without the harness): a
LangChain ``BaseChatModel`` returning ``AIMessage`` tool calls, protected actions as tools that
call ``langgraph.types.interrupt``, and the root graph on a ``SqliteSaver`` whose file a rebuild
opens again; sub-agent graphs inherit it (``checkpointer=None`` ephemeral, ``True`` for
preserve_context).  ``tools``: every agent the prebuilt ReAct agent, a sub-agent a tool invoking
its graph; ``subgraph-node``: a hand-built ``StateGraph``, a ``Send`` per tool call, a sub-agent
a node.  Answers go in as ``Command(resume={interrupt id: response})``, a resume (an answer
keyed by no id) as ``Command(resume=response)``."""

from __future__ import annotations

from typing import Final

DISTRIBUTION: Final = "langgraph"

IMPORTS: Final = """\
import json
import logging
import re
import sqlite3
import subprocess  #?restart
import sys  #?restart
import tempfile
import warnings
from collections import namedtuple

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import @MESSAGES@
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import @TYPES@
"""

MODEL: Final = r"""
class ScriptedModel(BaseChatModel):  # the LLM's stand-in: it answers the turn its script has
    agent: dict
    path: str

    _llm_type = property(lambda self: "scripted")
    bind_tools = lambda self, tools, **kwargs: self  # noqa: E731  #?react

    def _generate(self, messages: list, *args: object, **kwargs: object) -> ChatResult:
        said = [({"human": "user", "ai": "assistant"}.get(m.type), m.content) for m in messages]
        text, calls = next_turn(self.agent, self.path, said)
        tool_calls = [{"name": name, "id": use_id, "type": "tool_call", "args": arguments}
                      for name, use_id, arguments in calls]
        message = AIMessage(content=text, tool_calls=tool_calls)
        return ChatResult(generations=[ChatGeneration(message=message)])


def action(name: str, label: str, questions: int = 1) -> StructuredTool:
    def run(call: str) -> str:
        #?questions{
        for number in range(1, questions + 1):
            if interrupt({"action": label, "question": number, "prompt": call}) != "approve":
                return f"{label}: refused"
        #?}
        #?!questions{
        if interrupt({"action": label, "question": 1, "prompt": call}) != "approve":
            return f"{label}: refused"
        #?}
        RAN.append(label)
        return f"{label}: done"

    return StructuredTool.from_function(run, name=name, description=f"Protected action {label}.")
"""

TOOLS: Final = r'''

def sub_agent_tool(name: str, graph) -> StructuredTool:
    def ask(input: str) -> str:  # the sub-agent's graph run on the call's input: its answer
        return graph.invoke({"messages": [HumanMessage(input)]})["messages"][-1].content

    return StructuredTool.from_function(ask, name=name, description=f"Ask the sub-agent {name}.")

def build(store: str, spec: dict = TREE, path: str = ""):
    """The agent's graph, its sub-agents' inside; the root's checkpoints are in ``store``."""
    path = f"{path}/{spec['name']}".lstrip("/")
    #?questions{
    actions, asks = spec.get("actions", {}), spec.get("questions", {})
    tools = [action(name, label, asks.get(label, 1)) for name, label in actions.items()]
    #?}
    tools = [action(name, label) for name, label in spec.get("actions", {}).items()]  #?!questions
    for sub in spec.get("subs", []):
        tools.append(sub_agent_tool(sub["name"], build(store, sub, path)))
    saver = spec.get("preserve") or None  # a sub-agent's: the root's, per call or per thread
    if "/" not in path:
        saver = SqliteSaver(sqlite3.connect(f"{store}/checkpoints.sqlite", check_same_thread=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ScriptedModel(agent=spec, path=path)
        return create_react_agent(model, tools, checkpointer=saver, name=spec["name"])  #?!agent
        own = spec.get("agent", spec["name"])  # its own name, apart from its tool's  #?agent
        return create_react_agent(model, tools, checkpointer=saver, name=own)  #?agent
'''

SUBGRAPH_NODES: Final = r'''

def sub_agent_node(sub_graph, calls: list) -> dict:  # its graph run on the call's input
    [call] = calls
    said = sub_graph.invoke({"messages": [HumanMessage(call["args"]["input"])]})["messages"]
    return {"messages": [ToolMessage(said[-1].content, tool_call_id=call["id"], name=call["name"])]}

def build(store: str, spec: dict = TREE, path: str = ""):
    """The agent's graph: a model node, a Send per tool call to the tools or a sub-agent's node."""
    path = f"{path}/{spec['name']}".lstrip("/")
    model, graph = ScriptedModel(agent=spec, path=path), StateGraph(MessagesState)
    graph.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_edge(START, "model")
    nodes = {f"agent-{sub['name']}": partial(sub_agent_node, build(store, sub, path))
             for sub in spec.get("subs", [])}
    if spec.get("actions"):
        #?questions{
        asks = spec.get("questions", {})
        tools = [action(name, label, asks.get(label, 1)) for name, label in spec["actions"].items()]
        #?}
        nodes["tools"] = ToolNode(tools)  #?questions
        #?!questions{
        nodes["tools"] = ToolNode([action(n, a) for n, a in spec["actions"].items()])
        #?}
    for name, node in nodes.items():
        graph.add_node(name, node)
        graph.add_edge(name, "model")

    def route(state: dict) -> object:  # a Send per tool call: to a sub-agent's node or the tools
        calls = state["messages"][-1].tool_calls
        return [Send(f"agent-{c['name']}" if f"agent-{c['name']}" in nodes else "tools", [c])
                for c in calls] or END

    graph.add_conditional_edges("model", route, [END, *nodes])
    saver = spec.get("preserve") or None  # a sub-agent's: the root's, per call or per thread
    if "/" not in path:
        saver = SqliteSaver(sqlite3.connect(f"{store}/checkpoints.sqlite", check_same_thread=False))
    return graph.compile(checkpointer=saver, name=spec["name"])  #?!agent
    return graph.compile(checkpointer=saver, name=spec.get("agent", spec["name"]))  #?agent
'''

ADVANCE: Final = r'''


def advance(root, given: str | list) -> tuple:
    """One step: (stop reason, questions pending, final answer, error, public events)."""
    config = {"configurable": {"thread_id": "orchestrator"}, "max_concurrency": 1}
    inputs = {"messages": [HumanMessage(given)]} if isinstance(given, str) else None
    #?resume{
    if isinstance(given, tuple):  # a resume: its one answer, keyed by no interrupt id
        inputs = Command(resume=given[0])
    #?}
    errors, events, handler = [], [], logging.Handler(logging.ERROR)
    handler.emit = lambda record: errors.append(record.getMessage())
    logging.getLogger("langgraph").addHandler(handler)
    try:
        events += root.stream(inputs or Command(resume=dict(given)), config, stream_mode="updates")
        messages = root.get_state(config).values["messages"]
    except Exception as failure:
        return None, [], None, f"{type(failure).__name__}: {failure}", events
    finally:
        logging.getLogger("langgraph").removeHandler(handler)
    pending = [Pending(i.id, **i.value) for chunk in events for i in chunk.get("__interrupt__", ())]
    final = None if pending else messages[-1].content
    stop, error = "interrupt" if pending else "end_turn", errors[0] if errors else None
    return stop, pending, final, error, events
'''


SHAPES: Final = {"langgraph": TOOLS, "langgraph-subgraph-node": SUBGRAPH_NODES}
# the prebuilt ReAct agent binds the model to its tools; the hand-built graph calls it as is
ALWAYS: Final = {"langgraph": frozenset({"react"}), "langgraph-subgraph-node": frozenset()}


def section(target: str) -> str:
    """The section for ``target`` (one of ``SHAPES``)."""
    return MODEL + SHAPES[target] + ADVANCE


def imports(target: str) -> str:
    """The script's imports for ``target``: what its shape's graphs are made of."""
    if target == "langgraph":
        text = IMPORTS.replace("@MESSAGES@", "AIMessage, HumanMessage")
        text = text.replace("@TYPES@", "Command, interrupt")
        return text.replace(
            "from langgraph.types",
            "from langgraph.prebuilt import create_react_agent\nfrom langgraph.types",
        )
    text = IMPORTS.replace("import warnings\n", "")
    text = text.replace("namedtuple\n", "namedtuple\nfrom functools import partial\n")
    text = text.replace("@MESSAGES@", "AIMessage, HumanMessage, ToolMessage")
    text = text.replace("@TYPES@", "Command, Send, interrupt")
    return text.replace(
        "from langgraph.types",
        "from langgraph.graph import END, START, MessagesState, StateGraph\n"
        "from langgraph.prebuilt import ToolNode\nfrom langgraph.types",
    )

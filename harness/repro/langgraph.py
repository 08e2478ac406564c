"""The reproducer's LangGraph section, in both shapes the harness drives (as
``harness.targets.langgraph`` and ``langgraph_graphs`` do, written out without the harness): a
LangChain ``BaseChatModel`` returning ``AIMessage`` tool calls, protected actions as tools that
call ``langgraph.types.interrupt``, and the root graph on a ``SqliteSaver`` whose file a rebuild
opens again; sub-agent graphs inherit it (``checkpointer=None`` ephemeral, ``True`` for
preserve_context).  ``tools``: every agent the prebuilt ReAct agent, a sub-agent a tool invoking
its graph; ``subgraph-node``: a hand-built ``StateGraph``, a ``Send`` per tool call, a sub-agent
a node.  Answers go in as ``Command(resume={interrupt id: response})``."""

from __future__ import annotations

from typing import Final

DISTRIBUTION: Final = "langgraph"

IMPORTS: Final = """\
import json
import logging
import re
import sqlite3
import sys
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

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: list, **kwargs: object) -> "ScriptedModel":
        return self

    def _generate(self, messages: list, stop: object = None, run_manager: object = None,
                  **kwargs: object) -> ChatResult:
        roles = {"human": "user", "ai": "assistant"}
        said = [(roles.get(m.type, m.type), m.content) for m in messages]
        mark, prompt, turn = next_turn(self.agent, self.path, said)
        calls = turn if isinstance(turn, list) else []
        subs = [sub["name"] for sub in self.agent.get("subs", [])]
        tool_calls = [
            {"name": name, "id": use_id, "type": "tool_call",
             "args": {"input": (task or ["do your part"])[0]} if name in subs else {"call": prompt}}
            for name, use_id, *task in calls
        ]
        message = AIMessage(content=mark if calls else f"{mark} {turn}", tool_calls=tool_calls)
        return ChatResult(generations=[ChatGeneration(message=message)])


def action(name: str, label: str, questions: int) -> StructuredTool:
    def run(call: str) -> str:
        for number in range(1, questions + 1):
            if interrupt({"action": label, "question": number, "prompt": call}) != "approve":
                return f"{label}: refused"
        RAN.append(label)
        return f"{label}: done"

    return StructuredTool.from_function(run, name=name, description=f"Protected action {label}.")


def answer_of(graph, prompt: str) -> str:
    text = graph.invoke({"messages": [HumanMessage(prompt)]})["messages"][-1].content
    return MARK.sub("", text, count=1).lstrip()
"""

TOOLS: Final = r'''

def sub_agent_tool(name: str, graph) -> StructuredTool:
    def ask(input: str) -> str:
        return answer_of(graph, input)

    return StructuredTool.from_function(ask, name=name, description=f"Ask the sub-agent {name}.")

def build(store: str, spec: dict = TREE, path: str = ""):
    """The agent's graph, its sub-agents' inside; the root's checkpoints are in ``store``."""
    path = f"{path}/{spec['name']}".lstrip("/")
    tools = [action(name, *asks) for name, asks in spec.get("actions", {}).items()]
    for sub in spec.get("subs", []):
        tools.append(sub_agent_tool(sub["name"], build(store, sub, path)))
    saver = spec.get("preserve") or None  # a sub-agent's: the root's, per call or per thread
    if "/" not in path:
        saver = SqliteSaver(sqlite3.connect(f"{store}/checkpoints.sqlite", check_same_thread=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ScriptedModel(agent=spec, path=path)
        return create_react_agent(model, tools, checkpointer=saver, name=spec["name"])
'''

SUBGRAPH_NODES: Final = r'''

def sub_agent_node(sub_graph):
    def run(calls: list) -> dict:
        [call] = calls
        result = answer_of(sub_graph, call["args"]["input"])
        return {"messages": [ToolMessage(result, tool_call_id=call["id"], name=call["name"])]}

    return run

def build(store: str, spec: dict = TREE, path: str = ""):
    """The agent's graph: a model node, a Send per tool call to the tools or a sub-agent's node."""
    path = f"{path}/{spec['name']}".lstrip("/")
    model, graph = ScriptedModel(agent=spec, path=path), StateGraph(MessagesState)
    graph.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_edge(START, "model")
    routes = [END]
    if spec.get("actions"):
        graph.add_node("tools", ToolNode([action(n, *a) for n, a in spec["actions"].items()]))
        graph.add_edge("tools", "model")
        routes.append("tools")
    for sub in spec.get("subs", []):
        graph.add_node(f"agent-{sub['name']}", sub_agent_node(build(store, sub, path)))
        graph.add_edge(f"agent-{sub['name']}", "model")
        routes.append(f"agent-{sub['name']}")
    subs = [sub["name"] for sub in spec.get("subs", [])]

    def route(state: dict) -> object:
        calls = getattr(state["messages"][-1], "tool_calls", None)
        return [Send(f"agent-{c['name']}" if c["name"] in subs else "tools", [c])
                for c in calls] if calls else END

    graph.add_conditional_edges("model", route, routes)
    saver = spec.get("preserve") or None  # a sub-agent's: the root's, per call or per thread
    if "/" not in path:
        saver = SqliteSaver(sqlite3.connect(f"{store}/checkpoints.sqlite", check_same_thread=False))
    return graph.compile(checkpointer=saver, name=spec["name"])
'''

ADVANCE: Final = r'''
CONFIG = {"configurable": {"thread_id": "orchestrator"}, "max_concurrency": 1}


def advance(root, given: str | list) -> tuple:
    """One step: (stop reason, questions pending, final answer, error, public events)."""
    if isinstance(given, list):
        graph_input = Command(resume=dict(given))
    else:
        graph_input = {"messages": [HumanMessage(given)]}
    errors, events, handler = [], [], logging.Handler(logging.ERROR)
    handler.emit = lambda record: errors.append(record.getMessage())
    logging.getLogger("langgraph").addHandler(handler)
    try:
        events += root.stream(graph_input, CONFIG, stream_mode="updates")
        messages = root.get_state(CONFIG).values["messages"]
    except Exception as failure:
        return None, [], None, f"{type(failure).__name__}: {failure}", events
    finally:
        logging.getLogger("langgraph").removeHandler(handler)
    asked = [(i.id, i.value) for chunk in events for i in chunk.get("__interrupt__", ())]
    pending = [Pending(k, q.get("action"), q.get("question"), q.get("prompt")) for k, q in asked]
    final = None if pending else MARK.sub("", messages[-1].content, count=1).lstrip()
    stop, error = "interrupt" if pending else "end_turn", errors[0] if errors else None
    return stop, pending, final, error, events
'''


SHAPES: Final = {"langgraph": TOOLS, "langgraph-subgraph-node": SUBGRAPH_NODES}


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
    text = text.replace("@MESSAGES@", "AIMessage, HumanMessage, ToolMessage")
    text = text.replace("@TYPES@", "Command, Send, interrupt")
    return text.replace(
        "from langgraph.types",
        "from langgraph.graph import END, START, MessagesState, StateGraph\n"
        "from langgraph.prebuilt import ToolNode\nfrom langgraph.types",
    )

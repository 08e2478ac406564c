"""The graphs of the LangGraph target (``harness.targets.langgraph``, whose docstring says what
LangGraph does and why the adapter does what it does): the two shapes of agent, ``tools`` (the
prebuilt ReAct agent, a sub-agent is a tool) and ``subgraph-node`` (a hand-built ``StateGraph``,
a sub-agent is a node), the tools and nodes inside them, and the guard every task body of ours
wears so that a failed task stops its step.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import cache, wraps
from typing import Any, Final

from fakes.effects import OrdinaryTool
from fakes.model import strip_marker
from fakes.protected import CALL_FIELD, Ledger, ProtectedAction, prompt_of
from scenarios import model as scenario_model

INPUT_FIELD: Final = "input"  # a sub-agent tool's (or node's) prompt argument
# a tool's name -> its calls' retry and the label whose refusal is their error (if any)
Retries = Mapping[str, tuple[scenario_model.Retry, str | None]]
Interceptor = Callable[[Any, Callable[[Any], Any]], Any]


# -- a failed task stops its step ---------------------------------------------------------------

Guard = Callable[[Callable[..., Any]], Callable[..., Any]]


class StopAfterFailure:
    """Once a task of a step has failed, no task of ours starts in that step.

    When a task of a super-step fails, LangGraph cancels the tasks its pool has not started
    (``_panic_or_proceed``), but the pool's one worker is free as soon as the failed task's
    future is settled and may already have taken the next one, which then runs to its end: its
    side effects, its checkpoint writes, and a stream chunk yielded or not by when it was queued.
    Which of the two happens is thread scheduling, so the same scenario recorded different
    histories under load.  Every task body of the tree is ours (a tool, a sub-agent's node, the
    approval interceptor), so each is ``guard``-ed: a body that fails with an error (not an
    interrupt, not an invalid resume value, which LangGraph raises only after its siblings ran)
    marks the step failed, and a body that starts after that does nothing and ends as an empty
    ``GraphInterrupt``, which LangGraph neither saves nor streams nor raises in place of the
    failure.  That is LangGraph's cancellation, taken every time: the outcome a task the pool
    had not started yet gets, never a schedule LangGraph could not produce."""

    def __init__(self) -> None:
        self.failed = False

    def guard(self, body: Callable[..., Any]) -> Callable[..., Any]:
        from langgraph.errors import GraphBubbleUp, GraphInterrupt

        from harness.targets.langgraph_compat import is_invalid_resume

        @wraps(body)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            if self.failed:
                raise GraphInterrupt(())
            try:
                return body(*args, **kwargs)
            except GraphBubbleUp:
                raise
            except Exception as failure:
                if not is_invalid_resume(failure):
                    self.failed = True
                raise

        return guarded


class StopAfterInterrupt:
    """In a ``ToolNode`` that runs a message's tool calls in one task (``create_react_agent``
    version "v1"), once a call has raised an interrupt, no sibling call of ours starts.

    That ``ToolNode`` runs its calls with ``executor.map`` on a pool of ``max_concurrency``
    workers (one here) and reads the results in order; the first call that raises an interrupt
    ends the reading, and ``Executor.map`` cancels the calls not started yet.  But the one
    worker is free as soon as the interrupting call's future is settled and may already have
    taken the next call, which then runs to its end while nobody reads its result: a sub-agent
    it calls asks its model, writes checkpoints and raises a question nobody is shown.  Which
    of the two happens is thread scheduling: on a quiet machine the cancellation wins (30 runs
    of 30), with ``sys.setswitchinterval(1e-6)`` the sibling ran in 17 of 30, and the same
    scenario recorded four histories in 20 runs.  Every body a ``ToolNode`` runs is ours (a
    tool, the interceptor), so each is ``guard``-ed: a body that raises an interrupt marks its
    worker thread, and a body that starts on that thread afterwards does nothing and ends as an
    empty ``GraphInterrupt``, which nobody reads.  The pool, its one worker thread and the mark
    end with the ``ToolNode`` task, so the mark never reaches a call of another task or step.
    That is ``Executor.map``'s cancellation taken every time: the outcome a quiet machine gives,
    never a schedule the SDK could not produce."""

    def __init__(self) -> None:
        self.asked = threading.local()  # per worker thread: a call of its ToolNode task asked

    def guard(self, body: Callable[..., Any]) -> Callable[..., Any]:
        from langgraph.errors import GraphInterrupt

        @wraps(body)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            if getattr(self.asked, "interrupted", False):
                raise GraphInterrupt(())
            try:
                return body(*args, **kwargs)
            except GraphInterrupt:
                self.asked.interrupted = True
                raise

        return guarded


# -- graph shapes ----------------------------------------------------------------------------


def sub_checkpointer(spec: scenario_model.Agent) -> Any:
    """How a sub-agent's graph keeps its state, by what the scenario asks of it."""
    if not spec.preserve_context:
        return None  # inherits the root's saver, scoped to one call
    if spec.session_store:
        return True  # the root's saver, kept across calls
    from langgraph.checkpoint.memory import InMemorySaver

    return InMemorySaver()  # kept across calls, in memory only


def prebuilt_tool_node(
    tools: Sequence[Any],
    *,
    hooked: Sequence[scenario_model.Action],
    ask: Callable[[Any], Any],
    guard: Guard,
    retries: Retries | None = None,
) -> Any:
    """The prebuilt ``ToolNode``; with hooked actions, an interceptor asks (``ask``: LangGraph's
    ``interrupt``) before they run; with retries, an interceptor runs a call again (the asking
    included) when it ended the way its retry names."""
    from langgraph.prebuilt import ToolNode

    if not hooked and not retries:
        return ToolNode(tools)
    interceptor: Interceptor = _approval_hook(hooked, ask) if hooked else _execute
    if retries:
        interceptor = _retrying(interceptor, retries)
    return ToolNode(tools, wrap_tool_call=guard(interceptor))


def _execute(request: Any, execute: Callable[[Any], Any]) -> Any:
    return execute(request)


def _retrying(interceptor: Interceptor, retries: Retries) -> Interceptor:
    """An interceptor that runs ``interceptor`` again, at once, while the call's result ends
    the way its retry names and retries are left (LangChain's documented way to retry a tool
    call from ``wrap_tool_call``).  The count is the loop's: a resumed task runs from its start
    again, so its earlier attempts are played again before the one that asked."""

    def retry(request: Any, execute: Callable[[Any], Any]) -> Any:
        result = interceptor(request, execute)
        kept = retries.get(request.tool_call["name"])
        if kept is None:
            return result
        policy, label = kept
        for _ in range(policy.times):
            if ("error" if _failed(result, label) else "result") != policy.after:
                break
            result = interceptor(request, execute)
        return result

    return retry


def _failed(result: Any, label: str | None) -> bool:
    """Whether a tool call's ``ToolMessage`` is an error: an error status, or the refusal of a
    denied action (which a protected action returns as its result)."""
    if getattr(result, "status", None) == "error":
        return True
    return label is not None and getattr(result, "content", None) == ProtectedAction(label).refusal


def action_tool(
    action: scenario_model.Action,
    path: str,
    *,
    ledger: Ledger,
    interrupt: Callable[[Any], Any],
    guard: Guard,
) -> Any:
    """The tool of a protected action: it asks (``interrupt``: LangGraph's) before it runs, or,
    with ``hook: true``, runs once the ``ToolNode``'s interceptor has asked."""
    from langchain_core.tools import StructuredTool

    protected = ProtectedAction(action.label, action.questions)

    if action.hook:

        def run_approved(call: str, tool_call_id: str) -> str:
            return protected.run(ledger, agent=path, tool_use_id=tool_call_id, prompt=call)

        handler = run_approved
    else:

        def run(call: str, tool_call_id: str) -> str:
            def ask(name: str, why: Any) -> Any:
                del name  # LangGraph's interrupt has no name; the reason carries the number
                return interrupt(why)

            return protected.perform(ask, ledger, agent=path, tool_use_id=tool_call_id, prompt=call)

        handler = run
    return StructuredTool.from_function(
        guard(handler),
        name=action.tool,
        description=f"Protected action {action.label}: runs only with a human's approval.",
        args_schema=action_arguments(),
    )


def effect_tool(effect: scenario_model.Effect, path: str, *, ledger: Ledger, guard: Guard) -> Any:
    """The tool of an ordinary tool with a side effect: it asks nothing and runs at once."""
    from langchain_core.tools import StructuredTool

    ordinary = OrdinaryTool(effect.tool)

    def run(tool_call_id: str) -> str:
        return ordinary.run(ledger, agent=path, tool_use_id=tool_call_id)

    return StructuredTool.from_function(
        guard(run),
        name=effect.tool,
        description=f"Ordinary tool {effect.tool}: a side effect, asks nothing.",
        args_schema=effect_arguments(),
    )


def _approval_hook(
    actions: Sequence[scenario_model.Action], interrupt: Callable[[Any], Any]
) -> Callable[[Any, Any], Any]:
    """A ``ToolNode`` interceptor that asks before a hooked action's tool runs."""
    from langchain_core.messages import ToolMessage

    by_tool = {action.tool: action for action in actions}

    def ask_first(request: Any, execute: Callable[[Any], Any]) -> Any:
        call = request.tool_call
        action = by_tool.get(call["name"])
        if action is not None:
            protected = ProtectedAction(action.label, action.questions)
            prompt = prompt_of(call.get("args"))
            if not protected.approved(lambda name, why: interrupt(why), prompt):
                return ToolMessage(
                    content=protected.refusal, tool_call_id=call["id"], name=call["name"]
                )
        return execute(request)

    return ask_first


def _sub_agent_result(output: Any) -> str:
    messages = output.get("messages", []) if isinstance(output, dict) else []
    return strip_marker(str(messages[-1].content)) if messages else ""


def react_agent(
    name: str,
    model: Any,
    actions: Sequence[Any],
    tool_node: Callable[[Sequence[Any]], Any],
    sub_graphs: dict[str, Any],
    checkpointer: Any,
    guard: Guard,
    *,
    version: str = "v2",
) -> Any:
    """The prebuilt ReAct agent; ``version`` "v2" runs each tool call as a task of its own,
    "v1" a message's tool calls in one ``ToolNode`` task."""
    from langgraph.prebuilt import create_react_agent

    tools = [*actions, *(_sub_agent_tool(sub, graph, guard) for sub, graph in sub_graphs.items())]
    with warnings.catch_warnings():
        # deprecated in favour of langchain.agents.create_agent (another package), not removed
        warnings.simplefilter("ignore")
        return create_react_agent(
            model,
            tool_node(tools),
            checkpointer=checkpointer,
            name=name,
            version=version,
        )


def _sub_agent_tool(name: str, graph: Any, guard: Guard) -> Any:
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import StructuredTool

    def call_sub_agent(input: str) -> str:
        return _sub_agent_result(graph.invoke({"messages": [HumanMessage(input)]}))

    return StructuredTool.from_function(
        guard(call_sub_agent),
        name=name,
        description=f"Ask the sub-agent {name} to do its part.",
        args_schema=_sub_agent_arguments(),
    )


# A tool's argument schema is a pydantic model, and LangChain would build one for every tool of
# every graph, at every build: most of a scenario's time.  Every protected action takes the same
# arguments, and so does every sub-agent tool, so each model is built once per process.  It is a
# type with no state in it: a restart still builds every graph, model and tool again.


@cache
def action_arguments() -> Any:
    from typing import Annotated

    from langchain_core.tools import InjectedToolCallId
    from pydantic import BaseModel

    class ProtectedActionArguments(BaseModel):
        call: str  # CALL_FIELD: the prompt of the call it serves
        tool_call_id: Annotated[str, InjectedToolCallId]

    assert next(iter(ProtectedActionArguments.model_fields)) == CALL_FIELD
    return ProtectedActionArguments


@cache
def effect_arguments() -> Any:
    """An ordinary tool's arguments: none the model gives (it asks nothing, so its call does not
    carry the prompt a protected action's does), only the call's id, injected."""
    from typing import Annotated

    from langchain_core.tools import InjectedToolCallId
    from pydantic import BaseModel

    class OrdinaryToolArguments(BaseModel):
        tool_call_id: Annotated[str, InjectedToolCallId]

    return OrdinaryToolArguments


@cache
def _sub_agent_arguments() -> Any:
    from pydantic import BaseModel

    class SubAgentArguments(BaseModel):
        input: str  # INPUT_FIELD

    assert list(SubAgentArguments.model_fields) == [INPUT_FIELD]
    return SubAgentArguments


def node_agent(
    name: str,
    model: Any,
    actions: Sequence[Any],
    tool_node: Callable[[Sequence[Any]], Any],
    sub_graphs: dict[str, Any],
    checkpointer: Any,
    guard: Guard,
    *,
    gates: Mapping[str, str] | None = None,
    ask: Callable[[Any], Any] | None = None,
) -> Any:
    """A hand-built agent graph: a model node, then a ``Send`` per tool call to the ``ToolNode``
    or to a sub-agent's node; a gated sub-agent's node asks (``ask``) before it runs it."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import Send

    schemas = [*actions, *(_sub_agent_schema(sub) for sub in sub_graphs)]
    bound = model.bind_tools(schemas)

    def call_model(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    def route(state: dict[str, Any]) -> Any:
        last = state["messages"][-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return END
        return [
            Send(_sub_node(call["name"]) if call["name"] in sub_graphs else "tools", [call])
            for call in last.tool_calls
        ]

    def runs(sub: str, graph: Any) -> Callable[[Any], dict[str, Any]]:
        gate = (gates or {}).get(sub)

        def run_sub_agent(calls: Any) -> dict[str, Any]:
            [call] = calls
            if gate is not None and ask is not None:
                asked = ProtectedAction(gate)
                if not asked.approved(lambda name, why: ask(why)):
                    refusal = ToolMessage(content=asked.refusal, tool_call_id=call["id"], name=sub)
                    return {"messages": [refusal]}
            prompt = HumanMessage(str(call["args"].get(INPUT_FIELD, "")))
            result = _sub_agent_result(graph.invoke({"messages": [prompt]}))
            return {"messages": [ToolMessage(content=result, tool_call_id=call["id"], name=sub)]}

        return run_sub_agent

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_edge(START, "model")
    if actions:
        builder.add_node("tools", tool_node(actions))
        builder.add_edge("tools", "model")
    for sub, graph in sub_graphs.items():
        builder.add_node(_sub_node(sub), guard(runs(sub, graph)))
        builder.add_edge(_sub_node(sub), "model")
    targets = ["tools"] if actions else []
    builder.add_conditional_edges(
        "model", route, [*targets, *(_sub_node(sub) for sub in sub_graphs), END]
    )
    return builder.compile(checkpointer=checkpointer, name=name)


def _sub_node(sub: str) -> str:
    return f"agent-{sub}"


def _sub_agent_schema(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"Ask the sub-agent {name} to do its part.",
            "parameters": {
                "type": "object",
                "properties": {INPUT_FIELD: {"type": "string"}},
                "required": [INPUT_FIELD],
            },
        },
    }

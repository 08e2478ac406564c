"""LangGraph (``langgraph`` and ``langgraph-checkpoint-sqlite`` from PyPI), driven through its
public API.

Every agent is a real LangGraph graph.  Three shapes of "sub-agent" are offered, because LangGraph
users build both:

* ``tools`` (target ``langgraph``, the default): every agent is the prebuilt ReAct agent
  (``langgraph.prebuilt.create_react_agent``, version "v2": one ``Send`` task per tool call into a
  prebuilt ``ToolNode``); a sub-agent is a tool whose body invokes the sub-agent's compiled graph.
* ``toolnode`` (target ``langgraph-toolnode``): the ``tools`` shape built with
  ``create_react_agent`` version "v1": the prebuilt ``ToolNode`` is handed the whole model
  message and runs its tool calls in ONE task (one after another, ``max_concurrency=1``), so
  the interrupts of sibling tool calls share a task and its checkpoint namespace, which is
  where LangGraph's parallel-interrupt id bugs lived (#6533, #6624, #6626, #8579).
* ``subgraph-node`` (target ``langgraph-subgraph-node``): every agent is a hand-built
  ``StateGraph``: a model node, then one ``Send`` per tool call, either to a ``ToolNode`` (the
  protected actions) or to a node that runs the sub-agent's compiled graph.

Protected actions are tools that call ``langgraph.types.interrupt`` (or, with ``hook: true``, a
``ToolNode`` ``wrap_tool_call`` interceptor asks before the tool runs); ordinary tools with a side
effect are plain tools beside them, in the same ``ToolNode``.  A gated sub-agent is asked for the
same way: by that interceptor before its tool runs (``tools``), or by its node before it invokes
the sub-agent's graph (``subgraph-node``); a denial is a refusal ``ToolMessage``.  Answers go in as
``Command(resume={interrupt_id: response})``, an answer without an id (``resume``) as
``Command(resume=response)``.  Persistence is LangGraph's own: the root graph is
compiled with a ``SqliteSaver`` on ``checkpoints.sqlite`` in the work directory; sub-agent graphs
inherit it (ephemeral: ``checkpointer=None``, persisted per call; preserve_context:
``checkpointer=True``, persisted per thread; preserve_context without a session store: an
``InMemorySaver`` of its own, which a restart loses).  A restart closes the connection and builds
every graph, model and tool again on the same file.

The scripted model (``fakes.model``) is the only stand-in: a LangChain ``BaseChatModel`` with
``bind_tools`` and ``_generate`` returning ``AIMessage`` with ``tool_calls``.  A stateful provider
is emulated the way LangChain carries one (``ChatOpenAI(use_previous_response_id=True)``): the
response id rides in the ``AIMessage``'s ``response_metadata`` and the next request reads it off
the latest assistant message, so it is checkpointed with the conversation.

These adaptations keep the history deterministic, and none changes what is checked:

* Tasks run with ``max_concurrency=1`` (a public ``RunnableConfig`` key, inherited by the
  sub-agents' graphs): parallel tool calls are still separate tasks of one super-step, but the
  pool that runs them has one worker, so they run one after another in task order, and model
  requests, ledger entries and interrupts come in the same order on every run.
* LangGraph derives an interrupt's id from its task's checkpoint namespace, which contains task
  ids derived from time-based checkpoint ids: the same scenario gets other ids on every run, so
  the run with restarts could never show the ids of its restart-free control.  The human is
  shown a handle ``lg-<n>`` instead: the n-th distinct real id this session saw (kept in a file,
  so it outlives restarts).  The renaming is one-to-one within a session, so ids that collide,
  differ or repeat still do; an answer maps the handle back to the real id.  New ids of one step
  are numbered in the order of where they were raised (the path of ``Send`` tasks down the
  graphs, from ``get_state(subgraphs=True)``, then the question, then the order the step raised
  them in), not in the order the stream emits them, which follows task ids and so changes from
  run to run.
* The order the step raised its interrupts in is noted as they are raised (``_ask`` wraps
  ``interrupt``); the single worker makes it the same on every run.  LangGraph's own order is
  not: a task whose subgraph raised several interrupts reports them as one ``GraphInterrupt``
  collected from a *set* of futures (``_panic_or_proceed``, ``langgraph/pregel/_runner.py``
  l. 687 and 705), so in an order of memory addresses.  Such an ``__interrupt__`` chunk is
  recorded with its interrupts in the order raised, and interrupts that tie on path and question
  are shown in that order.
* Message ids are recorded as ``<message-id>`` (see ``_plain``): the reducer gives a message
  its id in place, racing a checkpoint thread that serializes the same message.

One thing LangGraph leaves to thread timing, and a user sees it too: when a task of a super-step
fails (an error, not an interrupt), the runner cancels the tasks the pool has not started
(``_panic_or_proceed``, ``_runner.py`` l. 695), but the pool's one worker, free as soon as the
failed task's future is settled, may already have taken the next task, which then runs to its end
(side effects, checkpoint writes, a stream chunk yielded or not).  Recorded as it fell, the same
scenario gave different histories under load (``generated-langgraph-095`` and ``-157`` of the ci
sample: 4 histories each in 30 runs with ``sys.setswitchinterval(1e-6)``).  The adapter takes the
cancellation every time (``StopAfterFailure``): after a task of the step failed, a task body that
starts does nothing; 30 runs, one history.

The one-task shape has the same race inside its ``ToolNode``: it runs a message's calls with
``executor.map`` on a pool of one worker and stops reading at the first call that raises an
interrupt, and ``Executor.map`` cancels the calls not started; the worker, free once that call's
future is settled, may have taken the next one already, which then runs to its end unread (a
sub-agent it calls asks its model and writes checkpoints).  With ``sys.setswitchinterval(1e-6)``
seven regression files recorded two to four histories in 5 runs each
(``restart-after-colliding-partial-answer``: 4 in 20), and one ``--isolation fork`` run in CI saw
a model request fewer than its control (D).  The adapter takes that cancellation every time too
(``StopAfterInterrupt``): after a call of a one-task ``ToolNode`` asked, a sibling call's body
that starts on the same worker does nothing; 68 files, 5 runs each, one history each.  Nothing
is serialised that ran concurrently before: the pool had one worker already.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from collections.abc import Callable, Sequence
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

from fakes.model import ScriptedModel, strip_marker
from fakes.protected import label_of, question_name
from fakes.stores import MemoryStore
from harness.targets.adapter import (
    NOT_REBUILT,
    UUID,
    ErrorLog,
    NoContinuations,
    RebuildingSession,
    quiet_sdk_logs,
    work_log,
)
from harness.targets.base import Observation, PendingInterrupt, Stored, TargetInfo
from harness.targets.langgraph_graphs import (
    INPUT_FIELD,
    StopAfterFailure,
    StopAfterInterrupt,
    action_tool,
    effect_tool,
    node_agent,
    prebuilt_tool_node,
    react_agent,
    sub_checkpointer,
)
from harness.targets.langgraph_model import model_class
from harness.targets.reference import agent_script, agents_by_path
from scenarios import model as scenario_model

DISTRIBUTION: Final = "langgraph"
THREAD: Final = "orchestrator"  # the root graph's thread id
CHECKPOINTS: Final = "checkpoints.sqlite"
HANDLE_PREFIX: Final = "lg-"
LOGGERS: Final = ("langgraph", "langchain_core", "langchain")
INTERRUPT_KEY: Final = "__interrupt__"  # the stream chunk that carries a task's interrupts

SHAPES: Final = {
    "tools": "sub-agents are tools of the prebuilt ReAct agent (create_react_agent + ToolNode)",
    "subgraph-node": "sub-agents are nodes that run a compiled subgraph (StateGraph + Send)",
    "toolnode": "sub-agents are tools of the prebuilt ReAct agent whose ToolNode runs a "
    "message's tool calls as one task (create_react_agent version v1)",
}
TARGET_NAMES: Final = {
    "tools": "langgraph",
    "subgraph-node": "langgraph-subgraph-node",
    "toolnode": "langgraph-toolnode",
}
# the shapes whose agents are the prebuilt ReAct agent (a sub-agent is a tool), with the
# create_react_agent version each builds: "v2" sends each tool call to the ToolNode as a task of
# its own, "v1" hands the ToolNode the whole message, whose tool calls then run in one task
REACT_VERSION: Final = {"tools": "v2", "toolnode": "v1"}

# what this target can express; left out, with the reason:
#   sliding_window: LangGraph has no conversation manager with a per-call trim counter
#   corruption, continuation_bytes: the continuation is a set of msgpack checkpoint rows in
#     sqlite; this adapter does not locate, measure or damage them
#   storeless_sub_agents: a subgraph cannot keep its turn in memory only under a persisted
#     parent: the parent lends its checkpointer to every subgraph and that wins over the
#     subgraph's own (an InMemorySaver passed to compile() is silently replaced)
CAPABILITIES: Final = frozenset(
    {
        "interrupt_ids",
        "restart",
        "preserve_context",
        "stateful_provider",
        "multi_question",
        "hook_interrupts",
        "gated_sub_agents",
        "public_events",
        "repeated_tool_use_ids",
        "empty_tool_use_ids",
        "ordinary_tools",
        "changed_tree",
        "scalar_resume",
        "tool_names",
    }
)

# the tools shape retries a tool call (a protected action's or a sub-agent tool's) from the
# ToolNode's wrap_tool_call interceptor; the subgraph-node shape does not claim it: a sub-agent
# is a node there, which no tool-call interceptor sees, and a node's RetryPolicy retries only
# after an exception, never after a result or a refusal
CAPABILITIES_OF_SHAPE: Final = {
    "tools": CAPABILITIES | {"retries"},
    "subgraph-node": CAPABILITIES,
    "toolnode": CAPABILITIES | {"retries"},
}

INTERRUPT_ID: Final = re.compile(r"\b[0-9a-f]{32}\b")
MESSAGE_ID: Final = "<message-id>"  # what a message's id is recorded as (see _plain)


def sdk_version() -> str | None:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return None


class LangGraphTarget:
    sdk_loggers = LOGGERS  # what its sessions read during a rebuild (ErrorLog)

    def __init__(self, shape: str = "tools") -> None:
        if shape not in SHAPES:
            raise ValueError(f"shape must be one of {sorted(SHAPES)}")
        self.shape = shape
        installed = sdk_version()
        if installed is None:
            raise RuntimeError(f"{DISTRIBUTION} is not installed (pip install '.[langgraph]')")
        quiet_sdk_logs(*LOGGERS)
        self.info = TargetInfo(
            name=TARGET_NAMES[shape],
            version=installed,
            capabilities=CAPABILITIES_OF_SHAPE[shape],
            description=f"the real {DISTRIBUTION} from PyPI with SqliteSaver checkpoints and the "
            f"scripted fake chat model; {SHAPES[shape]}",
        )

    def start(self, scenario: scenario_model.Scenario, workdir: Path) -> LangGraphSession:
        return LangGraphSession(scenario, workdir, self.shape)


# -- one scenario ----------------------------------------------------------------------------


class LangGraphSession(RebuildingSession):
    sdk_loggers = LOGGERS

    def __init__(self, scenario: scenario_model.Scenario, workdir: Path, shape: str) -> None:
        self.scenario = scenario
        self.shape = shape
        self.agents = agents_by_path(scenario.tree)
        self.checkpoints = workdir / CHECKPOINTS
        super().__init__(workdir, MemoryStore(), NoContinuations())
        self.handles = work_log(workdir / "interrupt-handles.jsonl")
        self.model_class = model_class()
        self.connection: sqlite3.Connection | None = None
        self.raised: dict[str, int] = {}  # this step's interrupt ids, in the order raised
        self.stop = StopAfterFailure()
        # a ToolNode that runs a message's calls in one task ("v1") stops them at the first
        # interrupt, by thread timing unless guarded (StopAfterInterrupt)
        self.siblings = StopAfterInterrupt() if REACT_VERSION.get(shape) == "v1" else None
        self.root: Any = self._build()

    @property
    def config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": THREAD}, "max_concurrency": 1}

    # -- building the tree with real LangGraph objects -------------------------------------

    def _guard(self, body: Callable[..., Any]) -> Callable[..., Any]:
        """What every task body of ours wears: no body starts after a failure in its step,
        nor, in a one-task ToolNode, after a sibling call's interrupt."""
        if self.siblings is not None:
            body = self.siblings.guard(body)
        return self.stop.guard(body)

    def _build(self) -> Any:
        from langgraph.checkpoint.sqlite import SqliteSaver

        self._close()
        self.connection = sqlite3.connect(self.checkpoints, check_same_thread=False)
        return self._agent(
            self.scenario.tree, self.scenario.tree.name, SqliteSaver(self.connection)
        )

    def _close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def _agent(self, spec: scenario_model.Agent, path: str, checkpointer: Any) -> Any:
        """The compiled graph of ``spec`` (and, inside it, of its sub-agents)."""
        core = ScriptedModel(
            path,
            agent_script(spec, prompt_field=INPUT_FIELD),
            self.journal,
            stateful_provider=spec.stateful_provider,
        )
        model = self.model_class(core=core)
        sub_graphs = {
            sub.tool: self._agent(sub, f"{path}/{sub.tool}", sub_checkpointer(sub))
            for sub in spec.sub_agents
        }
        actions = [
            action_tool(action, path, ledger=self.ledger, interrupt=self._ask, guard=self._guard)
            for action in spec.actions
        ]
        actions += [
            effect_tool(effect, path, ledger=self.ledger, guard=self._guard)
            for effect in spec.effects
        ]
        hooked = [action for action in spec.actions if action.hook]
        gates = {sub.tool: sub.gate for sub in spec.sub_agents if sub.gate is not None}
        if self.shape in REACT_VERSION:  # a sub-agent is a tool: the same interceptor asks its gate
            hooked += [scenario_model.Action(tool=sub, label=gate) for sub, gate in gates.items()]
        retries: dict[str, tuple[scenario_model.Retry, str | None]] = {
            action.tool: (action.retry, action.label) for action in spec.actions if action.retry
        }
        if self.shape in REACT_VERSION:  # a sub-agent is a tool: the same interceptor retries it
            retries |= {sub.tool: (sub.retry, sub.gate) for sub in spec.sub_agents if sub.retry}
        tool_node = partial(
            prebuilt_tool_node,
            hooked=hooked,
            ask=self._ask,
            guard=self._guard,
            retries=retries,
        )
        if self.shape in REACT_VERSION:
            return react_agent(
                spec.name,
                model,
                actions,
                tool_node,
                sub_graphs,
                checkpointer,
                self._guard,
                version=REACT_VERSION[self.shape],
            )
        return node_agent(
            spec.name,
            model,
            actions,
            tool_node,
            sub_graphs,
            checkpointer,
            self._guard,
            gates=gates,
            ask=self._ask,
        )

    def _ask(self, value: Any) -> Any:
        """``interrupt(value)``, noting in which order this step raised its interrupts: the tasks
        run one after another, so that order is the same on every run (the order LangGraph
        reports them in is not, see the module's docstring)."""
        from langgraph.errors import GraphInterrupt
        from langgraph.types import interrupt

        try:
            return interrupt(value)
        except GraphInterrupt as asked:
            for raised in asked.args[0] if asked.args else ():
                self.raised.setdefault(raised.id, len(self.raised))
            raise

    # -- steps ----------------------------------------------------------------------------

    def run(self, prompt: str) -> Observation:
        from langchain_core.messages import HumanMessage

        return self._step({"messages": [HumanMessage(prompt)]})

    def answer(self, responses: Sequence[tuple[PendingInterrupt, Any]]) -> Observation:
        from langgraph.types import Command

        real = self._real_ids()
        resume = {real.get(pending.id, pending.id): response for pending, response in responses}
        return self._step(Command(resume=resume))

    def resume(self, response: Any) -> Observation:
        """``Command(resume=response)``: one value keyed by no interrupt id, which LangGraph
        gives to the one pending interrupt (or refuses, with several pending)."""
        from langgraph.types import Command

        return self._step(Command(resume=response))

    def _step(self, graph_input: Any) -> Observation:
        if self.root is None:  # the last restart failed: nothing is running to ask
            return Observation(stop_reason=None, error=NOT_REBUILT)
        self.raised = {}
        self.stop.failed = False
        errors = ErrorLog()
        loggers = [logging.getLogger(name) for name in LOGGERS]
        for sdk_logger in loggers:
            sdk_logger.addHandler(errors)
        interrupts: list[Any] = []
        try:
            for chunk in self.root.stream(graph_input, self.config, stream_mode="updates"):
                self._record(chunk)
                interrupts.extend(chunk.get(INTERRUPT_KEY, ()))
            state = self.root.get_state(self.config, subgraphs=True)
        except Exception as failure:  # the SDK's failure is an observation, not a crash
            return Observation(
                stop_reason=None,
                pending=self._still_pending(),
                **errors.observed(f"{type(failure).__name__}: {failure}"),
            )
        finally:
            for sdk_logger in loggers:
                sdk_logger.removeHandler(errors)
        values = state.values
        pending = self._shown(interrupts, _raised_where(state))
        text = None
        if not pending:
            messages = values.get("messages", [])
            if messages:
                text = strip_marker(str(messages[-1].content))
        return Observation(
            stop_reason="interrupt" if pending else "end_turn",
            pending=pending,
            final_answer=text,
            **errors.observed(),
        )

    def _still_pending(self) -> tuple[PendingInterrupt, ...]:
        """What the thread still asks after a step that raised, read off its last checkpoint
        (``get_state``): the interrupts of its pending tasks, nested ones included, as a later
        ``Command(resume=...)`` would find them."""
        state = self.root.get_state(self.config, subgraphs=True)
        return self._shown(state.interrupts, _raised_where(state))

    def _shown(
        self, interrupts: Sequence[Any], where: dict[str, tuple[str, ...]]
    ) -> tuple[PendingInterrupt, ...]:
        """The interrupts of one step, once each, under their handles, in the order of where
        they were raised; interrupts alike in that are shown in the order this session first
        saw them (after a step that raised none of them, LangGraph's own order of the same
        question asked twice at one place follows its time-based task ids)."""
        seen = {real: number for number, real in enumerate(self._real_ids().values())}

        def place(interrupt: Any) -> tuple[tuple[str, ...], str, int, int]:
            value = json.dumps(interrupt.value, sort_keys=True)
            first = seen.get(interrupt.id, len(seen))
            return where.get(interrupt.id, ()), value, self._raised_as(interrupt), first

        shown: dict[str, PendingInterrupt] = {}
        for interrupt in sorted(interrupts, key=place):
            handle = self._handle(interrupt.id)
            number = interrupt.value.get("question") if isinstance(interrupt.value, dict) else None
            shown.setdefault(
                handle,
                PendingInterrupt(
                    id=handle,
                    name=question_name(number) if isinstance(number, int) else "",
                    reason=interrupt.value,
                    label=label_of(interrupt.value),
                ),
            )
        return tuple(shown.values())

    def _real_ids(self) -> dict[str, str]:
        return {record["handle"]: record["id"] for record in self.handles.records()}

    def _handle(self, real_id: str) -> str:
        known = {real: handle for handle, real in self._real_ids().items()}
        if real_id not in known:
            known[real_id] = f"{HANDLE_PREFIX}{len(known) + 1}"
            self.handles.append({"handle": known[real_id], "id": real_id})
        return known[real_id]

    def _raised_as(self, interrupt: Any) -> int:
        """When this step raised ``interrupt`` (after every interrupt it raised if it did not)."""
        return self.raised.get(interrupt.id, len(self.raised))

    def _record(self, chunk: Any) -> None:
        if isinstance(chunk, dict) and INTERRUPT_KEY in chunk:
            # one chunk carries all interrupts of a task whose subgraph raised several, in the
            # order LangGraph collected them from a set of futures: put in the order raised
            chunk = {**chunk, INTERRUPT_KEY: sorted(chunk[INTERRUPT_KEY], key=self._raised_as)}
        text = json.dumps({"stream": chunk}, default=_plain, sort_keys=True, ensure_ascii=False)
        self.public_events.append(json.loads(_scrub(text)))

    def stored(self) -> Stored:
        return Stored()  # continuation_bytes is not claimed


def _raised_where(snapshot: Any, path: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """Each pending interrupt's id with the deepest task path that holds it: the ``Send``
    indices from the root down, the same on every run (task ids are not)."""
    found: dict[str, tuple[str, ...]] = {}
    for task in snapshot.tasks:
        here = (*path, json.dumps(task.path, default=str))
        for interrupt in task.interrupts:
            found[interrupt.id] = here
        if task.state is not None and hasattr(task.state, "tasks"):
            found.update(_raised_where(task.state, here))
    return found


# -- recording public events -------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A JSON form of what LangGraph streams (messages, interrupts, commands).

    A message's id is per-run identity, and for a message made without one (a ``ToolMessage``
    from ``ToolNode``, a prompt) it is not even the same per run: the ``add_messages`` reducer
    draws a uuid and sets it on the message object in place, while a checkpoint thread may be
    serializing that same object as a pending write (``put_writes`` runs in the background, the
    reducer on the caller's thread).  A write replayed from the checkpoint (a ``cached`` update on
    resume) so carries ``null`` or a uuid by thread timing.  Every message id is recorded as
    ``<message-id>``."""
    from langchain_core.messages import BaseMessage

    dump = getattr(value, "model_dump", None)
    if callable(dump):
        plain = dump(mode="json")
        if isinstance(value, BaseMessage) and isinstance(plain, dict):
            plain["id"] = MESSAGE_ID
        return plain
    fields = getattr(value, "__slots__", None) or getattr(value, "__dataclass_fields__", None)
    if fields:
        return {"type": type(value).__name__, **{name: getattr(value, name) for name in fields}}
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    return f"<{type(value).__name__}>"


def _scrub(text: str) -> str:
    """Per-run identity (uuids, interrupt ids hashed from them) replaced, so the same run
    records the same events."""
    return INTERRUPT_ID.sub("<interrupt-id>", UUID.sub("<uuid>", text))

"""The real OpenAI Agents SDK (``openai-agents`` from PyPI), driven through its public API.

Every agent is a real ``agents.Agent``; sub-agents are wrapped with ``Agent.as_tool`` (with
``needs_approval=True`` for a gated one); protected actions are real
``function_tool(needs_approval=True)`` tools, ordinary tools with a side effect plain
``function_tool`` ones; a preserve_context sub-agent is an
agent tool with a ``SQLiteSession`` (a file in the work directory, or ``:memory:`` when the
scenario says it has no store).  The scripted model (``fakes.model``) is the only stand-in: an
``agents.models.interface.Model`` whose ``get_response`` and ``stream_response`` return the
SDK's own response types.  Tracing is disabled, so nothing is exported.

The human's side is the SDK's: the root run's ``interruptions`` (``ToolApprovalItem`` objects,
nested ones included) are answered with ``RunState.approve`` / ``RunState.reject`` and the run is
resumed with ``Runner.run_streamed(root, state)``.  A restart persists nothing new: after every
step the interrupted run's ``RunState.to_json()`` is already stored (``work_store``: a file in
the work directory when the next step runs in a fresh process); a restart drops every object,
builds the agent tree again and calls ``RunState.from_json`` on it.

The SDK has no interrupt ids: an approval is an object, matched by identity.  What a human can
see of one is its agent, tool name and the call id the *sub-agent's* model issued; the adapter's
handle for a pending approval is those three (with an occurrence number when two are alike), and
its label is read off the agent and tool it names.  ``interrupt_ids`` is therefore not claimed.

Each agent's scenario ``state`` lives in the run's application context (``context=`` of the root
run, handed down to agent tools and serialized in the run state): the only key/value state the SDK
keeps off the model's messages.

Every step runs on a fresh event loop whose default executor runs what it is handed at once, on
the loop's own thread (``InlineExecutor``).  The SDK hands ``SQLiteSession``'s blocking sqlite
calls to that executor (``asyncio.to_thread``); on worker threads they finish whenever the threads
get the processor, so two concurrent calls of one agent tool on one session (``shared-session``)
read and write its history in an order that thread timing chose: in some runs the second call's
first request already held the first call's prompt.  On the loop's thread each call returns before
the next coroutine step, so the calls interleave by the loop's own, deterministic order: one of
the orders the SDK allows, the same on every run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final, ParamSpec, TypeVar

from fakes.model import ScriptedModel, strip_marker
from fakes.protected import CALL_FIELD, prompt_of, question_name, reason
from harness.targets.adapter import (
    NOT_REBUILT,
    UUID,
    ErrorLog,
    RebuildingSession,
    opaque,
    quiet_sdk_logs,
    work_store,
)
from harness.targets.base import (
    CAPABILITIES,
    Observation,
    PendingInterrupt,
    Stored,
    StoredContinuation,
    TargetInfo,
)
from harness.targets.callers import CALLERS, bind
from harness.targets.openai_agents_model import model_class, plain
from harness.targets.openai_agents_storage import CORRUPTIONS, RunStateFormat, owner_of
from harness.targets.reference import agent_script, agents_by_path
from scenarios import model as scenario_model
from scenarios.deploys import walk_paths

DISTRIBUTION: Final = "openai-agents"
INPUT_FIELD: Final = "input"  # the agent tool's input parameter (``AgentAsToolInput``)
STATE_KEY: Final = "run_state"  # the interrupted root run's RunState.to_json(), in the store
SDK_LOGGER: Final = "openai.agents"
NOT_SUPPORTED: Final = {
    "stateful_provider": "Agent.as_tool has no auto_previous_response_id: a sub-agent cannot "
    "chain provider-side state",
    "sliding_window": "no conversation manager with a window and per_turn",
    "multi_question": "needs_approval asks once per tool call",
    "hook_interrupts": "no hook can pause a run for a human",
    "repeated_tool_use_ids": "the Model interface requires every call id of a run (and of its "
    "resumes) to be new: a repeated one is taken for an already-completed call",
    "empty_tool_use_ids": "the Model interface requires non-empty call ids: an empty one raises "
    "ModelBehaviorError",
    "storeless_sub_agents": "a parked nested run travels inside the root's RunState "
    "(agent_run_state), not in the sub-agent's session, so no restart can lose it",
    "agent_state": "not built in this adapter: an agent's own key/value state would be the run "
    "context's, which a nested Agent.as_tool run shares with its caller",
    "retries": "no hook can run a tool call again after its result or error (RunHooks."
    "on_tool_end only observes, failure_error_function only words the error, retry settings "
    "are the model's); a wrapper around the function would re-run its body, not re-ask its "
    "approval, which the runner asks before the tool runs",
    "scalar_resume": "an approval is RunState.approve(item) of one ToolApprovalItem; the SDK "
    "has no answer that names no item",
    "root_sessions": "not built in this adapter: its session is one root run and one RunState "
    "in the store",
}
# what the target can express (no interrupt ids: see the module's docstring)
TARGET_CAPABILITIES: Final = frozenset(CAPABILITIES) - {
    "interrupt_ids",
    *NOT_SUPPORTED,
}


def sdk_version() -> str | None:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return None


P = ParamSpec("P")
T = TypeVar("T")


class InlineExecutor(concurrent.futures.ThreadPoolExecutor):
    """An event loop's default executor that runs each call at once, on the caller's thread, and
    hands back its already settled future (asyncio requires a ``ThreadPoolExecutor``; this one
    never starts a thread)."""

    def submit(
        self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as failure:  # what a worker thread would hand back, as it does
            future.set_exception(failure)
        return future


def run_on_one_thread(awaitable: Awaitable[T]) -> T:
    """``asyncio.run``, with ``asyncio.to_thread`` work run inline (see the module docstring)."""

    async def main() -> T:
        asyncio.get_running_loop().set_default_executor(InlineExecutor())
        return await awaitable

    return asyncio.run(main())


class OpenAIAgentsTarget:
    sdk_loggers = (SDK_LOGGER,)  # what its sessions read during a rebuild (ErrorLog)

    def __init__(self) -> None:
        installed = sdk_version()
        if installed is None:
            raise RuntimeError(f"{DISTRIBUTION} is not installed (pip install '.[openai-agents]')")
        quiet_sdk_logs(SDK_LOGGER)
        self.info = TargetInfo(
            name="openai-agents",
            version=installed,
            capabilities=TARGET_CAPABILITIES,
            description=f"the real {DISTRIBUTION} SDK from PyPI (Agent.as_tool, needs_approval, "
            "RunState to_json/from_json), with the scripted fake model",
            corruptions=CORRUPTIONS,
        )

    def start(self, scenario: scenario_model.Scenario, workdir: Path) -> OpenAIAgentsSession:
        return OpenAIAgentsSession(scenario, workdir)


# -- one scenario on the SDK ----------------------------------------------------------------------


class OpenAIAgentsSession(RebuildingSession):
    sdk_loggers = (SDK_LOGGER,)

    def __init__(self, scenario: scenario_model.Scenario, workdir: Path) -> None:
        from agents import set_tracing_disabled

        set_tracing_disabled(True)
        self.scenario = scenario
        self.agents = agents_by_path(scenario.tree)
        self.workdir = workdir
        super().__init__(workdir, work_store(workdir / "state"), RunStateFormat())
        self.model_class = model_class()
        self.state: Any = None  # the interrupted root run (RunState), if one is pending
        self.shown: dict[str, Any] = {}  # handle -> the ToolApprovalItem last shown
        self.root: Any = None
        self.labels: dict[tuple[int, str], str] = {}  # (id(agent object), tool) -> label
        self.paths: dict[int, str] = {}  # id(agent object) -> its path in the tree
        # (agent path, tool) -> label in every tree the scenario deploys: a question asked before
        # a deploy took its tool away is still shown under the label it was asked with
        self.asked = {
            (path, action.tool): action.label
            for _, tree in scenario.trees()
            for agent, path, _ in walk_paths(tree)
            for action in agent.actions
        }
        self.error: str | None = None
        self.root = self._build()
        # started in a new process (``--isolation process``, ``fork``), the session picks up
        # the interrupted run its store holds; one that cannot be loaded is the restart's error
        # (``restart`` loads it again and says why), and meanwhile there is none to answer
        self._resume()

    # -- building the tree with real SDK objects ------------------------------------------

    def _build(self) -> Any:
        self.labels = {}
        self.paths = {}
        return self._agent(self.scenario.tree, self.scenario.tree.name)

    def _agent(self, spec: scenario_model.Agent, path: str) -> Any:
        from agents import Agent

        tools: list[Any] = [action_tool(action.tool, action.label) for action in spec.actions]
        tools += [effect_tool(effect.tool) for effect in spec.effects]
        for sub in spec.sub_agents:
            sub_path = f"{path}/{sub.tool}"
            options: dict[str, Any] = {}
            if sub.preserve_context:
                options["session"] = self._session(sub_path, stored=sub.session_store)
            if sub.gate is not None:  # the caller asks before the agent tool runs
                options["needs_approval"] = True
            tools.append(
                self._agent(sub, sub_path).as_tool(
                    tool_name=sub.tool,
                    tool_description=f"Sub-agent {sub.tool}: give it a task as input.",
                    **options,
                )
            )
        core = ScriptedModel(path, agent_script(spec, prompt_field=INPUT_FIELD), self.journal)
        agent = Agent(name=spec.name, model=self.model_class(core), tools=tools)
        bind(agent, spec, path, self.ledger)
        self.paths[id(agent)] = path
        for action in spec.actions:
            self.labels[(id(agent), action.tool)] = action.label
        for sub in spec.sub_agents:
            if sub.gate is not None:
                self.labels[(id(agent), sub.tool)] = sub.gate
        return agent

    def _session(self, path: str, *, stored: bool) -> Any:
        from agents import SQLiteSession

        database = str(self.workdir / "sessions.sqlite3") if stored else ":memory:"
        return SQLiteSession(session_id=path.replace("/", "--"), db_path=database)

    def _context(self) -> dict[str, Any]:
        """The application context: each agent's key/value state, by path."""
        return {
            "state": {path: dict(agent.state) for path, agent in self.agents.items() if agent.state}
        }

    # -- steps ----------------------------------------------------------------------------

    def run(self, prompt: str) -> Observation:
        if self.root is None:
            return Observation(stop_reason=None, error=NOT_REBUILT)
        if self.state is not None:
            return self._refused("a run is waiting for approvals: answer it first")
        return self._step(prompt, self._context())

    def answer(self, responses: Sequence[tuple[PendingInterrupt, Any]]) -> Observation:
        if self.root is None:
            return Observation(stop_reason=None, error=NOT_REBUILT)
        if self.state is None:
            return Observation(stop_reason=None, error="no interrupted run to answer")
        if not responses:  # nothing shown matches the answer: no decision to send, and the run
            # goes on with none, as the reference resumes with no response (the SDK interrupts
            # again on what still waits); refusing here would be this adapter's error, no SDK's
            return self._step(self.state, None)
        current = self._handles(self.state.get_interruptions())
        matched = [(current[p.id], response) for p, response in responses if p.id in current]
        if not matched:
            return self._refused("no pending approval matches the answer")
        unknown = sorted(p.id for p, _ in responses if p.id not in current)
        if unknown:  # the SDK cannot be told of these: refuse the whole answer, apply nothing
            return self._refused(f"no pending approval matches {unknown}: nothing was answered")
        try:
            for item, response in matched:
                if response == "approve":
                    self.state.approve(item)
                else:
                    self.state.reject(item)
        except Exception as failure:  # refused by the SDK: nothing was resumed
            return self._failed(failure)
        return self._step(self.state, None)

    def _failed(self, failure: Exception) -> Observation:
        """A step the SDK refused or that raised: what its run state still shows as pending."""
        return self._refused(f"{type(failure).__name__}: {failure}")

    def _refused(self, error: str) -> Observation:
        """A step that did not run (refused here or by the SDK, or raised), with what the run
        state still holds as pending: its interruptions, read from the SDK's ``RunState``.  A
        state that cannot list them shows nothing, and the error says so (never a silent guess
        that nothing is pending)."""
        if self.state is None:
            return Observation(stop_reason=None, error=error)
        try:
            handles = self._handles(self.state.get_interruptions())
        except Exception as unreadable:  # the SDK cannot say: the human is shown nothing
            reading = f"{type(unreadable).__name__}: {unreadable}"
            return Observation(
                stop_reason=None,
                error=f"{error} (and the run state cannot list its approvals: {reading})",
            )
        pending = tuple(self._pending(handle, item) for handle, item in handles.items())
        return Observation(stop_reason=None, pending=pending, error=error)

    def _step(self, given: Any, context: Any) -> Observation:
        errors = ErrorLog()
        sdk_logger = logging.getLogger(SDK_LOGGER)
        sdk_logger.addHandler(errors)
        try:
            result = run_on_one_thread(self._stream(given, context))
        except Exception as failure:  # the SDK's failure is an observation, not a crash
            failed = self._failed(failure)
            return replace(failed, **errors.observed(failed.error))
        finally:
            sdk_logger.removeHandler(errors)
        logged = errors.observed()
        interruptions = list(result.interruptions)
        if interruptions:
            self.state = result.to_state()
            self._persist(json.dumps(self.state.to_json()))
            handles = self._handles(interruptions)
            return Observation(
                stop_reason="interrupt",
                pending=tuple(self._pending(handle, item) for handle, item in handles.items()),
                **logged,
            )
        self.state = None
        self.store.delete(STATE_KEY)
        return Observation(
            stop_reason="end_turn",
            final_answer=strip_marker(str(result.final_output)),
            **logged,
        )

    async def _stream(self, given: Any, context: Any) -> Any:
        from agents import Runner

        options = {} if context is None else {"context": context}
        streamed = Runner.run_streamed(self.root, given, **options)
        async for event in streamed.stream_events():
            self._record(event)
        return streamed

    def _persist(self, text: str) -> None:
        self.store.put(STATE_KEY, text.encode())

    def _handles(self, interruptions: Sequence[Any]) -> dict[str, Any]:
        """A handle per approval: its agent, tool and call id, numbered when alike."""
        seen: Counter[str] = Counter()
        handles: dict[str, Any] = {}
        for item in interruptions:
            call_id = getattr(item.raw_item, "call_id", None)
            key = f"{item.agent.name}:{item.tool_name}:{call_id}"
            handles[key if not seen[key] else f"{key}#{seen[key]}"] = item
            seen[key] += 1
        return handles

    def _pending(self, handle: str, item: Any) -> PendingInterrupt:
        label = self.labels.get((id(item.agent), str(item.tool_name)))
        if label is None:  # a tool a deploy took away
            label = self.asked.get((self.paths.get(id(item.agent), ""), str(item.tool_name)))
        prompt = prompt_of(_arguments(getattr(item.raw_item, "arguments", None)))
        return PendingInterrupt(
            id=handle,
            name=question_name(1),
            reason=reason(label, 1, 1, prompt) if label else {"tool": item.tool_name},
            label=label,
        )

    def _record(self, event: Any) -> None:
        kind = getattr(event, "type", type(event).__name__)
        payload: dict[str, Any] = {"type": kind}
        if kind == "raw_response_event":
            payload["data"] = plain(event.data)
        elif kind == "run_item_stream_event":
            item = event.item
            payload |= {
                "name": event.name,
                "item_type": item.type,
                "agent": item.agent.name,
                "raw_item": plain(item.raw_item),
                "output": getattr(item, "output", None),
            }
        else:
            payload["agent"] = getattr(getattr(event, "new_agent", None), "name", None)
        text = json.dumps(payload, default=opaque, sort_keys=True, ensure_ascii=False)
        self.public_events.append(json.loads(UUID.sub("<uuid>", text)))

    def _rebuild(self) -> str | None:
        self.state = None
        not_rebuilt = super()._rebuild()
        if not_rebuilt is not None:
            return not_rebuilt
        return self._resume()

    def _resume(self) -> str | None:
        """Load the interrupted root run the store holds into ``state``, if it holds one; the
        error, if it cannot be loaded (then none is pending)."""
        from agents import RunState

        self.state = None
        try:
            stored = self.store.get(STATE_KEY)
            if stored is not None:
                document = json.loads(stored)
                self.state = run_on_one_thread(RunState.from_json(self.root, document))
        except Exception as failure:
            return f"{type(failure).__name__}: {failure}"
        return None

    def stored(self) -> Stored:
        stored = self.store.get(STATE_KEY)
        document = _parsed(stored)
        continuations = tuple(
            StoredContinuation(owner=owner_of(document, entry.path), size=entry.size)
            for entry in self.store.continuations()
        )
        return Stored(continuations=continuations, record_bytes=None)


def _parsed(stored: bytes | None) -> Any:
    try:
        return json.loads(stored or b"{}")
    except ValueError:
        return {}


def _arguments(text: Any) -> Any:
    """A tool call's arguments as the model sent them (JSON text), or None if they are not."""
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None


# -- the tree's tools, decorated once per process and shared (``callers``) --------------------


@functools.cache
def action_tool(name: str, label: str) -> Any:
    """The protected action ``label``'s tool, named ``name``: the SDK asks for its approval
    (``needs_approval``) before it runs; the agent running it is ``ToolContext.agent``."""
    from agents import function_tool
    from agents.tool_context import ToolContext

    async def perform(context: ToolContext[Any], call: str) -> str:
        caller = CALLERS[context.agent]
        return caller.actions[name].run(
            caller.ledger, agent=caller.path, tool_use_id=context.tool_call_id, prompt=call
        )

    perform.__doc__ = (
        f"Protected action {label}: runs only with a human's approval.\n\n"
        f"Args:\n    {CALL_FIELD}: the prompt of the call it serves."
    )
    # the SDK reads the annotations at run time; this module's are strings (PEP 563)
    perform.__annotations__ = {"context": ToolContext, CALL_FIELD: str, "return": str}
    return function_tool(perform, name_override=name, needs_approval=True)


@functools.cache
def effect_tool(name: str) -> Any:
    """The ordinary tool ``name``: a side effect, asks nothing."""
    from agents import function_tool
    from agents.tool_context import ToolContext

    async def run(context: ToolContext[Any]) -> str:
        caller = CALLERS[context.agent]
        return caller.effects[name].run(
            caller.ledger, agent=caller.path, tool_use_id=context.tool_call_id
        )

    run.__doc__ = f"Ordinary tool {name}: a side effect, asks nothing."
    run.__annotations__ = {"context": ToolContext, "return": str}
    return function_tool(run, name_override=name)

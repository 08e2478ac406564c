"""The real Strands Agents SDK (``strands-agents`` from PyPI), driven through its public API.

Every agent is a real ``strands.Agent``; sub-agents are wrapped with ``Agent.as_tool``; protected
actions are real ``@tool(context=True)`` tools that call ``ToolContext.interrupt`` (or, with
``hook: true``, a ``BeforeToolCallEvent`` hook asks instead, as it asks before a gated sub-agent's
agent tool runs, with ``cancel_tool`` for a denial), and ordinary tools with a side effect are
plain ``@tool(context=True)`` tools that ask nothing; sliding windows are the SDK's
``SlidingWindowConversationManager``.  The scripted model (``fakes.model``) is the only stand-in: a
``strands.models.Model`` subclass that streams the SDK's own event shapes and reads and writes
``model_state`` as a stateful provider does.

Two root sessions (``root_sessions``: two users of one deployment) are two orchestrator agents,
each with a session manager of its own, over the same ``as_tool`` objects.

Persistence is the SDK's own: the orchestrator and every preserve_context sub-agent with a store
have a ``FileSessionManager`` (or, with ``session_manager="snapshot"``, a
``SnapshotSessionManager`` on ``LocalFileStorage``) under the work directory.  A restart drops
every object and builds the tree again; the SDK restores each agent from its session.

What is observed is what a user sees: the ``AgentResult`` (stop reason, interrupts, text), every
event ``stream_async`` yields and every payload the callback handler receives (both public),
errors raised or logged at ERROR by the SDK, the ledger, the journal, and the bytes of the
stored turns in the session files.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

from fakes.model import ScriptedModel, strip_marker
from fakes.protected import ProtectedAction, prompt_of
from harness.targets.adapter import (
    NOT_REBUILT,
    UUID,
    DirectoryStore,
    ErrorLog,
    RebuildingSession,
    canonical_json,
    opaque,
    quiet_sdk_logs,
    shown_to_the_human,
    writing_through,
)
from harness.targets.base import (
    CAPABILITIES,
    Observation,
    PendingInterrupt,
    Stored,
    StoredContinuation,
    TargetInfo,
)
from harness.targets.callers import bind
from harness.targets.reference import agent_script, agents_by_path
from harness.targets.strands_model import model_class
from harness.targets.strands_storage import StrandsContinuationFormat, dig, timeless
from harness.targets.strands_tools import action_tool, effect_tool
from scenarios import model as scenario_model
from scenarios.model import CORRUPTIONS

DISTRIBUTION: Final = "strands-agents"
INPUT_FIELD: Final = "input"  # the agent-as-tool's input parameter
# callback payload keys that carry per-run identity (uuids, spans, live objects), not content
UNSTABLE_KEYS: Final = frozenset(
    {
        "agent",
        "event_loop_cycle_id",
        "event_loop_cycle_trace",
        "event_loop_cycle_span",
        "event_loop_parent_span",
        "event_loop_parent_cycle_id",
        "request_state",
        "invocation_state",
    }
)


TIMESTAMP: Final = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


FIRST_WITH_STORED_TURNS: Final = (1, 59)
# what a release before that cannot express: it stores no sub-agent turn to measure or corrupt
WITHOUT_STORED_TURNS: Final = frozenset({"corruption", "continuation_bytes"})
# what the target can express from 1.59 on (earlier releases less: see StrandsTarget); the SDK's
# stream processing skips a tool use with an empty id as an incomplete block
# (strands/event_loop/streaming.py, a WARNING): the call never happens, by design; and an answer
# is an interruptResponse block naming its interruptId: the SDK has no answer keyed by no id
TARGET_CAPABILITIES: Final = frozenset(CAPABILITIES) - {"empty_tool_use_ids", "scalar_resume"}
# where a retry hook counts each call's attempts: the agent's own key/value state, which the SDK
# persists with the agent (its session, or an ephemeral sub-agent's stored turn)
RETRIED_CALLS: Final = "harness_retried_calls"


def _release(text: str) -> tuple[int, ...]:
    numbers = re.findall(r"\d+", text)
    return tuple(int(number) for number in numbers[:2])


def sdk_version() -> str | None:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return None


SESSION_MANAGERS: Final = {
    "file": "FileSessionManager (a message log per agent)",
    "snapshot": "SnapshotSessionManager on LocalFileStorage (one snapshot blob per agent)",
}


class StrandsTarget:
    sdk_loggers = ("strands",)  # what its sessions read during a rebuild (ErrorLog)

    def __init__(self, session_manager: str = "file") -> None:
        if session_manager not in SESSION_MANAGERS:
            raise ValueError(f"session_manager must be one of {sorted(SESSION_MANAGERS)}")
        self.session_manager = session_manager
        quiet_sdk_logs("strands")
        installed = sdk_version()
        if installed is None:
            raise RuntimeError(f"{DISTRIBUTION} is not installed (pip install '.[strands]')")
        capabilities = TARGET_CAPABILITIES
        if _release(installed) < FIRST_WITH_STORED_TURNS:
            # before 1.59 the SDK stores no sub-agent turn: nothing to measure or to corrupt
            capabilities -= WITHOUT_STORED_TURNS
        self.info = TargetInfo(
            name="strands" if session_manager == "file" else f"strands-{session_manager}",
            version=installed,
            capabilities=capabilities,
            description=f"the real {DISTRIBUTION} SDK from PyPI, with the scripted fake model; "
            f"sessions: {SESSION_MANAGERS[session_manager]}",
            corruptions=frozenset(CORRUPTIONS) if "corruption" in capabilities else frozenset(),
            # the session manager must not change what the SDK gets right or wrong
            findings_of=None if session_manager == "file" else "strands",
        )

    def start(self, scenario: scenario_model.Scenario, workdir: Path) -> StrandsSession:
        return StrandsSession(scenario, workdir, self.session_manager)


class StrandsSession(RebuildingSession):
    sdk_loggers = StrandsTarget.sdk_loggers

    def __init__(
        self, scenario: scenario_model.Scenario, workdir: Path, session_manager: str = "file"
    ) -> None:
        self.scenario = scenario
        self.session_manager_kind = session_manager
        self.agents = agents_by_path(scenario.tree)
        self.sessions_dir = workdir / "sessions"
        self.sessions_dir.mkdir(parents=True, exist_ok=True)
        format_ = StrandsContinuationFormat()
        super().__init__(workdir, DirectoryStore(self.sessions_dir), format_)
        self.model_class = model_class()
        # toolUseId -> the sub-agent it calls, to name a stored turn's owner
        self.callee = _callees(self.agents)
        self.live: dict[str, Any] = {}  # every sub-agent object, by path (rebuilt on restart)
        # two root sessions (root_sessions): two orchestrator agents, each with a session
        # manager of its own, whose tools are the same agent-tool objects; ``root`` is the one
        # the steps talk to
        self.root_session = "a"
        self.roots: dict[str, Any] = {}
        self.agent_tools: dict[str, Any] = {}  # the roots' agent tools, by path
        self.root: Any = self._build()

    def deploy(self, tree: scenario_model.Agent) -> str | None:
        """A restart into a changed tree; a stored turn keeps the owner it was parked by."""
        rebuilt = super().deploy(tree)
        self.callee = _callees(self.agents) | self.callee
        return rebuilt

    # -- building the tree with real SDK objects ------------------------------------------

    def _build(self) -> Any:
        """Every root session's orchestrator (the second over the first one's agent tools);
        the one the steps talk to."""
        self.roots = {}
        tree = self.scenario.tree
        self.agent_tools = {}
        self.roots["a"] = self._agent(tree, tree.name, root=True, agent_tools=self.agent_tools)
        if self.scenario.two_sessions:
            self.roots["b"] = self._agent(
                tree, tree.name, root=True, agent_tools=self.agent_tools, session="b"
            )
        return self.roots[self.root_session]

    def use_root_session(self, name: str) -> None:
        """The steps from now on talk to root session ``name``."""
        self.root_session = name
        self.root = self.roots.get(name) if self.root is not None else None

    def restart_root_session(self, name: str) -> str | None:
        """A new orchestrator for root session ``name``, restored by its session manager, over
        the same agent-tool objects (they and the other session's orchestrator stay)."""
        tree = self.scenario.tree
        errors = ErrorLog()  # what strands logs meanwhile, for logged_at_rebuild
        try:
            with errors.reading(*self.sdk_loggers):
                self.roots[name] = self._agent(
                    tree, tree.name, root=True, agent_tools=self.agent_tools, session=name
                )
        except Exception as failure:  # a rebuild that fails is what the step observed
            self.roots.pop(name, None)
            self.root = self.roots.get(self.root_session)
            return f"{type(failure).__name__}: {failure}"
        finally:
            self.rebuild_log = errors.logged()
        self.root = self.roots.get(self.root_session)
        return None

    def _agent(
        self,
        spec: scenario_model.Agent,
        path: str,
        *,
        root: bool = False,
        agent_tools: dict[str, Any] | None = None,
        session: str = "a",
    ) -> Any:
        """The agent ``spec`` at ``path``; a root enters its agent tools in ``agent_tools``, by
        path, or takes the ones another root entered there (one object serving both)."""
        from strands import Agent

        tools: list[Any] = [
            action_tool(action.tool, action.label, hook=action.hook) for action in spec.actions
        ]
        tools += [effect_tool(effect.tool, effect.tally) for effect in spec.effects]
        shared = {} if agent_tools is None else agent_tools
        for sub in spec.sub_agents:
            sub_path = f"{path}/{sub.tool}"
            if sub_path not in shared:
                sub_agent = self._agent(sub, sub_path)
                self.live[sub_path] = sub_agent
                shared[sub_path] = sub_agent.as_tool(
                    name=sub.tool, preserve_context=sub.preserve_context
                )
            tools.append(shared[sub_path])
        keeps_session = root or (spec.preserve_context and spec.session_store)
        options: dict[str, Any] = {"state": dict(spec.state)} if spec.state else {}
        if keeps_session:
            options["session_manager"] = self._session_manager(_session_id(path, session))
        if spec.window is not None:
            from strands.agent.conversation_manager import SlidingWindowConversationManager

            options["conversation_manager"] = SlidingWindowConversationManager(
                window_size=spec.window.size, per_turn=spec.window.per_turn
            )
        hooked = [action for action in spec.actions if action.hook]
        # a gated sub-agent: the same hook asks before its agent tool runs (its one question)
        hooked += [
            scenario_model.Action(tool=sub.tool, label=sub.gate)
            for sub in spec.sub_agents
            if sub.gate is not None
        ]
        hooks: list[Any] = [_approval_hook(hooked, path)] if hooked else []
        retried: dict[str, tuple[scenario_model.Retry | None, str | None]] = {
            action.tool: (action.retry, action.label) for action in spec.actions
        }
        retried |= {sub.tool: (sub.retry, sub.gate) for sub in spec.sub_agents}
        policies = {tool: kept for tool, kept in retried.items() if kept[0] is not None}
        if policies:
            hooks.append(_retry_hook(policies))
        if hooks:
            options["hooks"] = hooks
        core = ScriptedModel(
            path,
            agent_script(spec, prompt_field=INPUT_FIELD),
            self.journal,
            stateful_provider=spec.stateful_provider,
        )
        agent = Agent(
            model=self.model_class(core),
            tools=tools,
            name=spec.name,
            agent_id=_agent_id(path),
            callback_handler=self._record_event if root else None,
            **options,
        )
        bind(agent, spec, path, self.ledger)
        return agent

    def _session_manager(self, session_id: str) -> Any:
        if self.session_manager_kind == "snapshot":
            from strands.session.snapshot_session_manager import SnapshotSessionManager
            from strands.storage import LocalFileStorage

            storage_class = writing_through(LocalFileStorage, ("write",), self._reached("persist"))
            storage = storage_class(base_dir=str(self.sessions_dir))
            return SnapshotSessionManager(session_id=session_id, storage=storage)
        from strands.session.file_session_manager import FileSessionManager

        manager_class = writing_through(FileSessionManager, FILE_WRITES, self._reached("persist"))
        return manager_class(session_id=session_id, storage_dir=str(self.sessions_dir))

    def _record_event(self, **payload: Any) -> None:
        self._record("callback", payload)

    def _record(self, via: str, payload: dict[str, Any]) -> None:
        kept = {key: value for key, value in payload.items() if key not in UNSTABLE_KEYS}
        text = json.dumps({via: kept}, default=opaque, sort_keys=True, ensure_ascii=False)
        self.public_events.append_json(_scrub(text))

    async def _stream(self, prompt: Any) -> Any:
        """Invoke the root through ``stream_async``, recording every event it yields."""
        result = None
        async for event in self.root.stream_async(prompt):
            if "result" in event:
                result = event["result"]
            self._record("stream", event)
        return result

    # -- steps ----------------------------------------------------------------------------

    def run(self, prompt: str) -> Observation:
        return self._step(prompt)

    def answer(self, responses: Sequence[tuple[PendingInterrupt, Any]]) -> Observation:
        content = [
            {"interruptResponse": {"interruptId": pending.id, "response": response}}
            for pending, response in responses
        ]
        return self._step(content)

    def _step(self, prompt: Any) -> Observation:
        if self.root is None:  # the last restart failed: nothing is running to ask
            return Observation(stop_reason=None, error=NOT_REBUILT)
        errors = ErrorLog()
        sdk_logger = logging.getLogger("strands")
        sdk_logger.addHandler(errors)
        try:
            result = asyncio.run(self._stream(prompt))
        except Exception as failure:  # the SDK's failure is an observation, not a crash
            return Observation(
                stop_reason=None,
                pending=self._still_pending(),
                **errors.observed(f"{type(failure).__name__}: {failure}"),
            )
        finally:
            sdk_logger.removeHandler(errors)
        pending = shown_to_the_human(result.interrupts or ())
        text = None
        if result.stop_reason == "end_turn":
            blocks = result.message.get("content", [])
            text = strip_marker("".join(b["text"] for b in blocks if "text" in b))
        return Observation(
            stop_reason=str(result.stop_reason),
            pending=pending,
            final_answer=text,
            **errors.observed(),
        )

    def _still_pending(self) -> tuple[PendingInterrupt, ...]:
        """What the root still asks after a step that raised, read off its own interrupt state
        through ``take_snapshot`` (the SDK's public view of it): while that state is active, its
        unanswered interrupts, the ones a stop surfaces (``AgentResult.interrupts``); when it is
        not, nothing."""
        from strands.interrupt import Interrupt

        snapshot = self.root.take_snapshot(include=["interrupt_state"])
        state = snapshot.data["interrupt_state"]
        if not state["activated"]:
            return ()
        interrupts = [Interrupt(**data) for data in state["interrupts"].values()]
        return shown_to_the_human(item for item in interrupts if item.response is None)

    def _session_key(self) -> str:
        """Where the store keeps the session of the root the steps talk to."""
        session_id = _session_id(self.scenario.tree.name, self.root_session)
        if self.session_manager_kind == "snapshot":
            return f"session/{session_id}/"
        return f"session_{session_id}/"

    def _root_interrupt_record(self) -> Any:
        """The orchestrator's persisted interrupt state, where this session manager keeps it."""
        agent_id = _agent_id(self.scenario.tree.name)
        session = self._session_key()
        if self.session_manager_kind == "snapshot":
            key = f"{session}scopes/agent/{agent_id}/snapshots/snapshot_latest.json"
            return dig(self.store.get(key), "data", "interrupt_state")
        key = f"{session}agents/agent_{agent_id}/agent.json"
        return dig(self.store.get(key), "_internal_state", "interrupt_state")

    def live_turn_bytes(self, path: str) -> int | None:
        """Bytes of the canonical JSON of a sub-agent's ``take_snapshot(preset="session")``:
        what a store would have to keep of its turn; None if there is no such sub-agent."""
        agent = self.live.get(path)
        if agent is None:
            return None
        return len(canonical_json(timeless(agent.take_snapshot(preset="session").to_dict())))

    def stored(self) -> Stored:
        """What the store holds; with two root sessions, for the one the steps talk to (its
        root's session, or for `a` every other session)."""
        other = {"a": "b", "b": "a"}[self.root_session]
        others = self._session_key().replace(
            _session_id(self.scenario.tree.name, self.root_session),
            _session_id(self.scenario.tree.name, other),
        )
        mine = self._session_key()
        continuations = tuple(
            StoredContinuation(
                owner=self.callee.get(str(entry.path[-1]), f"call {entry.path[-1]}"),
                size=len(canonical_json(timeless(entry.value))),
            )
            for entry in self.store.continuations()
            if not self.scenario.two_sessions
            or entry.key.startswith(mine)
            or (self.root_session == "a" and not entry.key.startswith(others))
        )
        record = self._root_interrupt_record()
        record_bytes = None if record is None else len(canonical_json(timeless(record)))
        return Stored(continuations=continuations, record_bytes=record_bytes)


# FileSessionManager's public repository methods that write (each one file, atomically)
FILE_WRITES: Final = (
    "create_session",
    "create_agent",
    "update_agent",
    "create_message",
    "update_message",
    "create_multi_agent",
    "update_multi_agent",
)


def _approval_hook(actions: Sequence[scenario_model.Action], path: str) -> Any:
    from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry

    by_tool = {action.tool: action for action in actions}

    class ApprovalHook(HookProvider):  # type: ignore[misc]
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeToolCallEvent, self.ask)

        def ask(self, event: BeforeToolCallEvent) -> None:
            action = by_tool.get(event.tool_use["name"])
            if action is None:
                return
            protected = ProtectedAction(action.label, action.questions)
            prompt = prompt_of(event.tool_use.get("input"))
            if not protected.approved(lambda name, why: event.interrupt(name, reason=why), prompt):
                event.cancel_tool = protected.refusal

    del path
    return ApprovalHook()


def _retry_hook(policies: Mapping[str, tuple[Any, str | None]]) -> Any:
    """The after-tool-call hook that retries: ``policies`` maps a tool's name to its retry
    (``scenarios.tree.Retry``) and the label whose refusal is its error (an action's; a gated
    sub-agent's gate), if any.  It sets ``AfterToolCallEvent.retry`` when the call ended the way
    the retry names and has retries left, counting each call's attempts by toolUseId in the
    agent's state (a parked attempt resumes as itself, after a restart too); the call's last
    attempt drops its count, so a later turn's call with the same toolUseId starts afresh."""
    from strands.hooks import AfterToolCallEvent, HookProvider, HookRegistry

    class RetryHook(HookProvider):  # type: ignore[misc]
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(AfterToolCallEvent, self.retry)

        def retry(self, event: AfterToolCallEvent) -> None:
            kept = policies.get(event.tool_use["name"])
            if kept is None:
                return
            policy, label = kept
            tool_use_id = str(event.tool_use["toolUseId"])
            counts = dict(event.agent.state.get(RETRIED_CALLS) or {})
            retried = int(counts.pop(tool_use_id, 0))
            refusal = None if label is None else ProtectedAction(label).refusal
            ending = "error" if _failed(event.result, event.exception, refusal) else "result"
            if ending == policy.after and retried < policy.times:
                counts[tool_use_id] = retried + 1
                event.retry = True
            event.agent.state.set(RETRIED_CALLS, counts)

    return RetryHook()


def _failed(result: Any, exception: BaseException | None, refusal: str | None) -> bool:
    """Whether a tool call ended with an error: it raised, its result is an error, or it is
    the refusal of a denied action (a protected action returns its refusal as its result)."""
    if exception is not None or result.get("status") == "error":
        return True
    texts = [block.get("text") for block in result.get("content", [])]
    return refusal is not None and refusal in texts


def _agent_id(path: str) -> str:
    return path.replace("/", "--")


def _session_id(path: str, session: str) -> str:
    """The session id of the agent at ``path`` (root session `a`'s, every single-session
    scenario's, is its agent id; root session `b`'s orchestrator has one of its own)."""
    agent_id = _agent_id(path)
    return agent_id if session == "a" else f"root-session-{session}--{agent_id}"


def _scrub(text: str) -> str:
    """Per-run identity (uuids, timestamps) replaced, so the same run records the same events."""
    return TIMESTAMP.sub("<timestamp>", UUID.sub("<uuid>", text))


def _callees(agents: dict[str, scenario_model.Agent]) -> dict[str, str]:
    """Each toolUseId that calls a sub-agent in the agents' scripts, with the sub-agent's name."""
    return {
        call.id: call.tool
        for agent in agents.values()
        for _, turns in agent.scripts()
        for turn in turns
        for call in turn
        if call.tool in {sub.tool for sub in agent.sub_agents}
    }

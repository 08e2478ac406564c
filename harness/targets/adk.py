"""Google's Agent Development Kit (``google-adk`` from PyPI), driven through its public API.

Every agent is a real ``LlmAgent`` whose model is the scripted one (``harness.targets.adk_model``,
a ``BaseLlm``: no network, no credentials).  Two shapes of sub-agent are offered, because ADK
offers both and they pause differently:

* ``agent-tool`` (target ``adk``): a sub-agent is wrapped in an ``AgentTool`` among its caller's
  ``tools``.  ``AgentTool.run_async`` runs the wrapped agent on a ``Runner`` of its own over a
  fresh ``InMemorySessionService`` and returns the last event's text: a confirmation the wrapped
  agent asks for never reaches the caller's session, and ``AgentTool`` cannot resume it (2.13.0
  logs a warning saying so and hands the caller an error result).
* ``single-turn`` (target ``adk-single-turn``): a sub-agent is ``LlmAgent(mode="single_turn")``
  among its caller's ``sub_agents``; ADK exposes it to the caller's model as a tool
  (``_SingleTurnAgentTool``) that runs it inline, in the caller's session on a branch of its
  own, so its confirmations pause the whole invocation and a resume continues it.

Protected actions are ``FunctionTool(fn, require_confirmation=True)``: ADK asks with a function
call named ``adk_request_confirmation`` whose id ADK draws (``adk-<uuid4>``) and whose args carry
the original call; the human answers with a user ``Content`` holding a ``FunctionResponse`` of the
same name and id, ``{"confirmed": bool}``, sent to ``Runner.run_async(invocation_id=...)`` of
the paused invocation (the ``App`` is resumable: ``ResumabilityConfig(is_resumable=True)``).
Ordinary tools with a side effect are plain ``FunctionTool`` ones.

Persistence is ADK's own: one session in a ``SqliteSessionService`` on ``sessions.sqlite3`` in the
work directory.  A restart drops every object and builds the agents, a new ``App``, ``Runner``
and session service over the same file.  Nothing else is kept: what is pending, and which
invocation to resume, is read from the stored session's events at every step, so a session built
in a fresh process (``--isolation process``) knows exactly what one that ran every step knows.

ADK's confirmation ids are random, so the same scenario would show other ids on every run and a
run with restarts could never show its restart-free control's.  The human is shown a handle
``confirm-<n>``: the n-th distinct real id this session saw (``confirmation-handles.jsonl``, so
it outlives restarts), numbered in the order the stored session holds the requests; an answer
maps the handle back.  Invocation and confirmation ids in recorded events are replaced by
``<uuid>``; events are recorded without ADK's wall-clock timestamps and random event ids.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import warnings
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

from fakes.effects import OrdinaryTool
from fakes.model import ScriptedModel, strip_marker
from fakes.protected import APPROVE, CALL_FIELD, Ledger, ProtectedAction, prompt_of, question_name
from fakes.protected import reason as shown_reason
from fakes.stores import MemoryStore
from harness.targets.adapter import (
    NOT_REBUILT,
    UUID,
    ErrorLog,
    NoContinuations,
    RebuildingSession,
    opaque,
    quiet_sdk_logs,
    work_log,
)
from harness.targets.adk_model import model_class
from harness.targets.base import (
    CAPABILITIES,
    Observation,
    PendingInterrupt,
    Stored,
    StoredContinuation,
    TargetInfo,
)
from harness.targets.reference import agent_script, agents_by_path
from scenarios import model as scenario_model
from scenarios.deploys import walk_paths

DISTRIBUTION: Final = "google-adk"
APP_NAME: Final = "harness"
USER_ID: Final = "human"
SESSION_ID: Final = "scenario"
SESSIONS: Final = "sessions.sqlite3"
HANDLES: Final = "confirmation-handles.jsonl"
HANDLE_PREFIX: Final = "confirm-"
CONFIRMATION: Final = "adk_request_confirmation"  # ADK's confirmation request's function name
ORIGINAL_CALL: Final = "originalFunctionCall"  # where its args carry the call it asks about
SDK_LOGGER: Final = "google_adk"  # ADK's loggers are "google_adk.<module>"
INPUT_FIELD: Final = "request"  # a sub-agent tool's input (AgentTool's declaration)
VOLATILE: Final = frozenset({"id", "timestamp"})  # an event's random id and wall-clock time
DRAWN_ID: Final = re.compile(rf"adk-{UUID.pattern}")  # a call id ADK drew for a call without one

SHAPES: Final = {
    "agent-tool": "sub-agents are AgentTool tools (each call on a runner and in-memory session "
    "of its own)",
    "single-turn": "sub-agents are sub_agents in mode='single_turn' (run inline, in the "
    "caller's session)",
}
TARGET_NAMES: Final = {"agent-tool": "adk", "single-turn": "adk-single-turn"}

# what ADK 2.13.0 cannot express in this adapter, with the reason (docs/adapters.md quotes them)
NOT_SUPPORTED: Final = {
    "preserve_context": "a sub-agent keeps no history across calls: AgentTool runs each call in "
    "a new InMemorySessionService session, a single_turn sub-agent on a new branch per call",
    "storeless_sub_agents": "no sub-agent keeps a turn of its own (see preserve_context)",
    "stateful_provider": "the BaseLlm interface carries no previous-response id between turns",
    "sliding_window": "no conversation manager with a window and per_turn",
    "multi_question": "require_confirmation asks once per tool call; a confirmed call runs",
    "hook_interrupts": "a before_tool_callback can return a result but not pause the call for "
    "a confirmation (request_confirmation needs the tool's own context)",
    "gated_sub_agents": "require_confirmation is FunctionTool's; AgentTool and the single_turn "
    "tool have no confirmation of their own",
    "corruption": "the continuation is ADK's event rows in sqlite; this adapter does not locate "
    "or damage them",
    "continuation_bytes": "the same: stored events are not measured per sub-agent",
    "agent_state": "not built in this adapter: a tool's state is the session's, which an "
    "AgentTool's sub-agent gets a new one of for every call",
    "retries": "no callback runs a tool call again after its result or error "
    "(after_tool_callback can only replace the result)",
    "tool_names": "an AgentTool (and a single_turn sub-agent) is called by its agent's name, "
    "and ADK refuses two sub-agents of one name under one parent",
    "scalar_resume": "a confirmation is a FunctionResponse naming the id of the confirmation "
    "request it answers; ADK has no answer that names none",
    "root_sessions": "not built in this adapter: its session is one root session in the "
    "SqliteSessionService",
}
TARGET_CAPABILITIES: Final = frozenset(CAPABILITIES) - set(NOT_SUPPORTED)


def sdk_version() -> str | None:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return None


class AdkTarget:
    sdk_loggers = (SDK_LOGGER,)  # what its sessions read during a rebuild (ErrorLog)

    def __init__(self, shape: str = "agent-tool") -> None:
        if shape not in SHAPES:
            raise ValueError(f"shape must be one of {sorted(SHAPES)}")
        installed = sdk_version()
        if installed is None:
            raise RuntimeError(f"{DISTRIBUTION} is not installed (pip install '.[adk]')")
        quiet_sdk_logs(SDK_LOGGER)
        self.shape = shape
        self.info = TargetInfo(
            name=TARGET_NAMES[shape],
            version=installed,
            capabilities=TARGET_CAPABILITIES,
            description=f"the real {DISTRIBUTION} from PyPI (require_confirmation tools, "
            f"SqliteSessionService, resumable App) with the scripted BaseLlm; {SHAPES[shape]}",
        )

    def start(self, scenario: scenario_model.Scenario, workdir: Path) -> AdkSession:
        return AdkSession(scenario, workdir, self.shape)


# -- one scenario on ADK ---------------------------------------------------------------------------


class AdkSession(RebuildingSession):
    sdk_loggers = (SDK_LOGGER,)

    def __init__(self, scenario: scenario_model.Scenario, workdir: Path, shape: str) -> None:
        self.scenario = scenario
        self.shape = shape
        self.agents = agents_by_path(scenario.tree)
        self.database = workdir / SESSIONS
        super().__init__(workdir, MemoryStore(), NoContinuations())
        self.handles = work_log(workdir / HANDLES)
        self.model_class = model_class()
        # (agent name, tool) -> label in the trees the scenario deploys, the first that has it:
        # a question asked before a deploy took its tool away is still shown under the label it
        # was asked with (``_label`` asks the tree in force first)
        self.labels: dict[tuple[str, str], str] = {}
        for _, tree in scenario.trees():
            for key, label in tree_labels_by_tool(tree).items():
                self.labels.setdefault(key, label)
        self.root: Any = self._build()

    # -- building the tree with real ADK objects -------------------------------------------

    def _build(self) -> Any:
        """A new ``Runner`` over a new ``App`` and session service on the same sqlite file."""
        from google.adk.apps import App, ResumabilityConfig
        from google.adk.runners import Runner
        from google.adk.sessions.sqlite_session_service import SqliteSessionService

        root = self._agent(self.scenario.tree, self.scenario.tree.name)
        with warnings.catch_warnings():  # ResumabilityConfig is marked experimental
            warnings.simplefilter("ignore")
            app = App(
                name=APP_NAME,
                root_agent=root,
                resumability_config=ResumabilityConfig(is_resumable=True),
            )
        return Runner(app=app, session_service=SqliteSessionService(str(self.database)))

    def _agent(self, spec: scenario_model.Agent, path: str, *, sub: bool = False) -> Any:
        from google.adk.agents import LlmAgent
        from google.adk.tools import AgentTool

        tools: list[Any] = [
            action_tool(action.tool, action.label, path, self.ledger) for action in spec.actions
        ]
        tools += [effect_tool(effect.tool, path, self.ledger) for effect in spec.effects]
        subs = [self._agent(child, f"{path}/{child.name}", sub=True) for child in spec.sub_agents]
        options: dict[str, Any] = {}
        if self.shape == "agent-tool":
            tools += [AgentTool(child) for child in subs]
        else:
            options["sub_agents"] = subs
        if sub and self.shape == "single-turn":
            options["mode"] = "single_turn"
        core = ScriptedModel(path, agent_script(spec, prompt_field=INPUT_FIELD), self.journal)
        return LlmAgent(
            name=spec.name,
            description=f"Agent {spec.name}: give it a task as its request.",
            model=self.model_class(model=path, core=core),
            tools=tools,
            **options,
        )

    # -- steps ----------------------------------------------------------------------------

    def run(self, prompt: str) -> Observation:
        from google.genai import types

        return self._step(types.Content(role="user", parts=[types.Part(text=prompt)]), None)

    def answer(self, responses: Sequence[tuple[PendingInterrupt, Any]]) -> Observation:
        from google.genai import types

        if self.root is None:
            return Observation(stop_reason=None, error=NOT_REBUILT)
        pending = self._pending(run_async(self._events()))
        if not pending:  # no paused invocation: a resume would run a finished one again
            return Observation(
                stop_reason=None, error="no confirmation is pending: nothing to answer"
            )
        if not responses:  # an empty message is no answer: ADK would resume with nothing
            return Observation(stop_reason=None, pending=pending, error="no response given")
        real = self._real_ids()
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    name=CONFIRMATION,
                    id=real.get(pending.id, pending.id),
                    response={"confirmed": response == APPROVE},
                )
            )
            for pending, response in responses
        ]
        invocation = run_async(self._latest_invocation())
        return self._step(types.Content(role="user", parts=parts), invocation)

    def _step(self, message: Any, invocation: str | None) -> Observation:
        if self.root is None:  # the last restart failed: nothing is running to ask
            return Observation(stop_reason=None, error=NOT_REBUILT)
        errors = ErrorLog()
        sdk_logger = logging.getLogger(SDK_LOGGER)
        sdk_logger.addHandler(errors)
        final: str | None = None
        failure: str | None = None
        self.event_errors: list[str] = []
        try:
            final = run_async(self._drive(message, invocation))
        except Exception as raised:  # the SDK's failure is an observation, not a crash
            failure = f"{type(raised).__name__}: {raised}"
        finally:
            sdk_logger.removeHandler(errors)
        logged = [*([failure] if failure else []), *errors.messages, *self.event_errors]
        try:
            pending = self._pending(run_async(self._events()))
        except Exception as unreadable:  # the stored session cannot say what is pending
            logged.append(f"the stored session cannot list its requests: {unreadable}")
            pending = ()
        ended = "interrupt" if pending else "end_turn"
        stop_reason = None if failure is not None else ended
        return Observation(
            stop_reason=stop_reason,
            pending=pending,
            final_answer=None if pending or failure else final,
            error=UUID.sub("<uuid>", logged[0]) if logged else None,
            more_errors=tuple(UUID.sub("<uuid>", more) for more in logged[1:]),
            warnings=tuple(UUID.sub("<uuid>", warned) for warned in errors.warnings),
        )

    async def _drive(self, message: Any, invocation: str | None) -> str | None:
        """One ``run_async`` of the runner; the root's last text answer, if it gave one."""
        await self._session()
        final: str | None = None
        root = self.scenario.tree.name
        options = {} if invocation is None else {"invocation_id": invocation}
        async for event in self.root.run_async(
            user_id=USER_ID, session_id=SESSION_ID, new_message=message, **options
        ):
            self._record(event)
            if event.error_message:  # a model or tool error ADK turned into an event
                self.event_errors.append(f"{event.error_code}: {event.error_message}")
            text = _answer_text(event)
            if event.author == root and text is not None:
                final = strip_marker(text)
        return final

    async def _session(self) -> Any:
        service = self.root.session_service
        found = await service.get_session(app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID)
        if found is None:
            state = {path: dict(agent.state) for path, agent in self.agents.items() if agent.state}
            found = await service.create_session(
                app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID, state=state
            )
        return found

    async def _events(self) -> list[Any]:
        session = await self.root.session_service.get_session(
            app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID
        )
        return list(session.events) if session is not None else []

    async def _latest_invocation(self) -> str | None:
        """The invocation the stored session's latest event belongs to, sent as the one to
        resume.  An answer to a confirmation of an earlier invocation resumes that one instead
        (``Runner._resolve_invocation_id``), logging "Provided invocation_id ... is ignored"."""
        events = await self._events()
        return str(events[-1].invocation_id) if events else None

    # -- what the human is shown --------------------------------------------------------------

    def _pending(self, events: Sequence[Any]) -> tuple[PendingInterrupt, ...]:
        """The confirmation requests of the stored session that no function response answered,
        in the order it holds them, under their handles: an earlier invocation's too.  A new
        prompt sent while one waits starts another invocation beside it, and the paused one
        stays resumable: an answer resumes the invocation its confirmation was asked in,
        whatever ``invocation_id`` it is sent with (``Runner._resolve_invocation_id``)."""
        answered = _answered(events)
        shown: dict[str, PendingInterrupt] = {}
        for event in events:
            for call in _parts_of(event, "function_call"):
                if call.name != CONFIRMATION or call.id in answered:
                    continue
                handle = self._handle(str(call.id))
                shown.setdefault(handle, self._shown(handle, str(event.author), call.args))
        return tuple(shown.values())

    def _label(self, author: str, tool: str) -> str | None:
        """The label of ``author``'s action ``tool``: in the tree in force, else in the first
        tree the scenario deploys that has it (a tool a deploy took away)."""
        current = tree_labels_by_tool(self.scenario.tree)
        return current.get((author, tool)) or self.labels.get((author, tool))

    def _shown(self, handle: str, author: str, args: Any) -> PendingInterrupt:
        original = args.get(ORIGINAL_CALL) if isinstance(args, dict) else None
        tool = original.get("name") if isinstance(original, dict) else None
        # a question keeps the label it was first shown under: a later deploy that relabels its
        # agent's action changes what new questions are called, not this one
        label = self._first_labels().get(handle) or self._label(author, str(tool))
        self._keep_label(handle, label)
        prompt = prompt_of(original.get("args") if isinstance(original, dict) else None)
        return PendingInterrupt(
            id=handle,
            name=question_name(1),
            reason=shown_reason(label, 1, 1, prompt) if label else {"tool": tool},
            label=label,
        )

    def _real_ids(self) -> dict[str, str]:
        records = self.handles.records()
        return {record["handle"]: record["id"] for record in records if "id" in record}

    def _first_labels(self) -> dict[str, str]:
        """Each handle's label, as it was first shown."""
        return {
            record["handle"]: record["label"]
            for record in self.handles.records()
            if "label" in record
        }

    def _keep_label(self, handle: str, label: str | None) -> None:
        if label is not None and handle not in self._first_labels():
            self.handles.append({"handle": handle, "label": label})

    def _handle(self, real_id: str) -> str:
        known = {real: handle for handle, real in self._real_ids().items()}
        if real_id not in known:
            known[real_id] = f"{HANDLE_PREFIX}{len(known) + 1}"
            self.handles.append({"handle": known[real_id], "id": real_id})
        return known[real_id]

    def _record(self, event: Any) -> None:
        payload = {
            "author": event.author,
            "branch": event.branch,
            "parts": [_plain_part(part) for part in (event.content.parts or ())]
            if event.content
            else [],
            "long_running_tool_ids": sorted(event.long_running_tool_ids or ()),
            "requested_confirmations": sorted(event.actions.requested_tool_confirmations),
            "error_code": event.error_code,
            "error_message": event.error_message,
        }
        text = json.dumps(payload, default=opaque, sort_keys=True, ensure_ascii=False)
        self.public_events.append(json.loads(UUID.sub("<uuid>", text)))

    def store_bytes(self) -> int:
        """Bytes of everything the stored session holds, what a restart reads back: its events as
        canonical compact JSON without ADK's random event ids and wall-clock timestamps, and its
        state (the sqlite file itself grows by whole pages)."""
        if self.root is None:
            return 0
        session = run_async(
            self.root.session_service.get_session(
                app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID
            )
        )
        if session is None:
            return 0
        return canonical_size(list(session.events)) + len(
            json.dumps(session.state, sort_keys=True, separators=(",", ":"), default=str).encode()
        )

    def stored(self) -> Stored:
        """The sub-agent turns the stored session keeps for the questions still pending: for
        each, every sub-agent call on the way down to the one that asked (a single_turn call runs
        on a branch of the caller's session, ``caller@call-id.sub@call-id``), the events of that
        call's branch, measured as canonical compact JSON without ADK's random event ids and
        wall-clock timestamps.  An ``AgentTool`` keeps none: its wrapped agent ran in a session
        it discarded.  ``continuation_bytes`` is still not claimed: I7 does not judge them."""
        if self.root is None:
            return Stored()
        try:
            events = run_async(self._events())
        except Exception:  # an unreadable store says nothing of what it holds
            return Stored()
        return Stored(continuations=parked_turns(events, self.scenario.tree.name))


def run_async(awaitable: Any) -> Any:
    return asyncio.run(awaitable)


def _answered(events: Sequence[Any]) -> set[str]:
    """The ids of the confirmation requests a function response of the stored session answered
    (in whichever invocation it was sent)."""
    return {
        reply.id
        for event in events
        for reply in _parts_of(event, "function_response")
        if reply.name == CONFIRMATION
    }


def parked_turns(events: Sequence[Any], root: str) -> tuple[StoredContinuation, ...]:
    """Each sub-agent call that a pending confirmation waits in (the asker's and every call above
    it), in the order the stored session first shows it, with the bytes of its branch's events:
    in every invocation, as ``AdkSession._pending`` shows the questions."""
    answered = _answered(events)
    branches: dict[str, None] = {}
    for event in events:
        if event.author == root or not event.branch:
            continue
        waiting = [
            call
            for call in _parts_of(event, "function_call")
            if call.name == CONFIRMATION and call.id not in answered
        ]
        if waiting:
            segments = str(event.branch).split(".")
            for depth in range(1, len(segments) + 1):
                branches.setdefault(".".join(segments[:depth]), None)
    parked = []
    for branch in branches:
        mine = [event for event in events if event.branch == branch]
        owner = branch.rsplit(".", 1)[-1].split("@", 1)[0]
        parked.append(StoredContinuation(owner=owner, size=canonical_size(mine)))
    return tuple(parked)


def canonical_size(events: Sequence[Any]) -> int:
    """Bytes of ``events`` as canonical compact JSON, without their random ids and timestamps."""
    kept = [event.model_dump(mode="json", exclude_none=True, exclude=VOLATILE) for event in events]
    return len(json.dumps(kept, sort_keys=True, separators=(",", ":")).encode())


def _parts_of(event: Any, kind: str) -> list[Any]:
    parts = event.content.parts if event.content is not None else None
    return [getattr(part, kind) for part in parts or () if getattr(part, kind, None)]


def _answer_text(event: Any) -> str | None:
    """The text of an event that is a text answer (no function calls, not partial)."""
    if event.partial or event.content is None or not event.content.parts:
        return None
    parts = event.content.parts
    if any(part.function_call or part.function_response for part in parts):
        return None
    texts = [part.text for part in parts if part.text]
    return texts[0] if texts else None


def _plain_part(part: Any) -> dict[str, Any]:
    if part.function_call:
        call = part.function_call
        return {"function_call": {"name": call.name, "id": call.id, "args": call.args}}
    if part.function_response:
        reply = part.function_response
        return {
            "function_response": {"name": reply.name, "id": reply.id, "response": reply.response}
        }
    return {"text": part.text}


# -- the tree's tools ------------------------------------------------------------------------------


def call_id(tool_context: Any) -> str:
    """The id of the call a tool serves, as the ledger records it: the model's.  A call the model
    sent with an empty id gets one ADK draws (``populate_client_function_call_id`` in
    flows/llm_flows/tools/_functions.py replaces any falsy id with ``adk-<uuid4>``, and
    ``remove_client_function_call_id`` strips it again before the model sees a request): that
    call is the model's ``''``, and is recorded so, each such call under the id its model gave
    (read as ``adk-<uuid>``, two of them would count as one call run twice)."""
    served = tool_context.function_call_id or ""
    return "" if DRAWN_ID.fullmatch(served) else UUID.sub("<uuid>", served)


def action_tool(name: str, label: str, path: str, ledger: Ledger) -> Any:
    """The protected action ``label``'s tool, named ``name``, of the agent at ``path``: ADK asks
    for a confirmation (``require_confirmation``) before it runs."""
    from google.adk.tools import FunctionTool, ToolContext

    action = ProtectedAction(label)

    async def perform(call: str, tool_context: ToolContext) -> str:
        return action.run(ledger, agent=path, tool_use_id=call_id(tool_context), prompt=call)

    perform.__name__ = perform.__qualname__ = name
    perform.__doc__ = (
        f"Protected action {label}: runs only with a human's confirmation.\n\n"
        f"Args:\n    {CALL_FIELD}: the prompt of the call it serves."
    )
    # ADK reads the annotations at run time; this module's are strings (PEP 563)
    perform.__annotations__ = {CALL_FIELD: str, "tool_context": ToolContext, "return": str}
    return FunctionTool(perform, require_confirmation=True)


def effect_tool(name: str, path: str, ledger: Ledger) -> Any:
    """The ordinary tool ``name`` of the agent at ``path``: a side effect, asks nothing."""
    from google.adk.tools import FunctionTool, ToolContext

    effect = OrdinaryTool(name)

    async def run(tool_context: ToolContext) -> str:
        return effect.run(ledger, agent=path, tool_use_id=call_id(tool_context))

    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"Ordinary tool {name}: a side effect, asks nothing."
    run.__annotations__ = {"tool_context": ToolContext, "return": str}
    return FunctionTool(run)


def tree_labels_by_tool(tree: scenario_model.Agent) -> dict[tuple[str, str], str]:
    """(agent name, tool) -> the label of that agent's action ``tool``, in ``tree``."""
    return {
        (agent.name, action.tool): action.label
        for agent, _, _ in walk_paths(tree)
        for action in agent.actions
    }

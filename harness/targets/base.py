"""The target interface: what the harness needs from an implementation under test.

A target builds a scenario's tree, runs prompts, answers pending interrupts, restarts (drops every
object and rebuilds from persisted data only) and corrupts stored continuations.  It reports only
what a user could observe.  Interrupt ids are opaque: the harness matches a pending interrupt to
a protected action by the label in its reason, and hands the same ``PendingInterrupt`` back to
answer it, so frameworks with hash ids or id-less approval objects fit (their ``id`` is whatever
handle the adapter needs).

Targets declare capabilities; a scenario needing one a target lacks is reported as not
applicable, not as failed.  Third parties add targets through the entry-point group
``nested_interrupt_harness.targets`` (see ``harness.targets.registry``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from scenarios.corruptions import CORRUPTION_CAPABILITY
from scenarios.model import Agent, Answer, Corrupt, Repair, Restart, Scenario

# What a scenario may need; each target says which it can express.  Each meaning completes "the
# target can ...": the one source of what a capability means (``python -m harness targets
# --verbose`` prints it; docs/adapters.md's table quotes it, and tests/test_docs.py keeps it so).
CAPABILITIES = {
    "interrupt_ids": "show ids a human could see and quote back",
    "restart": "drop every object and rebuild from persisted data",
    "preserve_context": "keep a sub-agent's history across calls",
    "stateful_provider": "run a model that needs the previous response id from model state",
    "sliding_window": "use a sliding-window conversation manager with per_turn",
    "multi_question": "let one protected action ask more than once",
    "hook_interrupts": "ask from a before-tool-call hook",
    "gated_sub_agents": "ask before calling a sub-agent (a gate on the agent tool), then let it "
    "ask its own questions in the same call",
    "corruption": "locate stored continuations and damage them (the kinds in its corruptions)",
    "continuation_bytes": "measure the stored continuations' sizes (Session.stored)",
    "public_events": "record public events (stream events, callback payloads)",
    "repeated_tool_use_ids": "let a model send a toolUseId it used in an earlier turn (some SDKs "
    "require every id of a run to be new)",
    "empty_tool_use_ids": "let a model send an empty toolUseId (some SDKs refuse it, or skip it "
    "as an incomplete block)",
    "ordinary_tools": "run an ordinary tool with a side effect, which asks nothing (the ledger "
    "records every run)",
    "storeless_sub_agents": "keep a preserve_context sub-agent's parked turn only in memory, so a "
    "restart loses it (the turn does not travel with the root's record)",
    "changed_tree": "rebuild the agents from a changed tree at a restart (a deploy: sub-agents "
    "or tools renamed, added or removed, another window size or preserve_context) and restore "
    "the stored state into them",
    "agent_state": "let an ordinary tool read and write its agent's key/value state (a tally "
    "effect), kept with the agent's turn across a question and a restart",
    "retries": "retry a tool call from an after-tool-call hook (after its error or its result), "
    "each attempt a new call that asks again",
    "tool_names": "call a sub-agent by a tool name apart from its agent's name, so sibling "
    "agent tools may wrap agents of one name (or clones of one agent)",
    "scalar_resume": "resume with one answer not keyed by any interrupt id (as LangGraph's "
    "Command(resume=value)), for the one pending question",
    "root_sessions": "serve two root sessions (two users of one deployment) whose orchestrators "
    "call one agent-tool object per sub-agent, each session with its own root conversation and "
    "store",
}


class SaidAlready(RuntimeError):
    """A failure whose message is already the one line a report shows for it (worded where it
    happened, in another process): the runner shows it as it is."""


@dataclass(frozen=True)
class PendingInterrupt:
    """A question as the root shows it to the human."""

    id: str
    name: str
    reason: Any
    label: str | None  # the protected action named in the reason, if any
    response: Any = None  # a response the target still shows attached (should be none)


@dataclass(frozen=True)
class Observation:
    """What one step showed the user."""

    stop_reason: str | None  # "end_turn", "interrupt", or None when the call failed
    pending: tuple[PendingInterrupt, ...] = ()
    final_answer: str | None = None
    error: str | None = None  # raised, or (else) the first record logged at ERROR, in the step
    more_errors: tuple[str, ...] = ()  # every other record logged at ERROR in the step, in order
    warnings: tuple[str, ...] = ()  # logged at WARNING level during the step, in order


@dataclass(frozen=True)
class Logged:
    """What the implementation logged during a rebuild (a restart or a deploy), in order: at
    ERROR or above (``errors``), and at WARNING (``warnings``: what it skipped or turned away
    while reloading, without failing)."""

    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoredContinuation:
    owner: str  # which sub-agent's parked turn (by name)
    size: int  # bytes of its canonical JSON


@dataclass(frozen=True)
class Stored:
    """What the target's stores hold after a step, where the target can say."""

    continuations: tuple[StoredContinuation, ...] = ()
    record_bytes: int | None = None  # the root's interrupt record (state + context), in bytes


class Session(Protocol):
    """One scenario being driven on one target, in its own work directory."""

    def run(self, prompt: str) -> Observation: ...

    def answer(self, responses: Sequence[tuple[PendingInterrupt, Any]]) -> Observation: ...

    def restart(self) -> str | None:
        """Drop every object and rebuild from persisted data; the error, if rebuilding failed."""

    def deploy(self, tree: Agent) -> str | None:
        """Drop every object and rebuild from persisted data with the agents of ``tree``, a
        changed tree (a restart's ``tree``: only asked of a target claiming ``changed_tree``);
        the error, if rebuilding failed."""

    def corrupt(self, corruption: str, which: int, pick: int = 0) -> str:
        """Damage the ``which``-th stored continuation (not yet reloaded); say what was done.
        ``pick`` chooses the node or byte a fuzzing damage hits (``fakes.corruption``)."""

    def repair(self) -> str:
        """Put back what ``corrupt`` damaged, unless the target rewrote it since (not yet
        reloaded); say what was done."""

    def executions(self, start: int = 0) -> list[dict[str, Any]]:
        """The ledger so far, from its ``start``-th record on: every protected action that ran.
        The runner asks after every step for what was added since it last asked (``start``:
        how many it has), so an adapter that reads only those saves reading the rest again."""

    def requests(self, start: int = 0) -> list[dict[str, Any]]:
        """The model-request journal so far, from its ``start``-th record on."""

    def events(self, start: int = 0) -> list[dict[str, Any]]:
        """Public events so far (stream events, callback payloads), from the ``start``-th on."""

    def stored(self) -> Stored: ...


class ReportsRebuildLogs(Protocol):
    """A session that can say what its implementation logged while it rebuilt: the runner asks
    after every ``restart()``, ``deploy()`` and ``restart_root_session()`` of a session that has
    the method (one without it is taken to have logged nothing)."""

    def logged_at_rebuild(self) -> Logged:
        """What was logged at WARNING and ERROR during the last ``restart()``, ``deploy()`` or
        ``restart_root_session()`` (not before it, nor since)."""


def logged_at_rebuild(session: Session) -> Logged:
    """``session.logged_at_rebuild()``, or nothing logged for a session without it."""
    report = getattr(session, "logged_at_rebuild", None)
    if not callable(report):
        return Logged()
    logged: Logged = report()
    return logged


class ResumesWithoutId(Protocol):
    """A session of a target claiming ``scalar_resume``: the runner asks ``resume`` of no other
    (so the other adapters need not spell a method they could not carry out)."""

    def resume(self, response: Any) -> Observation:
        """Resume with one answer not keyed by any id, as the SDK takes one: the SDK decides
        which pending question it answers, or refuses it."""


def resume_without_id(session: Session, response: Any) -> Observation:
    """``session.resume(response)``; a session without it (a scenario the runner should have
    found not applicable) is an adapter's mistake, named as such."""
    resume = getattr(session, "resume", None)
    if not callable(resume):
        raise TypeError(
            f"{type(session).__name__} has no resume(): its target must not claim scalar_resume"
        )
    observation: Observation = resume(response)
    return observation


class ServesTwoRootSessions(Protocol):
    """A session of a target claiming ``root_sessions``: the runner tells it which root session
    each step talks to (and asks it of no other session)."""

    def use_root_session(self, name: str) -> None:
        """The steps from now on talk to root session ``name`` (``a`` or ``b``); a restart
        rebuilds both, each from its own store."""

    def restart_root_session(self, name: str) -> str | None:
        """Rebuild root session ``name``'s orchestrator from its store, the agent tools it
        shares and the other session as they are; the error, if rebuilding failed."""


def use_root_session(session: Session, name: str) -> None:
    """``session.use_root_session(name)``; a session without it (a scenario the runner should
    have found not applicable) is an adapter's mistake, named as such."""
    use = getattr(session, "use_root_session", None)
    if not callable(use):
        raise TypeError(
            f"{type(session).__name__} has no use_root_session(): its target must not claim "
            "root_sessions"
        )
    use(name)


def restart_root_session(session: Session, name: str) -> str | None:
    """``session.restart_root_session(name)``, or the same adapter's mistake named."""
    restart = getattr(session, "restart_root_session", None)
    if not callable(restart):
        raise TypeError(
            f"{type(session).__name__} has no restart_root_session(): its target must not "
            "claim root_sessions"
        )
    error: str | None = restart(name)
    return error


@dataclass(frozen=True)
class TargetInfo:
    name: str
    version: str
    capabilities: frozenset[str]
    description: str = ""
    corruptions: frozenset[str] = field(default_factory=frozenset)
    isolation: str = "in-process"  # or "process": every step in a fresh process
    findings_of: str | None = None  # a target whose findings file this one must match too

    @property
    def expressible(self) -> frozenset[str]:
        """Its capabilities, and ``corruption:<kind>`` for each damage it can take: what the
        generators may draw for it (``scenarios.strategies.Capabilities``)."""
        return self.capabilities | {f"{CORRUPTION_CAPABILITY}{kind}" for kind in self.corruptions}

    @property
    def findings_name(self) -> str:
        """The name its expected findings are recorded under."""
        return self.findings_of or self.name


class Target(Protocol):
    info: TargetInfo

    def start(self, scenario: Scenario, workdir: Path) -> Session: ...


def sdk_loggers(target: Target) -> tuple[str, ...]:
    """The loggers a target's sessions read while they rebuild (``sdk_loggers``, optional: a
    plugin target without it is read for nothing), so a rebuild in a new process that fails
    as the session starts is read as the in-process ``restart()`` reads it."""
    names: tuple[str, ...] = tuple(getattr(target, "sdk_loggers", ()))
    return names


def requirements(scenario: Scenario) -> set[str]:
    """The capabilities a scenario needs."""
    needed = set()
    agents = [agent for _, tree in scenario.trees() for agent, _ in tree.walk()]
    for agent in agents:
        if agent.preserve_context:
            needed.add("preserve_context")
            if not agent.session_store:
                needed.add("storeless_sub_agents")
        if _repeats_tool_use_ids(agent):
            needed.add("repeated_tool_use_ids")
        if any(call.id == "" for _, turns in agent.scripts() for turn in turns for call in turn):
            needed.add("empty_tool_use_ids")
        if agent.stateful_provider:
            needed.add("stateful_provider")
        if agent.window is not None:
            needed.add("sliding_window")
        if agent.gate is not None:
            needed.add("gated_sub_agents")
        if agent.effects:
            needed.add("ordinary_tools")
        if any(effect.tally for effect in agent.effects):
            needed.add("agent_state")
        if agent.tool_name is not None:
            needed.add("tool_names")
        if agent.retry is not None or any(action.retry for action in agent.actions):
            needed.add("retries")
        for action in agent.actions:
            if action.questions > 1:
                needed.add("multi_question")
            if action.hook:
                needed.add("hook_interrupts")
    for step in scenario.steps:
        if isinstance(step, Restart | Corrupt | Repair):
            needed.add("restart")
        if isinstance(step, Corrupt):
            needed.add("corruption")
        if isinstance(step, Restart) and step.tree is not None:
            needed.add("changed_tree")
        if isinstance(step, Answer) and step.resume is not None:
            needed.add("scalar_resume")
    if scenario.two_sessions:
        needed.add("root_sessions")
    return needed


def _repeats_tool_use_ids(agent: Agent) -> bool:
    """Whether the agent's scripted turns for one prompt hold an id an earlier turn used."""
    for _, turns in agent.scripts():
        seen: set[str] = set()
        for turn in turns:
            ids = [call.id for call in turn]
            if seen & set(ids):
                return True
            seen.update(ids)
    return False


def expressible_needs(scenario: Scenario) -> frozenset[str]:
    """What a target's ``expressible`` set must hold to run ``scenario``: its capabilities
    (``requirements``) and ``corruption:<kind>`` for each damage it does."""
    damages = {
        f"{CORRUPTION_CAPABILITY}{step.corrupt}"
        for step in scenario.steps
        if isinstance(step, Corrupt)
    }
    return frozenset(requirements(scenario) | damages)


def missing_capabilities(info: TargetInfo, scenario: Scenario) -> list[str]:
    missing = sorted(requirements(scenario) - info.capabilities)
    for step in scenario.steps:
        if isinstance(step, Corrupt) and step.corrupt not in info.corruptions:
            missing.append(f"{CORRUPTION_CAPABILITY}{step.corrupt}")
    return missing

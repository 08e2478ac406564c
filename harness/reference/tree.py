"""An agent tree built from a spec, and its whole-tree persistence.

A ``Tree`` is the live objects: the root agent, its sub-agent tools, and for each
``preserve_context=True`` sub-agent one live agent.  Built after a deploy (a changed spec over
the same bytes), a sub-agent that no longer keeps its history still finds a turn parked in its
session (``SubAgentTool.parked_in_session``), and a call parked while its sub-agent was
ephemeral stays an ephemeral call, its turn the caller's stored entry, until it ends.
``persist()`` is everything that survives a restart: the root's state (whose interrupt context
holds the ephemeral sub-agents' parked turns) and the state of every preserve_context sub-agent
that has a session store.  A restart drops every
object and builds a new ``Tree`` from the spec and those bytes; nothing else is carried over.
Two root sessions of one deployment are two trees, each persisted on its own, the second built
with the first one's agent tools (``shared_tools``): the same objects serve both sessions, and
what keeps their calls apart is that each call's parked turn is its caller's own stored entry.

At most once, across crashes too: ``resume`` first writes ahead (through the caller's
``write_ahead``) which answers it is about to carry out, and only then carries them out; once
they are carried out the next ``persist`` drops the mark.  A process that dies in between
leaves the mark behind, so the same answers sent again, now or after any later resume, are
refused loudly (``InDoubtError``): their actions may have run, and running them again could run
them twice.  A resume that fails after the write-ahead leaves its answers in doubt the same way.
The price is that such an approval is lost (loudly); the alternative, carrying it out again, is
at-least-once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from harness.reference.agent import (
    Agent,
    AgentError,
    AgentResult,
    EventSink,
    Model,
    RetryPolicy,
    Tool,
)
from harness.reference.agent_as_tool import Gate, SubAgentTool
from harness.reference.conversation import SlidingWindow
from harness.reference.state import JSON, AgentState

FORMAT: Final = "reference-tree/1"


@dataclass(frozen=True)
class ActionSpec:
    tool: str
    label: str
    questions: int = 1
    retry: RetryPolicy | None = None  # its agent's hook retries each of its calls


@dataclass(frozen=True)
class EffectSpec:
    """An ordinary tool with a side effect: it asks nothing (a tally one counts its runs in its
    agent's key/value state)."""

    tool: str
    tally: bool = False


@dataclass(frozen=True)
class AgentSpec:
    name: str
    actions: tuple[ActionSpec, ...] = ()
    effects: tuple[EffectSpec, ...] = ()
    sub_agents: tuple[SubAgentSpec, ...] = ()
    window: SlidingWindow | None = None
    initial_state: Mapping[str, JSON] = field(default_factory=dict)


@dataclass(frozen=True)
class SubAgentSpec:
    agent: AgentSpec
    tool_name: str | None = None  # what its caller calls it by (and its path), if not its name
    preserve_context: bool = False
    session_store: bool = True
    gate: str | None = None  # the label of the question its caller asks before each call
    retry: RetryPolicy | None = None  # its caller's hook retries each call of it

    @property
    def tool(self) -> str:
        """The tool its caller calls it by, which also names its path in the tree."""
        return self.tool_name or self.agent.name


class AmbiguousAnswerError(AgentError):
    """One answer without an id, while several questions are pending: it names none of them."""


class InDoubtError(AgentError):
    """These answers were being carried out when the process stopped: not carried out again."""


ModelFactory = Callable[[str], Model]  # agent path -> model
ActionToolFactory = Callable[[ActionSpec, str], Tool]  # (action, agent path) -> tool
GateFactory = Callable[[str], Gate]  # a gate's label -> the gate
EffectToolFactory = Callable[[EffectSpec, str], Tool]  # (ordinary tool, agent path) -> tool


class Tree:
    def __init__(
        self,
        spec: AgentSpec,
        *,
        model_for: ModelFactory,
        action_tool: ActionToolFactory,
        persisted: bytes | None = None,
        emit: EventSink | None = None,
        gate_for: GateFactory | None = None,
        effect_tool: EffectToolFactory | None = None,
        shared_tools: Mapping[str, SubAgentTool] | None = None,
    ) -> None:
        self.spec = spec
        # agent tools another tree built, by path: a second root session of one deployment
        # calls the first one's objects (each call's parked turn is the caller's own entry)
        self.shared_tools = dict(shared_tools or {})
        self.model_for = model_for
        self.action_tool = action_tool
        self.gate_for = gate_for
        self.effect_tool = effect_tool
        self.emit: EventSink = emit or (lambda event: None)
        stored = _load(persisted) if persisted is not None else None
        self.sessions: dict[str, Agent] = {}  # preserve_context sub-agents with a session store
        self.live_agents: dict[str, Agent] = {}  # every preserve_context sub-agent, by path
        self._stored_sessions: dict[str, JSON] = stored["sessions"] if stored else {}
        root_state = AgentState.owning(stored["root"]) if stored else None  # parsed: ours
        self.in_flight: tuple[str, ...] = tuple(stored.get("in_flight", ())) if stored else ()
        self.root = self._build(spec, spec.name, root_state)

    def resume(
        self, responses: Mapping[str, JSON], write_ahead: Callable[[bytes], None]
    ) -> AgentResult:
        """Resume the root with ``responses`` (root-visible id -> response), at most once."""
        in_doubt = sorted(set(responses) & set(self.in_flight))
        if in_doubt:
            raise InDoubtError(
                f"answers to {in_doubt} were being carried out when the process stopped: their "
                "actions may have run, so they are not carried out again (resolve them by hand)"
            )
        self.root.prepare_resume(responses)  # refuse what cannot be resumed before marking it
        before = self.in_flight  # answers an earlier crash or failure left in doubt stay so
        self.in_flight = tuple(sorted({*before, *responses}))
        write_ahead(self.persist())
        result = self.root.resume(responses)
        self.in_flight = before
        return result

    def resume_one(self, response: JSON, write_ahead: Callable[[bytes], None]) -> AgentResult:
        """Resume the root with one answer not keyed by any id: it answers the one question the
        root shows as pending.  With several pending it names none of them, so it is refused
        (``AmbiguousAnswerError``) and nothing changes; with none pending the root's own
        refusal of a resume stands."""
        pending = [interrupt.id for interrupt in self.root.state.interrupt_state.pending]
        return self.resume(dict.fromkeys(self.answered_by_one(pending), response), write_ahead)

    def answered_by_one(self, pending: list[str]) -> list[str]:
        """The pending ids (root-visible, in the order shown) an answer without an id answers:
        the only one; several pending, it names none of them (I14)."""
        if len(pending) > 1:
            raise AmbiguousAnswerError(
                f"one answer without an id, and {len(pending)} questions are pending: "
                "answer each by its id"
            )
        return pending

    def agent_tools(self) -> dict[str, SubAgentTool]:
        """The root's agent tools, by path: what a second root session shares."""
        return {
            f"{self.root.name}/{name}": tool
            for name, tool in self.root.tools.items()
            if isinstance(tool, SubAgentTool)
        }

    def persist(self) -> bytes:
        """Canonical JSON of everything that survives a restart (views suffice: it is bytes)."""
        # a session of a sub-agent not rebuilt since the restart is kept as it was stored: a
        # session store holds each agent's entry on its own, not only the ones in memory
        sessions = dict(self._stored_sessions)
        sessions.update({path: agent.state.view() for path, agent in self.sessions.items()})
        document = {
            "format": FORMAT,
            "root": self.root.state.view(),
            "sessions": sessions,
            "in_flight": list(self.in_flight),
        }
        return json.dumps(document, sort_keys=True, ensure_ascii=False).encode()

    def _build(self, spec: AgentSpec, path: str, state: AgentState | None) -> Agent:
        if state is None:
            state = AgentState(state=dict(spec.initial_state))
        tools: list[Tool] = [self.action_tool(action, path) for action in spec.actions]
        if spec.effects and self.effect_tool is None:
            raise ValueError(f"agent {path!r} has ordinary tools and the tree no effect_tool")
        tools += [self.effect_tool(effect, path) for effect in spec.effects if self.effect_tool]
        for sub in spec.sub_agents:
            shared = self.shared_tools.get(f"{path}/{sub.tool}")
            tools.append(shared or self._sub_agent_tool(sub, f"{path}/{sub.tool}"))
        retries = {action.tool: action.retry for action in spec.actions if action.retry}
        retries |= {sub.tool: sub.retry for sub in spec.sub_agents if sub.retry}
        return Agent(
            name=path,
            model=self.model_for(path),
            tools=tools,
            conversation_manager=spec.window,
            state=state,
            emit=self.emit,
            retries=retries,
        )

    def _sub_agent_tool(self, sub: SubAgentSpec, path: str) -> SubAgentTool:
        def build() -> Agent:
            return self._build(sub.agent, path, None)

        live = self.live_agents.get(path)
        if sub.preserve_context and live is None:
            stored = self._stored_sessions.get(path) if sub.session_store else None
            live = self._build(sub.agent, path, AgentState.from_json(stored) if stored else None)
            self.live_agents[path] = live
            if sub.session_store:
                self.sessions[path] = live
        stored = None if sub.preserve_context else self._stored_sessions.get(path)
        parked = AgentState.from_json(stored) if stored else None
        return SubAgentTool(
            sub.tool,
            build,
            preserve_context=sub.preserve_context,
            live=live,
            gate=self._gate(sub),
            parked_in_session=parked if parked and parked.interrupt_state.activated else None,
            session_consumed=lambda: self._forget_session(path),
        )

    def _forget_session(self, path: str) -> None:
        """The session stored for ``path`` is done with: its parked turn was resumed."""
        self._stored_sessions.pop(path, None)

    def _gate(self, sub: SubAgentSpec) -> Gate | None:
        if sub.gate is None:
            return None
        if self.gate_for is None:
            raise ValueError(f"sub-agent {sub.agent.name!r} is gated, but the tree has no gate_for")
        return self.gate_for(sub.gate)


def _load(persisted: bytes) -> dict[str, JSON]:
    document = json.loads(persisted)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"not a persisted {FORMAT} tree")
    return document

"""Agent-as-tool: a sub-agent called as one tool of its parent, interrupts included.

Up: a sub-agent's pending interrupts are re-raised in the parent under
``naming.root_visible_id(outer call key, local id)`` (the call key is the outer toolUseId
within the parent's current prompt, ``agent.call_key``).  Down: on resume, the parent's answers for
this call are selected and renamed back by ``routing.responses_for_call``.

Where the parked sub-agent turn lives between the question and the answer:

* ``preserve_context=False`` (ephemeral): the sub-agent is built empty for every call, and its
  parked turn is one continuation entry in the parent's interrupt context, under
  ``SUB_AGENT_TURNS`` keyed by the outer call key; the entry is consumed when the call resumes.
  While the process lives, the parked sub-agent object is kept too and resumes in memory, as an
  SDK's would, but only for a caller whose stored entry is the one parked with it; a sub-agent
  rebuilt after a restart (or for another caller) is restored from the continuation.  So a
  restart-free run is the in-memory control that a restored run must equal.
* ``preserve_context=True``: one live sub-agent keeps its history across calls; its parked turn is
  its own state (persisted by its own session store, if it has one).  If it comes back from a
  restart without its parked turn, the resume fails loudly and names the fix.

A call resumes only when the parent owns an interrupt under its prefix and the sub-agent's own
interrupt state is parked; a call that does not own a parked sub-agent's turn never takes it.
The two routing decisions are methods, ``owns`` and ``responses``, so a known-bad variant
(``harness.targets.variants_routing``) replaces one of them and nothing else.

A gated sub-agent (``gate``) is asked for first, on every run of the call: the gate asks its
question through the call's own ``ToolCall.interrupt``, so it is an ordinary tool question of
the parent (``naming.tool_interrupt_id``, never under the nested prefix) and is answered, kept
and replayed like one; only once it is approved is the sub-agent called or resumed, and only the
answers under the nested prefix are routed down to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol

from harness.reference import continuation, routing
from harness.reference.agent import (
    Agent,
    AgentResult,
    Completed,
    Interrupted,
    ToolCall,
    ToolOutcome,
    ToolUse,
    call_key,
)
from harness.reference.naming import root_visible_id
from harness.reference.state import JSON, AgentState, Interrupt, copy_json

SUB_AGENT_TURNS: Final = "sub_agent_turns"
PROMPT_FIELD: Final = "prompt"


class LostTurnError(continuation.ContinuationError):
    """A preserve_context=True sub-agent came back from a restart without its parked turn."""


class Gate(Protocol):
    """What a caller asks before it calls a gated sub-agent."""

    def refusal(self, call: ToolCall) -> str | None:
        """Ask through ``call.interrupt`` (which raises until answered); None when approved, else
        the result the call ends with instead of calling the sub-agent."""


class SubAgentTool:
    def __init__(
        self,
        name: str,
        build: Callable[[], Agent],
        *,
        preserve_context: bool,
        live: Agent | None = None,
        gate: Gate | None = None,
        parked_in_session: AgentState | None = None,
        session_consumed: Callable[[], None] = lambda: None,
    ) -> None:
        self.name = name
        self.build = build
        self.preserve_context = preserve_context
        self.gate = gate
        # an ephemeral sub-agent's turn parked in its session while it kept its history (a
        # deploy turned preserve_context off); ``session_consumed`` drops that session once the
        # turn is resumed
        self.parked_in_session = parked_in_session
        self.session_consumed = session_consumed
        self.from_session: Agent | None = None  # the sub-agent resumed from that session
        self.live = live if live is not None else (build() if preserve_context else None)
        # ephemeral sub-agents parked in this process, with the entry stored for each
        self.parked: dict[str, tuple[JSON, Agent]] = {}

    def owns(self, caller: AgentState, outer: str) -> bool:
        """Whether the call ``outer`` resumes a parked turn: the parent holds an interrupt raised
        under it."""
        return routing.owns_pending_turn(caller.interrupt_state.interrupts, outer)

    def responses(self, caller: AgentState, outer: str) -> dict[str, JSON]:
        """The parent's answers that belong to the call ``outer``, by the sub-agent's local ids."""
        return routing.responses_for_call(caller.interrupt_state.interrupts, outer)

    def prepare(self, caller: AgentState, use: ToolUse) -> None:
        outer = call_key(caller, use)
        if self.owns(caller, outer):
            sub_agent = self._sub_agent_for(caller, outer, owned=True)
            sub_agent.prepare_resume(self.responses(caller, outer))

    def run(self, call: ToolCall) -> ToolOutcome:
        refusal = None if self.gate is None else self.gate.refusal(call)
        if refusal is not None:
            return Completed(refusal, refused=True)
        outer = call.key
        owned = self.owns(call.caller, outer)
        sub_agent = self._sub_agent_for(call.caller, outer, owned=owned)
        if sub_agent.state.interrupt_state.activated and not owned:
            return Completed(
                f"sub-agent {self.name!r} has a parked turn that belongs to another call",
                is_error=True,
            )
        if owned:
            result = sub_agent.resume(self.responses(call.caller, outer))
        else:
            result = sub_agent(_prompt_of(call.use.input))
        return self._outcome(call.caller, outer, sub_agent, result)

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        entry = caller.interrupt_state.context.get(SUB_AGENT_TURNS, {}).get(outer)
        if self.live is not None:
            if owned and entry is not None:
                # parked while it was ephemeral (a deploy turned preserve_context on): the call
                # stays an ephemeral one, its turn the caller's stored entry, until it ends
                moved = self.build()
                moved.state = continuation.restore(
                    entry, _owner(self.name, outer), moved.conversation_manager.type_name
                )
                return moved
            if owned and not self.live.state.interrupt_state.activated:
                raise LostTurnError(
                    f"sub-agent {self.name!r} (preserve_context=True) lost its parked turn in a "
                    "restart: give it a session store, or use preserve_context=False"
                )
            return self.live
        stored, parked = self.parked.get(outer, (None, None))
        if owned and parked is not None and entry == stored:
            return parked  # the caller's own parked turn, still in memory
        fresh = self.build()
        if owned and entry is None and self.parked_in_session is not None:
            # parked while it kept its history (a deploy turned preserve_context off)
            fresh.state = self.parked_in_session.copy()
            self.from_session = fresh
            return fresh
        if owned:
            if entry is None:
                raise continuation.ContinuationError(
                    f"no stored turn for call {outer!r} of sub-agent {self.name!r}"
                )
            fresh.state = continuation.restore(
                entry, _owner(self.name, outer), fresh.conversation_manager.type_name
            )
        return fresh

    def _outcome(
        self, caller: AgentState, outer: str, sub_agent: Agent, result: AgentResult
    ) -> ToolOutcome:
        turns = _turns(caller)
        turns.pop(outer, None)
        self.parked.pop(outer, None)
        if sub_agent is self.from_session:
            self.parked_in_session = self.from_session = None  # resumed: done with the session
            self.session_consumed()
        if result.stop_reason == "end_turn":
            return Completed(result.text or "")
        if sub_agent is not self.live:  # an ephemeral call (or one made before a deploy)
            turns[outer] = continuation.store(
                sub_agent.state, _owner(self.name, outer), sub_agent.conversation_manager.type_name
            )
            self.parked[outer] = (copy_json(turns[outer]), sub_agent)
        return Interrupted(
            tuple(
                Interrupt(
                    id=root_visible_id(outer, interrupt.id),
                    name=interrupt.name,
                    reason=interrupt.reason,
                )
                for interrupt in result.interrupts
            )
        )


def _owner(sub_agent: str, outer: str) -> dict[str, JSON]:
    return {"sub_agent": sub_agent, "call": outer}


def _turns(caller: AgentState) -> dict[str, JSON]:
    turns: dict[str, JSON] = caller.interrupt_state.context.setdefault(SUB_AGENT_TURNS, {})
    return turns


def _prompt_of(tool_input: JSON) -> str:
    if isinstance(tool_input, dict) and isinstance(tool_input.get(PROMPT_FIELD), str):
        return str(tool_input[PROMPT_FIELD])
    return str(tool_input)

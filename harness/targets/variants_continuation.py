"""Known-bad variants (``harness.targets.variants`` registers them) whose bug is in the parked
turn itself: where a call finds it, how its continuation is restored, and what a call leaves
behind (in public events, in the next call, in the parent's interrupt context when the loop
parks).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

from harness.reference import continuation
from harness.reference.agent import (
    PENDING_TOOL_CALL,
    RESULTS_SO_FAR,
    Agent,
    AgentResult,
    Completed,
    Interrupted,
    ToolCall,
    ToolOutcome,
    ToolUse,
    call_key,
)
from harness.reference.agent_as_tool import SUB_AGENT_TURNS, SubAgentTool, _prompt_of
from harness.reference.continuation import ContinuationError
from harness.reference.state import JSON, AgentState, Message, copy_json


def stored_turns(caller: AgentState) -> dict[str, JSON]:
    """The parent's stored ephemeral turns, keyed by outer call key."""
    turns: dict[str, JSON] = caller.interrupt_state.context.get(SUB_AGENT_TURNS, {})
    return turns


# --- where the parked turn comes from ---------------------------------------------------------


class SharedObjectTool(SubAgentTool):
    """An ephemeral sub-agent resumes only from the in-memory parked object.

    Differs from the reference in the source of the parked turn: with no parked object in this
    process (after a restart) the stored continuation is ignored and the call starts its turn
    over with the prompt (it asks again; the answer is not applied).
    """

    def _in_memory(self, outer: str) -> bool:
        return self.live is not None or outer in self.parked

    def prepare(self, caller: AgentState, use: ToolUse) -> None:
        if self._in_memory(call_key(caller, use)):
            super().prepare(caller, use)

    def run(self, call: ToolCall) -> ToolOutcome:
        outer = call.key
        if self._in_memory(outer):
            return super().run(call)
        sub_agent = self.build()
        result = sub_agent(_prompt_of(call.use.input))
        return self._outcome(call.caller, outer, sub_agent, result)


class RestoreHookTool(SubAgentTool):
    """The reference agent-as-tool, with ``after_restore`` called on every sub-agent restored
    from a stored continuation (not on the in-memory parked object, not on a live one)."""

    def after_restore(self, sub_agent: Agent) -> None:
        """Change the restored sub-agent; the reference changes nothing."""

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        sub_agent = super()._sub_agent_for(caller, outer, owned=owned)
        in_memory = self.parked.get(outer, (None, None))[1]
        if owned and self.live is None and sub_agent is not in_memory:
            self.after_restore(sub_agent)
        return sub_agent


class DropModelStateTool(RestoreHookTool):
    """Restoring a continuation drops model state (``model_state = {}``); nothing else differs."""

    def after_restore(self, sub_agent: Agent) -> None:
        sub_agent.state.model_state = {}


class DropConversationManagerStateTool(RestoreHookTool):
    """Restoring a continuation resets the conversation-manager state to the manager's initial
    state; nothing else differs."""

    def after_restore(self, sub_agent: Agent) -> None:
        sub_agent.state.conversation_manager_state = sub_agent.conversation_manager.initial_state()


class SwallowRestoreFailureTool(SubAgentTool):
    """A continuation that cannot be restored is swallowed.

    Differs from the reference in catching ``ContinuationError``: ``prepare`` lets the resume go
    ahead, and ``run`` drops the stored turn and completes the call with an error tool result, so
    the approval is lost, the interrupt is gone and nothing is raised.
    """

    def prepare(self, caller: AgentState, use: ToolUse) -> None:
        with contextlib.suppress(ContinuationError):
            super().prepare(caller, use)

    def run(self, call: ToolCall) -> ToolOutcome:
        try:
            return super().run(call)
        except ContinuationError as failure:
            stored_turns(call.caller).pop(call.key, None)
            return Completed(f"sub-agent {self.name!r} could not resume: {failure}", is_error=True)


def restore_every_turn(context: dict[str, JSON]) -> None:
    """Restore every sub-agent turn stored in an interrupt ``context``, and those stored within
    each, as a rebuild that loads the whole session at once does (the variant
    ``restores_every_turn_at_load``): the first that cannot be restored raises
    ``ContinuationError`` out of the rebuild, where the reference refuses only the answer to its
    call.  Each is checked as stored for itself (its own owner and conversation manager), so a
    turn restored for the wrong call still fails later, at its call, as in the reference."""
    turns = context.get(SUB_AGENT_TURNS) or {}
    assert isinstance(turns, dict)
    for entry in turns.values():
        parts = entry if isinstance(entry, dict) else {}
        manager = parts.get("conversation_manager")
        state = continuation.restore(entry, parts.get("owner"), str(manager))
        restore_every_turn(state.interrupt_state.context)


# --- what the call leaves behind ----------------------------------------------------------------


class ExposedContinuationTool(SubAgentTool):
    """The stored continuation appears in public events.

    Differs from the reference in ``_outcome``: when an ephemeral turn parks, an event carrying
    the stored entry is emitted.
    """

    def _outcome(
        self, caller: AgentState, outer: str, sub_agent: Agent, result: AgentResult
    ) -> ToolOutcome:
        outcome = super()._outcome(caller, outer, sub_agent, result)
        entry = stored_turns(caller).get(outer)
        if isinstance(outcome, Interrupted) and entry is not None:
            sub_agent.emit(
                {"type": "sub_agent_parked", "agent": sub_agent.name, "turn": copy_json(entry)}
            )
        return outcome


class RestoredTurnStreamedTool(SubAgentTool):
    """A resumed sub-agent's whole messages list is streamed to its caller's callbacks.

    Differs from the reference in ``run`` and ``_sub_agent_for``: as a call resumes its parked
    turn, an event carrying the sub-agent's messages is emitted, as a stream layer that hands the
    caller each state of the agent, not each new message, would (strands' tool stream events
    carry the restored list at every resume).  The turns written before the question, stored and
    restored, are published again.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.running = False  # within ``run``, where a resumed sub-agent is about to go on

    def run(self, call: ToolCall) -> ToolOutcome:
        self.running = True
        try:
            return super().run(call)
        finally:
            self.running = False

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        sub_agent = super()._sub_agent_for(caller, outer, owned=owned)
        if owned and self.running:
            messages = copy_json(sub_agent.state.messages)
            sub_agent.emit({"type": "tool_stream", "agent": sub_agent.name, "messages": messages})
        return sub_agent


class HistoryAccumulationTool(SubAgentTool):
    """An ephemeral sub-agent starts every new call from the messages its earlier calls left.

    Differs from the reference in the starting point of a new call: the reference builds the
    sub-agent empty; here the messages of the last completed call are put back first (as the SDK
    did when the reset baseline was captured from restored history), so the continuation grows
    with the number of earlier completed calls.  The baseline lives in this tool object, so it
    lasts as long as the tree (a restart starts it empty again).
    """

    @functools.cached_property
    def baseline(self) -> list[Message]:
        """The messages the last completed call left: where the next call starts."""
        return []

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        sub_agent = super()._sub_agent_for(caller, outer, owned=owned)
        if not owned and self.live is None:
            sub_agent.state.messages = copy_json(self.baseline)
        return sub_agent

    def _outcome(
        self, caller: AgentState, outer: str, sub_agent: Agent, result: AgentResult
    ) -> ToolOutcome:
        if result.stop_reason == "end_turn" and self.live is None:
            self.baseline = copy_json(sub_agent.state.messages)
        return super()._outcome(caller, outer, sub_agent, result)


class RebuildContextAgent(Agent):
    """The interrupt context is rebuilt wholesale when the loop parks.

    Differs from the reference in ``_run_tools``: after parking, only the loop's own keys
    (the pending tool call and the results so far) are kept, so the sub-agent turns that tools
    stored in the context are discarded.
    """

    def _run_tools(
        self, work: AgentState, tool_use_message: Message, results_so_far: list[JSON]
    ) -> list[JSON] | AgentResult:
        outcome = super()._run_tools(work, tool_use_message, results_so_far)
        if isinstance(outcome, AgentResult):
            context = work.interrupt_state.context
            work.interrupt_state.context = {
                key: context[key] for key in (PENDING_TOOL_CALL, RESULTS_SO_FAR)
            }
        return outcome


class ReplayTurnAgent(Agent):
    """A resumed turn is played again from its start instead of resumed where it parked.

    Differs from the reference in ``_run_tools``: on resume the results the parked turn already
    obtained are dropped, so every tool call of the parked model message runs again (an
    ordinary tool before the question included; a question gets its recorded answer back).
    """

    def _run_tools(
        self, work: AgentState, tool_use_message: Message, results_so_far: list[JSON]
    ) -> list[JSON] | AgentResult:
        del results_so_far
        return super()._run_tools(work, tool_use_message, [])


class DropRestoredResultAgent(Agent):
    """A restored turn is sent to the model without the last tool result it had parked with.

    Differs from the reference in ``_append`` while a parked turn resumes: of the results the
    turn obtained before its question (restored with it, ``RESULTS_SO_FAR``), the last is left
    out of the results message that completes the turn, so the model's next request carries a
    tool use with no result (the tool is not run again, and the results of the calls that asked
    all arrive).  The turn is resumed that way with or without a restart in between, so the
    restart-free control is broken at the same points and D and I6 see nothing: only a check of
    each request on its own (I16) does.
    """

    restored = 0  # results the resuming turn had parked with, until its results are appended

    def _loop(self, work: AgentState, *, resuming: bool) -> AgentResult:
        parked = work.interrupt_state.context.get(RESULTS_SO_FAR, []) if resuming else []
        self.restored = len(parked)
        return super()._loop(work, resuming=resuming)

    def _append(self, work: AgentState, message: Message) -> None:
        content = message.get("content")
        if self.restored and isinstance(content, list) and len(content) >= self.restored:
            lost = self.restored - 1  # the last result the turn parked with
            message = {**message, "content": content[:lost] + content[lost + 1 :]}
        self.restored = 0  # only the first message a resumed turn appends: its results
        super()._append(work, message)


class LastResultTwiceAgent(Agent):
    """The results of a model message that called several tools carry its last result twice.

    Differs from the reference in ``_run_tools``: once every call of a message that called two
    or more tools has its result (in one go, or on the resume that completes a parked turn),
    the last is handed back once more, as a parallel executor that collects the last call to
    finish again would.  Nothing runs twice and nothing is asked again; the restart-free
    control is broken at the same points, so only a check of each request on its own (I16)
    sees it.
    """

    def _run_tools(
        self, work: AgentState, tool_use_message: Message, results_so_far: list[JSON]
    ) -> list[JSON] | AgentResult:
        outcome = super()._run_tools(work, tool_use_message, results_so_far)
        if isinstance(outcome, AgentResult) or len(outcome) < 2:
            return outcome
        return [*outcome, outcome[-1]]

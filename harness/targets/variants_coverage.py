"""Known-bad variants (``harness.targets.variants`` registers them) whose bug sits in a shape the
coverage sample draws on purpose (``scenarios.strategies.coverage``), and that the regression
files and the ci sample before it never showed: state nobody read back, shapes nobody drew.

Each is the reference with one mistake a maintainer plausibly makes, said in its docstring;
everything else (naming, routing, the stored turn) is the reference's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from unicodedata import normalize

from fakes.model import ProviderError
from fakes.protected import APPROVE
from harness.reference.agent import Agent, AgentResult, Completed, ToolCall, ToolOutcome
from harness.reference.agent_as_tool import SubAgentTool
from harness.reference.continuation import ContinuationError
from harness.reference.conversation import SlidingWindow
from harness.reference.naming import (
    NotANestedId,
    split_root_visible_id,
    tool_interrupt_id,
)
from harness.reference.state import JSON, AgentState, Interrupt, Message, copy_json
from harness.targets.variants_continuation import HistoryAccumulationTool
from harness.targets.variants_routing import ApprovalsKeptAgent, rebuilt_as

# a call key (``harness.reference.agent.call_key``): the caller's model turns, the attempt, the id
KEY: Final = re.compile(r"(?P<turns>\d+)(?:r(?P<attempt>\d+))?\.(?P<id>.*)", re.DOTALL)


def _loose(key: str) -> str:
    """``key`` as a store keyed by normalized text keeps it: Unicode NFC."""
    return normalize("NFC", key)


class LooseAnswerLookupTool(SubAgentTool):
    """Picks a call's answers by its call key in Unicode NFC, as a store keyed by normalized
    text would: questions still go up under distinct names, but an answer to a call whose
    toolUseId is ``é`` (composed) also reaches the call ``e\u0301`` (decomposed), whose
    sub-agent asked under the same local id.  Only an answer shows it: raised questions look
    right.  Differs from the reference in ``responses`` only."""

    def responses(self, caller: AgentState, outer: str) -> dict[str, JSON]:
        found: dict[str, JSON] = {}
        for interrupt in caller.interrupt_state.interrupts:
            try:
                other, local_id = split_root_visible_id(interrupt.id)
            except NotANestedId:
                continue
            if interrupt.response is not None and _loose(other) == _loose(outer):
                found.setdefault(local_id, interrupt.response)
        return found


def _turn_and_id(outer: str) -> tuple[str, str]:
    """The caller's turn and the toolUseId of call key ``outer``, without its attempt."""
    matched = KEY.fullmatch(outer)
    return ("", outer) if matched is None else (matched["turns"], matched["id"])


class RetryContinuesParkedTool(SubAgentTool):
    """Keeps the sub-agent it restored from a stored turn (restored in ``prepare``, to be resumed
    in ``run`` without restoring it twice) under the call's toolUseId instead of the call key,
    and never drops it: a retry of that call, under the same toolUseId, is handed the first
    attempt's restored sub-agent, finished by then, and continues its history instead of
    starting anew.  Only a first attempt that parked, was restored from storage (a restart
    between its question and its answer) and then retried shows it; a turn resumed in memory
    is never kept.  Differs from the reference in ``_sub_agent_for`` only."""

    def __init__(self, name: str, build: Callable[[], Agent], **options: Any) -> None:
        super().__init__(name, build, **options)
        self.restored: dict[tuple[str, str], Agent] = {}

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        key = _turn_and_id(outer)
        if self.live is not None:
            return super()._sub_agent_for(caller, outer, owned=owned)
        if key in self.restored:
            return self.restored[key]
        in_memory = self.parked.get(outer, (None, None))[1]
        sub_agent = super()._sub_agent_for(caller, outer, owned=owned)
        if owned and sub_agent is not in_memory:
            self.restored[key] = sub_agent
        return sub_agent


class RefusedRestoreKeepsOneAgent(Agent):
    """When a stored turn cannot be restored, keeps only the first pending question of each call
    and drops the rest (as an SDK that re-raises "the" interrupt of a failed tool call would):
    the failure is loud and one question stays, so a call that asked once looks right; a call
    with several pending questions loses all but one.  Differs from the reference in
    ``prepare_resume`` only."""

    def prepare_resume(self, responses: Mapping[str, JSON]) -> None:
        try:
            super().prepare_resume(responses)
        except ContinuationError:
            parked = self.state.interrupt_state
            parked.interrupts = _first_of_each_call(parked.interrupts)
            raise


def _first_of_each_call(interrupts: list[Interrupt]) -> list[Interrupt]:
    kept: list[Interrupt] = []
    calls: set[str] = set()
    for interrupt in interrupts:
        try:
            call, _ = split_root_visible_id(interrupt.id)
        except NotANestedId:
            call = interrupt.id
        if interrupt.response is None and call in calls:
            continue
        calls.add(call)
        kept.append(interrupt)
    return kept


class GateApprovalStandsTool(SubAgentTool):
    """Takes a gate approved for a call as approved for the call's retries: a retried call of a
    gated sub-agent is called again without asking its gate (the approval is looked up by the
    toolUseId, not by the attempt), a standing approval the human never gave.  A denied gate is
    asked again, as it must be.  Differs from the reference in ``run`` only."""

    def run(self, call: ToolCall) -> ToolOutcome:
        gate = self.gate
        if gate is None or not _earlier_attempt_approved(call):
            return super().run(call)
        self.gate = None
        try:
            return super().run(call)
        finally:
            self.gate = gate


def _earlier_attempt_approved(call: ToolCall) -> bool:
    matched = KEY.fullmatch(call.key)
    if matched is None or matched["attempt"] is None:
        return False
    earlier = [f"{matched['turns']}.{matched['id']}"] + [
        f"{matched['turns']}r{n}.{matched['id']}" for n in range(1, int(matched["attempt"]))
    ]
    prefixes = tuple(tool_interrupt_id(key, "") for key in earlier)  # the gate's own questions
    return any(
        interrupt.response == APPROVE and interrupt.id.startswith(prefixes)
        for interrupt in call.caller.interrupt_state.interrupts
    )


class RestoreDropsStateTool(SubAgentTool):
    """Restores an ephemeral sub-agent's stored turn without its key/value state (as an adapter
    that rebuilds the sub-agent from its messages and interrupt state, and takes the rest for
    its initial configuration, would): the turn resumes, its questions and answers are right,
    but what its tools wrote to the agent's state before the question is gone.  Only state read
    back after a restart between the question and its answer shows it; a turn resumed in memory
    keeps its state.  Differs from the reference in ``_sub_agent_for`` only."""

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        in_memory = self.parked.get(outer, (None, None))[1]
        sub_agent = super()._sub_agent_for(caller, outer, owned=owned)
        if owned and self.live is None and sub_agent is not in_memory:
            sub_agent.state.state = self.build().state.state
        return sub_agent


class ParkedBySharedKeyTool(SubAgentTool):
    """Keeps the sub-agents parked in this process on the agent-tool object, by call key alone,
    and resumes the one parked under the call's key without asking whether the caller's stored
    turn is the one parked with it (one caller per object, as a maintainer thinking of one
    user per process would assume).  Two root sessions of one deployment calling the same tool
    under the same call key (each session's first model turn, the same toolUseId) then share
    one entry: the later parking replaces the earlier, and an answer in one session resumes the
    other session's sub-agent.  One session alone never shows it: a restart empties the map,
    and within one root every call key is the caller's own.  Differs from the reference in
    ``_sub_agent_for`` only."""

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        parked = self.parked.get(outer, (None, None))[1]
        if owned and self.live is None and parked is not None:
            return parked
        return super()._sub_agent_for(caller, outer, owned=owned)


class RestoreDropsUnusedWindowCountTool(SubAgentTool):
    """Restores an ephemeral sub-agent's stored turn without its window's count of model calls
    where the window trims before every model call (``per_turn`` 1), as an adapter that stores
    the count only where it decides when to trim would: the count starts again from 0 after a
    restart.  What the model is sent is the same (such a window trims at every call, whatever
    the count), so no request shows it; only a read of the window's state after a restart
    between the question and its answer does, or a later window that trims less often.
    Differs from the reference in ``_sub_agent_for`` only."""

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        in_memory = self.parked.get(outer, (None, None))[1]
        sub_agent = super()._sub_agent_for(caller, outer, owned=owned)
        window = sub_agent.conversation_manager
        every_call = isinstance(window, SlidingWindow) and window.per_turn == 1
        if owned and self.live is None and sub_agent is not in_memory and every_call:
            sub_agent.state.conversation_manager_state["model_call_count"] = 0
        return sub_agent


class CarriedOnTheToolTool(SubAgentTool):
    """Starts every new call of an ephemeral sub-agent from what its last call left (the part of
    its state ``CARRIED`` names), kept on the agent-tool object, as an agent tool that reuses
    one sub-agent object and resets not all of it between calls does (strands' ``as_tool``,
    ``harness.targets.strands``, resets only its messages).  Two root sessions of one
    deployment call the same agent-tool object, so one user's call starts from what the other
    user's left; a restart that rebuilds the agent tools starts clean, so a restart between the
    two calls hides it.  Differs from the reference in ``_sub_agent_for`` and ``_outcome``
    (what they keep) only."""

    CARRIED: str = "model_state"  # an ``AgentState`` field

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kept: JSON = None  # None: no call has left anything yet

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        sub_agent = super()._sub_agent_for(caller, outer, owned=owned)
        if not owned and self.live is None and self.kept is not None:
            setattr(sub_agent.state, self.CARRIED, copy_json(self.kept))
        return sub_agent

    def _outcome(
        self, caller: AgentState, outer: str, sub_agent: Agent, result: AgentResult
    ) -> ToolOutcome:
        if sub_agent is not self.live:
            self.kept = self.left(sub_agent, result)
        return super()._outcome(caller, outer, sub_agent, result)

    def left(self, sub_agent: Agent, result: AgentResult) -> JSON:
        """What the call ``result`` ended leaves for the next call."""
        return copy_json(getattr(sub_agent.state, self.CARRIED))


class ProviderStateOnTheToolTool(CarriedOnTheToolTool):
    """``CarriedOnTheToolTool`` for the provider's conversation (the model state: the last
    response id): a new call sends the previous call's response id, another user's too."""

    CARRIED = "model_state"


class AgentStateOnTheToolTool(CarriedOnTheToolTool):
    """``CarriedOnTheToolTool`` for the sub-agent's key/value state (what its tools wrote): a
    new call reads what the previous call wrote, another user's too."""

    CARRIED = "state"


class ConversationOnTheToolTool(CarriedOnTheToolTool):
    """``CarriedOnTheToolTool`` for the whole conversation: the messages and the provider state
    (the last response id) together, as an agent tool that resets neither between calls does.
    A stateful provider then takes the new call's first request as a follow-up of the
    conversation it knows, so nothing refuses the carried id, where the provider refuses an id
    carried alone (``ProviderStateOnTheToolTool``)."""

    CARRIED = "messages"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kept_state: JSON = None  # the provider state the last call left, beside its messages

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        sub_agent = super()._sub_agent_for(caller, outer, owned=owned)
        if not owned and self.live is None and self.kept is not None:
            sub_agent.state.model_state = copy_json(self.kept_state)
        return sub_agent

    def left(self, sub_agent: Agent, result: AgentResult) -> JSON:
        self.kept_state = copy_json(sub_agent.state.model_state)
        return super().left(sub_agent, result)


class ParkedMessagesOnTheToolTool(CarriedOnTheToolTool):
    """``CarriedOnTheToolTool`` for the messages, cleared when a call ends rather than when one
    starts: a call that parked (its question pending) leaves its messages, and the next call,
    another user's too, starts from that conversation."""

    CARRIED = "messages"

    def left(self, sub_agent: Agent, result: AgentResult) -> JSON:
        if result.stop_reason == "end_turn":
            return []  # cleared at the end of a call
        return super().left(sub_agent, result)


class FailureAsAResult(SubAgentTool):
    """An agent tool that hands what its sub-agent failed with (a provider's refusal) to the
    caller as the call's error result, as strands' agent tool does ("Agent error: ..."), rather
    than failing the caller's step: the caller goes on without the call's questions.  Mixed
    into a variant's tool, it differs from it in ``run`` only."""

    def run(self, call: ToolCall) -> ToolOutcome:
        try:
            return super().run(call)
        except ProviderError as failure:
            return Completed(f"Agent error: {failure}", is_error=True)


class ProviderStateOnTheToolAsAResultTool(FailureAsAResult, ProviderStateOnTheToolTool):
    """``ProviderStateOnTheToolTool`` handing its failures to the caller (``FailureAsAResult``):
    the provider refuses the carried response id, and the caller goes on."""


class HistoryAccumulationAsAResultTool(FailureAsAResult, HistoryAccumulationTool):
    """``HistoryAccumulationTool`` handing its failures to the caller (``FailureAsAResult``): a
    stateful provider refuses the follow-up the earlier calls' messages make of a new call's
    first request, which carries no response id, and the caller goes on."""


class CallerProviderStateTool(SubAgentTool):
    """An ephemeral sub-agent's new call starts from its caller's provider state (the caller's
    last response id), as an agent tool that hands the run's provider settings down to the
    sub-agent's run would: the sub-agent's first request continues its caller's conversation.

    Differs from the reference in ``_sub_agent_for`` for a new call of an ephemeral sub-agent
    only: the fresh sub-agent is given a copy of the caller's model state."""

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        sub_agent = super()._sub_agent_for(caller, outer, owned=owned)
        if not owned and self.live is None and caller.model_state:
            sub_agent.state.model_state = copy_json(caller.model_state)
        return sub_agent


@dataclass(frozen=True)
class CountedTwice(SlidingWindow):
    """A sliding window whose count of model calls goes up by two at each call."""

    def before_model_call(
        self, messages: list[Message], state: dict[str, JSON]
    ) -> tuple[list[Message], dict[str, JSON]]:
        kept, after = super().before_model_call(messages, state)
        return kept, after | {"model_call_count": int(after["model_call_count"]) + 1}


class WindowCountedTwiceTool(SubAgentTool):
    """A sub-agent's sliding window counts each of its model calls twice, as a window registered
    both as the agent's conversation manager and as one of its hook providers would (each
    registration counts the call): its lookups read twice the calls it made, and it trims at
    other calls than a window counting once.

    Differs from the reference in ``_sub_agent_for`` only: the sub-agent's window is one that
    counts twice."""

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        sub_agent = super()._sub_agent_for(caller, outer, owned=owned)
        window = sub_agent.conversation_manager
        if isinstance(window, SlidingWindow) and not isinstance(window, CountedTwice):
            sub_agent.conversation_manager = CountedTwice(window.size, window.per_turn)
        return sub_agent


class ApprovalsOnTheToolTool(SubAgentTool):
    """An ephemeral sub-agent's ordinary tools' answers are kept on the agent-tool object, by
    the sub-agent's toolUseId, tool and question: a later call's sub-agent (another root
    session's too: two users of one deployment call the same agent tool) runs a tool under the
    same toolUseId without asking, as ``ApprovalsKeptAgent`` keeps a root's.  A restart that
    rebuilds the agent tools starts clean.  Differs from the reference in what ``build`` makes
    (an ``ApprovalsKeptAgent`` reading the tool's answers) and in ``_outcome`` (what it keeps)."""

    def __init__(self, name: str, build: Callable[[], Agent], **kwargs: Any) -> None:
        self.kept: dict[tuple[str, str, str], JSON] = {}
        super().__init__(name, lambda: self._keeping(build()), **kwargs)

    def _keeping(self, agent: Agent) -> Agent:
        keeping = rebuilt_as(ApprovalsKeptAgent, agent)
        keeping.kept = self.kept  # one mapping, the tool's
        return keeping

    def _outcome(
        self, caller: AgentState, outer: str, sub_agent: Agent, result: AgentResult
    ) -> ToolOutcome:
        # a preserve_context sub-agent is the reference's, handed in built (``live``): it keeps none
        if isinstance(sub_agent, ApprovalsKeptAgent):
            self.kept.update(sub_agent.answered)
        return super()._outcome(caller, outer, sub_agent, result)

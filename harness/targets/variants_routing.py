"""Known-bad variants (``harness.targets.variants`` registers them) whose bug is in routing:
whether a call owns a parked turn, which answers it is given, under which ids its interrupts go
up, which call a result goes back to.  Each overrides the reference's seams on ``SubAgentTool``
(``owns``, ``responses``) or what goes up (``_outcome``, the loop's ``_run_tools``), never a
copy of the ``prepare`` and ``run`` that call them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, TypeVar

from fakes.protected import question_name
from harness.reference import routing
from harness.reference.agent import (
    Agent,
    AgentError,
    AgentResult,
    Completed,
    Interrupted,
    InterruptRaised,
    ToolCall,
    ToolOutcome,
    ToolUse,
    call_key,
    tool_uses,
)
from harness.reference.agent_as_tool import SubAgentTool
from harness.reference.naming import (
    NotANestedId,
    root_visible_id,
    split_root_visible_id,
    tool_interrupt_id,
)
from harness.reference.state import JSON, AgentState, Interrupt, Message
from harness.targets.variants_continuation import stored_turns


def _holds_parked_turn(tool: SubAgentTool, caller: AgentState, outer: str) -> bool:
    """Whether the sub-agent's own state is parked for this call, whoever the parent says owns it:
    the live sub-agent is parked, or an ephemeral turn is stored under this call's key."""
    if tool.live is not None:
        return tool.live.state.interrupt_state.activated
    return outer in stored_turns(caller)


# --- routing: the reference's two decisions, ``owns`` and ``responses`` ------------------------


class AnswersByLocalIdTool(SubAgentTool):
    """The reference agent-as-tool, remembering the sub-agent each call last found, so that
    ``responses`` can match answers against that sub-agent's own questions.

    The reference finds a call's sub-agent (``_sub_agent_for``) just before it asks for the call's
    answers, in ``prepare`` and in ``run``, so the one remembered is the one that resumes.
    """

    @functools.cached_property
    def found(self) -> dict[str, Agent]:
        """The sub-agent each call last found, by outer call key."""
        return {}

    def _sub_agent_for(self, caller: AgentState, outer: str, *, owned: bool) -> Agent:
        sub_agent = super()._sub_agent_for(caller, outer, owned=owned)
        self.found[outer] = sub_agent
        return sub_agent

    def asked(self, outer: str) -> set[str]:
        """The local ids of the questions parked in the call's sub-agent."""
        return {interrupt.id for interrupt in self.found[outer].state.interrupt_state.interrupts}


class NoNamespacingTool(AnswersByLocalIdTool):
    """Interrupts travel up under their local id, and answers come down by local id to every call.

    Differs from the reference in three places: ``_outcome`` hands the parent the local ids (the
    reference's ``root_visible_id`` undone); a call resumes when its sub-agent holds a parked turn
    (un-renamed ids name no call); and it is given every answered parent interrupt whose id is one
    of its sub-agent's local ids, whoever raised it.
    """

    def owns(self, caller: AgentState, outer: str) -> bool:
        return _holds_parked_turn(self, caller, outer)

    def responses(self, caller: AgentState, outer: str) -> dict[str, JSON]:
        asked = self.asked(outer)
        return {
            interrupt.id: interrupt.response
            for interrupt in caller.interrupt_state.interrupts
            if interrupt.response is not None and interrupt.id in asked
        }

    def _outcome(
        self, caller: AgentState, outer: str, sub_agent: Agent, result: AgentResult
    ) -> ToolOutcome:
        outcome = super()._outcome(caller, outer, sub_agent, result)
        if isinstance(outcome, Completed):
            return outcome
        return Interrupted(
            tuple(
                replace(interrupt, id=split_root_visible_id(interrupt.id)[1])
                for interrupt in outcome.interrupts
            )
        )


class ForwardToAllTool(AnswersByLocalIdTool):
    """Names go up namespaced, but an answer comes down to every call holding its local id.

    Differs from the reference in ``responses``: the outer call of an answered interrupt (its
    root-visible prefix) is not compared with this call's, only its local id with the sub-agent's
    questions.
    """

    def responses(self, caller: AgentState, outer: str) -> dict[str, JSON]:
        asked = self.asked(outer)
        forwarded: dict[str, JSON] = {}
        for interrupt in caller.interrupt_state.interrupts:
            if interrupt.response is None:
                continue
            try:
                _, local_id = split_root_visible_id(interrupt.id)
            except NotANestedId:
                continue
            if local_id in asked:
                forwarded[local_id] = interrupt.response
        return forwarded


class NoOwnershipCheckTool(SubAgentTool):
    """A call resumes whenever the sub-agent's own state is parked.

    Differs from the reference in ``owns``: whether the parent holds an interrupt under this
    call's prefix is not asked, so a second call of a parked preserve_context sub-agent takes the
    first call's turn.
    """

    def owns(self, caller: AgentState, outer: str) -> bool:
        return _holds_parked_turn(self, caller, outer)


class ResumeByResponsesTool(SubAgentTool):
    """Whether a call resumes is decided by the answers routed to it.

    Differs from the reference in ``owns``: a call resumes only when it has answers, so an
    unanswered call starts over (an ephemeral sub-agent asks again from scratch; a parked
    preserve_context sub-agent is treated as a new call and its question is dropped).
    """

    def owns(self, caller: AgentState, outer: str) -> bool:
        return bool(self.responses(caller, outer))


class SwapTwinAnswersTool(SubAgentTool):
    """On resume, a call is given the answers meant for its twin: the next call of the same
    sub-agent in the parent's turn (the last one's go to the first).

    Differs from the reference in ``responses``: the answers are read under the twin call's key
    instead of this call's, as an implementation keying parked calls by sub-agent and position
    (not by call) would after a restart.
    """

    def responses(self, caller: AgentState, outer: str) -> dict[str, JSON]:
        twins = self._calls_in_turn(caller)
        if outer not in twins or len(twins) < 2:
            return super().responses(caller, outer)
        twin = twins[(twins.index(outer) + 1) % len(twins)]
        return routing.responses_for_call(caller.interrupt_state.interrupts, twin)

    def _calls_in_turn(self, caller: AgentState) -> list[str]:
        """The keys of this sub-agent's calls in the parent's latest model turn, in order."""
        last = next(
            (message for message in reversed(caller.messages) if message["role"] == "assistant"),
            None,
        )
        blocks = [] if last is None else last["content"]
        return [
            call_key(caller, ToolUse(use["toolUseId"], use["name"], use["input"]))
            for use in (block["toolUse"] for block in blocks if "toolUse" in block)
            if use["name"] == self.name
        ]


class SwapTwinResultsAgent(Agent):
    """After a resume, the results of twin calls (calls of the same sub-agent in one model turn)
    are handed back crossed: each call gets the next twin's result (the last one the first's).

    Differs from the reference in ``_run_tools``, for the turn a resume completes: the results
    are paired with the turn's calls by sub-agent and position after they are collected, as an
    implementation that stores finished results by sub-agent (not by toolUseId) and hands them
    back in another order would.
    """

    resuming = False

    def resume(self, responses: Mapping[str, JSON]) -> AgentResult:
        self.resuming = True
        try:
            return super().resume(responses)
        finally:
            self.resuming = False

    def _run_tools(
        self, work: AgentState, tool_use_message: Message, results_so_far: list[JSON]
    ) -> list[JSON] | AgentResult:
        outcome = super()._run_tools(work, tool_use_message, results_so_far)
        if not self.resuming or isinstance(outcome, AgentResult):
            return outcome
        self.resuming = False  # only the turn the resume completes
        return _crossed(outcome, tool_use_message, self.tools)


def _crossed(results: list[JSON], message: Message, tools: Mapping[str, object]) -> list[JSON]:
    """``results`` with the contents of each sub-agent's twin calls rotated by one."""
    by_id = {result["toolResult"]["toolUseId"]: result for result in results}
    twins: dict[str, list[str]] = {}
    for block in message["content"]:
        use = block.get("toolUse")
        if use is not None and isinstance(tools.get(use["name"]), SubAgentTool):
            twins.setdefault(use["name"], []).append(use["toolUseId"])
    contents = {key: by_id[key]["toolResult"]["content"] for key in by_id}
    for ids in twins.values():
        for position, tool_use_id in enumerate(ids):
            twin = ids[(position + 1) % len(ids)]
            if len(ids) > 1 and tool_use_id in by_id and twin in contents:
                by_id[tool_use_id]["toolResult"]["content"] = contents[twin]
    return results


class BusySubAgentTool(SubAgentTool):
    """An ephemeral sub-agent tool holds one sub-agent at a time: while one call's turn is
    parked in this process, every other call of the tool is turned away with an error result
    and never asks its questions, as strands' agent tool turns a second call of one agent away
    ("already processing a request").

    Differs from the reference in ``run``, before it: a call the caller does not own a parked
    turn under is turned away where another call's turn is parked in memory (a rebuilt tool,
    after a restart, holds none).
    """

    def run(self, call: ToolCall) -> ToolOutcome:
        busy = any(key != call.key for key in self.parked)
        if self.live is None and busy and not self.owns(call.caller, call.key):
            return Completed(f"sub-agent {self.name!r} is busy with another call", is_error=True)
        return super().run(call)


class BusyAcrossSessionsTool(SubAgentTool):
    """An ephemeral sub-agent tool holds one sub-agent at a time, whoever calls it: while a
    call's turn is parked in this process, a call that resumes no turn of its own is turned away
    with an error result and never asks, a call under the same toolUseId from another root
    session too (``BusySubAgentTool`` lets a call under the parked call's key through).

    Differs from the reference in ``run``, before it, as ``BusySubAgentTool`` does.
    """

    def run(self, call: ToolCall) -> ToolOutcome:
        busy = bool(self.parked)
        if self.live is None and busy and not self.owns(call.caller, call.key):
            return Completed(f"sub-agent {self.name!r} is busy with another call", is_error=True)
        return super().run(call)


class OneCallPerMessageTool(SubAgentTool):
    """An ephemeral sub-agent tool runs one call of a model message at a time, and the message's
    calls all start at once: every call of it after the first in one message is turned away with
    an error result and never asks, whether the first asked or answered at once, as strands runs
    a turn's tool calls concurrently and its agent tool turns away the one that finds the agent
    running ("already processing a request").

    Differs from the reference in ``run``, before it: a call after the first of this tool in its
    model message is turned away, unless it resumes a turn of its own.
    """

    def run(self, call: ToolCall) -> ToolOutcome:
        mine = [use for use in _message_of(call) if use.name == self.name]
        later = bool(mine) and mine[0] != call.use
        if self.live is None and later and not self.owns(call.caller, call.key):
            return Completed(f"sub-agent {self.name!r} is running another call", is_error=True)
        return super().run(call)


def _message_of(call: ToolCall) -> list[ToolUse]:
    """The calls of the model message ``call`` is one of (the caller's latest that makes it), in
    the order they start."""
    for message in reversed(call.caller.messages):
        uses = tool_uses(message)
        if call.use in uses:
            return uses
    return []


# --- answers: which question an answer is for ------------------------------------------------


class ReuseStaleAnswersAgent(Agent):
    """An answer naming no pending question is not refused: it answers the question now asked
    at the same place (the same call, a later question), else it is dropped silently.

    Differs from the reference in ``prepare_resume`` and ``resume``: the answers are remapped
    before the reference checks them, as LangGraph's resume map falls back to a task's next
    interrupt and ignores keys naming none.
    """

    def _remapped(self, responses: Mapping[str, JSON]) -> dict[str, JSON]:
        parked = [interrupt.id for interrupt in self.state.interrupt_state.pending]
        remapped: dict[str, JSON] = {}
        for interrupt_id, response in responses.items():
            if interrupt_id in parked:
                remapped[interrupt_id] = response
                continue
            place = interrupt_id.rpartition(":")[0]
            for other in parked:
                if other.rpartition(":")[0] == place and other not in responses:
                    remapped[other] = response
                    break
        return remapped

    def prepare_resume(self, responses: Mapping[str, JSON]) -> None:
        if self.state.interrupt_state.activated:
            super().prepare_resume(self._remapped(responses))

    def resume(self, responses: Mapping[str, JSON]) -> AgentResult:
        if not self.state.interrupt_state.activated:  # nothing parked: the turn's last answer
            last = self.state.messages[-1] if self.state.messages else {"content": []}
            text = "".join(block["text"] for block in last["content"] if "text" in block)
            return AgentResult("end_turn", text, ())
        return super().resume(self._remapped(responses))


# a call key's turn and attempt inside a question's id (``sub:3.call-1:tool:3r1.t1:approval``):
# what a table keyed by toolUseIds alone leaves out
_TURN_OF_A_KEY: Final = re.compile(r"(sub|tool):\d+(?:r\d+)?\.")


def _waiting(state: AgentState) -> list[str]:
    """The ids of the questions ``state``'s parked turn waits on, in order; none where nothing
    is parked."""
    parked = state.interrupt_state
    return [interrupt.id for interrupt in parked.pending] if parked.activated else []


def _by_call_ids(interrupt_id: str) -> str:
    """``interrupt_id`` without its calls' turns and attempts: its toolUseIds and its name."""
    return _TURN_OF_A_KEY.sub(r"\1:", interrupt_id)


class RoutesKeptInMemoryAgent(Agent):
    """An answer naming no pending question is looked up in a table, kept on the agent object, of
    the questions it took answers for: found there, it answers the question now pending under the
    same toolUseIds and name (a later turn's call under the same ids), as an SDK that routes a
    re-sent answer by tool call id through a table in memory.  A rebuilt agent keeps nothing, so
    after a restart the re-send is refused as the reference refuses it: only the run without
    restarts takes it.

    Differs from the reference in ``prepare_resume`` and ``resume``: the answers are remapped
    before the reference checks them, and the ids carried out are kept.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.carried: set[str] = set()  # the ids this object took answers for

    def _remapped(self, responses: Mapping[str, JSON]) -> dict[str, JSON]:
        pending = _waiting(self.state)
        remapped: dict[str, JSON] = {}
        for interrupt_id, response in responses.items():
            if interrupt_id not in pending and interrupt_id in self.carried:
                same = _by_call_ids(interrupt_id)
                for other in pending:
                    if _by_call_ids(other) == same and other not in responses:
                        interrupt_id = other
                        break
            remapped[interrupt_id] = response
        return remapped

    def prepare_resume(self, responses: Mapping[str, JSON]) -> None:
        super().prepare_resume(self._remapped(responses))

    def resume(self, responses: Mapping[str, JSON]) -> AgentResult:
        remapped = self._remapped(responses)
        result = super().resume(remapped)
        self.carried |= set(remapped)
        return result


class ResumeRunsThePromptAgainAgent(Agent):
    """An answer that finds no parked turn (the turn it answered has ended) runs the turn's
    prompt again, as an SDK that resumes a finished run by starting it over from its last user
    message: the questions that turn asked are asked again, the answer's own are lost.  Stored or
    in memory, the same: a restart changes nothing of it.

    Differs from the reference in ``prepare_resume`` and ``resume`` where nothing is parked.
    """

    def _last_prompt(self) -> str | None:
        for message in reversed(self.state.messages):
            texts = [block["text"] for block in message["content"] if "text" in block]
            if message["role"] == "user" and texts:
                return "".join(texts)
        return None

    def prepare_resume(self, responses: Mapping[str, JSON]) -> None:
        if self.state.interrupt_state.activated or self._last_prompt() is None:
            super().prepare_resume(responses)

    def resume(self, responses: Mapping[str, JSON]) -> AgentResult:
        prompt = self._last_prompt()
        if self.state.interrupt_state.activated or prompt is None:
            return super().resume(responses)
        return self(prompt)


class StaleAnswerRefusedOnceCarriedOutAgent(ReuseStaleAnswersAgent):
    """An answer naming no pending question is checked only once it was carried out: it answers
    the question now asked at its place, as ``ReuseStaleAnswersAgent``'s does, the turn goes on,
    and then the answer is refused loudly and the turn's state thrown away, while what the turn
    ran stays run, as an SDK that checks a resume map when it saves the turn it resumed.  Its
    questions are as they were; its actions ran without their approval.

    Differs from the reference in ``prepare_resume`` (no check where an answer is stale) and in
    ``resume`` there (the turn carried out, then its state dropped and the answer refused).
    """

    def _stale(self, responses: Mapping[str, JSON]) -> list[str]:
        return sorted(set(responses) - set(_waiting(self.state)))

    def prepare_resume(self, responses: Mapping[str, JSON]) -> None:
        if not self._stale(responses):
            super().prepare_resume(responses)

    def resume(self, responses: Mapping[str, JSON]) -> AgentResult:
        stale = self._stale(responses)
        if not stale:
            return super().resume(responses)
        kept = self.state
        try:
            super().resume(responses)
        finally:
            self.state = kept
        raise AgentError(f"agent {self.name!r} has no pending interrupt {stale}")


class StaleAnswerEndsTheTurnAgent(Agent):
    """An answer naming no pending question is dropped silently, and the step says the turn
    ended: no final answer, no error, while whatever the turn asked still waits.

    Differs from the reference in ``prepare_resume`` and ``resume``: where the reference refuses
    such an answer loudly, this one takes it for a retry of an answer already carried out and
    ends there, as ADK's confirmation processor drops a confirmation it already consumed and
    ends the invocation (flows/llm_flows/tools/_confirmation.py).  The questions stay parked, so
    a later answer to them still works.
    """

    def _stale(self, responses: Mapping[str, JSON]) -> bool:
        return bool(responses) and not set(responses) & set(_waiting(self.state))

    def prepare_resume(self, responses: Mapping[str, JSON]) -> None:
        if not self._stale(responses):
            super().prepare_resume(responses)

    def resume(self, responses: Mapping[str, JSON]) -> AgentResult:
        if not self._stale(responses):
            return super().resume(responses)
        parked = self.state.interrupt_state
        return AgentResult("end_turn", None, tuple(parked.pending) if parked.activated else ())


class StaleAnswerFailsItsCallAgent(Agent):
    """An answer to a sub-agent's question already answered in this turn is not refused while
    the call that asked is parked again: it goes down to that call, whose resume finds no such
    question pending and fails.  The call ends with an error result, and every question it had
    asked since is lost with it.

    Differs from the reference in ``prepare_resume``, ``resume`` and ``_run_one``: the turn
    remembers the questions answered in it (in its parked context, ``ANSWERED``), and an answer
    to one of them whose call is parked again is kept for that call, where the reference refuses
    it, as strands (1.59 to 1.62) keeps a turn's answered interrupts in its interrupt state,
    takes an answer to one again and forwards it to the agent tool, whose sub-agent no longer
    knows the id and raises (``no interrupt found``).
    """

    ANSWERED = "answered_in_this_turn"
    failing: tuple[str, ...] = ()  # the calls a stale answer goes down to, in this resume

    def _stale(self, responses: Mapping[str, JSON]) -> tuple[dict[str, JSON], tuple[str, ...]]:
        """The answers that are not stale, and the calls (outer keys) the stale ones name."""
        parked = self.state.interrupt_state
        if not parked.activated:
            return dict(responses), ()
        answered = set(parked.context.get(self.ANSWERED, []))
        kept: dict[str, JSON] = {}
        calls: list[str] = []
        for interrupt_id, response in responses.items():
            try:
                outer, _ = split_root_visible_id(interrupt_id)
            except NotANestedId:
                outer = ""
            if interrupt_id in answered and routing.owns_pending_turn(parked.pending, outer):
                calls.append(outer)
            else:
                kept[interrupt_id] = response
        return kept, tuple(calls)

    def prepare_resume(self, responses: Mapping[str, JSON]) -> None:
        super().prepare_resume(self._stale(responses)[0])

    def resume(self, responses: Mapping[str, JSON]) -> AgentResult:
        kept, self.failing = self._stale(responses)
        answered = [*self.state.interrupt_state.context.get(self.ANSWERED, []), *kept]
        try:
            result = super().resume(kept)
        finally:
            self.failing = ()
        if self.state.interrupt_state.activated:  # parked again: the turn goes on
            self.state.interrupt_state.context[self.ANSWERED] = answered
        return result

    def _run_one(self, call: ToolCall) -> ToolOutcome:
        if call.key in self.failing:
            return Completed(
                f"sub-agent call {call.key!r} has no pending question for the answer it was given",
                is_error=True,
            )
        return super()._run_one(call)


# --- naming: the call key a call's questions go up under ---------------------------------------

KEY_LIMIT = 64  # characters of a call key the truncating variant keeps


class TruncatedIdsTool(SubAgentTool):
    """A call's questions go up under its call key cut to ``KEY_LIMIT`` characters (as a store
    with a short key column would keep it), and answers come down to it by the cut key.

    Differs from the reference in three places: ``owns`` and ``responses`` compare the parent's
    interrupts with the cut key, and ``_outcome`` names the sub-agent's questions under it.  Ids
    up to ``KEY_LIMIT`` characters are unaffected; two long toolUseIds alike in their first
    characters give their calls one key, so their questions share root-visible ids and each call
    takes the other's answers.
    """

    def owns(self, caller: AgentState, outer: str) -> bool:
        return super().owns(caller, outer[:KEY_LIMIT])

    def responses(self, caller: AgentState, outer: str) -> dict[str, JSON]:
        return super().responses(caller, outer[:KEY_LIMIT])

    def _outcome(
        self, caller: AgentState, outer: str, sub_agent: Agent, result: AgentResult
    ) -> ToolOutcome:
        outcome = super()._outcome(caller, outer, sub_agent, result)
        if isinstance(outcome, Completed):
            return outcome
        return Interrupted(
            tuple(
                replace(interrupt, id=_cut(interrupt.id, outer)) for interrupt in outcome.interrupts
            )
        )


def _cut(nested_id: str, outer: str) -> str:
    """``nested_id`` named under ``outer`` cut to ``KEY_LIMIT`` characters."""
    _, local_id = split_root_visible_id(nested_id)
    return root_visible_id(outer[:KEY_LIMIT], local_id)


class CallNamedQuestionsAgent(Agent):
    """An ordinary tool's questions are named by its call alone: an action that asks twice asks
    its second question under the id its first was shown under, the two told apart by their
    names only, as an SDK that names an interrupt by the tool call that raised it.

    Differs from the reference in ``_run_one`` for a tool that is no agent tool: the call runs
    as a ``_CallNamed`` one.  A sub-agent call, and a gate, ask as the reference's do.
    """

    def _run_one(self, call: ToolCall) -> ToolOutcome:
        if isinstance(self.tools.get(call.use.name), SubAgentTool):
            return super()._run_one(call)
        named = _CallNamed(use=call.use, caller=call.caller, emit=call.emit)
        named.consulted = call.consulted  # the loop reads what the call consulted off its own
        return super()._run_one(named)


class _CallNamed(ToolCall):
    def interrupt(self, name: str, reason: JSON) -> JSON:
        """The reference's, every question under the id of the call's first
        (``question_name(1)``); an answer is found by that id and the question's name."""
        interrupt_id = tool_interrupt_id(self.key, question_name(1))
        for interrupt in self.caller.interrupt_state.interrupts:
            answered = interrupt.response is not None
            if interrupt.id == interrupt_id and interrupt.name == name and answered:
                self.consulted.append(interrupt)
                return interrupt.response
        raise InterruptRaised(Interrupt(id=interrupt_id, name=name, reason=reason))


Built = TypeVar("Built", bound=Agent)


def rebuilt_as(agent_class: type[Built], agent: Agent) -> Built:
    """``agent`` built again from its parts as an ``agent_class`` (a variant's agent)."""
    return agent_class(
        name=agent.name,
        model=agent.model,
        tools=list(agent.tools.values()),
        conversation_manager=agent.conversation_manager,
        state=agent.state,
        emit=agent.emit,
        retries=agent.retries,
    )


class ApprovalsKeptAgent(Agent):
    """An ordinary tool's answers are kept on the agent object, by the call's toolUseId, its tool
    and the question, for the turns after the one that asked: a later prompt's call under the
    same toolUseId runs that tool without asking, as an SDK that caches a human's decisions by
    tool call id in memory.  A rebuilt agent keeps nothing.

    Differs from the reference in ``__call__`` (a new turn keeps the answers of the one before)
    and in ``_run_one`` for a tool that is no agent tool: the call runs as a ``_Kept`` one.  A
    call of the turn that asked, a retry of it too, asks as the reference's does.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kept: dict[tuple[str, str, str], JSON] = {}  # of the turns before this one
        self.answered: dict[tuple[str, str, str], JSON] = {}  # in this turn

    def __call__(self, prompt: str) -> AgentResult:
        self.kept |= self.answered
        self.answered = {}
        return super().__call__(prompt)

    def _run_one(self, call: ToolCall) -> ToolOutcome:
        if isinstance(self.tools.get(call.use.name), SubAgentTool):
            return super()._run_one(call)
        kept = _Kept(use=call.use, caller=call.caller, emit=call.emit, kept=self.kept)
        kept.consulted = call.consulted  # the loop reads what the call consulted off its own
        outcome = super()._run_one(kept)
        for interrupt in call.consulted:
            key = (call.use.tool_use_id, call.use.name, interrupt.name)
            self.answered[key] = interrupt.response
        return outcome


@dataclass
class _Kept(ToolCall):
    kept: Mapping[tuple[str, str, str], JSON] = field(default_factory=dict)

    def interrupt(self, name: str, reason: JSON) -> JSON:
        """The reference's, else the answer kept from an earlier turn for this toolUseId, tool
        and question."""
        try:
            return super().interrupt(name, reason)
        except InterruptRaised:
            key = (self.use.tool_use_id, self.use.name, name)
            if key in self.kept:
                return self.kept[key]
            raise


class CrossedInputsAgent(Agent):
    """The calls of one model message to different sub-agents are handed each other's inputs:
    each sub-agent is asked the prompt of the next such call (the last the first's).

    Differs from the reference in ``_run_tools`` when a model message is first carried out (not
    when a resume completes it): its sub-agent calls' inputs are rotated before they run, as a
    parallel executor that pairs calls with inputs out of order would.  The calls, their ids and
    the questions they ask are the same, so only the prompt each sub-agent's model is sent (O)
    differs; the message parked with a question is the one carried out, so a resume goes on with
    the same inputs.
    """

    completing = False  # while a resume completes the message it parked with

    def _loop(self, work: AgentState, *, resuming: bool) -> AgentResult:
        self.completing = resuming
        return super()._loop(work, resuming=resuming)

    def _run_tools(
        self, work: AgentState, tool_use_message: Message, results_so_far: list[JSON]
    ) -> list[JSON] | AgentResult:
        if not self.completing:
            tool_use_message = _inputs_crossed(tool_use_message, self.tools)
        self.completing = False
        return super()._run_tools(work, tool_use_message, results_so_far)


def _inputs_crossed(message: Message, tools: Mapping[str, object]) -> Message:
    """``message`` with the inputs of its calls to sub-agents rotated by one, where two or more
    different sub-agents are called."""
    calls = [
        position
        for position, block in enumerate(message["content"])
        if "toolUse" in block and isinstance(tools.get(block["toolUse"]["name"]), SubAgentTool)
    ]
    named = {message["content"][position]["toolUse"]["name"] for position in calls}
    if len(named) < 2:
        return message
    content = list(message["content"])
    for place, position in enumerate(calls):
        given = message["content"][calls[(place + 1) % len(calls)]]["toolUse"]["input"]
        use = content[position]["toolUse"]
        content[position] = {**content[position], "toolUse": {**use, "input": given}}
    return {**message, "content": content}


class GatedNestedRaisedAsItsOwnTool(SubAgentTool):
    """A gated call's agent tool raises each question its sub-agent asks again as the call's
    own, under the id the gate's question has (``naming.tool_interrupt_id`` of the call's
    toolUseId and the question's name), as an approval wrapper around an agent tool would that
    catches the sub-agent's interrupt and interrupts its own call with it.  The sub-agent's
    question is then shown under its gate's id, whatever the toolUseIds, and its answer, no
    longer one of the sub-agent's, is taken by the gate as its own.  An ungated call is the
    reference's.  Differs from the reference in ``_outcome`` only."""

    def _outcome(
        self, caller: AgentState, outer: str, sub_agent: Agent, result: AgentResult
    ) -> ToolOutcome:
        outcome = super()._outcome(caller, outer, sub_agent, result)
        if self.gate is None or not isinstance(outcome, Interrupted):
            return outcome
        return Interrupted(
            tuple(
                replace(interrupt, id=tool_interrupt_id(outer, interrupt.name))
                for interrupt in outcome.interrupts
            )
        )

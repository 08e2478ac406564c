"""A minimal agent and its loop: model turn, tool calls, interrupts, resume.

Theory of operation.  A call with a prompt appends it and alternates model turns and tool calls
until the model answers with text.  Tool calls of one turn run in the order the model issued them.
If any of them raises an interrupt, the turn *parks*: the interrupt state is activated with the
questions, the pending tool call message and the results already obtained, and the call returns.
``resume(responses)`` records the answers, re-runs only the tool calls that have no result yet
(a tool asked again gets its recorded answers back), and carries on.

Rules this module keeps:

* A call works on a copy of the state and commits it only when it returns, so an exception leaves
  the agent exactly as it was: nothing half-applied, no answer recorded, the turn still parked.
* Before anything runs, a resume asks every pending tool call to ``prepare``: a sub-agent whose
  stored turn cannot be restored fails the whole resume there, before any action runs.
* Parking never rebuilds the interrupt context: keys written by tools survive.  A turn that ends
  clears it, so no answer outlives its turn.
* A parked call whose tool the agent no longer has (a deploy renamed or removed it) is gone: its
  questions stay parked and pending, and a resume answering one is refused before anything
  runs.  Its answer would reach no call; carrying on without it would lose it silently.
* A tool with a retry policy (an after-tool-call hook's retry) whose call ends the way the policy
  names is run again at once, at most ``times`` times per call.  Each attempt is a new call: its
  number is part of the call's key (``call_key``), so its questions get ids of their own, no
  earlier attempt's answer is replayed to it, and a sub-agent call starts the sub-agent anew.
  The number is kept in the interrupt context, so an attempt parked on a question resumes as
  itself, after a restart too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from harness.reference.conversation import ConversationManager, NullConversationManager
from harness.reference.naming import raised_by_call, tool_interrupt_id
from harness.reference.state import (
    JSON,
    AgentState,
    Interrupt,
    InterruptState,
    Message,
    copy_json,
)

PENDING_TOOL_CALL = "tool_use_message"
RESULTS_SO_FAR = "tool_results"
ATTEMPTS = "attempts"  # toolUseId -> how many times that call of the turn was retried

EventSink = Callable[[dict[str, JSON]], None]


class AgentError(RuntimeError):
    """The agent was asked for something its state does not allow; nothing was changed."""


class Model(Protocol):
    """Produces the next assistant message; may update ``model_state`` in place."""

    def __call__(self, messages: list[Message], model_state: dict[str, JSON]) -> Message: ...


@dataclass(frozen=True)
class ToolUse:
    tool_use_id: str
    name: str
    input: JSON


@dataclass(frozen=True)
class Completed:
    text: str
    is_error: bool = False
    refused: bool = False  # the call did not do its work (an action or a gate denied)

    @property
    def failed(self) -> bool:
        """Whether the call ended with an error (for a retry): an error result or a refusal."""
        return self.is_error or self.refused


@dataclass(frozen=True)
class RetryPolicy:
    """An after-tool-call hook's retry of a tool's calls: after an ``error`` or a ``result``,
    at most ``times`` times per call."""

    after: Literal["error", "result"]
    times: int

    def wants(self, outcome: Completed, retried: int) -> bool:
        """Whether a call retried ``retried`` times so far that ended with ``outcome`` is run
        again."""
        ending = "error" if outcome.failed else "result"
        return ending == self.after and retried < self.times


@dataclass(frozen=True)
class Interrupted:
    interrupts: tuple[Interrupt, ...]


ToolOutcome = Completed | Interrupted


class InterruptRaised(Exception):
    """Raised by ``ToolCall.interrupt`` to stop a tool that needs an answer."""

    def __init__(self, interrupt: Interrupt) -> None:
        super().__init__(interrupt.id)
        self.interrupt = interrupt


def call_key(caller: AgentState, use: ToolUse) -> str:
    """A tool call's identity in its agent: the model's toolUseId within the model turn that
    issued it (turns are counted over the agent's life, so across prompts too).

    Models reuse toolUseIds across turns and prompts, so the id alone would give a question of
    a later turn the same interrupt id as an answered one of an earlier turn, and a re-sent old
    answer would approve the new question.  The turn number makes them differ; it does not
    change while a parked turn waits, so a resumed call keeps its key.  A retried call's attempt
    number follows the turn number (``3r1.t1``: the turn number holds no ``r`` and the key's
    first ``.`` ends it, so no toolUseId can make one attempt's key another's).
    """
    retried = retries_of(caller, use.tool_use_id)
    attempt = f"r{retried}" if retried else ""
    return f"{caller.model_turns}{attempt}.{use.tool_use_id}"


def retries_of(caller: AgentState, tool_use_id: str) -> int:
    """How many times the call ``tool_use_id`` of the caller's current turn was retried."""
    attempts = caller.interrupt_state.context.get(ATTEMPTS, {})
    return int(attempts.get(tool_use_id, 0)) if isinstance(attempts, dict) else 0


@dataclass
class ToolCall:
    """What a running tool sees: its call, the calling agent's working state, the event sink."""

    use: ToolUse
    caller: AgentState
    emit: EventSink
    consulted: list[Interrupt] = field(default_factory=list)

    @property
    def key(self) -> str:
        return call_key(self.caller, self.use)

    def interrupt(self, name: str, reason: JSON) -> JSON:
        """The recorded answer to this call's question ``name``; raises if there is none yet."""
        interrupt_id = tool_interrupt_id(self.key, name)
        for interrupt in self.caller.interrupt_state.interrupts:
            if interrupt.id == interrupt_id and interrupt.response is not None:
                self.consulted.append(interrupt)
                return interrupt.response
        raise InterruptRaised(Interrupt(id=interrupt_id, name=name, reason=reason))


class Tool(Protocol):
    name: str

    def prepare(self, caller: AgentState, use: ToolUse) -> None:
        """Raise if this call could not resume from ``caller`` (answers recorded).

        Changes nothing.
        """

    def run(self, call: ToolCall) -> ToolOutcome: ...


@dataclass(frozen=True)
class AgentResult:
    stop_reason: Literal["end_turn", "interrupt"]
    text: str | None
    interrupts: tuple[Interrupt, ...]


class Agent:
    def __init__(
        self,
        name: str,
        model: Model,
        tools: Sequence[Tool] = (),
        conversation_manager: ConversationManager | None = None,
        state: AgentState | None = None,
        emit: EventSink | None = None,
        retries: Mapping[str, RetryPolicy] | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.tools = {tool.name: tool for tool in tools}
        self.retries = dict(retries or {})  # tool name -> its calls' retry policy
        self.conversation_manager = conversation_manager or NullConversationManager()
        self.state = state.copy() if state is not None else AgentState()
        if not self.state.conversation_manager_state:
            self.state.conversation_manager_state = self.conversation_manager.initial_state()
        self.emit: EventSink = emit or (lambda event: None)

    def __call__(self, prompt: str) -> AgentResult:
        if self.state.interrupt_state.activated:
            raise AgentError(f"agent {self.name!r} has a parked turn: resume it with responses")
        work = self.state.copy()
        self._append(work, {"role": "user", "content": [{"text": prompt}]})
        result = self._loop(work, resuming=False)
        self.state = work
        return result

    def resume(self, responses: Mapping[str, JSON]) -> AgentResult:
        self.prepare_resume(responses)
        work = _answered(self.state, responses)
        result = self._loop(work, resuming=True)
        self.state = work
        return result

    def prepare_resume(self, responses: Mapping[str, JSON]) -> None:
        """Raise unless ``resume(responses)`` can restore every unfinished call; change nothing.

        Checks the answers against the parked questions, then asks each tool call that has no
        result yet to ``prepare``; a sub-agent call restores its stored turn there and prepares
        its own resume, so a bad stored turn at any depth is found before any action runs.
        """
        parked = self.state.interrupt_state
        if not parked.activated:
            raise AgentError(f"agent {self.name!r} has no parked turn to resume")
        # an answered question stays parked (its answer is replayed), but it is not pending: an
        # answer to it is stale, refused like an id never asked (I14)
        unknown = sorted(set(responses) - {interrupt.id for interrupt in parked.pending})
        if unknown:
            raise AgentError(f"agent {self.name!r} has no pending interrupt {unknown}")
        if any(response is None for response in responses.values()):
            raise AgentError("a response must not be null")
        answered = _answered_view(self.state, responses)
        context = answered.interrupt_state.context
        for use in _pending_uses(context[PENDING_TOOL_CALL], context[RESULTS_SO_FAR]):
            tool = self.tools.get(use.name)
            if tool is not None:
                tool.prepare(answered, use)
            gone = sorted(
                interrupt.id
                for interrupt in self._asked_by_gone_call(answered, use)
                if interrupt.id in responses
            )
            if gone:
                raise AgentError(
                    f"agent {self.name!r} no longer has tool {use.name!r}: the call "
                    f"{use.tool_use_id!r} that asked {gone} is gone, so no call can take the "
                    "answer (the question stays pending)"
                )

    def _asked_by_gone_call(self, state: AgentState, use: ToolUse) -> list[Interrupt]:
        """The parked questions of call ``use`` when this agent no longer has its tool (a deploy
        renamed or removed it): they stay parked; none when the tool is here."""
        if use.name in self.tools:
            return []
        key = call_key(state, use)
        return [
            interrupt
            for interrupt in state.interrupt_state.interrupts
            if raised_by_call(interrupt.id, key)
        ]

    def _loop(self, work: AgentState, *, resuming: bool) -> AgentResult:
        if resuming:
            context = work.interrupt_state.context
            outcome = self._run_tools(work, context[PENDING_TOOL_CALL], context[RESULTS_SO_FAR])
            if isinstance(outcome, AgentResult):
                return outcome
            self._append(work, {"role": "user", "content": outcome})
        while True:
            assistant = self._model_turn(work)
            self._append(work, assistant)
            if not tool_uses(assistant):
                text = "".join(block["text"] for block in assistant["content"] if "text" in block)
                self.emit({"type": "result", "agent": self.name, "text": text})
                return AgentResult("end_turn", text, ())
            outcome = self._run_tools(work, assistant, [])
            if isinstance(outcome, AgentResult):
                return outcome
            self._append(work, {"role": "user", "content": outcome})

    def _model_turn(self, work: AgentState) -> Message:
        work.messages, work.conversation_manager_state = (
            self.conversation_manager.before_model_call(
                work.messages, work.conversation_manager_state
            )
        )
        model_state = copy_json(work.model_state)
        reply = self.model(copy_json(work.messages), model_state)
        work.model_state = model_state
        work.model_turns += 1
        return reply

    def _run_tools(
        self, work: AgentState, tool_use_message: Message, results_so_far: list[JSON]
    ) -> list[JSON] | AgentResult:
        results = list(results_so_far)
        raised: list[Interrupt] = []
        for use in _pending_uses(tool_use_message, results_so_far):
            kept = self._asked_by_gone_call(work, use)
            if kept:  # no tool to run it: its questions wait, unanswered
                raised.extend(kept)
                continue
            call = ToolCall(use=use, caller=work, emit=self.emit)
            outcome = self._run_one(call)
            while self._retried(work, use, outcome):
                call = ToolCall(use=use, caller=work, emit=self.emit)
                outcome = self._run_one(call)
            if isinstance(outcome, Interrupted):
                raised.extend(call.consulted)
                raised.extend(outcome.interrupts)
                for interrupt in outcome.interrupts:
                    self.emit({"type": "interrupt", "agent": self.name, **_public(interrupt)})
            else:
                status = "error" if outcome.is_error else "success"
                results.append(
                    {
                        "toolResult": {
                            "toolUseId": use.tool_use_id,
                            "status": status,
                            "content": [{"text": outcome.text}],
                        }
                    }
                )
        if raised:
            parked = work.interrupt_state
            parked.activated = True
            parked.interrupts = raised
            parked.context[PENDING_TOOL_CALL] = copy_json(tool_use_message)
            parked.context[RESULTS_SO_FAR] = results
            return AgentResult("interrupt", None, tuple(parked.pending))
        work.interrupt_state = InterruptState()
        return results

    def _retried(self, work: AgentState, use: ToolUse, outcome: ToolOutcome) -> bool:
        """Whether the hook retries the call ``use`` that ended with ``outcome``; if so, its
        next attempt is counted (which gives it a key of its own)."""
        policy = self.retries.get(use.name)
        retried = retries_of(work, use.tool_use_id)
        if policy is None or isinstance(outcome, Interrupted) or not policy.wants(outcome, retried):
            return False
        work.interrupt_state.context.setdefault(ATTEMPTS, {})[use.tool_use_id] = retried + 1
        return True

    def _run_one(self, call: ToolCall) -> ToolOutcome:
        tool = self.tools.get(call.use.name)
        if tool is None:
            return Completed(f"unknown tool {call.use.name!r}", is_error=True)
        try:
            return tool.run(call)
        except InterruptRaised as raised:
            return Interrupted((raised.interrupt,))

    def _append(self, work: AgentState, message: Message) -> None:
        work.messages.append(message)
        self.emit({"type": "message", "agent": self.name, "message": copy_json(message)})


def _answered(state: AgentState, responses: Mapping[str, JSON]) -> AgentState:
    """A copy of ``state`` with ``responses`` recorded on the questions still unanswered."""
    answered = state.copy()
    answered.interrupt_state.interrupts = _recorded(answered.interrupt_state, responses, copy_json)
    return answered


def _answered_view(state: AgentState, responses: Mapping[str, JSON]) -> AgentState:
    """``_answered`` for a reader that changes nothing (``prepare_resume``, ``Tool.prepare``):
    a new state and interrupt state, but every other part, and the responses, shared with
    ``state`` and ``responses``, so it costs no copy of the turn."""
    parked = state.interrupt_state
    interrupts = _recorded(parked, responses, lambda response: response)
    # built field by field: ``dataclasses.replace`` looks the fields up on every call
    return AgentState(
        messages=state.messages,
        state=state.state,
        model_state=state.model_state,
        conversation_manager_state=state.conversation_manager_state,
        interrupt_state=InterruptState(parked.activated, interrupts, parked.context),
        model_turns=state.model_turns,
    )


def _recorded(
    parked: InterruptState, responses: Mapping[str, JSON], keep: Callable[[JSON], JSON]
) -> list[Interrupt]:
    """``parked``'s interrupts with ``responses`` (each as ``keep`` gives it) recorded on the
    questions still unanswered."""
    return [
        Interrupt(interrupt.id, interrupt.name, interrupt.reason, keep(responses[interrupt.id]))
        if interrupt.response is None and interrupt.id in responses
        else interrupt
        for interrupt in parked.interrupts
    ]


def tool_uses(message: Message) -> list[ToolUse]:
    """The tool calls a model message makes, in its order."""
    return [
        ToolUse(
            tool_use_id=block["toolUse"]["toolUseId"],
            name=block["toolUse"]["name"],
            input=block["toolUse"]["input"],
        )
        for block in message["content"]
        if "toolUse" in block
    ]


def _pending_uses(tool_use_message: Message, results_so_far: list[JSON]) -> list[ToolUse]:
    done = {result["toolResult"]["toolUseId"] for result in results_so_far}
    return [use for use in tool_uses(tool_use_message) if use.tool_use_id not in done]


def _public(interrupt: Interrupt) -> dict[str, JSON]:
    return {"id": interrupt.id, "name": interrupt.name, "reason": copy_json(interrupt.reason)}

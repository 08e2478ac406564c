"""What must happen, derived from the scenario alone: the oracle.

This is an abstract model of nested interrupts with no ids, no persistence and no continuations:
agents play their scripted turns, protected actions ask their questions, answers given by label
advance exactly the questions they name.  It knows nothing of any target, so no target can
influence what is expected of it (Jepsen's rule: the checker never trusts the system).

Semantics it encodes, each straight from docs/invariants.md:

* every tool call of a turn is made; the turn is over when all are; the agent then plays its next
  turn, and after its last one answers (so the root's final answer is known);
* an ordinary tool (an effect) runs when its turn is played, once per scripted call: never again
  when its agent resumes after a question, nor after a restart;
* a tally effect reads the count of its earlier runs in its agent's key/value state: the runs of
  the same call of an ephemeral sub-agent (every call starts from the initial state, a retry's
  attempt too), of every call of a preserve_context sub-agent or of the root; a question, a
  resume and a restart carry it (a storeless preserve_context sub-agent's restarts to 0, its
  state is lost); after a deploy it is not predicted (None); in an agent with a window it also
  reads how many model calls its window has counted so far (its conversation-manager state):
  those of the same call of an ephemeral sub-agent, of every call of a preserve_context one or
  of the root, this turn's included, carried likewise;
* an approval advances one question: the last approval runs the action (exactly once); a denial
  ends the call without running it; an unanswered question stays pending; an answer by id
  settles exactly the question shown under that id, never a twin call's sharing its label;
* a restart changes nothing, except that a preserve_context sub-agent without a session store
  loses its parked turn, after which every resume must fail loudly and change nothing;
* after a stored continuation is corrupted, every resume must fail loudly and change nothing,
  until the damage is repaired: an answer refused meanwhile then still works when re-sent;
* a preserve_context sub-agent with a parked turn refuses a second caller (it never takes
  another call's turn): that call ends at once with an error result;
* a call of a gated sub-agent first asks its gate's one question (pending under the gate's
  label); approved, the sub-agent is called then (and may ask its own questions in the same
  call), denied, it is never called and the call ends with a refusal; a gate's approval runs
  nothing in the ledger and is never an answer to the sub-agent's own questions;
* a call of a tool with a retry (an action's, or a sub-agent's) that ends the way the retry
  names (an error: an action or a gate denied, a busy sub-agent refusing the call; a result: an
  action that ran, a sub-agent that answered) is made again at once, in the same step, at most
  ``times`` times per call; every attempt is a new call: it asks every question again, an action
  runs only on its own attempt's approval (one approval never runs it twice), a sub-agent is
  called anew (its gate asked again), and an answer given to an earlier attempt names a question
  no longer pending, so re-sent it is refused (I14);
* an answer that names a question not pending (an id the human was not shown as pending, or
  one already answered: a re-sent answer that was carried out) must be refused loudly and
  change nothing, the whole step (I14); a re-sent answer that was refused (see above) names
  questions still pending;
* an answer without an id (``resume``) answers the one pending question; with several pending
  it names none of them, so it is refused loudly and changes nothing, the whole step (I14): an
  SDK may not guess which question it meant, nor take it for all of them;
* a deploy (a restart with a changed tree) keeps every parked call whose tool its agent still
  has, under the same path (an action's tool, a sub-agent's name, all the way up): its
  question is answered as before, and the agents play the new tree's scripts from where they
  are.  A call whose tool is gone (renamed or removed, or an ancestor call's) is gone: its
  questions stay pending, and an answer naming one is refused loudly, the whole step, nothing
  changes (it would reach no call, or the wrong one).  A parked sub-agent call whose
  sub-agent's `preserve_context` changed still exists: it resumes its parked turn (wherever
  that turn was stored), and the sub-agent's later calls follow the new setting.
* two root sessions (steps of session `b` beside the default `a`: two users of one deployment,
  whose orchestrators call the same agent-tool objects) are two runs of the scenario that never
  touch: each session's steps are judged as if the other's were not there (a question raised in
  one is shown only there, an answer in one settles only its own questions), and a restart,
  which rebuilds both (or, naming a session, that session's orchestrator alone), changes
  nothing in either.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from scenarios.model import (
    Action,
    Agent,
    Answer,
    Call,
    Corrupt,
    Repair,
    Resend,
    Restart,
    Retry,
    Run,
    Scenario,
    Step,
    field_path,
)

ErrorExpectation = Literal["required", "allowed", "forbidden"]
CORRUPTED: Final = "continuation corrupted"
GONE: Final = "(a deploy took its tool away)"
# The failure causes the oracle writes only for scenarios of a class (a corrupted continuation
# needs a corrupt step; a call gone needs a deploy while it waits): a witness whose expected
# sentence must contain one names violations of that class's scenarios alone
# (harness.findings.canary, where dropping the class is then no broadening)
CAUSE_CLASSES: Final = {CORRUPTED: "corruption", GONE: "deploy-skew"}


class ScenarioError(ValueError):
    """The steps ask for something impossible at that point (for example, nothing to corrupt)."""


@dataclass(frozen=True)
class Expected:
    """What one step must show."""

    pending: tuple[tuple[str, int], ...]  # (label, question number), sorted
    executions: tuple[str, ...]  # labels run during this step, sorted
    stop_reason: Literal["end_turn", "interrupt"] | None
    final_answer: str | None
    error: ErrorExpectation
    parked_continuations: int  # parked ephemeral sub-agent calls (stored continuations)
    unknown_answer: bool = False  # it answers a question not pending: the error is I14's refusal
    # ordinary tools run during this step, each (agent path, tool, toolUseId), sorted
    effects: tuple[tuple[str, str, str], ...] = ()
    # each tally effect's run during this step, with the counter it must read from its agent's
    # key/value state: (agent path, tool, toolUseId, count; None where not predicted), sorted
    tallies: tuple[tuple[str, str, str, int | None], ...] = ()
    # and, for each of those runs in an agent with a window, the model calls its window must
    # have counted: (agent path, tool, toolUseId, calls; None where not predicted), sorted
    window_calls: tuple[tuple[str, str, str, int | None], ...] = ()
    # the call each execution serves: (label, its agent's path, the prompt that call was given)
    served: tuple[tuple[str, str, str], ...] = ()
    # each sub-agent call whose caller's turn ended during this step, as the result the caller's
    # next model request carries for it: (caller's path, caller's prompt, the caller's turn that
    # request is for, the call's toolUseId, the sub-agent's answer), the answer None where the
    # call ended without one (its sub-agent busy, its gate denied) or a retry may have replaced it
    returned: tuple[tuple[str, str, int, str, str | None], ...] = ()
    # and so for each protected action call: (caller's path, caller's prompt, the caller's turn,
    # the call's toolUseId, the action's label, "ran" or "refused"), None for a call a retry may
    # have replaced
    acted: tuple[tuple[str, str, int, str, str, str | None], ...] = ()
    # why a step whose answer cannot be carried out must fail: the turn it needs was lost or its
    # stored continuation corrupted, the call it answers is gone, or (``unknown_answer``) it
    # names no pending question, and which (None for every other step)
    failure_cause: str | None = None


@dataclass
class ActionCall:
    action: Action
    question: int = 1
    outcome: Literal["asking", "ran", "refused"] = "asking"
    gate: bool = False  # a gate's question: approved, it calls its sub-agent and runs nothing
    path: str = ""  # the call it serves: its agent's path and the prompt that call was given
    prompt: str = ""
    call_id: str = ""  # the toolUseId of the call (a gate's: none, it is its sub-agent call's)
    gone: bool = False  # a deploy took its tool (or an ancestor call's) away: it stays asking
    attempt: int = 0  # how many times this call was retried before this attempt

    @property
    def complete(self) -> bool:
        return self.outcome != "asking"


# the answers of one step: by label, or by label and the prompt of the call that asks
Given = dict[str | tuple[str, str], str]
# the question an id was shown under: its label and the prompt of the call that asks (None
# where the question names none, a gate's)
ShownQuestion = tuple[str, str | None]


@dataclass
class Answers:
    """The answers of one step: ``given`` by label (or label and prompt), and ``own``: each id
    of an ``answer_ids`` step with the one question it was shown under, which it alone settles
    (never a twin call's question that shares its label, or its label and prompt)."""

    given: Given = field(default_factory=dict)
    own: list[tuple[ActionCall, str]] = field(default_factory=list)

    def response(self, call: ActionCall) -> str | None:
        """The answer for ``call``: an id's answer to it, else its own call's, else its
        label's."""
        for answered, response in self.own:
            if answered is call:
                return response
        label = call.action.label
        return self.given.get((label, call.prompt), self.given.get(label))


@dataclass
class EffectCall:
    """An ordinary tool's call: it ran when its turn was played, and is complete."""

    complete: bool = True


@dataclass
class SubCall:
    activation: Activation | None  # None: not called (its sub-agent was busy, or gated)
    gate: ActionCall | None = None  # a gated call's gate question
    waiting: Call | None = None  # a gated call not made yet: made once its gate is approved
    tool: str = ""  # the sub-agent's name, as its caller calls it
    gone: bool = False  # a deploy took its sub-agent (or an ancestor call's) away
    call: Call | None = None  # the scripted call it makes (a retry makes it again)
    attempt: int = 0  # how many times this call was retried before this attempt

    @property
    def complete(self) -> bool:
        if self.gone:
            return False
        if self.gate is not None and self.gate.outcome == "asking":
            return False
        return self.activation is None or self.activation.finished


@dataclass
class Activation:
    """One call of an agent: which turn it is on and the calls of that turn."""

    agent: Agent
    path: str
    ephemeral: bool
    prompt: str  # what it was asked: its script may depend on it
    turn: int = 0
    calls: list[ActionCall | SubCall | EffectCall] | None = None
    tallies: dict[str, int] = field(default_factory=dict)  # an ephemeral call's counters
    calls_before: int = 0  # model calls its agent made before this call (one that keeps state)

    @property
    def turns(self) -> tuple[tuple[Call, ...], ...]:
        return self.agent.turns_for(self.prompt)

    @property
    def finished(self) -> bool:
        return self.turn >= len(self.turns)


@dataclass
class Oracle:
    scenario: Scenario
    root: Activation | None = None
    live: dict[str, Activation | None] = field(default_factory=dict)  # preserve_context busy-with
    stuck: str | None = None
    answers_given: dict[int, Answers] = field(default_factory=dict)
    refused: set[int] = field(default_factory=set)  # answers a corrupted store refused
    named: dict[int, list[tuple[ActionCall, int]]] = field(default_factory=dict)  # (call, question)
    unknown: set[int] = field(default_factory=set)  # answers naming a question not pending
    effects: list[tuple[str, str, str]] = field(default_factory=list)  # run during this step
    returned: list[tuple[str, str, int, str, str | None]] = field(default_factory=list)  # and so
    acted: list[tuple[str, str, int, str, str, str | None]] = field(default_factory=list)
    tree: Agent | None = None  # the tree in force: the scenario's, then each deploy's
    retried: int = 0  # how many calls a retry has made again so far, over every step
    # each tally effect run during this step, with the count it must read (see ``Expected``)
    tallies: list[tuple[str, str, str, int | None]] = field(default_factory=list)
    window_calls: list[tuple[str, str, str, int | None]] = field(default_factory=list)
    # the model calls made so far by the agents whose conversation-manager state outlives a
    # call (the root, each preserve_context sub-agent), by path
    model_calls: dict[str, int] = field(default_factory=dict)
    # the counters of the agents whose key/value state outlives a call (the root, each
    # preserve_context sub-agent), by path
    kept: dict[str, dict[str, int]] = field(default_factory=dict)
    deployed: bool = False  # a deploy happened: tallies are no longer predicted
    # root session `b`'s own oracle, made at its first step: the steps of each session are
    # judged as if the other session's were not there
    session_b: Oracle | None = None
    judges_b: bool = False  # this is session `b`'s oracle

    def __post_init__(self) -> None:
        if self.tree is None:
            self.tree = self.scenario.tree

    @property
    def current(self) -> Agent:
        """The tree in force."""
        assert self.tree is not None
        return self.tree

    def step(
        self, index: int, step: Step, shown: Mapping[str, ShownQuestion | None] | None = None
    ) -> Expected:
        """The expectation for ``step``.  ``shown`` maps each id of an ``answer_ids`` step to the
        question the human was last shown as pending under it (its label, and the prompt of the
        call that asks, where the question names it), None when none was (an id missing from it
        counts as not shown).  An id settles that one question: the first call still asking it
        that no other id of the step took (twins sharing label and prompt are alike)."""
        if getattr(step, "session", "a") == "b" and not self.judges_b:
            if self.session_b is None:
                self.session_b = Oracle(self.scenario, judges_b=True)
            return self.session_b.step(index, step, shown)
        if isinstance(step, Restart) and self.session_b is not None and step.session is None:
            self.session_b.step(index, step)  # it rebuilds both sessions
        self.effects = []
        self.tallies = []
        self.window_calls = []
        self.returned = []
        self.acted = []
        if isinstance(step, Run):
            return self._run(step.run)
        if isinstance(step, Answer) and step.resume is not None:
            return self._resume(index, step.resume)
        if isinstance(step, Answer):
            given: Given = {label: response for label, response in step.answer.items()}
            for action, by_prompt in step.answer_calls.items():
                for prompt, call_response in by_prompt.items():
                    given[(action, prompt)] = call_response
            answers = Answers(given)
            never_shown = False
            answered: set[str] = set()  # labels shown under an id given, no longer pending
            for interrupt_id, response in step.answer_ids.items():
                question = (shown or {}).get(interrupt_id)
                if question is None:
                    never_shown = True
                    continue
                call = self._asked(question, [taken for taken, _ in answers.own])
                if call is None:
                    answered.add(question[0])
                else:
                    answers.own.append((call, response))
            self.answers_given[index] = answers
            if never_shown or answered:
                self.unknown.add(index)
                named = [f"{', '.join(sorted(answered))}, answered already"] if answered else []
                named += ["an id no question was shown under"] if never_shown else []
                return self._refuse_unknown(f"it names {', and '.join(named)}")
            return self._answer(index, answers)
        if isinstance(step, Restart):
            self._restart()
            if step.tree is not None:
                self._deploy(step.tree)
            return self._expect([], error="forbidden", stop_reason=None)
        # a corruption and a repair each end with a restart (docs/scenario-format.md): what only
        # memory held is lost there as at any restart
        if isinstance(step, Corrupt):
            self._corrupt(index, step)
            self._restart()
            return self._expect([], error="allowed", stop_reason=None)
        if isinstance(step, Repair):
            if self.stuck is not None and self.stuck.startswith(CORRUPTED):
                self.stuck = None
            self._restart()
            return self._expect([], error="allowed", stop_reason=None)
        if isinstance(step, Resend):
            if step.resend in self.unknown:
                return self._refuse_unknown("it re-sends an answer that named no pending question")
            stale = self._stale(step.resend)
            if stale:
                return self._refuse_unknown(
                    f"it re-sends the answer to {', '.join(stale)}, no longer pending"
                )
            if step.resend in self.refused and self.stuck is None:
                self.refused.discard(step.resend)
                return self._answer(step.resend, self.answers_given[step.resend])
            return self._expect([], error="allowed", stop_reason=None)
        raise AssertionError(step)

    def _refuse_unknown(self, cause: str) -> Expected:
        """An answer naming a question not pending: refused loudly, nothing changes (I14)."""
        return self._expect(
            [], error="required", stop_reason=None, unknown_answer=True, cause=cause
        )

    def _resume(self, index: int, response: str) -> Expected:
        """An answer without an id: it names the one pending question, so it answers it; with
        several pending it names none of them, so it is refused, the whole step (I14)."""
        asking = [] if self.root is None or self.root.finished else self._asking(self.root)
        if len(asking) > 1:
            self.unknown.add(index)
            return self._refuse_unknown(
                f"it is one answer without an id while {len(asking)} questions are pending: "
                "it names none of them"
            )
        answers = Answers(own=[(call, response) for call in asking])
        self.answers_given[index] = answers
        return self._answer(index, answers)

    def _asked(self, question: ShownQuestion, taken: list[ActionCall]) -> ActionCall | None:
        """The call still asking ``question`` (label, and prompt where it names one), the first
        not ``taken`` by another id of the step; None when no such question is pending."""
        label, prompt = question
        for call in [] if self.root is None else self._asking(self.root):
            if call.action.label != label or (prompt is not None and call.prompt != prompt):
                continue
            if not any(call is other for other in taken):
                return call
        return None

    def _stale(self, index: int) -> list[str]:
        """The labels of the questions the answer given at step ``index`` names that are no
        longer pending (sorted; empty if none): ones it answered (approved or denied) since, or
        that were answered before it was sent."""
        return sorted(
            {
                call.action.label
                for call, question in self.named.get(index, ())
                if call.outcome != "asking" or call.question != question
            }
        )

    def _run(self, prompt: str) -> Expected:
        if self.root is not None and not self.root.finished:
            return self._expect([], error="allowed", stop_reason=None)
        tree = self.current
        self.root = Activation(
            tree,
            tree.name,
            ephemeral=False,
            prompt=prompt,
            calls_before=self.model_calls.get(tree.name, 0),
        )
        executed: list[str] = []
        self._advance(self.root, executed)
        return self._expect(executed, error="forbidden")

    def _answer(self, index: int, answers: Answers) -> Expected:
        if self.root is None or self.root.finished:
            return self._expect([], error="allowed", stop_reason=None)
        self.named[index] = [
            (call, call.question)
            for call in self._asking(self.root)
            if answers.response(call) is not None
        ]
        if self.stuck is not None:
            if self.stuck.startswith(CORRUPTED):
                self.refused.add(index)
            return self._expect([], error="required", stop_reason=None, cause=self.stuck)
        gone = sorted({call.action.label for call, _ in self.named[index] if call.gone})
        if gone:
            self.refused.add(index)  # re-sent, it is refused again while its call stays gone
            cause = f"the call that asked {', '.join(gone)} is gone {GONE}"
            return self._expect([], error="required", stop_reason=None, cause=cause)
        executed: list[str] = []
        served: list[tuple[str, str, str]] = []
        for call in self._asking(self.root):
            response = answers.response(call)
            if response == "approve" and call.question < call.action.questions:
                call.question += 1
            elif response == "approve":
                call.outcome = "ran"
                if not call.gate:
                    executed.append(call.action.label)
                    served.append((call.action.label, call.path, call.prompt))
            elif response == "deny":
                call.outcome = "refused"
        self._advance(self.root, executed)
        return self._expect(executed, error="forbidden", served=served)

    def _restart(self) -> None:
        for path in list(self.kept):
            agent = self._agent_at(path)
            if path != self.current.name and agent is not None and not agent.session_store:
                del self.kept[path]  # kept in memory only: a restart loses its state
        for path in list(self.model_calls):
            agent = self._agent_at(path)
            if path != self.current.name and agent is not None and not agent.session_store:
                del self.model_calls[path]
        for path, busy in self.live.items():
            agent = self._agent_at(path)
            if busy is None or busy.finished or agent is None or agent.session_store:
                continue
            self.stuck = f"{path} (preserve_context, no session store) lost its parked turn"

    def _deploy(self, tree: Agent) -> None:
        """The tree in force becomes ``tree``: every parked call whose tool is gone is marked
        gone, with everything below it."""
        self.tree = tree
        self.deployed = True
        if self.root is not None and not self.root.finished:
            self._redeploy(self.root, tree)

    def _redeploy(self, activation: Activation, agent: Agent) -> None:
        """``activation`` plays ``agent`` (its agent in the deployed tree) from now on; mark the
        calls of its parked turn that ``agent`` no longer has."""
        activation.agent = agent
        tools = {action.tool for action in agent.actions}
        subs = {sub.tool: sub for sub in agent.sub_agents}
        for call in activation.calls or []:
            if isinstance(call, ActionCall) and call.action.tool not in tools:
                call.gone = True
            elif isinstance(call, SubCall) and call.tool not in subs:
                _gone(call)
            elif isinstance(call, SubCall) and call.activation is not None:
                self._redeploy(call.activation, subs[call.tool])

    def _corrupt(self, index: int, step: Corrupt) -> None:
        parked = self._parked_continuations()
        # "foreign" puts another stored turn in its place: there must be one
        needed = max(step.which + 1, 2 if step.corrupt == "foreign" else 1)
        if parked < needed:
            where = field_path(("steps", index, "corrupt"))
            raise ScenarioError(
                f"{where}: {parked} continuation(s) stored at this point, "
                f"{step.corrupt} at which={step.which} needs {needed}"
            )
        if self.stuck is None:  # a turn already lost stays lost, whatever is repaired
            self.stuck = f"{CORRUPTED} ({step.corrupt})"

    def _advance(self, activation: Activation, executed: list[str]) -> None:
        while not activation.finished:
            if activation.calls is None:
                activation.calls = [
                    self._start(activation, call, executed)
                    for call in activation.turns[activation.turn]
                ]
            else:
                for call in activation.calls:
                    if isinstance(call, SubCall) and call.gone:
                        continue
                    if isinstance(call, SubCall) and call.waiting is not None:
                        self._open_gate(activation, call, executed)
                    elif isinstance(call, SubCall) and call.activation is not None:
                        self._advance(call.activation, executed)
            self._retry(activation, executed)
            if not all(call.complete for call in activation.calls):
                return
            self._returned(activation)
            activation.turn += 1
            activation.calls = None
        if not activation.ephemeral:  # its turns' model calls and its answer's
            self.model_calls[activation.path] = activation.calls_before + len(activation.turns) + 1
        self._release(activation)

    def _returned(self, parent: Activation) -> None:
        """Note the result each call of ``parent``'s ended turn returns: a sub-agent call, the
        called sub-agent's answer to its prompt, where it was called and answered on the first
        attempt of a call nothing retries; a protected action's, whether it ran or was refused
        (unknown where a retry may have replaced the call)."""
        for call in parent.calls or []:
            if isinstance(call, ActionCall):
                outcome = call.outcome if call.attempt == 0 and call.action.retry is None else None
                key = (parent.path, parent.prompt, parent.turn + 1, call.call_id)
                self.acted.append((*key, call.action.label, outcome))
                continue
            if not isinstance(call, SubCall) or call.call is None:
                continue
            called = call.activation
            answered = (
                called is not None
                and called.finished
                and call.attempt == 0
                and called.agent.retry is None
            )
            answer = called.agent.answer_for(called.prompt) if answered and called else None
            self.returned.append(
                (parent.path, parent.prompt, parent.turn + 1, call.call.id, answer)
            )

    def _start(
        self, parent: Activation, call: Call, executed: list[str], attempt: int = 0
    ) -> ActionCall | SubCall | EffectCall:
        effect = next((effect for effect in parent.agent.effects if effect.tool == call.tool), None)
        if effect is not None:
            self.effects.append((parent.path, call.tool, call.id))
            if effect.tally:
                self._tally(parent, call)
            return EffectCall()
        for action in parent.agent.actions:
            if action.tool == call.tool:
                return ActionCall(
                    action, path=parent.path, prompt=parent.prompt, call_id=call.id, attempt=attempt
                )
        sub = next(sub for sub in parent.agent.sub_agents if sub.tool == call.tool)
        if sub.gate is not None:
            gate = ActionCall(
                Action(tool=sub.tool, label=sub.gate),
                gate=True,
                path=parent.path,
                prompt=parent.prompt,
            )
            return SubCall(
                None, gate=gate, waiting=call, tool=call.tool, call=call, attempt=attempt
            )
        sub_call = self._call(parent, call, executed)
        sub_call.call, sub_call.attempt = call, attempt
        return sub_call

    def _tally(self, parent: Activation, call: Call) -> None:
        """A tally effect's run: it reads the count its agent's state holds and adds one."""
        counts = parent.tallies if parent.ephemeral else self.kept.setdefault(parent.path, {})
        seen = counts.get(call.tool, 0)
        counts[call.tool] = seen + 1
        self.tallies.append((parent.path, call.tool, call.id, None if self.deployed else seen))
        if parent.agent.window is not None:  # this turn's model call included
            calls = parent.calls_before + parent.turn + 1
            self.window_calls.append(
                (parent.path, call.tool, call.id, None if self.deployed else calls)
            )

    def _retry(self, parent: Activation, executed: list[str]) -> None:
        """Make again, at once, every call of the turn that ended the way its tool's retry
        names, while it has retries left: each new attempt is a new call (it asks again)."""
        calls = parent.calls or []
        for index, call in enumerate(calls):
            while not isinstance(call, EffectCall):
                retry, ending = self._ending(parent, call)
                if retry is None or ending != retry.after or call.attempt >= retry.times:
                    break
                if isinstance(call, ActionCall):
                    call = ActionCall(
                        call.action,
                        path=call.path,
                        prompt=call.prompt,
                        call_id=call.call_id,
                        attempt=call.attempt + 1,
                    )
                elif call.call is not None:
                    call = self._start(parent, call.call, executed, call.attempt + 1)
                calls[index] = call
                self.retried += 1

    def _ending(self, parent: Activation, call: ActionCall | SubCall) -> tuple[Retry | None, str]:
        """The retry of ``call``'s tool and how the call ended: "error" (it did not do its
        work), "result" (it did), or "" (it has not ended)."""
        if isinstance(call, ActionCall):
            return call.action.retry, {"ran": "result", "refused": "error"}.get(call.outcome, "")
        if call.call is None or not call.complete:
            return None, ""
        sub = next((sub for sub in parent.agent.sub_agents if sub.tool == call.call.tool), None)
        if sub is None:  # a deploy took its sub-agent away: nothing retries it
            return None, ""
        return sub.retry, "result" if call.activation is not None else "error"

    def _open_gate(self, parent: Activation, sub_call: SubCall, executed: list[str]) -> None:
        """A gated call whose gate was answered: approved, its sub-agent is called now."""
        gate, call = sub_call.gate, sub_call.waiting
        if gate is None or call is None or gate.outcome == "asking":
            return
        sub_call.waiting = None
        if gate.outcome == "ran":
            sub_call.activation = self._call(parent, call, executed).activation

    def _call(self, parent: Activation, call: Call, executed: list[str]) -> SubCall:
        """The call of a sub-agent (its gate, if any, approved): a new activation, played up to
        its first question; or, when its preserve_context sub-agent is busy, an error result."""
        sub = next(sub for sub in parent.agent.sub_agents if sub.tool == call.tool)
        path = f"{parent.path}/{sub.tool}"
        if sub.preserve_context:
            busy = self.live.get(path)
            if busy is not None and not busy.finished:
                return SubCall(None, tool=call.tool)
        activation = Activation(sub, path, ephemeral=not sub.preserve_context, prompt=call.prompt)
        if sub.preserve_context:
            self.live[path] = activation
            activation.calls_before = self.model_calls.get(path, 0)
        self._advance(activation, executed)
        return SubCall(activation, tool=call.tool)

    def _release(self, activation: Activation) -> None:
        if not activation.ephemeral and self.live.get(activation.path) is activation:
            self.live[activation.path] = None

    def _asking(self, activation: Activation) -> list[ActionCall]:
        asking: list[ActionCall] = []
        for call in activation.calls or []:
            if isinstance(call, ActionCall) and call.outcome == "asking":
                asking.append(call)
            elif isinstance(call, SubCall) and call.gate is not None and call.waiting is not None:
                if call.gate.outcome == "asking":
                    asking.append(call.gate)
            elif isinstance(call, SubCall) and call.activation is not None:
                asking.extend(self._asking(call.activation))
        return asking

    def _parked_continuations(self) -> int:
        def count(activation: Activation) -> int:
            total = 0
            for call in activation.calls or []:
                if isinstance(call, SubCall) and call.activation is not None:
                    nested = call.activation
                    if not nested.finished:
                        total += (1 if nested.ephemeral else 0) + count(nested)
            return total

        return 0 if self.root is None or self.root.finished else count(self.root)

    def _agent_at(self, path: str) -> Agent | None:
        """The agent at ``path`` in the tree in force (None: a deploy removed it)."""
        agent: Agent | None = self.current
        for name in path.split("/")[1:]:
            subs = [] if agent is None else agent.sub_agents
            agent = next((sub for sub in subs if sub.tool == name), None)
        return agent

    def _expect(
        self,
        executed: list[str],
        *,
        error: ErrorExpectation,
        stop_reason: Literal["end_turn", "interrupt"] | Literal["auto"] | None = "auto",
        unknown_answer: bool = False,
        served: Sequence[tuple[str, str, str]] = (),
        cause: str | None = None,
    ) -> Expected:
        pending = [] if self.root is None else self._asking(self.root)
        finished = self.root is not None and self.root.finished
        if stop_reason == "auto":
            stop_reason = "end_turn" if finished else "interrupt"
        return Expected(
            pending=tuple(sorted((call.action.label, call.question) for call in pending)),
            executions=tuple(sorted(executed)),
            stop_reason=stop_reason,
            final_answer=self.root.agent.answer_for(self.root.prompt)
            if self.root is not None and stop_reason == "end_turn"
            else None,
            error=error,
            parked_continuations=self._parked_continuations(),
            unknown_answer=unknown_answer,
            effects=tuple(sorted(self.effects)),
            tallies=tuple(sorted(self.tallies, key=repr)),
            window_calls=tuple(sorted(self.window_calls, key=repr)),
            served=tuple(sorted(served)),
            returned=tuple(sorted(self.returned, key=repr)),
            acted=tuple(sorted(self.acted, key=repr)),
            failure_cause=cause,
        )


def _gone(call: SubCall) -> None:
    """A sub-agent call a deploy took away, with every question asked below it."""
    call.gone = True
    if call.gate is not None:
        call.gate.gone = True
    for nested in [] if call.activation is None else call.activation.calls or []:
        if isinstance(nested, ActionCall):
            nested.gone = True
        elif isinstance(nested, SubCall):
            _gone(nested)


def expectations(scenario: Scenario) -> list[Expected]:
    """The expectation for every step, as in a run where no id of an ``answer_ids`` step names
    a question the human was shown (a run on no target, or on one whose ids the file does not
    spell): each such answer is refused."""
    oracle = Oracle(scenario)
    expected = [oracle.step(index, step) for index, step in enumerate(scenario.steps)]
    for position, index in enumerate((scenario.expect and scenario.expect.errors) or ()):
        if expected[index].error == "forbidden":
            where = field_path(("expect", "errors", position))
            kind = type(scenario.steps[index]).__name__.lower()
            raise ScenarioError(
                f"{where}: step {index} ({kind}) must not fail: nothing in the scenario makes "
                "it refused"
            )
    return expected


def approvals(expected: list[Expected]) -> Counter[str]:
    """How many times each action may run over the whole scenario."""
    return Counter(label for step in expected for label in step.executions)

"""Known-bad targets: the reference with exactly one historical bug put back.

Each variant is the reference target (``harness.targets.reference``) with one piece replaced by a
subclass that differs from the reference in one place, said in its docstring.  Nothing here
touches a module global the reference reads (the one variant whose bug is module state keeps it
in its own module, by session), so variants and the reference run side by side in one process
and the reference never changes.  They exist to show that the checkers catch each bug the review
thread describes (``tests/test_variants.py`` names the scenario and the invariants for each),
and are reachable as ``bad-<slug>`` through ``harness.targets.registry.get`` but never listed
by ``registry.available()``, so a plain ``python -m harness check`` does not run them.

Where the bug sits:

* in the agent-as-tool's routing (``variants_routing``): whether a call owns a parked turn and
  which answers it is given (the reference's seams ``owns`` and ``responses``);
* in the parked turn (``variants_continuation``): how a call finds it, how the continuation is
  restored, what is emitted, and, in the loop (an ``Agent`` subclass), what survives when a turn
  parks;
* in a gated call (``variants_gates``): the question asked before a gated sub-agent is called,
  and its sub-agent's own questions in the same call;
* after a deploy (``variants_deploys``): a parked call whose tool the changed tree no longer
  has.
* in a retried call (``variants_retries``): what a hook's retry of a tool call is named.
* in the sub-agent tool's name (``tools_named_by_agent``, here): which name its caller calls.
* in the root's answer without an id (``one_answer_for_all``, here): which pending questions
  it answers.
* in the shapes only the coverage sample draws (``variants_coverage``): answers to questions
  under confusable ids, a retry after a parked turn, a refused restore of several questions, a
  retried gated call, a sub-agent's key/value state read back after a restored turn.
* in module state (``variants_processes``): parked turns kept where a rebuild in the same
  process finds them and a new process does not; only a real restart shows it.
* in what a tree rebuilt from the store is built with (``variants_rebuilt``): a model client
  that sends an answer's requests twice, actions that run dry, questions denied where they are
  asked; only what follows a restart differs from the run without restarts.

This module registers them: a ``VariantTree`` builds the reference tree with those classes in
place of the reference's, and ``VARIANTS`` names each variant by its slug.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import harness
from fakes.effects import is_effect
from harness.reference.agent import Agent, AgentResult, EventSink
from harness.reference.agent_as_tool import SubAgentTool
from harness.reference.state import AgentState, InterruptState, Message, copy_json
from harness.reference.tree import (
    ActionToolFactory,
    AgentSpec,
    EffectToolFactory,
    GateFactory,
    ModelFactory,
    SubAgentSpec,
    Tree,
)
from harness.targets.adapter import shown_to_the_human
from harness.targets.base import Observation, PendingInterrupt, Target, TargetInfo
from harness.targets.reference import (
    SESSION_KEYS,
    TREE_KEY,
    ReferenceSession,
    ReferenceTarget,
    gate_for,
)
from harness.targets.variants_continuation import (
    DropConversationManagerStateTool,
    DropModelStateTool,
    DropRestoredResultAgent,
    ExposedContinuationTool,
    HistoryAccumulationTool,
    LastResultTwiceAgent,
    RebuildContextAgent,
    ReplayTurnAgent,
    RestoredTurnStreamedTool,
    SharedObjectTool,
    SwallowRestoreFailureTool,
    restore_every_turn,
)
from harness.targets.variants_coverage import (
    AgentStateOnTheToolTool,
    ApprovalsOnTheToolTool,
    CallerProviderStateTool,
    ConversationOnTheToolTool,
    GateApprovalStandsTool,
    HistoryAccumulationAsAResultTool,
    LooseAnswerLookupTool,
    ParkedBySharedKeyTool,
    ParkedMessagesOnTheToolTool,
    ProviderStateOnTheToolAsAResultTool,
    ProviderStateOnTheToolTool,
    RefusedRestoreKeepsOneAgent,
    RestoreDropsStateTool,
    RestoreDropsUnusedWindowCountTool,
    RetryContinuesParkedTool,
    WindowCountedTwiceTool,
)
from harness.targets.variants_deploys import DropGoneCallsAgent, RunsBeforeItRefusesAgent
from harness.targets.variants_gates import GateAnswersNestedTool, GateAskedAgainTool
from harness.targets.variants_processes import ProcessMemoryTool, forget
from harness.targets.variants_rebuilt import denied_at_once, dry_run, sending_twice, unheard
from harness.targets.variants_retries import RetryReusesIdsAgent
from harness.targets.variants_routing import (
    ApprovalsKeptAgent,
    BusyAcrossSessionsTool,
    BusySubAgentTool,
    CallNamedQuestionsAgent,
    CrossedInputsAgent,
    ForwardToAllTool,
    GatedNestedRaisedAsItsOwnTool,
    NoNamespacingTool,
    NoOwnershipCheckTool,
    OneCallPerMessageTool,
    ResumeByResponsesTool,
    ResumeRunsThePromptAgainAgent,
    ReuseStaleAnswersAgent,
    RoutesKeptInMemoryAgent,
    StaleAnswerEndsTheTurnAgent,
    StaleAnswerFailsItsCallAgent,
    StaleAnswerRefusedOnceCarriedOutAgent,
    SwapTwinAnswersTool,
    SwapTwinResultsAgent,
    TruncatedIdsTool,
    rebuilt_as,
)
from scenarios.model import Scenario

VARIANT_PREFIX: Final = "bad-"  # a variant's target name: this, then its slug


# --- a reference tree, session and target built with one replaced class -----------------------


@dataclass(frozen=True)
class Variant:
    slug: str
    description: str
    agent_class: type[Agent] = Agent
    # the agent_class is the root agent's alone: every sub-agent is the reference's
    only_the_root: bool = False
    tool_class: type[SubAgentTool] = SubAgentTool
    write_ahead: bool = True  # False: answers are carried out without marking them first
    # only a restart that is a new process shows the bug (``--isolation fork``): module state
    real_restart: bool = False
    # an answer without an id (``resume``) answers every pending question, not only a lone one
    one_answer_for_all: bool = False
    # a sub-agent tool is named by its agent's name, never by its ``tool_name``
    tools_named_by_agent: bool = False
    # the root session is stored only while its turn is interrupted: a turn that ends leaves the
    # store as the last interrupt left it
    stores_only_interrupted: bool = False
    # a preserve_context sub-agent's session is stored only while its turn is interrupted
    sessions_only_while_parked: bool = False
    # an answer refused loudly stays attached to the questions it named, which the root shows
    refused_answers_attached: bool = False
    # the root session is stored without its parked turn (its interrupt state): a restart brings
    # its conversation back, not interrupted
    stores_no_parked_turn: bool = False
    # a rebuild restores every stored sub-agent turn at once: one that cannot be restored fails
    # the rebuild, not the answer to its call
    restores_every_turn_at_load: bool = False
    # a root session rebuilt from its stored record keeps the version it was loaded under: its
    # first save goes through, every later one is refused as a lost update
    saves_under_the_loaded_version: bool = False
    # in a tree rebuilt from the store, an answer's step sends each model request twice and
    # keeps the second reply
    answers_send_requests_twice_when_rebuilt: bool = False
    # a tree rebuilt from the store sends its root's last model request again at its first step,
    # before anything else, and drops the reply
    replays_last_request_when_rebuilt: bool = False
    # a tree rebuilt from the store carries out no approved action (a dry run): each answers
    # that it is done
    actions_dry_run_when_rebuilt: bool = False
    # a tree rebuilt from the store answers each question its actions ask with a denial, at once
    questions_denied_when_rebuilt: bool = False
    # a tree rebuilt from the store builds protected actions that never hear their answers
    answers_unheard_when_rebuilt: bool = False
    # a root session shows the questions every root session of the deployment waits on
    shows_every_sessions_questions: bool = False
    # a root session rebuilt from the store lists no question its turn waits on
    lists_no_questions_when_rebuilt: bool = False
    # the ordinary tools' outbox is never cleared: each restart delivers again every ordinary
    # tool call made since the one before
    effects_delivered_again_at_a_restart: bool = False

    @property
    def name(self) -> str:
        return f"{VARIANT_PREFIX}{self.slug}"


# what a save under a stale version fails with (``saves_under_the_loaded_version``)
STALE_VERSION: Final = (
    "LostUpdateError: the session was saved under the version it was loaded with, and the "
    "store holds a later one"
)


class VariantTree(Tree):
    """The reference ``Tree``, with every agent and every agent-as-tool of the variant's classes
    (built by the reference, then rebuilt from the same parts)."""

    def __init__(
        self,
        spec: AgentSpec,
        variant: Variant,
        *,
        model_for: ModelFactory,
        action_tool: ActionToolFactory,
        persisted: bytes | None = None,
        emit: EventSink | None = None,
        gate_for: GateFactory | None = None,
        effect_tool: EffectToolFactory | None = None,
        session: str = "",
        shared_tools: Mapping[str, SubAgentTool] | None = None,
    ) -> None:
        self.variant = variant
        self.session = session  # the session building it (its work directory)
        self.answering = False  # in an answer's step (``resume``, ``resume_one``)
        self.rebuilt = persisted is not None  # built from the store: after a restart
        self.replayed = False  # its first step came (``replays_last_request_when_rebuilt``)
        if variant.answers_send_requests_twice_when_rebuilt and self.rebuilt:
            model_for = sending_twice(model_for, lambda: self.answering)
        if variant.actions_dry_run_when_rebuilt and self.rebuilt:
            action_tool = dry_run(action_tool)
        if variant.questions_denied_when_rebuilt and self.rebuilt:
            action_tool = denied_at_once(action_tool)
        if variant.answers_unheard_when_rebuilt and self.rebuilt:
            action_tool = unheard(action_tool)
        super().__init__(
            spec,
            model_for=model_for,
            action_tool=action_tool,
            persisted=persisted,
            emit=emit,
            gate_for=gate_for,
            effect_tool=effect_tool,
            shared_tools=shared_tools,
        )
        if variant.restores_every_turn_at_load and persisted is not None:
            restore_every_turn(self.root.state.interrupt_state.context)

    def persist(self) -> bytes:
        """The reference's store; a variant that stores sessions only while they wait
        (``sessions_only_while_parked``) leaves out every sub-agent session whose turn is not
        interrupted, and one that stores no parked turn (``stores_no_parked_turn``) stores the
        root without its interrupt state."""
        persisted = super().persist()
        if not (self.variant.sessions_only_while_parked or self.variant.stores_no_parked_turn):
            return persisted
        document = json.loads(persisted)
        if self.variant.sessions_only_while_parked:
            document["sessions"] = {
                path: session
                for path, session in document["sessions"].items()
                if session["interrupt_state"]["activated"]
            }
        if self.variant.stores_no_parked_turn:
            document["root"]["interrupt_state"] = InterruptState().to_json()
        return json.dumps(document, sort_keys=True, ensure_ascii=False).encode()

    def resume(
        self, responses: Mapping[str, Any], write_ahead: Callable[[bytes], None]
    ) -> AgentResult:
        self.answering = True
        try:
            return super().resume(responses, write_ahead)
        finally:
            self.answering = False

    def resume_one(self, response: Any, write_ahead: Callable[[bytes], None]) -> AgentResult:
        self.answering = True
        try:
            return super().resume_one(response, write_ahead)
        finally:
            self.answering = False

    def answered_by_one(self, pending: list[str]) -> list[str]:
        if self.variant.one_answer_for_all:
            return pending  # several pending: each of them takes the one answer
        return super().answered_by_one(pending)

    def _build(self, spec: AgentSpec, path: str, state: AgentState | None) -> Agent:
        agent = super()._build(spec, path, state)
        if self.variant.agent_class is Agent or (self.variant.only_the_root and "/" in path):
            return agent
        return rebuilt_as(self.variant.agent_class, agent)

    def _sub_agent_tool(self, sub: SubAgentSpec, path: str) -> SubAgentTool:
        tool = super()._sub_agent_tool(sub, path)
        if self.variant.tools_named_by_agent:
            tool.name = sub.agent.name  # two clones: the second shadows the first
        if self.variant.tool_class is SubAgentTool:
            return tool
        variant_tool = self.variant.tool_class(
            tool.name,
            tool.build,
            preserve_context=tool.preserve_context,
            live=tool.live,
            gate=tool.gate,
            parked_in_session=tool.parked_in_session,
            session_consumed=tool.session_consumed,
        )
        if isinstance(variant_tool, ProcessMemoryTool):
            variant_tool.remember(self.session, path)
        return variant_tool


def last_request(messages: Sequence[Message]) -> list[Message]:
    """What the model was sent for its latest reply in ``messages`` (a copy): the messages
    before its last; none where it has not replied."""
    replied = [place for place, message in enumerate(messages) if message["role"] == "assistant"]
    return copy_json(list(messages[: replied[-1]])) if replied else []


class VariantSession(ReferenceSession):
    """The reference session, building a ``VariantTree``."""

    def __init__(self, scenario: Scenario, workdir: Path, variant: Variant) -> None:
        self.variant = variant
        self.session = str(workdir)
        forget(self.session)  # nothing of an earlier session under the same name
        # per store key of a root session rebuilt from its stored record, the saves made since
        # (``saves_under_the_loaded_version``); a session started on an empty store has none
        self.saves_since_loaded: dict[str, int] = {}
        self.written_ahead: bytes | None = None  # what this step's write-ahead stored
        self.delivered = 0  # the ledger's records a start delivered, or came before
        super().__init__(scenario, workdir)

    def _write_ahead(self, persisted: bytes) -> None:
        if self.variant.write_ahead:
            super()._write_ahead(persisted)
            self.written_ahead = persisted

    def _step(self, call: Any) -> Observation:
        """The reference's step; a variant that stores only interrupted turns
        (``stores_only_interrupted``) puts back what the store held before a step that ended the
        turn, one that saves under the version a rebuilt session was loaded with
        (``saves_under_the_loaded_version``) has every save after the first refused, one that
        shows every session's questions (``shows_every_sessions_questions``) adds the other root
        sessions' to its own, and one that lists none once rebuilt
        (``lists_no_questions_when_rebuilt``) shows none after a restart."""
        before = self.store.get(self.key)
        self.written_ahead = None
        tree = self.tree
        if self.variant.replays_last_request_when_rebuilt and isinstance(tree, VariantTree):
            self._replay_last_request(tree)
        observation = super()._step(call)
        if self.variant.shows_every_sessions_questions:
            observation = replace(observation, pending=observation.pending + self._others_waiting())
        rebuilt = isinstance(self.tree, VariantTree) and self.tree.rebuilt
        if self.variant.lists_no_questions_when_rebuilt and rebuilt:
            observation = replace(observation, pending=())
        ended = observation.stop_reason == "end_turn"
        if self.variant.stores_only_interrupted and ended and before is not None:
            self.store.put(self.key, before)  # what the last interrupt stored stays
        saves = self.saves_since_loaded.get(self.key)
        if saves is None:
            return observation
        self.saves_since_loaded[self.key] = saves + 1
        if saves == 0:
            return observation
        # the step's work is done; its save is refused, so the store keeps what it held (and
        # the write-ahead's marks, a journal the version does not guard), and the step fails
        kept = self.written_ahead if self.written_ahead is not None else before
        if kept is not None:
            self.store.put(self.key, kept)
        return replace(observation, stop_reason=None, final_answer=None, error=STALE_VERSION)

    def _replay_last_request(self, tree: VariantTree) -> None:
        """At a rebuilt tree's first step, its root's last model request sent again, the reply
        dropped (``replays_last_request_when_rebuilt``): where the root's model has replied and
        keeps no provider state (a stateful provider would refuse a request it has answered)."""
        if not tree.rebuilt or tree.replayed:
            return
        tree.replayed = True
        asked = last_request(tree.root.state.messages)
        if asked and not tree.root.state.model_state:
            tree.root.model(asked, {})

    def _others_waiting(self) -> tuple[PendingInterrupt, ...]:
        """What the other root sessions wait on (``shows_every_sessions_questions``)."""
        return tuple(
            shown
            for name, tree in sorted(self.trees.items())
            if name != self.root_session and tree is not None
            for shown in shown_to_the_human(tree.root.state.interrupt_state.pending)
        )

    def _loaded(self, keys: Sequence[str]) -> None:
        """Root sessions (by store key) just rebuilt: those rebuilt from a stored record keep
        the version they were loaded under (``saves_under_the_loaded_version``)."""
        if not self.variant.saves_under_the_loaded_version:
            return
        for key in keys:
            if self.store.get(key) is not None:
                self.saves_since_loaded[key] = 0
            else:
                self.saves_since_loaded.pop(key, None)

    def restart(self) -> str | None:
        failure = super().restart()
        self._loaded([SESSION_KEYS[name] for name in self.trees])
        self._started()
        return failure

    def restart_root_session(self, name: str) -> str | None:
        failure = super().restart_root_session(name)
        self._loaded([SESSION_KEYS[name]])
        self._started()
        return failure

    def _started(self) -> None:
        """A process (or the one serving a root session) just started: one whose outbox is
        never cleared (``effects_delivered_again_at_a_restart``) delivers again each ordinary
        tool call the ledger recorded since the last start, whether or not a tree was rebuilt."""
        if not self.variant.effects_delivered_again_at_a_restart:
            return
        log = self.ledger.log
        since = log.records(self.delivered)
        again = [record for record in since if is_effect(record)]
        for record in again:
            log.append(record)
        self.delivered += len(since) + len(again)

    def answer(self, responses: Sequence[tuple[PendingInterrupt, Any]]) -> Observation:
        """The reference's answer; a variant that keeps a refused answer
        (``refused_answers_attached``) shows each question the refused answer named still pending
        with that answer attached."""
        observation = super().answer(responses)
        if not self.variant.refused_answers_attached or observation.error is None:
            return observation
        sent = {pending.id: response for pending, response in responses}
        shown = tuple(
            replace(pending, response=sent[pending.id]) if pending.id in sent else pending
            for pending in observation.pending
        )
        return replace(observation, pending=shown)

    def _build(self, key: str = TREE_KEY, shared: dict[str, SubAgentTool] | None = None) -> Tree:
        return VariantTree(
            self.spec,
            self.variant,
            model_for=self._model_for,
            action_tool=self._action_tool,
            persisted=self.store.get(key),
            emit=self.public_events.append,
            gate_for=gate_for,
            effect_tool=self._effect_tool,
            session=self.session,
            shared_tools=shared,
        )


class VariantTarget:
    """The reference target with one bug put back."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.info = TargetInfo(
            name=variant.name,
            version=harness.__version__,
            capabilities=ReferenceTarget.info.capabilities,
            description=variant.description,
            corruptions=ReferenceTarget.info.corruptions,
        )

    def start(self, scenario: Scenario, workdir: Path) -> VariantSession:
        return VariantSession(scenario, workdir, self.variant)


_ALL: Final = (
    Variant(
        "shared-object",
        "resumes only from the in-memory parked sub-agent: after a restart the stored "
        "continuation is ignored and the sub-agent starts over (asks again)",
        tool_class=SharedObjectTool,
    ),
    Variant(
        "gate-raises-nested-as-its-own",
        "a gated call's agent tool raises each question its sub-agent asks again as the call's "
        "own, as an approval wrapper would: the question is shown under its gate's id, "
        "whatever the toolUseIds, and the gate takes its answer",
        tool_class=GatedNestedRaisedAsItsOwnTool,
    ),
    Variant(
        "no-namespacing",
        "interrupts travel up under their local id, answers go down by local id to every call",
        tool_class=NoNamespacingTool,
    ),
    Variant(
        "forward-to-all",
        "an answer goes down to every call holding its local id (outer toolUseId not compared)",
        tool_class=ForwardToAllTool,
    ),
    Variant(
        "drop-model-state",
        "restoring a continuation drops the sub-agent's model state",
        tool_class=DropModelStateTool,
    ),
    Variant(
        "drop-conversation-manager-state",
        "restoring a continuation resets the conversation-manager state to its initial state",
        tool_class=DropConversationManagerStateTool,
    ),
    Variant(
        "exposed-continuation",
        "the stored continuation is emitted in a public event when a sub-agent turn parks",
        tool_class=ExposedContinuationTool,
    ),
    Variant(
        "restored-turn-streamed-again",
        "a resumed sub-agent's whole messages list is streamed to its caller's callbacks at "
        "every resume: the turns it wrote before its question, stored and restored, are "
        "published again",
        tool_class=RestoredTurnStreamedTool,
    ),
    Variant(
        "swallow-restore-failure",
        "a continuation that cannot be restored is swallowed: error tool result, approval lost",
        tool_class=SwallowRestoreFailureTool,
    ),
    Variant(
        "rebuild-context",
        "the interrupt context is rebuilt when the loop parks, discarding stored sub-agent turns",
        agent_class=RebuildContextAgent,
    ),
    Variant(
        "no-ownership-check",
        "a call resumes whenever the sub-agent is parked, without checking the parent owns it",
        tool_class=NoOwnershipCheckTool,
    ),
    Variant(
        "resume-by-responses",
        "whether a call resumes is decided by the answers routed to it, not by interrupt state",
        tool_class=ResumeByResponsesTool,
    ),
    Variant(
        "no-write-ahead",
        "answers are carried out without first persisting that they are: an action that ran "
        "just before a crash runs again when the answer is re-sent",
        write_ahead=False,
    ),
    Variant(
        "reuse-stale-answers",
        "an answer naming no pending question answers the one now asked at its place, or is "
        "dropped silently",
        agent_class=ReuseStaleAnswersAgent,
    ),
    Variant(
        "resent-answer-routed-from-memory",
        "a re-sent answer is routed through a table in memory of the questions the root took "
        "answers for: it answers the question now pending under the same toolUseIds and name "
        "(a later turn's), as an SDK that routes answers by tool call id; a restart empties the "
        "table, so only the run without restarts takes it",
        agent_class=RoutesKeptInMemoryAgent,
        only_the_root=True,
    ),
    Variant(
        "resume-runs-the-prompt-again",
        "an answer that finds no parked turn (its turn ended) runs the turn's prompt again, as "
        "an SDK that resumes a finished run by starting it over from its last user message: "
        "the turn's questions are asked again",
        agent_class=ResumeRunsThePromptAgainAgent,
        only_the_root=True,
    ),
    Variant(
        "stale-answer-refused-once-carried-out",
        "an answer naming no pending question answers the one now asked at its place, the turn "
        "goes on, and only then is the answer refused and the turn's state dropped: its actions "
        "ran unapproved while its questions stay as they were, as an SDK that checks a resume "
        "map when it saves the turn",
        agent_class=StaleAnswerRefusedOnceCarriedOutAgent,
        only_the_root=True,
    ),
    Variant(
        "stale-answer-ends-the-turn",
        "an answer naming no pending question is dropped silently and the step ends the turn "
        "without an answer, though its questions still wait",
        agent_class=StaleAnswerEndsTheTurnAgent,
    ),
    Variant(
        "stale-answer-fails-its-call",
        "an answer to a sub-agent's question already answered is taken and sent down to the "
        "call that asked, which finds no such question pending and ends with an error result: "
        "its questions asked since are lost, as strands forwards an answered interrupt id again",
        agent_class=StaleAnswerFailsItsCallAgent,
    ),
    Variant(
        "swap-twin-answers",
        "on resume a call is given the answers meant for its twin call of the same sub-agent "
        "(the next call in the parent's turn)",
        tool_class=SwapTwinAnswersTool,
    ),
    Variant(
        "history-accumulation",
        "an ephemeral sub-agent starts each call from its earlier calls' messages",
        tool_class=HistoryAccumulationTool,
    ),
    Variant(
        "gate-answers-nested",
        "the approval of a gated call is taken as the answer to every question its sub-agent "
        "asks in that call (the same toolUseId)",
        tool_class=GateAnswersNestedTool,
    ),
    Variant(
        "gate-asked-again",
        "a gated call that resumes its parked sub-agent asks its gate again, as if it were new",
        tool_class=GateAskedAgainTool,
    ),
    Variant(
        "replay-turn",
        "a resumed turn is played again from its start: every tool call of the parked model "
        "message runs again, an ordinary tool before the question included",
        agent_class=ReplayTurnAgent,
    ),
    Variant(
        "drop-gone-calls",
        "after a deploy a parked call whose tool was renamed or removed ends as a call of an "
        "unknown tool: its question vanishes and an answer to it is accepted and lost",
        agent_class=DropGoneCallsAgent,
    ),
    Variant(
        "retry-reuses-ids",
        "a retried tool call keeps its first attempt's identity: the first attempt's answers are "
        "replayed to the retry, which never asks again",
        agent_class=RetryReusesIdsAgent,
    ),
    Variant(
        "swap-twin-results",
        "after a resume the results of twin calls of the same sub-agent (one model turn) are "
        "handed back crossed: each call gets the next twin's result",
        agent_class=SwapTwinResultsAgent,
    ),
    Variant(
        "busy-sub-agent",
        "an ephemeral sub-agent tool holds one sub-agent at a time: while one call's turn is "
        "parked in this process, any other call of it (its twin in the same turn, a retry) is "
        "turned away with an error result and never asks, as strands turns a second call of one "
        "agent tool away",
        tool_class=BusySubAgentTool,
    ),
    Variant(
        "one-call-per-message",
        "an ephemeral sub-agent tool runs one call of a model message: the message's calls start "
        "at once, and every later call of it in the message is turned away with an error result "
        "and never asks, whether the first asked or answered, as strands' concurrent tool calls "
        "find its agent tool already processing a request",
        tool_class=OneCallPerMessageTool,
    ),
    Variant(
        "ended-turn-not-stored",
        "the root session is stored only while its turn is interrupted: a turn that ends leaves "
        "the store as its last interrupt left it, so a restart after the end brings back that "
        "interrupted turn (the next prompt is refused) or none (the conversation starts over)",
        stores_only_interrupted=True,
    ),
    Variant(
        "idle-session-not-stored",
        "a preserve_context sub-agent's session is stored only while its turn is interrupted: "
        "once the turn ends its conversation is left out of the store, so after a restart its "
        "next call starts without its history, as a framework that keeps a sub-agent's "
        "conversation only in its continuation",
        sessions_only_while_parked=True,
    ),
    Variant(
        "saves-under-the-loaded-version",
        "a root session rebuilt from the store keeps the version it was loaded under and never "
        "takes the one its save made: after a restart its first save goes through and every "
        "later one is refused as a lost update, so each later step does its work and then "
        "fails, and the next restart brings back what that first save stored (with a later "
        "answer's write-ahead marks, a journal no version guards), as a store guarding against "
        "lost updates whose session object is not told its new version",
        saves_under_the_loaded_version=True,
    ),
    Variant(
        "answers-sent-twice-when-rebuilt",
        "in a tree rebuilt from the store an answer's step sends each model request twice and "
        "keeps the second reply, as a resume path that wraps the restored agents' model client "
        "in its retrying layer once more: the same turns, answers and actions, but after a "
        "restart every answer costs twice the model calls the run without restarts made",
        answers_send_requests_twice_when_rebuilt=True,
    ),
    Variant(
        "actions-dry-run-when-rebuilt",
        "a tree rebuilt from the store builds its protected actions without their client, as a "
        "dry run: each is still asked and answered, and once approved it answers that it is "
        "done while nothing is carried out, so after a restart the model, the questions and the "
        "turn's end are those of the run without restarts, and no approved action happens",
        actions_dry_run_when_rebuilt=True,
    ),
    Variant(
        "questions-denied-when-rebuilt",
        "a tree rebuilt from the store answers each question its protected actions ask with a "
        "denial on the spot, as a worker rebuilt without its human channel that falls back to "
        "a deny-by-default policy: after a restart no new question reaches the root and every "
        "action asked about is refused",
        questions_denied_when_rebuilt=True,
    ),
    Variant(
        "answers-unheard-when-rebuilt",
        "a tree rebuilt from the store builds protected actions that read their answers where "
        "the rebuild registered none, as a resume handler registered only at startup: after a "
        "restart each question, once answered, is asked again",
        answers_unheard_when_rebuilt=True,
    ),
    Variant(
        "effects-delivered-again-at-a-restart",
        "the ordinary tools' outbox is never cleared once delivered, as a transactional outbox "
        "without its delete: each restart delivers again every ordinary tool call made since the "
        "one before, so a write runs twice",
        effects_delivered_again_at_a_restart=True,
    ),
    Variant(
        "every-sessions-questions-shown",
        "a root session shows, beside its own, the questions every other root session of the "
        "deployment waits on, as a pending-question list read from the deployment's store "
        "without its session key: one user sees another's questions",
        shows_every_sessions_questions=True,
    ),
    Variant(
        "questions-unlisted-when-rebuilt",
        "a root session rebuilt from the store lists the questions its turn waits on from an "
        "index in memory that the rebuild leaves empty: after a restart no question is shown, "
        "though the turn waits on them and takes their answers",
        lists_no_questions_when_rebuilt=True,
    ),
    Variant(
        "call-named-questions",
        "an ordinary tool's questions are named by its call alone: an action that asks twice "
        "asks its second question under the id its first was shown under, told apart by their "
        "names only, as an SDK that names an interrupt by the tool call that raised it",
        agent_class=CallNamedQuestionsAgent,
    ),
    Variant(
        "refused-answer-attached",
        "an answer refused loudly stays attached to the questions it named: the root shows them "
        "still pending with that answer, as an SDK that sets the response on its interrupt "
        "objects before it finds it cannot resume",
        refused_answers_attached=True,
    ),
    Variant(
        "busy-sub-agent-takes-stale-answers",
        "busy-sub-agent and stale-answer-fails-its-call at once, as strands has both: a second "
        "call of an ephemeral sub-agent tool is turned away while one is parked, and an answered "
        "question's answer re-sent fails the call that asked",
        agent_class=StaleAnswerFailsItsCallAgent,
        tool_class=BusySubAgentTool,
    ),
    Variant(
        "parked-turn-not-stored",
        "the root session is stored without its parked turn: its conversation survives a "
        "restart, its interrupt state does not, so after one the root is not interrupted, every "
        "question is gone and an answer finds nothing to resume, as a session store that keeps "
        "a conversation's messages and not what it waits for",
        stores_no_parked_turn=True,
    ),
    Variant(
        "drop-restored-result",
        "a resumed turn is sent to the model without its last tool result (in the restart-free "
        "run too: only a check of each request on its own sees it)",
        agent_class=DropRestoredResultAgent,
    ),
    Variant(
        "last-result-twice",
        "the results of a model message that called several tools carry the last result twice, "
        "as a parallel executor that collects the last call to finish again (in the "
        "restart-free run too: only a check of each request on its own sees it)",
        agent_class=LastResultTwiceAgent,
    ),
    Variant(
        "approvals-kept",
        "the root agent keeps an ordinary tool's answers in memory by the call's toolUseId, "
        "tool and question: a later prompt's call under the same toolUseId runs that tool "
        "without asking, as an SDK that caches a human's decisions by tool call id",
        agent_class=ApprovalsKeptAgent,
        only_the_root=True,
    ),
    Variant(
        "runs-before-it-refuses",
        "an answer one of whose calls cannot resume (its tool gone after a deploy, its stored "
        "turn damaged) is refused only after the turn was carried out as far as it goes: the "
        "calls before that one have run, their approved actions too, and the questions stay "
        "pending, as a loop that checks each parked call only as it resumes it",
        agent_class=RunsBeforeItRefusesAgent,
        only_the_root=True,
    ),
    Variant(
        "crossed-inputs",
        "the calls of one model message to different sub-agents are handed each other's "
        "inputs, as a parallel executor that pairs calls with inputs out of order: each "
        "sub-agent is asked another call's prompt",
        agent_class=CrossedInputsAgent,
    ),
    Variant(
        "ids-of-the-call-alone",
        "a question goes up, and its answer comes down, under the id of the tool call that asked "
        "it alone: no sub-agent's call before it and no question's number, as an SDK that keys "
        "approvals by tool call id. Sub-agents' calls under one toolUseId share their questions' "
        "ids, so an approval of one reaches the other, whose second question then takes that "
        "approval again when it is re-sent",
        agent_class=CallNamedQuestionsAgent,
        tool_class=NoNamespacingTool,
    ),
    Variant(
        "last-request-replayed-when-rebuilt",
        "a tree rebuilt from the store sends its root's last model request again at its first "
        "step and drops the reply, as a client that checks a restored conversation against its "
        "model: after a restart that came once the turn ended, even a re-sent answer it refuses "
        "costs a request the run without restarts never made",
        replays_last_request_when_rebuilt=True,
    ),
    Variant(
        "process-memory",
        "resumes a parked sub-agent turn only from a map kept in module state (as "
        "openai-agents did before #2500): a rebuild in the same process finds it, a new process "
        "ignores the stored continuation and starts the sub-agent over (asks again)",
        tool_class=ProcessMemoryTool,
        real_restart=True,
    ),
    Variant(
        "one-answer-for-all",
        "an answer without an id (a scalar resume) is taken as the answer to every pending "
        "question, as LangGraph did within one subgraph task before 1.2.13 (#8579)",
        one_answer_for_all=True,
    ),
    Variant(
        "tools-named-by-agent",
        "a sub-agent tool is registered under its agent's name, not its tool name: of two agent "
        "tools over clones of one agent the second shadows the first (as openai-agents keyed "
        "nested approvals by agent name, #5141)",
        tools_named_by_agent=True,
    ),
    Variant(
        "truncated-ids",
        "a call's questions go up, and its answers come down, under its call key cut to 64 "
        "characters: two long toolUseIds alike in their first characters share one name",
        tool_class=TruncatedIdsTool,
    ),
    # bugs in shapes only the coverage sample draws (``variants_coverage``)
    Variant(
        "loose-answer-lookup",
        "a call's answers are picked by its call key in Unicode NFC: an answer to the call "
        "\u00e9 also reaches its NFD twin e\u0301, whose sub-agent asked the same",
        tool_class=LooseAnswerLookupTool,
    ),
    Variant(
        "retry-continues-parked",
        "the sub-agent restored from a stored turn is kept under the call's toolUseId: a retry "
        "of a call whose first attempt was restored continues that finished turn",
        tool_class=RetryContinuesParkedTool,
    ),
    Variant(
        "refused-restore-keeps-one",
        "a stored turn that cannot be restored is refused loudly, but of each call's pending "
        "questions only the first stays pending",
        agent_class=RefusedRestoreKeepsOneAgent,
    ),
    Variant(
        "restore-drops-state",
        "an ephemeral sub-agent's stored turn is restored without its key/value state: what "
        "its tools wrote before the question is gone after a restart",
        tool_class=RestoreDropsStateTool,
    ),
    Variant(
        "restore-drops-window-count",
        "an ephemeral sub-agent's stored turn is restored without its window's count of model "
        "calls where the window trims before every call: the count starts again after a "
        "restart",
        tool_class=RestoreDropsUnusedWindowCountTool,
    ),
    Variant(
        "gate-approval-stands",
        "a gate approved for a call stands for its retries: a retried gated call is called "
        "again without asking its gate",
        tool_class=GateApprovalStandsTool,
    ),
    Variant(
        "parked-by-shared-key",
        "the agent tool keeps its parked sub-agents by call key alone, shared by every root "
        "session calling it: an answer in one session resumes the sub-agent another session "
        "parked under the same key",
        tool_class=ParkedBySharedKeyTool,
    ),
    Variant(
        "provider-state-on-the-tool",
        "an ephemeral sub-agent's new call starts from the provider state (the last response "
        "id) its previous call left on the agent tool, shared by every root session calling it: "
        "one user's call sends another user's response id",
        tool_class=ProviderStateOnTheToolTool,
    ),
    Variant(
        "provider-state-on-the-tool-as-a-result",
        "provider-state-on-the-tool in an agent tool that hands what its sub-agent failed with "
        "to the caller as the call's error result, as strands' does: the provider refuses the "
        "carried response id, and the caller goes on without the call's questions",
        tool_class=ProviderStateOnTheToolAsAResultTool,
    ),
    Variant(
        "history-accumulation-as-a-result",
        "history-accumulation in an agent tool that hands what its sub-agent failed with to the "
        "caller as the call's error result, as strands' does: a stateful provider refuses the "
        "new call's first request, a follow-up of the earlier calls' messages without their "
        "response id, and the caller goes on without the call's questions",
        tool_class=HistoryAccumulationAsAResultTool,
    ),
    Variant(
        "caller-provider-state",
        "an ephemeral sub-agent's new call starts from its caller's provider state (the "
        "caller's last response id), as an agent tool that hands the run's provider settings "
        "down to the sub-agent's run would: its first request continues its caller's "
        "conversation",
        tool_class=CallerProviderStateTool,
    ),
    Variant(
        "agent-state-on-the-tool",
        "an ephemeral sub-agent's new call starts from the key/value state its previous call's "
        "tools left on the agent tool, shared by every root session calling it: one user's "
        "call reads what another user's wrote",
        tool_class=AgentStateOnTheToolTool,
    ),
    Variant(
        "window-counted-twice",
        "a sub-agent's sliding window counts each of its model calls twice, as a window "
        "registered both as its conversation manager and as a hook provider would: its lookups "
        "read twice the calls it made, and it trims at other calls",
        tool_class=WindowCountedTwiceTool,
    ),
    Variant(
        "approvals-on-the-tool",
        "an ephemeral sub-agent's ordinary tools' answers are kept on the agent tool by "
        "toolUseId, tool and question, shared by every root session calling it: a later call "
        "under the same toolUseId, another user's too, runs that tool without asking",
        tool_class=ApprovalsOnTheToolTool,
    ),
    Variant(
        "restore-at-load",
        "a rebuild restores every stored sub-agent turn at once, as a session loaded whole is: "
        "one that cannot be restored fails the rebuild (every root session's steps after it "
        "find nothing rebuilt), not the answer to its own call",
        restores_every_turn_at_load=True,
    ),
    Variant(
        "busy-across-sessions",
        "an ephemeral sub-agent tool holds one sub-agent at a time, whoever calls it: while one "
        "user's call of it is parked in this process, another user's call (another root session "
        "calling the same agent tool, under the same toolUseId too) is turned away with an error "
        "result and never asks",
        tool_class=BusyAcrossSessionsTool,
    ),
    Variant(
        "parked-messages-on-the-tool",
        "an ephemeral sub-agent's messages are cleared when a call ends, not when one starts: a "
        "call that parked leaves its conversation on the agent tool, shared by every root "
        "session calling it, and the next call, another user's too, starts from it",
        tool_class=ParkedMessagesOnTheToolTool,
    ),
    Variant(
        "conversation-on-the-tool",
        "an ephemeral sub-agent's new call starts from the conversation its previous call left "
        "on the agent tool, its messages and its provider state (the last response id) "
        "together, shared by every root session calling it: the provider takes the carried id "
        "as a follow-up of a conversation it knows, so nothing refuses it",
        tool_class=ConversationOnTheToolTool,
    ),
)

VARIANTS: Final[dict[str, Callable[[], Target]]] = {
    variant.slug: functools.partial(VariantTarget, variant) for variant in _ALL
}
KNOWN_BAD: Final[tuple[tuple[str, str], ...]] = tuple(
    (variant.slug, variant.description) for variant in _ALL
)
# the variants (by target name) whose bug only a restart that is a new process shows
REAL_RESTART_ONLY: Final[frozenset[str]] = frozenset(
    variant.name for variant in _ALL if variant.real_restart
)

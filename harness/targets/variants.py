"""Known-bad targets: the reference with exactly one historical bug put back.

Each variant is the reference target (``harness.targets.reference``) with one piece replaced by a
subclass that differs from the reference in one place, said in its docstring.  Nothing here
touches a module global, so variants and the reference run side by side in one process and the
reference never changes.  They exist to show that the checkers catch each bug the review thread
describes (``tests/test_variants.py`` names the scenario and the invariants for each), and are
reachable as ``bad-<slug>`` through ``harness.targets.registry.get`` but never listed by
``registry.available()``, so a plain ``python -m harness check`` does not run them.

Where the bug sits:

* in the agent-as-tool (``SubAgentTool`` subclasses): whether a call owns a parked turn and
  which answers it is given (the reference's seams ``owns`` and ``responses``), how a call finds
  its parked turn, how the continuation is restored, what is emitted;
* in the loop (``Agent`` subclass): what survives when a turn parks.

A ``VariantTree`` builds the reference tree with those classes in place of the reference's.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

import harness
from harness.reference.agent import (
    PENDING_TOOL_CALL,
    RESULTS_SO_FAR,
    Agent,
    AgentResult,
    Completed,
    EventSink,
    Interrupted,
    ToolCall,
    ToolOutcome,
    ToolUse,
    call_key,
)
from harness.reference.agent_as_tool import SUB_AGENT_TURNS, SubAgentTool, _prompt_of
from harness.reference.continuation import ContinuationError
from harness.reference.naming import NotANestedId, split_root_visible_id
from harness.reference.state import JSON, AgentState, Message, copy_json
from harness.reference.tree import ActionToolFactory, AgentSpec, ModelFactory, SubAgentSpec, Tree
from harness.targets.base import Target, TargetInfo
from harness.targets.reference import TREE_KEY, ReferenceSession, ReferenceTarget
from scenarios.model import Scenario

VARIANT_PREFIX: Final = "bad-"  # a variant's target name: this, then its slug


def _stored_turns(caller: AgentState) -> dict[str, JSON]:
    """The parent's stored ephemeral turns, keyed by outer call key."""
    turns: dict[str, JSON] = caller.interrupt_state.context.get(SUB_AGENT_TURNS, {})
    return turns


def _holds_parked_turn(tool: SubAgentTool, caller: AgentState, outer: str) -> bool:
    """Whether the sub-agent's own state is parked for this call, whoever the parent says owns it:
    the live sub-agent is parked, or an ephemeral turn is stored under this call's key."""
    if tool.live is not None:
        return tool.live.state.interrupt_state.activated
    return outer in _stored_turns(caller)


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
            _stored_turns(call.caller).pop(call.key, None)
            return Completed(f"sub-agent {self.name!r} could not resume: {failure}", is_error=True)


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
        entry = _stored_turns(caller).get(outer)
        if isinstance(outcome, Interrupted) and entry is not None:
            sub_agent.emit(
                {"type": "sub_agent_parked", "agent": sub_agent.name, "turn": copy_json(entry)}
            )
        return outcome


class HistoryAccumulationTool(SubAgentTool):
    """An ephemeral sub-agent starts every new call from the messages its earlier calls left.

    Differs from the reference in the starting point of a new call: the reference builds the
    sub-agent empty; here the messages of the last completed call are put back first (as the SDK
    did when the reset baseline was captured from restored history), so the continuation grows
    with the number of earlier completed calls.  The baseline lives in this tool object, so it
    lasts as long as the tree (a restart starts it empty again).
    """

    def __init__(
        self,
        name: str,
        build: Callable[[], Agent],
        *,
        preserve_context: bool,
        live: Agent | None = None,
    ) -> None:
        super().__init__(name, build, preserve_context=preserve_context, live=live)
        self.baseline: list[Message] = []

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


# --- a reference tree, session and target built with one replaced class -----------------------


@dataclass(frozen=True)
class Variant:
    slug: str
    description: str
    agent_class: type[Agent] = Agent
    tool_class: type[SubAgentTool] = SubAgentTool
    write_ahead: bool = True  # False: answers are carried out without marking them first

    @property
    def name(self) -> str:
        return f"{VARIANT_PREFIX}{self.slug}"


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
    ) -> None:
        self.variant = variant
        super().__init__(
            spec, model_for=model_for, action_tool=action_tool, persisted=persisted, emit=emit
        )

    def _build(self, spec: AgentSpec, path: str, state: AgentState | None) -> Agent:
        agent = super()._build(spec, path, state)
        if self.variant.agent_class is Agent:
            return agent
        return self.variant.agent_class(
            name=agent.name,
            model=agent.model,
            tools=list(agent.tools.values()),
            conversation_manager=agent.conversation_manager,
            state=agent.state,
            emit=agent.emit,
        )

    def _sub_agent_tool(self, sub: SubAgentSpec, path: str) -> SubAgentTool:
        tool = super()._sub_agent_tool(sub, path)
        if self.variant.tool_class is SubAgentTool:
            return tool
        return self.variant.tool_class(
            tool.name, tool.build, preserve_context=tool.preserve_context, live=tool.live
        )


class VariantSession(ReferenceSession):
    """The reference session, building a ``VariantTree``."""

    def __init__(self, scenario: Scenario, workdir: Path, variant: Variant) -> None:
        self.variant = variant
        super().__init__(scenario, workdir)

    def _write_ahead(self, persisted: bytes) -> None:
        if self.variant.write_ahead:
            super()._write_ahead(persisted)

    def _build(self) -> Tree:
        return VariantTree(
            self.spec,
            self.variant,
            model_for=self._model_for,
            action_tool=self._action_tool,
            persisted=self.store.get(TREE_KEY),
            emit=self.public_events.append,
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
        "history-accumulation",
        "an ephemeral sub-agent starts each call from its earlier calls' messages",
        tool_class=HistoryAccumulationTool,
    ),
)

VARIANTS: Final[dict[str, Callable[[], Target]]] = {
    variant.slug: functools.partial(VariantTarget, variant) for variant in _ALL
}
KNOWN_BAD: Final[tuple[tuple[str, str], ...]] = tuple(
    (variant.slug, variant.description) for variant in _ALL
)

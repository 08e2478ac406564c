"""The reference target: the reference runtime driven with the fakes, its tree persisted to a store
(``work_store``: files in the work directory when its steps run in fresh processes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import harness
from fakes.corruption import CorruptionNotApplicable, damage_envelope
from fakes.effects import OrdinaryTool, read_tally, read_window_calls
from fakes.model import (
    AgentScript,
    Answer,
    CallTools,
    ProviderError,
    ScriptedModel,
    ScriptError,
    Turn,
    strip_marker,
)
from fakes.model import ToolCall as ScriptedCall
from fakes.protected import CALL_FIELD, Ledger, ProtectedAction, prompt_of
from harness.reference.agent import (
    AgentError,
    Completed,
    RetryPolicy,
    ToolCall,
    ToolOutcome,
    ToolUse,
)
from harness.reference.agent_as_tool import PROMPT_FIELD, SUB_AGENT_TURNS, SubAgentTool
from harness.reference.continuation import ContinuationError
from harness.reference.conversation import SlidingWindow
from harness.reference.state import AgentState, Message
from harness.reference.tree import ActionSpec, AgentSpec, EffectSpec, SubAgentSpec, Tree
from harness.targets.adapter import (
    NOT_REBUILT,
    RecordedSession,
    canonical_json,
    shown_to_the_human,
    work_store,
)
from harness.targets.base import (
    CAPABILITIES,
    Observation,
    PendingInterrupt,
    Stored,
    StoredContinuation,
    TargetInfo,
)
from harness.targets.fake_model import conversation_of
from scenarios import model as scenario_model
from scenarios.model import CORRUPTIONS
from scenarios.tree import tally_key

TREE_KEY: Final = "tree"
# each root session's key in the store: session `a` (every single-session scenario's) keeps the
# one key a reference tree always had
SESSION_KEYS: Final = {"a": TREE_KEY, "b": "tree-b"}
EXPECTED_FAILURES = (AgentError, ContinuationError, ProviderError, ScriptError)


class ReferenceTarget:
    info = TargetInfo(
        name="reference",
        version=harness.__version__,
        capabilities=frozenset(CAPABILITIES),
        description="the executable specification (harness.reference)",
        corruptions=frozenset(CORRUPTIONS),
    )

    def start(self, scenario: scenario_model.Scenario, workdir: Path) -> ReferenceSession:
        return ReferenceSession(scenario, workdir)


def agent_spec(agent: scenario_model.Agent) -> AgentSpec:
    return AgentSpec(
        name=agent.name,
        actions=tuple(
            ActionSpec(
                tool=action.tool,
                label=action.label,
                questions=action.questions,
                retry=retry_policy(action.retry),
            )
            for action in agent.actions
        ),
        effects=tuple(EffectSpec(tool=effect.tool, tally=effect.tally) for effect in agent.effects),
        sub_agents=tuple(
            SubAgentSpec(
                agent=agent_spec(sub),
                tool_name=sub.tool_name,
                preserve_context=sub.preserve_context,
                session_store=sub.session_store,
                gate=sub.gate,
                retry=retry_policy(sub.retry),
            )
            for sub in agent.sub_agents
        ),
        window=None
        if agent.window is None
        else SlidingWindow(size=agent.window.size, per_turn=agent.window.per_turn),
        initial_state=dict(agent.state),
    )


def retry_policy(retry: scenario_model.Retry | None) -> RetryPolicy | None:
    return None if retry is None else RetryPolicy(after=retry.after, times=retry.times)


def agent_script(agent: scenario_model.Agent, prompt_field: str = PROMPT_FIELD) -> AgentScript:
    """The agent's turns for each prompt: its tool-calling turns, then its answer (those of its
    `prompts` entry for a prompt it names, else its `turns` and `answer`).

    A sub-agent call carries its prompt under ``prompt_field`` (the SDK's agent-as-tool input);
    a protected action's call carries, under ``CALL_FIELD``, the prompt the agent is answering
    (an ordinary tool's call does not: it asks nothing, and its run is named by its toolUseId).
    A sub-agent call and a protected action's are marked as such, so the request after them
    journals their results.
    """
    sub_agents = {sub.tool for sub in agent.sub_agents}
    actions = {action.tool for action in agent.actions}

    def played(turns: scenario_model.Turns, answer: str) -> tuple[Turn, ...]:
        calling = tuple(
            CallTools(
                tuple(
                    ScriptedCall(
                        tool=call.tool,
                        tool_use_id=call.id,
                        input={prompt_field: call.prompt} if call.tool in sub_agents else {},
                        prompt_field=CALL_FIELD if call.tool in actions else None,
                        sub_agent=call.tool in sub_agents,
                        action=call.tool in actions,
                    )
                    for call in turn
                )
            )
            for turn in turns
        )
        return (*calling, Answer(answer))

    return AgentScript(
        turns_by_prompt={
            prompt: played(agent.turns_for(prompt), agent.answer_for(prompt))
            for prompt in agent.prompts
        },
        default=played(agent.turns, agent.answer),
    )


def agents_by_path(tree: scenario_model.Agent, path: str = "") -> dict[str, scenario_model.Agent]:
    here = f"{path}/{tree.tool}" if path else tree.name
    found = {here: tree}
    for sub in tree.sub_agents:
        found.update(agents_by_path(sub, here))
    return found


class ReferenceModel:
    """The scripted model speaking the reference's message format."""

    def __init__(self, core: ScriptedModel) -> None:
        self.core = core

    def __call__(self, messages: list[Message], model_state: dict[str, Any]) -> Message:
        scripted = self.core.next_turn(conversation_of(messages), len(messages), model_state)
        if isinstance(scripted.turn, Answer):
            return {
                "role": "assistant",
                "content": [{"text": f"{scripted.marker} {scripted.turn.text}"}],
            }
        return {
            "role": "assistant",
            "content": [{"text": scripted.marker}]
            + [
                {
                    "toolUse": {
                        "toolUseId": call.tool_use_id,
                        "name": call.tool,
                        "input": dict(call.input),
                    }
                }
                for call in scripted.turn.calls
            ],
        }


@dataclass
class ActionTool:
    name: str
    action: ProtectedAction
    ledger: Ledger
    agent: str

    def prepare(self, caller: AgentState, use: ToolUse) -> None:
        return None

    def run(self, call: ToolCall) -> ToolOutcome:
        done = self.action.perform(
            call.interrupt,
            self.ledger,
            agent=self.agent,
            tool_use_id=call.use.tool_use_id,
            prompt=prompt_of(call.use.input),
        )
        return Completed(done, refused=done == self.action.refusal)


@dataclass(frozen=True)
class ActionGate:
    """A sub-agent's gate as a protected action of its caller that asks one question; approved,
    it runs nothing itself (the sub-agent call is what it lets through)."""

    action: ProtectedAction

    def refusal(self, call: ToolCall) -> str | None:
        return None if self.action.approved(call.interrupt) else self.action.refusal


def gate_for(label: str) -> ActionGate:
    return ActionGate(ProtectedAction(label))


@dataclass
class EffectTool:
    """An ordinary tool; a tally one reads its counter from the calling agent's key/value state
    (the working state of the turn, committed with it) and writes it back plus one, and reads
    the model calls its agent's window counted (its conversation-manager state), if it has one."""

    name: str
    effect: OrdinaryTool
    ledger: Ledger
    agent: str
    tally: bool = False

    def prepare(self, caller: AgentState, use: ToolUse) -> None:
        return None

    def run(self, call: ToolCall) -> ToolOutcome:
        seen = window_calls = None
        if self.tally:
            key = tally_key(self.name)
            seen = read_tally(call.caller.state, key)
            call.caller.state[key] = seen + 1
            window_calls = read_window_calls(call.caller.conversation_manager_state)
        return Completed(
            self.effect.run(
                self.ledger,
                agent=self.agent,
                tool_use_id=call.use.tool_use_id,
                seen=seen,
                window_calls=window_calls,
            )
        )


class ReferenceContinuationFormat:
    """Where continuations sit in a persisted reference tree, and how each damage looks."""

    def locate(self, document: Any) -> list[tuple[Any, ...]]:
        if not isinstance(document, dict):
            return []
        found: list[tuple[Any, ...]] = []
        found.extend(_entries(document.get("root"), ("root",)))
        for path, session in sorted(dict(document.get("sessions", {})).items()):
            found.extend(_entries(session, ("sessions", path)))
        return found

    def damage(self, corruption: str, entry: Any) -> Any:
        if damage_envelope(corruption, entry):
            return entry
        data = entry["data"]
        if corruption == "field_missing":
            del data["model_state"]
        elif corruption == "previous_shape":
            return {key: data[key] for key in ("messages", "state", "interrupt_state")}
        elif corruption == "conversation_manager_other":
            other = "null" if entry["conversation_manager"] != "null" else "sliding_window"
            entry["conversation_manager"] = other
        else:
            raise CorruptionNotApplicable(f"unknown corruption {corruption!r}")
        return entry


def _entries(agent_state: Any, path: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    try:
        turns = agent_state["interrupt_state"]["context"][SUB_AGENT_TURNS]
    except (KeyError, TypeError):
        return []
    if not isinstance(turns, dict):
        return []
    found: list[tuple[Any, ...]] = []
    base = (*path, "interrupt_state", "context", SUB_AGENT_TURNS)
    for key in sorted(turns):
        found.append((*base, key))
        entry = turns[key]
        if isinstance(entry, dict):
            found.extend(_entries(entry.get("data"), (*base, key, "data")))
    return found


class ReferenceSession(RecordedSession):
    def __init__(self, scenario: scenario_model.Scenario, workdir: Path) -> None:
        format_ = ReferenceContinuationFormat()
        super().__init__(workdir, work_store(workdir / "store"), format_)
        self.spec = agent_spec(scenario.tree)
        self.agents = agents_by_path(scenario.tree)
        # each agent's script, made once: every model built for it (after a restart too) plays
        # the same turns, and the script keeps what it put together for each prompt
        self.scripts: dict[str, AgentScript] = {}
        # two root sessions (``root_sessions``): each its own tree and store key, the second
        # built with the first one's agent tools; ``tree`` is the session steps talk to
        self.two_sessions = scenario.two_sessions
        self.root_session = "a"
        self.agent_tools: dict[str, SubAgentTool] = {}
        self.trees: dict[str, Tree | None] = self._build_sessions()
        self.tree: Tree | None = self.trees["a"]
        # the record's size in the tree last measured (stored()), with those bytes
        self._record_bytes: tuple[bytes, int | None] | None = None

    def _build_sessions(self) -> dict[str, Tree | None]:
        """The tree of each root session, from its own store key: session `b`'s (with two)
        calls the agent tools of session `a`'s."""
        first = self._build()
        trees: dict[str, Tree | None] = {"a": first}
        self.agent_tools = first.agent_tools()  # what a session's orchestrator rebuilt alone calls
        if self.two_sessions:
            trees["b"] = self._build(SESSION_KEYS["b"], self.agent_tools)
        return trees

    def _build(self, key: str = TREE_KEY, shared: dict[str, SubAgentTool] | None = None) -> Tree:
        return Tree(
            self.spec,
            model_for=self._model_for,
            action_tool=self._action_tool,
            persisted=self.store.get(key),
            emit=self.public_events.append,
            gate_for=gate_for,
            effect_tool=self._effect_tool,
            shared_tools=shared,
        )

    def use_root_session(self, name: str) -> None:
        """The steps from now on talk to root session ``name``."""
        self.trees[self.root_session] = self.tree
        self.root_session = name
        self.tree = self.trees.get(name)

    def restart_root_session(self, name: str) -> str | None:
        """Rebuild root session ``name``'s tree from its store, over the agent tools it shares
        (they and the other session stay as they are)."""
        self.trees[self.root_session] = self.tree
        try:
            self.trees[name] = self._build(SESSION_KEYS[name], self.agent_tools)
        except (ValueError, KeyError, TypeError) as failure:
            self.trees[name] = None
            return f"{type(failure).__name__}: {failure}"
        finally:
            self.tree = self.trees.get(self.root_session)
        return None

    def _model_for(self, path: str) -> ReferenceModel:
        agent = self.agents[path]
        script = self.scripts.get(path)
        if script is None:
            script = self.scripts[path] = agent_script(agent)
        core = ScriptedModel(path, script, self.journal, stateful_provider=agent.stateful_provider)
        return ReferenceModel(core)

    def _effect_tool(self, effect: EffectSpec, path: str) -> EffectTool:
        return EffectTool(
            effect.tool, OrdinaryTool(effect.tool), self.ledger, path, tally=effect.tally
        )

    def _action_tool(self, action: ActionSpec, path: str) -> ActionTool:
        protected = ProtectedAction(action.label, action.questions)
        return ActionTool(action.tool, protected, self.ledger, path)

    def run(self, prompt: str) -> Observation:
        return self._step(lambda tree: tree.root(prompt))

    def answer(self, responses: Sequence[tuple[PendingInterrupt, Any]]) -> Observation:
        by_id = {pending.id: response for pending, response in responses}
        return self._step(lambda tree: tree.resume(by_id, self._write_ahead))

    def resume(self, response: Any) -> Observation:
        return self._step(lambda tree: tree.resume_one(response, self._write_ahead))

    @property
    def key(self) -> str:
        """The store key of the root session steps talk to."""
        return SESSION_KEYS[self.root_session]

    def _write_ahead(self, persisted: bytes) -> None:
        self.store.put(self.key, persisted)

    def _step(self, call: Any) -> Observation:
        tree = self.tree
        if tree is None:  # the last restart failed: nothing is running to ask
            return Observation(stop_reason=None, error=NOT_REBUILT)
        try:
            result = call(tree)
        except EXPECTED_FAILURES as failure:
            observation = Observation(
                stop_reason=None,
                pending=shown_to_the_human(tree.root.state.interrupt_state.pending),
                error=f"{type(failure).__name__}: {failure}",
            )
        else:
            observation = Observation(
                stop_reason=result.stop_reason,
                pending=shown_to_the_human(result.interrupts),
                final_answer=None if result.text is None else strip_marker(result.text),
            )
        self.store.put(self.key, tree.persist())
        return observation

    def restart(self) -> str | None:
        """Drop every object and rebuild each root session's tree from its store."""
        try:
            self.trees = self._build_sessions()
        except (ValueError, KeyError, TypeError) as failure:
            self.trees = {}
            self.tree = None
            return f"{type(failure).__name__}: {failure}"
        self.tree = self.trees.get(self.root_session)
        return None

    def deploy(self, tree: scenario_model.Agent) -> str | None:
        """A restart into a changed tree: the agents are built from ``tree``, the stored state is
        restored into them (``harness.reference.agent`` keeps a call whose tool is gone)."""
        self.spec = agent_spec(tree)
        self.agents = agents_by_path(tree)
        self.scripts = {}
        return self.restart()

    def live_turn_bytes(self, path: str) -> int | None:
        """Bytes of the canonical JSON of a live (preserve_context) sub-agent's state: what a
        store would have to keep of its turn; None if it has no live agent."""
        live = None if self.tree is None else self.tree.live_agents.get(path)
        return None if live is None else len(canonical_json(live.state.to_json()))

    def stored(self) -> Stored:
        """What the store holds for the root session steps talk to."""
        key = self.key
        persisted = self.store.get(key)
        if persisted is None:
            return Stored()
        continuations = tuple(
            StoredContinuation(owner=_owner_name(entry.value), size=entry.size)
            for entry in self.store.continuations()
            if entry.key == key
        )
        if self._record_bytes is None or self._record_bytes[0] != persisted:
            try:  # the document continuations() just parsed: read, not parsed again
                record = self.store.document(key)["root"]["interrupt_state"]
            except (ValueError, KeyError, TypeError):  # damaged: no record to measure
                size = None
            else:
                size = len(canonical_json(record))
            self._record_bytes = (persisted, size)
        return Stored(continuations=continuations, record_bytes=self._record_bytes[1])


def _owner_name(entry: Any) -> str:
    owner = entry.get("owner") if isinstance(entry, dict) else None
    return str(owner.get("sub_agent", "?")) if isinstance(owner, dict) else "?"

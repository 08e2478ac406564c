"""The harness target for tinyagents, found through the ``nested_interrupt_harness.targets`` entry
point; its findings folder through ``nested_interrupt_harness.findings``.

The adapter builds the scenario's agent tree with tinyagents, scripted by the harness's fake
model, and keeps the root's state (the whole tree's) in the work directory after every step, so a
restart rebuilds it from there, and so does ``start()`` in a new process (``--isolation fork``:
each stretch between restarts in a process of its own; ``process``: every step), which is all
a plugin needs for restarts that forget everything a new process would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import tinyagents
from fakes.model import Answer, ProviderError, ScriptedModel, ScriptError, strip_marker
from fakes.protected import ProtectedAction
from harness.targets.adapter import (
    NOT_REBUILT,
    NoContinuations,
    RecordedSession,
    shown_to_the_human,
    work_store,
)
from harness.targets.base import Observation, PendingInterrupt, Stored, TargetInfo
from harness.targets.fake_model import conversation_of
from harness.targets.reference import agent_script, agents_by_path
from scenarios.model import Scenario
from tinyagents.framework import Agent, Message, Model, Result, TinyError, Tool, agent_tool

ROOT = "root"  # the store key of the root's state
FAILURES = (TinyError, ProviderError, ScriptError)  # what a step may fail with: observations


def findings_folder() -> Path:
    """The findings files that ship with this package (package data)."""
    return Path(__file__).parent / "findings"


class TinyAgentsTarget:
    info = TargetInfo(
        name="tinyagents",
        version=tinyagents.__version__,
        capabilities=frozenset({"interrupt_ids", "restart", "multi_question"}),
        description="tinyagents (examples/plugin), with the scripted fake model",
    )

    def start(self, scenario: Scenario, workdir: Path) -> TinyAgentsSession:
        return TinyAgentsSession(scenario, workdir)


class TinyAgentsSession(RecordedSession):
    def __init__(self, scenario: Scenario, workdir: Path) -> None:
        super().__init__(workdir, work_store(workdir / "store"), NoContinuations())
        self.agents = agents_by_path(scenario.tree)
        self.root: Agent | None = self._build()  # resumes from the work directory, if it holds one

    def _build(self) -> Agent:
        stored = self.store.get(ROOT)
        return self._agent(self.tree_root, None if stored is None else json.loads(stored))

    @property
    def tree_root(self) -> str:
        return next(iter(self.agents))

    def _agent(self, path: str, state: dict[str, Any] | None) -> Agent:
        spec = self.agents[path]
        tools: dict[str, Tool] = {
            action.tool: self._action(path, action) for action in spec.actions
        }
        for sub in spec.sub_agents:
            tools[sub.name] = agent_tool(partial(self._agent, f"{path}/{sub.name}"))
        core = ScriptedModel(path, agent_script(spec, "prompt"), self.journal)
        return Agent(scripted(core), tools, state)

    def _action(self, path: str, action: Any) -> Tool:
        protected = ProtectedAction(action.label, action.questions)
        return lambda _input, call: protected.perform(
            call.ask, self.ledger, agent=path, tool_use_id=call.use_id
        )

    def run(self, prompt: str) -> Observation:
        return self._step(lambda root: root.invoke(prompt))

    def answer(self, responses: Sequence[tuple[PendingInterrupt, Any]]) -> Observation:
        answers = {pending.id: response for pending, response in responses}
        return self._step(lambda root: root.resume(answers))

    def _step(self, call: Callable[[Agent], Result]) -> Observation:
        root = self.root
        if root is None:  # the last restart failed
            return Observation(stop_reason=None, error=NOT_REBUILT)
        try:
            result = call(root)
        except FAILURES as failure:
            observation = Observation(
                stop_reason=None,
                pending=shown_to_the_human(root.pending()),
                error=f"{type(failure).__name__}: {failure}",
            )
        else:
            observation = Observation(
                stop_reason=result.stop_reason,
                pending=shown_to_the_human(result.interrupts),
                final_answer=None if result.text is None else strip_marker(result.text),
            )
        self.store.put(ROOT, json.dumps(root.state, sort_keys=True).encode())
        return observation

    def restart(self) -> str | None:
        try:
            self.root = self._build()
        except (ValueError, KeyError, TypeError) as failure:
            self.root = None
            return f"{type(failure).__name__}: {failure}"
        return None

    def stored(self) -> Stored:
        return Stored()  # no ``continuation_bytes`` claimed


def scripted(core: ScriptedModel) -> Model:
    """The harness's scripted model behind tinyagents' model interface."""

    def reply(messages: list[Message]) -> Message:
        turn = core.next_turn(conversation_of(messages), len(messages), {})
        if isinstance(turn.turn, Answer):
            return {"role": "assistant", "content": [{"text": f"{turn.marker} {turn.turn.text}"}]}
        uses = [
            {"toolUse": {"toolUseId": c.tool_use_id, "name": c.tool, "input": dict(c.input)}}
            for c in turn.turn.calls
        ]
        return {"role": "assistant", "content": [{"text": turn.marker}, *uses]}

    return reply

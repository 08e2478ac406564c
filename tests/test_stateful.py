"""A stateful machine drives one tree on the reference through random sequences of answers,
restarts, re-sent answers and new prompts, and checks every invariant after every step."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from harness.checkers import check
from harness.history import History, StepRecord
from harness.runner import Recorder, run_scenario
from harness.targets.reference import ReferenceTarget
from scenarios.model import Answer, Resend, Restart, Run, Scenario, Step
from scenarios.strategies import trees

TARGET = ReferenceTarget()


class NestedInterrupts(RuleBasedStateMachine):
    """One agent tree, one target session; each rule is one step a human (or a host) takes."""

    def __init__(self) -> None:
        super().__init__()
        self.workdir = tempfile.TemporaryDirectory(prefix="nested-interrupt-machine-")
        self.steps: list[Step] = []
        self.records: list[StepRecord] = []

    @initialize(tree=trees(max_depth=3))
    def start(self, tree: dict[str, Any]) -> None:
        self.scenario = Scenario.model_validate(
            {"description": "stateful", "source": "tests", "tree": tree, "steps": [{"run": "p1"}]}
        )
        self.recorder = Recorder(
            TARGET.start(self.scenario, Path(self.workdir.name)), self.scenario
        )
        self.take(Run(run="p1"))

    def take(self, step: Step) -> None:
        self.steps.append(step)
        self.records.append(self.recorder.step(len(self.steps) - 1, step))

    @property
    def pending(self) -> list[str]:
        return sorted({label for label, _ in self.records[-1].expected["pending"]})

    @precondition(lambda self: bool(self.pending))
    @rule(data=st.data())
    def answer_some(self, data: st.DataObject) -> None:
        labels = data.draw(st.lists(st.sampled_from(self.pending), min_size=1, unique=True))
        responses = {label: data.draw(st.sampled_from(("approve", "deny"))) for label in labels}
        self.take(Answer(answer=responses))

    @rule()
    def restart(self) -> None:
        self.take(Restart(restart=True))

    @precondition(lambda self: any(isinstance(step, Answer) for step in self.steps))
    @rule(data=st.data())
    def resend(self, data: st.DataObject) -> None:
        earlier = [index for index, step in enumerate(self.steps) if isinstance(step, Answer)]
        self.take(Resend(resend=data.draw(st.sampled_from(earlier))))

    @precondition(lambda self: not self.pending)
    @rule()
    def prompt_again(self) -> None:
        self.take(Run(run=f"p{len(self.steps) + 1}"))

    @invariant()
    def every_invariant_holds_so_far(self) -> None:
        if not self.records:
            return
        target = {
            "name": TARGET.info.name,
            "version": TARGET.info.version,
            "capabilities": sorted(TARGET.info.capabilities),
        }
        so_far = self.scenario.model_copy(update={"steps": tuple(self.steps)})
        history = History("stateful", so_far.model_dump(mode="json"), target, tuple(self.records))
        assert check(history) == []

    def teardown(self) -> None:
        if self.steps:
            whole = self.scenario.model_copy(update={"steps": tuple(self.steps)})
            assert check(run_scenario(TARGET, whole, "stateful")) == []  # with its control
        self.workdir.cleanup()


NestedInterrupts.TestCase.settings = settings(max_examples=40, stateful_step_count=8, deadline=None)
test_nested_interrupts = NestedInterrupts.TestCase

"""Each distinct run once (``harness.runner.RunPlan``): a scenario drawn twice under two names,
and scenarios that differ only in where they restart (so share their restart-free control), are
recorded once, and every history assembled from the shared runs is the one a run of its own
gives.  An adapter error of a shared run names each scenario that needed it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.conformance import judge
from harness.runner import AdapterError, RunPlan, record_run, run_scenario
from harness.targets.reference import ReferenceTarget
from scenarios.loading import load_scenario
from scenarios.model import Restart

TWIN = load_scenario(
    Path(__file__).resolve().parent.parent / "scenarios" / "regressions" / "twin-calls.yaml"
)
# the same scenario restarting twice where TWIN restarts once: another run, the same control
TWICE = TWIN.model_copy(update={"steps": (*TWIN.steps[:2], Restart(restart=True), *TWIN.steps[2:])})
SCENARIOS = [("first", TWIN), ("drawn-again", TWIN), ("restarts-twice", TWICE)]


class Counting(ReferenceTarget):
    """The reference, counting the sessions it starts (one per recorded run)."""

    def __init__(self) -> None:
        self.started = 0

    def start(self, *arguments: Any) -> Any:
        self.started += 1
        return super().start(*arguments)


def test_each_distinct_run_is_recorded_once() -> None:
    plan = RunPlan(ReferenceTarget(), SCENARIOS)
    assert [(name, control) for name, _, control in plan.tasks] == [
        ("first", False),
        ("first", True),
        ("restarts-twice", False),
    ]
    target = Counting()
    judged = judge([target], SCENARIOS)
    assert target.started == 3  # six runs without the plan: three scenarios, each with a control
    assert sorted(judged.histories["reference"]) == ["drawn-again", "first", "restarts-twice"]


def test_a_history_from_shared_runs_is_the_one_a_run_of_its_own_gives() -> None:
    judged = judge([ReferenceTarget()], SCENARIOS).histories["reference"]
    for name, scenario in SCENARIOS:
        alone = run_scenario(ReferenceTarget(), scenario, name)
        assert judged[name].dumps() == alone.dumps()
        assert alone.control is not None
        assert judged[name].scenario_name == judged[name].control.scenario_name == name


def test_an_adapter_error_of_a_shared_run_names_each_scenario_that_needed_it() -> None:
    class RaisesAtStart(ReferenceTarget):
        info = replace(ReferenceTarget.info, name="startless")

        def start(self, *_: object) -> Any:
            raise OSError("cannot open the work directory")

    target = RaisesAtStart()
    errors = judge([target], SCENARIOS).adapter_errors["startless"]
    assert [(error.scenario, error.control) for error in errors] == [
        ("first", False),
        ("drawn-again", False),
        ("restarts-twice", False),
    ]
    assert all(error.problem.startswith("OSError: cannot open") for error in errors)
    plan = RunPlan(target, SCENARIOS)
    outcomes = list(plan.histories(record_run(target, task) for task in plan.tasks))
    assert all(isinstance(outcome, AdapterError) for outcome in outcomes)

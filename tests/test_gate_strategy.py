"""The gated-call family (``scenarios.strategies.gates``): the reference holds on it, each
known-bad gate variant is caught by its scenarios alone (no regression file), and it draws only
what a target can express.  Small, derandomized example counts: it runs in the dev loop."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, find, given, note, settings

from harness.checkers import check
from harness.runner import run_scenario
from harness.targets import registry
from harness.targets.base import requirements
from harness.targets.reference import ReferenceTarget
from scenarios import counterexamples
from scenarios.model import Answer, Restart, Scenario
from scenarios.oracle import Oracle
from scenarios.strategies.gates import GATE_CAPABILITY, can_draw, gated_scenarios

REFERENCE = ReferenceTarget()
SMALL = settings(
    max_examples=30,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# the invariants each gate variant must break on the first generated scenario that catches it
CAUGHT_BY = {
    "gate-answers-nested": {"I4"},  # the sub-agent's action runs on the gate's approval alone
    "gate-asked-again": {"I3"},  # the gate is pending again where nothing (or the rest) is
}


@SMALL
@given(gated_scenarios())
def test_generated_gated_scenarios_hold_on_the_reference(scenario: Scenario) -> None:
    violations = check(run_scenario(REFERENCE, scenario, "generated-gated"))
    if violations:
        path = counterexamples.write_counterexample(scenario, "reference", violations)
        note(f"{violations[0].invariant} {violations[0].slug}: counterexample in {path}")
    assert violations == []


@pytest.mark.parametrize("slug", sorted(CAUGHT_BY))
def test_the_gated_family_alone_catches_each_gate_variant(slug: str) -> None:
    variant = registry.get(f"bad-{slug}")

    def caught(scenario: Scenario) -> bool:
        fired = {v.invariant for v in check(run_scenario(variant, scenario, "generated-gated"))}
        return CAUGHT_BY[slug] <= fired

    settings_ = settings(SMALL, max_examples=60, phases=[Phase.generate])  # no shrinking
    scenario = find(gated_scenarios(), caught, settings=settings_)
    assert check(run_scenario(REFERENCE, scenario, "generated-gated")) == []


@SMALL
@given(gated_scenarios())
def test_every_gated_scenario_has_a_gate_and_needs_the_capability(scenario: Scenario) -> None:
    gates = [agent.gate for agent, _ in scenario.tree.walk() if agent.gate is not None]
    assert gates
    assert scenario.tree.gate is None
    assert GATE_CAPABILITY in requirements(scenario)


NARROW = frozenset({"restart", GATE_CAPABILITY})


@SMALL
@given(gated_scenarios(capabilities=NARROW))
def test_gated_scenarios_need_only_what_the_target_can_express(scenario: Scenario) -> None:
    assert requirements(scenario) <= NARROW


def test_a_target_without_gates_draws_nothing_from_the_family() -> None:
    assert can_draw(None)
    assert can_draw(NARROW)
    assert not can_draw(frozenset({"restart"}))
    with pytest.raises(ValueError, match=GATE_CAPABILITY):
        find(gated_scenarios(capabilities=frozenset({"restart"})), lambda _: True)


def situations(scenario: Scenario) -> set[str]:
    """What a gated scenario exercises, read off the scenario and the oracle: a question of a
    gated sub-agent asked once its gate was approved, a restart while one waits, a denied gate."""
    below = {
        agent.gate: {action.label for inner, _ in agent.walk() for action in inner.actions}
        for agent, _ in scenario.tree.walk()
        if agent.gate is not None
    }
    oracle, approved, found = Oracle(scenario), set(), set()
    for index, step in enumerate(scenario.steps):
        expected = oracle.step(index, step)
        if isinstance(step, Answer):
            approved |= {gate for gate in below if step.answer.get(gate) == "approve"}
            if any(step.answer.get(gate) == "deny" for gate in below):
                found.add("gate denied")
        if any(label in below[gate] for gate in approved for label, _ in expected.pending):
            found.add("nested question after its gate")
            if isinstance(step, Restart):
                found.add("restart while it waits")
    return found


def test_the_family_draws_the_gated_call_situations() -> None:
    drawn: list[Scenario] = []

    @settings(SMALL, max_examples=100, phases=[Phase.generate])
    @given(gated_scenarios())
    def collect(scenario: Scenario) -> None:
        drawn.append(scenario)

    collect()
    counts = {
        name: sum(name in situations(scenario) for scenario in drawn)
        for name in ("nested question after its gate", "restart while it waits", "gate denied")
    }
    assert counts["nested question after its gate"] >= 20, counts
    assert counts["restart while it waits"] >= 5, counts
    assert counts["gate denied"] >= 3, counts

"""The retried-call family (``scenarios.strategies.retries``): the reference holds on it, a retry
happens in every scenario it draws, its draws alone catch the known-bad retry variant (no
regression file), and it draws only what a target can express.  Small, derandomized example
counts: it runs in the dev loop, where an edit of the strategy shows before the committed ci
sample is drawn again (that sample, ``generated-retried-NNN``, must catch the variant too:
``tests/test_properties.py``, ``CAUGHT_BY``)."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, find, given, note, settings

from harness.checkers import check
from harness.runner import run_scenario
from harness.targets import registry
from harness.targets.base import requirements
from harness.targets.reference import ReferenceTarget
from scenarios import counterexamples
from scenarios.model import Scenario
from scenarios.oracle import Activation, Oracle
from scenarios.strategies.retries import RETRY_CAPABILITY, can_draw, retried_scenarios

REFERENCE = ReferenceTarget()
SMALL = settings(
    max_examples=30,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@SMALL
@given(retried_scenarios())
def test_generated_retried_scenarios_hold_on_the_reference(scenario: Scenario) -> None:
    violations = check(run_scenario(REFERENCE, scenario, "generated-retried"))
    if violations:
        path = counterexamples.write_counterexample(scenario, "reference", violations)
        note(f"{violations[0].invariant} {violations[0].slug}: counterexample in {path}")
    assert violations == []


def test_the_retried_family_alone_catches_the_retry_variant() -> None:
    variant = registry.get("bad-retry-reuses-ids")

    def caught(scenario: Scenario) -> bool:
        fired = {v.invariant for v in check(run_scenario(variant, scenario, "generated-retried"))}
        return "O" in fired

    settings_ = settings(SMALL, max_examples=60, phases=[Phase.generate])  # no shrinking
    scenario = find(retried_scenarios(), caught, settings=settings_)
    assert check(run_scenario(REFERENCE, scenario, "generated-retried")) == []


@SMALL
@given(retried_scenarios())
def test_every_retried_scenario_has_a_retry_and_needs_the_capability(scenario: Scenario) -> None:
    assert any(agent.retry is not None for agent, _ in scenario.tree.walk())
    assert scenario.tree.retry is None
    assert RETRY_CAPABILITY in requirements(scenario)


NARROW = frozenset({"restart", RETRY_CAPABILITY})


@SMALL
@given(retried_scenarios(capabilities=NARROW))
def test_retried_scenarios_need_only_what_the_target_can_express(scenario: Scenario) -> None:
    assert requirements(scenario) <= NARROW


def test_a_target_without_retries_draws_nothing_from_the_family() -> None:
    assert can_draw(None)
    assert can_draw(NARROW)
    assert not can_draw(frozenset({"restart"}))


class CountingOracle(Oracle):
    """The oracle, counting by itself the calls its turns hold anew after a retry (which the
    oracle's own ``retried`` counts too)."""

    replaced: int = 0

    def _retry(self, parent: Activation, executed: list[str]) -> None:
        before = list(parent.calls or [])
        super()._retry(parent, executed)
        self.replaced += sum(a is not b for a, b in zip(before, parent.calls or [], strict=True))


def test_a_retry_happens_in_every_scenario_the_family_draws() -> None:
    """Kept only where the oracle makes a call again: a retry configured but never made would
    test nothing about retries (before the filter, 22 of 60 such draws made one)."""
    drawn: list[tuple[int, int]] = []

    @settings(SMALL, max_examples=60, phases=[Phase.generate])
    @given(retried_scenarios())
    def retried(scenario: Scenario) -> None:
        oracle = CountingOracle(scenario)
        for index, step in enumerate(scenario.steps):
            oracle.step(index, step)
        drawn.append((oracle.replaced, oracle.retried))

    retried()
    assert len(drawn) == 60
    assert all(replaced > 0 for replaced, _ in drawn), drawn
    # a call retried twice in one step is replaced once in its turn, but made again twice
    assert all(retried >= replaced for replaced, retried in drawn), drawn

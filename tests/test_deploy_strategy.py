"""The deploy family (``scenarios.strategies.deploys``): the reference holds on it, its draws
alone catch the known-bad deploy variant (no regression file), and it draws only what a target
can express.  Small, derandomized example counts: it runs in the dev loop, where an edit of the
strategy shows before the committed ci sample is drawn again (that sample,
``generated-deploy-NNN``, must catch the variant too: ``tests/test_properties.py``,
``CAUGHT_BY``)."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, find, given, note, settings

from harness.checkers import check
from harness.runner import run_scenario
from harness.targets import registry
from harness.targets.base import requirements
from harness.targets.reference import ReferenceTarget
from scenarios import counterexamples
from scenarios.model import Restart, Scenario
from scenarios.strategies.deploys import DEPLOY_CAPABILITY, can_draw, deploy_scenarios

REFERENCE = ReferenceTarget()
SMALL = settings(
    max_examples=30,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@SMALL
@given(deploy_scenarios())
def test_generated_deploy_scenarios_hold_on_the_reference(scenario: Scenario) -> None:
    violations = check(run_scenario(REFERENCE, scenario, "generated-deploy"))
    if violations:
        path = counterexamples.write_counterexample(scenario, "reference", violations)
        note(f"{violations[0].invariant} {violations[0].slug}: counterexample in {path}")
    assert violations == []


def test_the_deploy_family_alone_catches_the_variant_that_drops_gone_calls() -> None:
    variant = registry.get("bad-drop-gone-calls")

    def caught(scenario: Scenario) -> bool:
        fired = {v.invariant for v in check(run_scenario(variant, scenario, "generated-deploy"))}
        return "I9" in fired  # an answer to a gone call accepted silently

    settings_ = settings(SMALL, max_examples=60, phases=[Phase.generate])  # no shrinking
    scenario = find(deploy_scenarios(), caught, settings=settings_)
    assert check(run_scenario(REFERENCE, scenario, "generated-deploy")) == []


@SMALL
@given(deploy_scenarios())
def test_every_deploy_scenario_deploys_a_changed_tree_and_needs_the_capability(
    scenario: Scenario,
) -> None:
    deployed = [step.tree for step in scenario.steps if isinstance(step, Restart) and step.tree]
    assert deployed
    assert all(tree != scenario.tree for tree in deployed[:1])
    assert DEPLOY_CAPABILITY in requirements(scenario)


NARROW = frozenset({"restart", DEPLOY_CAPABILITY})


@SMALL
@given(deploy_scenarios(capabilities=NARROW))
def test_deploy_scenarios_need_only_what_the_target_can_express(scenario: Scenario) -> None:
    assert requirements(scenario) <= NARROW


def test_a_target_without_deploys_draws_nothing_from_the_family() -> None:
    assert can_draw(None)
    assert can_draw(NARROW)
    assert not can_draw(frozenset({"restart"}))


def test_twin_calls_parked_while_ephemeral_both_resume_after_preserve_context_turns_on() -> None:
    """Two parked calls of one ephemeral sub-agent cannot both become its one kept history: each
    stays an ephemeral call until it ends (drawn by the family, written out here)."""
    worker: dict[str, object] = {
        "name": "mailer",
        "actions": [{"tool": "send", "label": "send-mail"}],
        "turns": [[{"tool": "send", "id": "s1"}]],
    }
    tree = {
        "name": "orchestrator",
        "turns": [
            [
                {"tool": "mailer", "id": "c1", "prompt": "mail Ana"},
                {"tool": "mailer", "id": "c2", "prompt": "mail Bo"},
            ]
        ],
        "sub_agents": [worker],
    }
    deployed = {**tree, "sub_agents": [{**worker, "preserve_context": True}]}
    scenario = Scenario.model_validate(
        {
            "description": "twin calls parked, then the sub-agent keeps its history",
            "source": "tests",
            "tree": tree,
            "steps": [
                {"run": "mail both"},
                {"restart": {"tree": deployed}},
                {"answer_calls": {"send-mail": {"mail Bo": "approve"}}},
                {"answer_calls": {"send-mail": {"mail Ana": "approve"}}},
            ],
        }
    )
    history = run_scenario(REFERENCE, scenario, "twin-calls-deployed")
    assert check(history) == []
    assert [len(step.executions) for step in history.steps] == [0, 0, 1, 1]

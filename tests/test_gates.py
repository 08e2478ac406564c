"""Gated sub-agents: the caller asks before it calls one (``gate:``), and the sub-agent then asks
its own questions in the same call.

What must happen comes from the scenario (the oracle), never from a target; the reference meets
it; I1's gate rule flags a sub-agent question shown under its gate's id; and the two known-bad
gate variants are caught by the regression files.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.checkers import check
from harness.history import History
from harness.runner import run_scenario
from harness.targets.base import TargetInfo, missing_capabilities, requirements
from harness.targets.reference import ReferenceTarget
from harness.targets.variants import VARIANTS
from scenarios.loading import REGRESSIONS, load_scenario, parse_scenario
from scenarios.model import Scenario
from scenarios.oracle import expectations

GATED = "gated-agent-call"
DENIED = "gated-agent-call-denied"
NESTED = "gated-agent-call-nested"


def regression(stem: str) -> Scenario:
    return load_scenario(REGRESSIONS / f"{stem}.yaml")


def gated(steps: list[Any], **researcher: Any) -> Scenario:
    """The orchestrator calls a gated researcher once; the researcher asks before it publishes."""
    tree = {
        "name": "orchestrator",
        "turns": [[{"tool": "researcher", "id": "call-1"}]],
        "sub_agents": [
            {
                "name": "researcher",
                "gate": "ask-researcher",
                "actions": [{"tool": "publish", "label": "publish-report"}],
                "turns": [[{"tool": "publish", "id": "call-1"}]],
                **researcher,
            }
        ],
    }
    data = {"description": "a gated researcher", "source": "tests", "tree": tree, "steps": steps}
    return parse_scenario(data, "gated")


def outline(scenario: Scenario) -> list[tuple[Any, ...]]:
    """Each step's expected pending questions, what runs and how it ends."""
    return [
        (expected.pending, expected.executions, expected.stop_reason, expected.error)
        for expected in expectations(scenario)
    ]


# --- the oracle -----------------------------------------------------------------------------------


def test_the_gate_is_asked_first_and_its_approval_calls_the_sub_agent_which_asks_its_own() -> None:
    assert outline(regression(GATED)) == [
        ((("ask-researcher", 1),), (), "interrupt", "forbidden"),
        ((("publish-report", 1),), (), "interrupt", "forbidden"),
        ((("publish-report", 1),), (), None, "forbidden"),
        ((("publish-report", 1),), (), None, "required"),  # the gate's approval again: refused
        ((), ("publish-report",), "end_turn", "forbidden"),
    ]


def test_a_denied_gate_calls_nothing_and_the_caller_carries_on() -> None:
    assert outline(regression(DENIED)) == [
        ((("ask-researcher", 1), ("ask-writer", 1)), (), "interrupt", "forbidden"),
        ((("ask-researcher", 1), ("ask-writer", 1)), (), None, "forbidden"),
        ((("publish-draft", 1),), (), "interrupt", "forbidden"),
        ((), (), "end_turn", "forbidden"),
    ]


def test_approving_the_gate_and_the_action_at_once_approves_only_the_gate() -> None:
    """The sub-agent's question is not asked yet when the gate is answered: the answer by label
    reaches only the gate's question (what the root shows), and the sub-agent then asks."""
    scenario = gated(
        [{"run": "go"}, {"answer": {"ask-researcher": "approve", "publish-report": "approve"}}]
    )
    assert outline(scenario)[1] == ((("publish-report", 1),), (), "interrupt", "forbidden")
    history = run_scenario(ReferenceTarget(), scenario, "gated")
    assert check(history) == []
    assert [item["label"] for item in history.steps[1].answered] == ["ask-researcher"]


def test_a_gated_sub_agent_with_several_questions_is_asked_after_its_gate_only() -> None:
    scenario = gated(
        [
            {"run": "go"},
            {"answer": {"ask-researcher": "approve"}},
            {"answer": {"publish-report": "approve"}},
            {"answer": {"publish-report": "approve"}},
        ],
        actions=[{"tool": "publish", "label": "publish-report", "questions": 2}],
    )
    assert [pending for pending, *_ in outline(scenario)] == [
        (("ask-researcher", 1),),
        (("publish-report", 1),),
        (("publish-report", 2),),
        (),
    ]


# --- the scenario language ------------------------------------------------------------------------


def test_a_gate_needs_its_own_capability_and_a_target_without_it_is_not_applicable() -> None:
    assert "gated_sub_agents" in requirements(regression(GATED))
    lacking = TargetInfo("tiny", "0", frozenset({"interrupt_ids", "restart"}))
    assert missing_capabilities(lacking, regression(GATED)) == ["gated_sub_agents"]
    assert "gated_sub_agents" not in requirements(regression("mixed"))


def test_a_gates_label_is_answered_like_an_actions() -> None:
    assert set(regression(DENIED).labels) == {
        "publish-report",
        "publish-draft",
        "ask-researcher",
        "ask-writer",
    }


# --- the reference and I1's gate rule -------------------------------------------------------------


def reference_history(stem: str) -> History:
    return run_scenario(ReferenceTarget(), regression(stem), stem)


@pytest.mark.parametrize("stem", [GATED, DENIED, NESTED])
def test_the_reference_holds_on_every_gate_regression_file(stem: str) -> None:
    assert check(reference_history(stem)) == []


def test_the_gate_and_the_sub_agents_question_are_shown_under_ids_of_their_own() -> None:
    steps = reference_history(GATED).steps
    gate_id = steps[0].pending[0]["id"]
    nested_id = steps[1].pending[0]["id"]
    assert [steps[0].pending[0]["label"], steps[1].pending[0]["label"]] == [
        "ask-researcher",
        "publish-report",
    ]
    assert gate_id != nested_id
    # the answers went to the right one: the gate's id with the gate's label, then the nested one
    assert [(item["id"], item["label"]) for item in steps[1].answered] == [
        (gate_id, "ask-researcher")
    ]
    assert [(item["id"], item["label"]) for item in steps[4].answered] == [
        (nested_id, "publish-report")
    ]


def with_nested_id(good: History, interrupt_id: str) -> History:
    """``good`` with the sub-agent's question (step 1) shown under ``interrupt_id``."""
    data: dict[str, Any] = copy.deepcopy(good.to_json())
    data["steps"][1]["observed"]["pending"][0]["id"] = interrupt_id
    return History.from_json(data)


def test_i1_flags_a_sub_agent_question_shown_under_its_gates_id() -> None:
    good = reference_history(GATED)
    gate_id = good.steps[0].pending[0]["id"]
    bad = with_nested_id(good, gate_id)

    found = [violation for violation in check(bad) if violation.invariant == "I1"]

    assert [(violation.step, violation.expected, violation.seen) for violation in found] == [
        (
            1,
            "publish-report#1 asked under an id other than its gate ask-researcher's",
            f"publish-report#1 asked under {gate_id!r}, the id of gate ask-researcher#1",
        )
    ]


def test_i1_passes_a_sub_agent_question_under_any_other_id() -> None:
    good = reference_history(GATED)
    renamed = with_nested_id(good, "another-id-entirely")
    assert [violation for violation in check(renamed) if violation.invariant == "I1"] == []


def test_i1_gate_rule_leaves_questions_outside_the_gated_sub_agent_alone() -> None:
    """Only questions below the gated sub-agent are held to it: the gate itself shown again
    under its own id is no violation of this rule."""
    good = reference_history(GATED)
    data: dict[str, Any] = copy.deepcopy(good.to_json())
    data["steps"][1]["observed"]["pending"][0]["label"] = "ask-researcher"
    data["steps"][1]["observed"]["pending"][0]["id"] = good.steps[0].pending[0]["id"]
    found = [v for v in check(History.from_json(data)) if v.invariant == "I1"]
    assert found == []


# --- the known-bad gate variants ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slug", "stem", "fires"),
    [
        ("gate-answers-nested", GATED, {"I2", "I4", "O"}),
        ("gate-answers-nested", DENIED, {"I2", "I4", "O"}),
        ("gate-asked-again", GATED, {"I2", "I3", "O"}),
        ("gate-asked-again", DENIED, {"I3", "O"}),
        ("gate-answers-nested", NESTED, {"I2", "I4", "I11", "O"}),
        ("gate-asked-again", NESTED, {"I2", "I3", "I11", "O"}),
    ],
)
def test_a_gate_variant_is_caught_by_the_gate_regression_files(
    slug: str, stem: str, fires: set[str]
) -> None:
    history = run_scenario(VARIANTS[slug](), regression(stem), stem)
    assert fires <= {violation.invariant for violation in check(history)}

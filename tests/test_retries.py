"""Retried tool calls: an after-tool-call hook runs a call again after its error or its result
(``retry:`` on an action or a sub-agent).

What must happen comes from the scenario (the oracle), never from a target: every attempt is a
new call that asks again, an action runs once per approval, and an answer of an earlier attempt
re-sent is refused.  The reference meets it, naming each attempt apart; the known-bad variant
that keeps the first attempt's identity is caught by the regression files (tests/test_variants).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.checkers import check
from harness.reference.agent import ATTEMPTS, ToolUse, call_key
from harness.reference.state import AgentState
from harness.runner import run_scenario
from harness.targets.base import TargetInfo, missing_capabilities, requirements
from harness.targets.reference import ReferenceTarget
from scenarios.loading import REGRESSIONS, load_scenario, parse_scenario
from scenarios.model import Scenario
from scenarios.oracle import expectations

FILES = (
    "retried-agent-call",
    "retried-action-after-denial",
    "retried-action-after-result",
    "retried-gated-call",
)


def regression(stem: str) -> Scenario:
    return load_scenario(REGRESSIONS / f"{stem}.yaml")


def scenario(steps: list[Any], researcher: dict[str, Any], **action: Any) -> Scenario:
    """The orchestrator calls a researcher once; the researcher asks before it publishes."""
    tree = {
        "name": "orchestrator",
        "turns": [[{"tool": "researcher", "id": "call-1"}]],
        "sub_agents": [
            {
                "name": "researcher",
                "actions": [{"tool": "publish", "label": "publish-report", **action}],
                "turns": [[{"tool": "publish", "id": "t1"}]],
                **researcher,
            }
        ],
    }
    data = {"description": "a retried call", "source": "tests", "tree": tree, "steps": steps}
    return parse_scenario(data, "retried")


def outline(data: Scenario) -> list[tuple[Any, ...]]:
    """Each step's expected pending questions, what runs, how it ends and whether it must fail."""
    return [
        (expected.pending, expected.executions, expected.stop_reason, expected.error)
        for expected in expectations(data)
    ]


ASKING = (("publish-report", 1),)


def test_a_sub_agent_call_retried_after_its_result_is_a_new_call_that_asks_again() -> None:
    assert outline(regression("retried-agent-call")) == [
        (ASKING, (), "interrupt", "forbidden"),
        # the first attempt ran and answered; the retry asks again at once
        (ASKING, ("publish-report",), "interrupt", "forbidden"),
        # the first approval re-sent names a question answered already: refused, nothing runs
        (ASKING, (), None, "required"),
        (ASKING, (), None, "forbidden"),  # a restart changes nothing
        ((), ("publish-report",), "end_turn", "forbidden"),
    ]


def test_an_action_retried_after_its_denial_asks_again_and_runs_on_its_own_approval() -> None:
    assert outline(regression("retried-action-after-denial")) == [
        ((("deploy-prod", 1),), (), "interrupt", "forbidden"),
        ((("deploy-prod", 1),), (), "interrupt", "forbidden"),
        ((("deploy-prod", 1),), (), None, "forbidden"),
        ((), ("deploy-prod",), "end_turn", "forbidden"),
        ((), (), None, "required"),  # the denial re-sent: its question is no longer pending
    ]


def test_one_approval_runs_a_retried_action_once() -> None:
    expected = expectations(regression("retried-action-after-result"))
    assert [step.executions for step in expected] == [(), ("send-notice",), (), ()]
    assert expected[1].pending == (("send-notice", 1),)


def test_a_retry_is_bounded_by_times() -> None:
    denied = scenario(
        [{"run": "go"}, *({"answer": {"publish-report": "deny"}} for _ in range(4))],
        {},
        retry={"after": "error", "times": 2},
    )
    ends = [(step.pending, step.stop_reason) for step in expectations(denied)]
    # asked, denied and asked again twice, then the third denial ends the call
    assert ends == [
        (ASKING, "interrupt"),
        (ASKING, "interrupt"),
        (ASKING, "interrupt"),
        ((), "end_turn"),
        ((), None),
    ]


def test_a_retry_after_error_is_not_made_after_a_result_nor_the_other_way() -> None:
    approved = scenario(
        [{"run": "go"}, {"answer": {"publish-report": "approve"}}],
        {},
        retry={"after": "error", "times": 1},
    )
    assert outline(approved)[-1] == ((), ("publish-report",), "end_turn", "forbidden")
    denied = scenario(
        [{"run": "go"}, {"answer": {"publish-report": "deny"}}],
        {"retry": {"after": "result", "times": 1}},
    )
    # the researcher answers (its own action denied): a result, so the call is made again
    assert outline(denied)[-1] == (ASKING, (), "interrupt", "forbidden")


def test_a_retried_gated_call_asks_its_gate_again() -> None:
    gated = scenario(
        [{"run": "go"}, {"answer": {"ask-researcher": "deny"}}],
        {"gate": "ask-researcher", "retry": {"after": "error", "times": 1}},
    )
    assert outline(gated)[-1] == ((("ask-researcher", 1),), (), "interrupt", "forbidden")


def test_a_retried_sub_agent_plays_its_ordinary_tools_once_per_attempt() -> None:
    data = scenario(
        [{"run": "go"}],
        {
            "retry": {"after": "result", "times": 2},
            "actions": [],
            "effects": [{"tool": "lookup"}],
            "turns": [[{"tool": "lookup", "id": "t1"}]],
        },
    )
    (step,) = expectations(data)
    assert step.effects == (("orchestrator/researcher", "lookup", "t1"),) * 3
    assert step.stop_reason == "end_turn"


def test_a_retry_needs_the_retries_capability() -> None:
    for stem in FILES:
        assert "retries" in requirements(regression(stem))
    lacking = TargetInfo("t", "0", frozenset({"interrupt_ids", "restart"}))
    assert "retries" in missing_capabilities(lacking, regression("retried-agent-call"))
    assert "retries" not in requirements(load_scenario(REGRESSIONS / "gated-agent-call.yaml"))


@pytest.mark.parametrize("stem", FILES)
def test_the_reference_shows_each_attempt_under_ids_of_its_own(stem: str) -> None:
    history = run_scenario(ReferenceTarget(), regression(stem), stem)
    assert check(history) == []
    shown = [
        {pending["id"] for pending in step["observed"].get("pending", [])}
        for step in history.to_json()["steps"]
    ]
    first, second = shown[0], shown[1]
    assert first
    assert second
    assert not first & second


def test_an_attempt_key_is_never_another_calls_key() -> None:
    def key(tool_use_id: str, retried: int) -> str:
        caller = AgentState(model_turns=3)
        if retried:
            caller.interrupt_state.context[ATTEMPTS] = {tool_use_id: retried}
        return call_key(caller, ToolUse(tool_use_id, "tool", {}))

    ids = ("t1", "r1.t1", "1.t1", "r1", "t1r1", "")
    keys = [key(tool_use_id, retried) for tool_use_id in ids for retried in (0, 1, 2)]
    assert len(set(keys)) == len(keys)
    assert key("t1", 0) == "3.t1"  # a call never retried keeps the key it always had


def test_the_strands_retry_hook_takes_a_refusal_an_error_result_or_a_raise_for_an_error() -> None:
    from harness.targets.strands import _failed

    def result(text: str, status: str = "success") -> dict[str, Any]:
        return {"toolUseId": "t1", "status": status, "content": [{"text": text}]}

    refusal = "deploy-prod: refused"
    assert _failed(result(refusal), None, refusal)
    assert _failed(result("Agent 'x' is already processing a request", "error"), None, None)
    assert _failed(result("partial"), RuntimeError("boom"), None)
    assert not _failed(result("deploy-prod: done"), None, refusal)
    assert not _failed(result(refusal), None, None)  # a sub-agent's answer quoting it is a result


@pytest.mark.parametrize(("times", "calls"), [(1, 2), (3, 3)])
def test_the_langgraph_retry_interceptor_calls_again_while_the_call_ends_as_named(
    times: int, calls: int
) -> None:
    from types import SimpleNamespace

    from harness.targets.langgraph_graphs import _retrying
    from scenarios.model import Retry

    endings = iter(["deploy-prod: refused", "deploy-prod: refused", "deploy-prod: done"])
    made: list[str] = []

    def interceptor(request: Any, execute: Any) -> Any:
        made.append(request.tool_call["name"])
        return SimpleNamespace(status="success", content=next(endings, "other: done"))

    retried = {"deploy": (Retry(after="error", times=times), "deploy-prod")}
    retry = _retrying(interceptor, retried)
    retry(SimpleNamespace(tool_call={"name": "deploy"}), lambda request: None)
    assert made == ["deploy"] * calls
    made.clear()
    retry(SimpleNamespace(tool_call={"name": "other"}), lambda request: None)
    assert made == ["other"]  # a tool without a retry is called once


def test_a_gated_call_retried_after_its_denied_gate_asks_its_gate_again() -> None:
    gate = (("ask-researcher", 1),)
    assert outline(regression("retried-gated-call")) == [
        (gate, (), "interrupt", "forbidden"),
        (gate, (), "interrupt", "forbidden"),  # denied, retried: a new call asks again
        (gate, (), None, "required"),  # the denial re-sent names a question answered already
        (gate, (), None, "forbidden"),
        (ASKING, (), "interrupt", "forbidden"),
        ((), ("publish-report",), "end_turn", "forbidden"),
    ]

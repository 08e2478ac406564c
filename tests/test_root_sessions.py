"""Two root sessions (``session: b``): two users of one deployment whose orchestrators call the
same agent-tool objects.  The oracle judges each session as if the other were not there, every
checker judges each session's steps apart, the reference keeps them apart, and a target without
``root_sessions`` finds such a scenario not applicable."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.checkers import check
from harness.checkers.sessions import views
from harness.runner import run_scenario
from harness.targets import registry
from harness.targets.base import missing_capabilities, requirements
from harness.targets.reference import ReferenceTarget
from scenarios.classes import classes_of
from scenarios.loading import REGRESSIONS, load_scenario
from scenarios.model import Scenario
from scenarios.oracle import expectations

REGRESSION = REGRESSIONS / "coverage" / "two-root-sessions.yaml"


def two_sessions(steps: list[Any]) -> Scenario:
    tree = {
        "name": "orchestrator",
        "prompts": {
            "pa": {"turns": [[{"tool": "s1", "id": "call-1", "prompt": "for a"}]]},
            "pb": {"turns": [[{"tool": "s1", "id": "call-1", "prompt": "for b"}]]},
        },
        "sub_agents": [
            {
                "name": "s1",
                "actions": [{"tool": "act", "label": "L"}],
                "turns": [[{"tool": "act", "id": "t1"}]],
            }
        ],
    }
    return Scenario.model_validate(
        {"description": "two users", "source": "tests", "tree": tree, "steps": steps}
    )


def test_an_answer_in_one_session_settles_only_that_sessions_question() -> None:
    run_a, run_b, answer_b, restart, answer_a = expectations(
        two_sessions(
            [
                {"run": "pa"},
                {"run": "pb", "session": "b"},
                {"answer": {"L": "approve"}, "session": "b"},
                "restart",
                {"answer": {"L": "deny"}},
            ]
        )
    )
    assert run_a.pending == run_b.pending == (("L", 1),)
    assert answer_b.executions == ("L",)
    assert answer_b.pending == ()
    assert answer_b.served == (("L", "orchestrator/s1", "for b"),)
    assert restart.pending == (("L", 1),)  # a's question waits through b's answer and a restart
    assert answer_a.executions == ()
    assert answer_a.stop_reason == "end_turn"


def test_the_same_steps_in_one_session_would_be_judged_otherwise() -> None:
    """The session field is what keeps b's answer off a's question: in one session, a second
    run while a question waits is refused, and the answer settles the one question."""
    _, second_run, answer = expectations(
        two_sessions([{"run": "pa"}, {"run": "pb"}, {"answer": {"L": "approve"}}])
    )
    assert second_run.error == "allowed"
    assert second_run.stop_reason is None
    assert answer.served == (("L", "orchestrator/s1", "for a"),)


def test_a_target_without_root_sessions_finds_it_not_applicable() -> None:
    scenario = load_scenario(REGRESSION)
    assert "root_sessions" in requirements(scenario)
    lacking = replace(
        ReferenceTarget.info, capabilities=ReferenceTarget.info.capabilities - {"root_sessions"}
    )
    assert missing_capabilities(lacking, scenario) == ["root_sessions"]

    class Lacking(ReferenceTarget):
        info = lacking

    history = run_scenario(Lacking(), scenario, "two-root-sessions")
    assert history.not_applicable == ("root_sessions",)
    assert history.steps == ()
    one = two_sessions([{"run": "pa"}, {"answer": {"L": "approve"}}, {"run": "pb"}])
    assert "root_sessions" not in requirements(one)


def test_each_session_is_judged_on_its_own_steps_and_the_restarts() -> None:
    history = run_scenario(ReferenceTarget(), load_scenario(REGRESSION), "two-root-sessions")
    session_a, session_b = views(history)
    kinds = [(step.index, step.step.get("session", "a")) for step in session_b.steps]
    # step 2 reloads session a's orchestrator alone, step 4 restarts both
    assert kinds == [(0, "b"), (3, "b"), (4, "a"), (6, "b")]
    assert [step.index for step in session_a.steps] == [1, 2, 4, 5]
    assert session_a.control is not None
    assert len(session_a.control.steps) == 2
    assert check(history) == []
    one = two_sessions([{"run": "pa"}, {"answer": {"L": "approve"}}, {"run": "pb"}])
    alone = run_scenario(ReferenceTarget(), one, "one")
    assert views(alone) == [alone]


def test_the_reference_keeps_the_sessions_apart_and_the_shared_key_variant_does_not() -> None:
    scenario = load_scenario(REGRESSION)
    history = run_scenario(ReferenceTarget(), scenario, "two-root-sessions")
    ran = [(step.index, [run["prompt"] for run in step.executions]) for step in history.steps]
    assert ran == [
        (0, []),
        (1, []),
        (2, []),
        (3, ["research for b"]),
        (4, []),
        (5, ["research for a"]),
        (6, []),
    ]
    bad = run_scenario(registry.get("bad-parked-by-shared-key"), scenario, "two-root-sessions")
    assert {violation.invariant for violation in check(bad)} == {"I2"}


def test_the_regression_file_has_the_class() -> None:
    assert "two-root-sessions" in classes_of(load_scenario(REGRESSION))
    waiting_in_one = two_sessions(
        [{"run": "pa"}, {"answer": {"L": "approve"}}, {"run": "pb", "session": "b"}]
    )
    assert "two-root-sessions" not in classes_of(waiting_in_one)


def test_a_restart_naming_a_session_rebuilds_that_orchestrator_alone() -> None:
    """The oracle leaves the other session as it is; the reference keeps the agent tools (the
    same objects) and the other session's tree, and rebuilds the named one from its store."""
    steps = [{"run": "pa"}, {"run": "pb", "session": "b"}, {"restart": True, "session": "b"}]
    _, _, restart = expectations(two_sessions(steps))
    assert restart.pending == (("L", 1),)
    session = ReferenceTarget().start(two_sessions(steps), Path("unused"))
    session.run("pa")
    session.use_root_session("b")
    session.run("pb")
    first, second = session.trees["a"], session.trees["b"]
    tools = session.agent_tools
    assert session.restart_root_session("b") is None
    assert session.trees["a"] is first
    assert session.trees["b"] is not second
    assert session.trees["b"].agent_tools() == tools == first.agent_tools()
    assert session.tree is session.trees["b"]
    assert [interrupt.name for interrupt in session.tree.root.state.interrupt_state.pending]
    one = [{"run": "pa"}, {"restart": True, "session": "a"}, {"run": "pb"}]
    with pytest.raises(ValueError, match="names a root session only where"):
        two_sessions(one)


def test_a_request_the_run_never_made_is_reported_where_its_control_made_it() -> None:
    """A session's view keeps the whole run's step numbers, so its control's steps are numbered
    with gaps: a request only the control made is reported at the step that stands for the
    control's (session a's answer, where the resume was lost), not at the step whose place in
    the view that number happens to be (a's re-send)."""
    scenario = two_sessions(
        [
            {"run": "pb", "session": "b"},
            {"run": "pa"},
            {"restart": True, "session": "a"},
            {"answer": {"L": "deny"}},
            {"resend": 3},
            {"answer": {"L": "approve"}, "session": "b"},
        ]
    )
    history = run_scenario(registry.get("bad-parked-turn-not-stored"), scenario, "lost")
    [fidelity] = [violation for violation in check(history) if violation.invariant == "I6"]
    assert fidelity.seen.endswith(": none")
    assert fidelity.step == 3


def _with_tree(steps: list[Any], change: Callable[[dict[str, Any]], None]) -> Scenario:
    """``two_sessions``'s scenario with ``steps``, its tree changed by ``change``."""
    data = two_sessions([{"run": "pa"}, {"run": "pb", "session": "b"}]).model_dump(
        mode="json", exclude_defaults=True
    )
    change(data["tree"])
    return Scenario.model_validate({**data, "steps": steps})


def test_each_step_is_classed_against_its_own_sessions_step_before_it() -> None:
    """A restart naming `b` before b's first run rebuilds nothing that waits, though a's
    question does; a restart of both while b waits is one between answers however a stands; and
    an answer naming one of b's two questions is a partial answer, whatever a's step left."""
    waiting_in_a = two_sessions(
        [
            {"run": "pa"},
            {"restart": True, "session": "b"},
            {"run": "pb", "session": "b"},
            {"answer": {"L": "approve"}},
            {"answer": {"L": "approve"}, "session": "b"},
        ]
    )
    classes = classes_of(waiting_in_a)
    assert "restart-before-a-run" in classes
    assert "restart-between-answers" not in classes
    ended_in_a = two_sessions(
        [
            {"run": "pb", "session": "b"},
            {"run": "pa"},
            {"answer": {"L": "approve"}},
            "restart",
            {"answer": {"L": "approve"}, "session": "b"},
        ]
    )
    assert {"restart-after-the-end", "restart-between-answers"} <= classes_of(ended_in_a)
    steps = [
        {"run": "pb", "session": "b"},
        {"run": "pa"},
        {"answer": {"L": "approve", "M": "approve"}},
        {"answer": {"L": "approve"}, "session": "b"},
        {"answer": {"M": "approve"}, "session": "b"},
    ]

    def two_actions(tree: dict[str, Any]) -> None:
        worker = tree["sub_agents"][0]
        worker["actions"].append({"tool": "note", "label": "M"})
        worker["turns"] = [[{"tool": "act", "id": "t1"}, {"tool": "note", "id": "t2"}]]

    two_questions = _with_tree(steps, two_actions)
    assert "partial-answers" in classes_of(two_questions)


def test_the_coverage_shapes_read_each_step_against_its_own_session_too() -> None:
    """An answer in `b` while only `a`'s question waits answers nothing (no
    ``adversarial-ids-answered``), and a restart of `b` while b waits is no idle restart for a
    run of `a` after it, though `a`'s turn had ended (no ``idle-restart``)."""

    def long_ids(tree: dict[str, Any]) -> None:
        tree["sub_agents"][0]["turns"] = [[{"tool": "act", "id": "t" * 100}]]
        tree["prompts"]["pb"] = {"turns": []}  # b's prompt is answered at once

    answered_in_b = _with_tree(
        [
            {"run": "pb", "session": "b"},
            {"run": "pa"},
            {"answer": {"L": "approve"}, "session": "b"},
        ],
        long_ids,
    )
    assert "adversarial-ids" in classes_of(answered_in_b)
    assert "adversarial-ids-answered" not in classes_of(answered_in_b)

    def keeper(tree: dict[str, Any]) -> None:  # s1 calls a sub-agent that keeps its history
        worker = tree["sub_agents"][0]
        kept = {"name": "keeper", "preserve_context": True, "session_store": True}
        worker["sub_agents"] = [
            {**kept, "actions": worker.pop("actions"), "turns": worker["turns"]}
        ]
        worker["turns"] = [[{"tool": "keeper", "id": "k1"}]]

    b_waits = _with_tree(
        [
            {"run": "pb", "session": "b"},
            {"run": "pa"},
            {"answer": {"L": "approve"}},
            {"restart": True, "session": "b"},
            {"run": "pa"},
        ],
        keeper,
    )
    assert "restart-between-answers" in classes_of(b_waits)
    assert "idle-restart" not in classes_of(b_waits)

"""The oracle: what must happen, derived from the scenario alone (no target involved)."""

from __future__ import annotations

from typing import Any

import pytest

from scenarios.model import Scenario
from scenarios.oracle import Oracle, ScenarioError, approvals, expectations


def scenario(tree: dict[str, Any], steps: list[Any]) -> Scenario:
    return Scenario.model_validate(
        {"description": "a test", "source": "tests", "tree": tree, "steps": steps}
    )


def worker(name: str, label: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "actions": [{"tool": "act", "label": label, **extra.pop("action", {})}],
        "turns": [[{"tool": "act", "id": "t"}]],
        **extra,
    }


def two_workers(**extra: Any) -> dict[str, Any]:
    return {
        "name": "root",
        "turns": [[{"tool": "a", "id": "1"}, {"tool": "b", "id": "2"}]],
        "sub_agents": [worker("a", "A", **extra), worker("b", "B", **extra)],
    }


def test_a_run_asks_every_question_and_runs_nothing() -> None:
    [run] = expectations(scenario(two_workers(), [{"run": "go"}]))
    assert run.pending == (("A", 1), ("B", 1))
    assert run.executions == ()
    assert run.stop_reason == "interrupt"
    assert run.parked_continuations == 2


def test_a_partial_answer_runs_exactly_its_action_and_keeps_the_other_pending() -> None:
    steps = [{"run": "go"}, {"answer": {"A": "approve"}}, "restart", {"answer": {"B": "deny"}}]
    _, answer_a, restart, deny_b = expectations(scenario(two_workers(), steps))
    assert answer_a.executions == ("A",)
    assert answer_a.pending == (("B", 1),)
    assert restart.executions == ()
    assert restart.pending == (("B", 1),)
    assert deny_b.executions == ()
    assert deny_b.stop_reason == "end_turn"
    assert deny_b.final_answer == "done"
    assert deny_b.parked_continuations == 0


def test_a_second_question_follows_the_first_approval() -> None:
    tree = two_workers(action={"questions": 2})
    steps = [{"run": "go"}, {"answer": {"A": "approve"}}, {"answer": {"A": "approve"}}]
    _, first, second = expectations(scenario(tree, steps))
    assert first.pending == (("A", 2), ("B", 1))
    assert first.executions == ()
    assert second.executions == ("A",)


def test_a_turn_ends_only_when_every_call_in_it_is_answered_then_the_next_turn_starts() -> None:
    tree = {
        "name": "root",
        "actions": [{"tool": "first", "label": "F"}, {"tool": "second", "label": "S"}],
        "turns": [[{"tool": "first", "id": "1"}], [{"tool": "second", "id": "1"}]],
    }
    run, answer = expectations(scenario(tree, [{"run": "go"}, {"answer": {"F": "approve"}}]))
    assert run.pending == (("F", 1),)
    assert answer.executions == ("F",)
    assert answer.pending == (("S", 1),)


def test_an_answer_re_sent_after_it_was_carried_out_must_be_refused_and_changes_nothing() -> None:
    steps = [{"run": "go"}, {"answer": {"A": "approve", "B": "approve"}}, {"resend": 1}]
    run, answer, resend = expectations(scenario(two_workers(), steps))
    assert sorted(answer.executions) == ["A", "B"]
    assert resend.error == "required"
    assert resend.unknown_answer
    assert resend.executions == ()
    assert resend.stop_reason is None
    assert approvals([run, answer, resend]) == {"A": 1, "B": 1}


def test_a_stale_answer_leaves_the_other_questions_pending() -> None:
    steps = [{"run": "go"}, {"answer": {"A": "approve"}}, {"resend": 1}, {"answer": {"B": "deny"}}]
    _, answer, resend, deny = expectations(scenario(two_workers(), steps))
    assert answer.pending == resend.pending == (("B", 1),)
    assert (resend.error, resend.unknown_answer, resend.executions) == ("required", True, ())
    assert (deny.error, deny.unknown_answer, deny.stop_reason) == ("forbidden", False, "end_turn")


def test_re_sending_the_approval_of_a_first_question_does_not_answer_the_second() -> None:
    tree = two_workers(action={"questions": 2})
    steps = [{"run": "go"}, {"answer": {"A": "approve"}}, {"resend": 1}]
    _, answer, resend = expectations(scenario(tree, steps))
    assert answer.pending == resend.pending == (("A", 2), ("B", 1))
    assert resend.unknown_answer
    assert resend.executions == ()


def test_an_answer_to_a_finished_turn_by_label_names_nothing_and_may_fail() -> None:
    steps = [{"run": "go"}, {"answer": {"A": "approve", "B": "approve"}}, {"answer": {"A": "deny"}}]
    _, _, late = expectations(scenario(two_workers(), steps))
    assert (late.error, late.unknown_answer, late.executions) == ("allowed", False, ())


def test_an_id_the_human_was_not_shown_is_refused_and_changes_nothing() -> None:
    steps = [{"run": "go"}, {"answer_ids": {"no-such-question": "approve"}}]
    run, unknown = expectations(scenario(two_workers(), steps))
    assert (unknown.error, unknown.unknown_answer, unknown.stop_reason) == ("required", True, None)
    assert unknown.pending == run.pending
    assert unknown.executions == ()


def test_the_ids_shown_for_pending_questions_are_answered_by_their_labels() -> None:
    case = scenario(two_workers(), [{"run": "go"}, {"answer_ids": {"x": "approve"}}])
    oracle = Oracle(case)
    oracle.step(0, case.steps[0])
    answer = oracle.step(1, case.steps[1], {"x": ("A", None)})
    assert (answer.error, answer.unknown_answer, answer.executions) == ("forbidden", False, ("A",))


def twin_calls() -> dict[str, Any]:
    """One sub-agent called twice in one turn (mail Ana, mail Bo), each call asking under one
    label."""
    return {
        "name": "root",
        "turns": [
            [
                {"tool": "mailer", "id": "1", "prompt": "mail Ana"},
                {"tool": "mailer", "id": "2", "prompt": "mail Bo"},
            ]
        ],
        "sub_agents": [worker("mailer", "SEND")],
    }


def test_an_id_settles_exactly_the_question_shown_under_it_not_its_twin() -> None:
    """The second call's id answered first: Bo's question alone is settled, Ana's stays pending
    and is answered by its own id later (not refused as answered already)."""
    steps = [{"run": "go"}, {"answer_ids": {"bo": "approve"}}, {"answer_ids": {"ana": "deny"}}]
    case = scenario(twin_calls(), steps)
    oracle = Oracle(case)
    run = oracle.step(0, case.steps[0])
    assert run.pending == (("SEND", 1), ("SEND", 1))
    shown = {"ana": ("SEND", "mail Ana"), "bo": ("SEND", "mail Bo")}
    bo = oracle.step(1, case.steps[1], {"bo": shown["bo"]})
    assert (bo.error, bo.executions, bo.pending) == ("forbidden", ("SEND",), (("SEND", 1),))
    assert bo.served == (("SEND", "root/mailer", "mail Bo"),)
    ana = oracle.step(2, case.steps[2], {"ana": shown["ana"]})
    assert (ana.error, ana.unknown_answer, ana.executions) == ("forbidden", False, ())
    assert (ana.stop_reason, ana.pending) == ("end_turn", ())


def test_two_ids_of_twins_sharing_label_and_prompt_settle_one_question_each() -> None:
    tree = twin_calls()
    tree["turns"][0][1]["prompt"] = "mail Ana"
    steps = [{"run": "go"}, {"answer_ids": {"x": "approve"}}, {"answer_ids": {"y": "approve"}}]
    case = scenario(tree, steps)
    oracle = Oracle(case)
    oracle.step(0, case.steps[0])
    first = oracle.step(1, case.steps[1], {"x": ("SEND", "mail Ana")})
    assert (first.executions, first.pending) == (("SEND",), (("SEND", 1),))
    second = oracle.step(2, case.steps[2], {"y": ("SEND", "mail Ana")})
    assert (second.executions, second.pending, second.stop_reason) == (("SEND",), (), "end_turn")


def test_an_id_re_sent_after_its_question_was_settled_is_stale_and_its_twin_is_not() -> None:
    steps = [{"run": "go"}, {"answer_ids": {"bo": "approve"}}, {"resend": 1}]
    case = scenario(twin_calls(), steps)
    oracle = Oracle(case)
    oracle.step(0, case.steps[0])
    oracle.step(1, case.steps[1], {"bo": ("SEND", "mail Bo")})
    resend = oracle.step(2, case.steps[2])
    assert (resend.error, resend.unknown_answer, resend.pending) == (
        "required",
        True,
        (("SEND", 1),),
    )


def test_one_unknown_id_refuses_the_whole_answer() -> None:
    steps = [{"run": "go"}, {"answer": {"A": "approve"}, "answer_ids": {"x": "approve"}}]
    case = scenario(two_workers(), steps)
    oracle = Oracle(case)
    oracle.step(0, case.steps[0])
    answer = oracle.step(1, case.steps[1], {"x": None})
    assert (answer.error, answer.unknown_answer, answer.executions) == ("required", True, ())
    assert answer.pending == (("A", 1), ("B", 1))


def test_an_id_shown_for_a_question_answered_since_is_stale() -> None:
    steps = [
        {"run": "go"},
        {"answer": {"A": "approve"}},
        {"answer_ids": {"x": "approve"}},  # x was shown for A before A was answered
    ]
    case = scenario(two_workers(), steps)
    oracle = Oracle(case)
    oracle.step(0, case.steps[0])
    oracle.step(1, case.steps[1])
    stale = oracle.step(2, case.steps[2], {"x": ("A", None)})
    assert (stale.error, stale.unknown_answer, stale.executions) == ("required", True, ())
    assert stale.pending == (("B", 1),)


def test_an_unknown_answer_re_sent_is_refused_again() -> None:
    steps = [{"run": "go"}, {"answer_ids": {"x": "approve"}}, {"resend": 1}]
    _, _, resend = expectations(scenario(two_workers(), steps))
    assert (resend.error, resend.unknown_answer) == ("required", True)


def test_an_answer_refused_by_a_corrupted_store_is_not_stale_once_repaired() -> None:
    steps = [
        {"run": "go"},
        {"corrupt": "payload_missing"},
        {"answer": {"A": "approve"}},
        "repair",
        {"resend": 2},
        {"resend": 2},
    ]
    _, _, refused, _, carried_out, again = expectations(scenario(two_workers(), steps))
    assert (refused.error, refused.unknown_answer) == ("required", False)
    assert (carried_out.error, carried_out.executions) == ("forbidden", ("A",))
    assert (again.error, again.unknown_answer, again.executions) == ("required", True, ())


def test_a_restart_loses_the_turn_of_a_preserve_context_sub_agent_without_a_store() -> None:
    tree = two_workers(preserve_context=True, session_store=False)
    steps = [{"run": "go"}, "restart", {"answer": {"A": "approve"}}]
    _, _, answer = expectations(scenario(tree, steps))
    assert answer.error == "required"
    assert answer.executions == ()
    assert answer.pending == (("A", 1), ("B", 1))


def test_with_a_session_store_the_same_restart_changes_nothing() -> None:
    tree = two_workers(preserve_context=True)
    steps = [{"run": "go"}, "restart", {"answer": {"A": "approve"}}]
    _, _, answer = expectations(scenario(tree, steps))
    assert answer.error == "forbidden"
    assert answer.executions == ("A",)


@pytest.mark.parametrize("rebuild", [[{"corrupt": "payload_missing"}, "repair"], ["restart"]])
def test_a_corruption_and_a_repair_restart_as_a_restart_does(rebuild: list[Any]) -> None:
    """A corruption and a repair each end with a restart (the scenario format): a
    ``preserve_context`` sub-agent without a session store loses its parked turn there as at a
    restart, so the answer to it must fail loudly (the reference does so: a new process keeps
    nothing of memory)."""
    tree = {
        "name": "root",
        "turns": [[{"tool": "a", "id": "1"}, {"tool": "b", "id": "2"}]],
        "sub_agents": [
            worker("a", "A"),
            worker("b", "B", preserve_context=True, session_store=False),
        ],
    }
    *_, answer = expectations(
        scenario(tree, [{"run": "go"}, *rebuild, {"answer": {"B": "approve"}}])
    )
    assert answer.error == "required"
    assert answer.executions == ()
    lost = "root/b (preserve_context, no session store) lost its parked turn"
    assert answer.failure_cause == lost


def test_after_a_corruption_every_resume_must_fail_loudly_and_change_nothing() -> None:
    steps = [{"run": "go"}, {"corrupt": "payload_missing"}, {"answer": {"A": "approve"}}]
    _, corrupt, answer = expectations(scenario(two_workers(), steps))
    assert corrupt.error == "allowed"
    assert answer.error == "required"
    assert answer.executions == ()
    assert answer.pending == (("A", 1), ("B", 1))


def test_corrupting_what_is_not_stored_is_a_scenario_error() -> None:
    tree = {
        "name": "root",
        "actions": [{"tool": "x", "label": "X"}],
        "turns": [[{"tool": "x", "id": "1"}]],
    }
    with pytest.raises(ScenarioError, match=r"steps\[1\]\.corrupt: 0 continuation"):
        expectations(scenario(tree, [{"run": "go"}, {"corrupt": "deleted"}]))


def test_foreign_needs_two_stored_continuations() -> None:
    steps = [{"run": "go"}, {"answer": {"A": "approve"}}, {"corrupt": "foreign"}]
    with pytest.raises(ScenarioError, match="needs 2"):
        expectations(scenario(two_workers(), steps))


def test_a_busy_preserve_context_sub_agent_refuses_a_second_call_in_the_same_turn() -> None:
    tree = {
        "name": "root",
        "turns": [[{"tool": "w", "id": "1"}, {"tool": "w", "id": "2"}]],
        "sub_agents": [worker("w", "W", preserve_context=True)],
    }
    run, answer = expectations(scenario(tree, [{"run": "go"}, {"answer": {"W": "approve"}}]))
    assert run.pending == (("W", 1),)
    assert answer.executions == ("W",)
    assert answer.stop_reason == "end_turn"


def test_an_ephemeral_sub_agent_called_twice_asks_twice_and_runs_twice() -> None:
    tree = {
        "name": "root",
        "turns": [[{"tool": "w", "id": "1"}, {"tool": "w", "id": "2"}]],
        "sub_agents": [worker("w", "W")],
    }
    run, answer = expectations(scenario(tree, [{"run": "go"}, {"answer": {"W": "approve"}}]))
    assert run.pending == (("W", 1), ("W", 1))
    assert answer.executions == ("W", "W")


def test_each_call_returns_its_answer_where_its_callers_turn_ends() -> None:
    """What the caller's next request carries for each call (caller, prompt, turn, toolUseId):
    the sub-agent's answer, recorded in the step that ends the caller's turn; none for a call a
    busy preserve_context sub-agent turned away."""
    ephemeral = two_workers()
    run, answer = expectations(scenario(ephemeral, [{"run": "go"}, {"answer": {"A": "approve"}}]))
    assert run.returned == ()
    assert answer.returned == ()  # B still asks: the root's turn goes on
    *_, last = expectations(
        scenario(ephemeral, [{"run": "go"}, {"answer": {"A": "approve", "B": "approve"}}])
    )
    assert last.returned == (("root", "go", 1, "1", "done"), ("root", "go", 1, "2", "done"))
    busy = {
        "name": "root",
        "turns": [[{"tool": "w", "id": "1"}, {"tool": "w", "id": "2"}]],
        "sub_agents": [worker("w", "W", preserve_context=True)],
    }
    _, answered = expectations(scenario(busy, [{"run": "go"}, {"answer": {"W": "approve"}}]))
    assert answered.returned == (("root", "go", 1, "1", "done"), ("root", "go", 1, "2", None))


def test_each_action_call_returns_whether_it_ran_where_its_agents_turn_ends() -> None:
    steps = [{"run": "go"}, {"answer": {"A": "approve", "B": "deny"}}]
    run, answer = expectations(scenario(two_workers(), steps))
    assert run.acted == ()
    assert answer.acted == (
        ("root/a", "do your part", 1, "t", "A", "ran"),
        ("root/b", "do your part", 1, "t", "B", "refused"),
    )


def test_deep_nesting_counts_nested_stored_continuations() -> None:
    tree = {
        "name": "root",
        "turns": [[{"tool": "mid", "id": "1"}]],
        "sub_agents": [
            {
                "name": "mid",
                "turns": [[{"tool": "leaf", "id": "1"}]],
                "sub_agents": [worker("leaf", "L")],
            }
        ],
    }
    [run] = expectations(scenario(tree, [{"run": "go"}]))
    assert run.parked_continuations == 2
    assert run.pending == (("L", 1),)


def test_a_second_prompt_while_a_turn_is_parked_may_fail_and_changes_nothing() -> None:
    run, again = expectations(scenario(two_workers(), [{"run": "go"}, {"run": "again"}]))
    assert again.error == "allowed"
    assert again.pending == run.pending


def test_a_file_may_require_an_error_where_the_oracle_requires_or_allows_one() -> None:
    steps = [{"run": "go"}, "restart", {"answer_ids": {"x": "approve"}}, {"run": "again"}]
    case = Scenario.model_validate(
        {**scenario(two_workers(), steps).model_dump(), "expect": {"errors": [2, 3]}}
    )
    _, _, unknown, again = expectations(case)
    assert (unknown.error, again.error) == ("required", "allowed")


def test_the_restart_free_control_keeps_the_steps_a_file_expects_to_fail() -> None:
    steps = [{"run": "go"}, "restart", {"answer_ids": {"x": "approve"}}, "restart", {"resend": 2}]
    case = Scenario.model_validate(
        {**scenario(two_workers(), steps).model_dump(), "expect": {"errors": [2, 4]}}
    )
    control = case.without_restarts()
    assert control.expect is not None
    assert control.expect.errors == (1, 2)
    assert [type(step).__name__ for step in control.steps] == ["Run", "Answer", "Resend"]


def twin_mailer_calls() -> dict[str, Any]:
    """One mailer called twice with different prompts, each prompt scripted differently."""
    return {
        "name": "root",
        "turns": [[{"tool": "mailer", "id": "1", "prompt": "mail Ana"}]],
        "prompts": {
            "urgent": {
                "turns": [
                    [
                        {"tool": "mailer", "id": "1", "prompt": "mail Ana"},
                        {"tool": "mailer", "id": "2", "prompt": "mail Bo"},
                    ]
                ],
                "answer": "both mailed",
            }
        },
        "sub_agents": [
            {
                "name": "mailer",
                "actions": [
                    {"tool": "send", "label": "SEND"},
                    {"tool": "send_urgent", "label": "URGENT"},
                ],
                "turns": [[{"tool": "send", "id": "s"}]],
                "prompts": {"mail Bo": {"turns": [[{"tool": "send_urgent", "id": "s"}]]}},
            }
        ],
    }


def test_each_prompt_plays_its_own_script_and_the_root_answers_its_prompts_text() -> None:
    run, bo, ana = expectations(
        scenario(
            twin_mailer_calls(),
            [{"run": "urgent"}, {"answer": {"URGENT": "approve"}}, {"answer": {"SEND": "deny"}}],
        )
    )
    assert run.pending == (("SEND", 1), ("URGENT", 1))
    assert (bo.executions, bo.pending) == (("URGENT",), (("SEND", 1),))
    assert (ana.executions, ana.stop_reason, ana.final_answer) == ((), "end_turn", "both mailed")


def test_a_prompt_without_a_script_of_its_own_plays_the_agents_turns() -> None:
    steps = [{"run": "calm"}, {"answer": {"SEND": "approve"}}, {"run": "urgent"}]
    run, done, urgent = expectations(scenario(twin_mailer_calls(), steps))
    assert run.pending == (("SEND", 1),)
    assert (done.executions, done.final_answer) == (("SEND",), "done")
    assert urgent.pending == (("SEND", 1), ("URGENT", 1))


def deployed(tree: dict[str, Any]) -> dict[str, Any]:
    return {"restart": {"tree": tree}}


def renamed_b() -> dict[str, Any]:
    """``two_workers`` after a deploy that renamed sub-agent b to c (its action relabelled)."""
    tree = two_workers()
    tree["turns"] = [[{"tool": "a", "id": "1"}, {"tool": "c", "id": "2"}]]
    tree["sub_agents"] = [worker("a", "A"), worker("c", "C")]
    return tree


def test_after_a_deploy_renames_a_sub_agent_an_answer_to_its_call_is_refused_and_kept() -> None:
    steps = [{"run": "go"}, deployed(renamed_b()), {"answer": {"B": "approve"}}]
    _, deploy, answer = expectations(scenario(two_workers(), steps))
    assert (deploy.error, deploy.pending) == ("forbidden", (("A", 1), ("B", 1)))
    assert (answer.error, answer.unknown_answer) == ("required", False)
    assert answer.executions == ()
    assert answer.pending == (("A", 1), ("B", 1))


def test_after_a_deploy_a_call_that_still_exists_is_answered_and_the_gone_one_stays_pending() -> (
    None
):
    steps = [{"run": "go"}, deployed(renamed_b()), {"answer": {"A": "approve"}}, {"resend": 2}]
    _, _, answer, again = expectations(scenario(two_workers(), steps))
    assert (answer.error, answer.executions) == ("forbidden", ("A",))
    assert (answer.pending, answer.stop_reason) == ((("B", 1),), "interrupt")
    assert (again.error, again.unknown_answer, again.executions) == ("required", True, ())


def test_an_answer_naming_a_gone_call_refuses_the_whole_step_and_again_when_re_sent() -> None:
    steps = [
        {"run": "go"},
        deployed(renamed_b()),
        {"answer": {"A": "approve", "B": "approve"}},
        {"resend": 2},
    ]
    _, _, answer, again = expectations(scenario(two_workers(), steps))
    assert (answer.error, answer.executions, answer.pending) == (
        "required",
        (),
        (("A", 1), ("B", 1)),
    )
    assert (again.error, again.unknown_answer, again.executions) == ("required", False, ())


def test_a_deploy_that_drops_an_action_tool_leaves_its_question_pending() -> None:
    tree = two_workers()
    dropped = two_workers()
    dropped["sub_agents"][1] = {"name": "b", "actions": [{"tool": "other", "label": "O"}]}
    steps = [{"run": "go"}, deployed(dropped), {"answer": {"B": "approve"}}]
    _, _, answer = expectations(scenario(tree, steps))
    assert (answer.error, answer.executions, answer.pending) == (
        "required",
        (),
        (("A", 1), ("B", 1)),
    )


def test_a_deploy_that_changes_a_window_size_keeps_every_call() -> None:
    tree = two_workers(window={"size": 4})
    steps = [{"run": "go"}, deployed(two_workers(window={"size": 2})), {"answer": {"B": "approve"}}]
    _, _, answer = expectations(scenario(tree, steps))
    assert (answer.error, answer.executions, answer.pending) == ("forbidden", ("B",), (("A", 1),))


def test_a_deploy_plays_the_new_scripts_from_where_each_agent_is() -> None:
    later = two_workers()
    later["answer"] = "redeployed"
    steps = [{"run": "go"}, deployed(later), {"answer": {"A": "approve", "B": "approve"}}]
    _, _, answer = expectations(scenario(two_workers(), steps))
    assert (answer.executions, answer.final_answer) == (("A", "B"), "redeployed")


def test_a_parked_call_whose_sub_agent_changed_preserve_context_still_exists() -> None:
    swapped = two_workers()
    swapped["sub_agents"][0]["preserve_context"] = True
    original = two_workers()
    original["sub_agents"][1]["preserve_context"] = True
    steps = [
        {"run": "go"},
        deployed(swapped),
        {"answer": {"A": "approve"}},
        {"answer": {"B": "approve"}},
    ]
    _, _, answer_a, answer_b = expectations(scenario(original, steps))
    assert (answer_a.error, answer_a.executions, answer_a.pending) == (
        "forbidden",
        ("A",),
        (("B", 1),),
    )
    assert (answer_b.error, answer_b.executions, answer_b.stop_reason) == (
        "forbidden",
        ("B",),
        "end_turn",
    )


def test_changing_preserve_context_of_a_sub_agent_with_nothing_parked_changes_nothing() -> None:
    steps = [
        {"run": "go"},
        {"answer": {"A": "approve", "B": "approve"}},
        deployed(two_workers(preserve_context=True)),
        {"run": "again"},
        {"answer": {"A": "approve"}},
    ]
    *_, answer = expectations(scenario(two_workers(), steps))
    assert (answer.error, answer.executions, answer.pending) == ("forbidden", ("A",), (("B", 1),))


def test_a_deploy_before_the_first_run_is_the_tree_the_run_plays() -> None:
    steps = ["restart", deployed(renamed_b()), {"run": "go"}, {"answer": {"C": "approve"}}]
    *_, run, answer = expectations(scenario(two_workers(), steps))
    assert run.pending == (("A", 1), ("C", 1))
    assert answer.executions == ("C",)


def _tallies(tree: dict[str, Any], steps: list[Any]) -> list[list[tuple[str, int | None]]]:
    scenario = Scenario.model_validate(
        {"description": "d", "source": "s", "tree": tree, "steps": steps}
    )
    return [
        [(f"{agent}:{tool_use_id}", count) for agent, _, tool_use_id, count in step.tallies]
        for step in expectations(scenario)
    ]


def _tallying(**options: Any) -> dict[str, Any]:
    """The orchestrator calls s1 twice, one turn each; s1 tallies before and after its question."""
    return {
        "name": "o",
        "turns": [[{"tool": "s1", "id": "c1"}], [{"tool": "s1", "id": "c2"}]],
        "sub_agents": [
            {
                "name": "s1",
                "effects": [{"tool": "lookup", "tally": True}],
                "actions": [{"tool": "act", "label": "act"}],
                "turns": [
                    [{"tool": "lookup", "id": "t0"}],
                    [{"tool": "act", "id": "t1"}],
                    [{"tool": "lookup", "id": "t2"}],
                ],
                **options,
            }
        ],
    }


STEPS = [{"run": "go"}, "restart", {"answer": {"act": "approve"}}, {"answer": {"act": "approve"}}]


def test_a_tally_of_an_ephemeral_sub_agent_counts_within_one_call_across_a_restart() -> None:
    assert _tallies(_tallying(), STEPS) == [
        [("o/s1:t0", 0)],
        [],
        [("o/s1:t0", 0), ("o/s1:t2", 1)],  # the first call reads back 1; the second starts anew
        [("o/s1:t2", 1)],
    ]


def test_a_tally_of_a_preserve_context_sub_agent_carries_across_its_calls() -> None:
    assert _tallies(_tallying(preserve_context=True), STEPS) == [
        [("o/s1:t0", 0)],
        [],
        [("o/s1:t0", 2), ("o/s1:t2", 1)],
        [("o/s1:t2", 3)],
    ]


def test_a_storeless_sub_agent_s_tally_starts_again_after_a_restart() -> None:
    """Between its two calls the root asks, and a restart comes: a session store keeps the
    count, an in-memory sub-agent loses it with the rest of its state."""
    tree = _tallying(preserve_context=True)
    tree["actions"] = [{"tool": "check", "label": "root-act"}]
    tree["turns"].insert(1, [{"tool": "check", "id": "r1"}])
    steps = [
        {"run": "go"},
        {"answer": {"act": "approve"}},
        "restart",
        {"answer": {"root-act": "approve"}},
        {"answer": {"act": "approve"}},
    ]
    kept = _tallies(tree, steps)
    tree["sub_agents"][0]["session_store"] = False
    lost = _tallies(tree, steps)

    assert kept[3] == [("o/s1:t0", 2)]
    assert lost[3] == [("o/s1:t0", 0)]
    assert kept[:3] == lost[:3] == [[("o/s1:t0", 0)], [("o/s1:t2", 1)], []]


def test_a_tally_key_in_an_agent_s_initial_state_is_refused() -> None:
    with pytest.raises(ValueError, match="tally effects' counters"):
        Scenario.model_validate(
            {
                "description": "d",
                "source": "s",
                "tree": _tallying(state={"tally:lookup": 5}),
                "steps": [{"run": "go"}],
            }
        )


def test_an_answer_without_an_id_answers_the_one_pending_question() -> None:
    """With one question pending, `resume` names it: it is answered as by its label."""
    steps = [{"run": "go"}, {"answer": {"A": "approve"}}, {"resume": "approve"}]
    _, _, resumed = expectations(scenario(two_workers(), steps))
    assert resumed.executions == ("B",)
    assert resumed.error == "forbidden"
    assert resumed.stop_reason == "end_turn"


def test_an_answer_without_an_id_while_two_are_pending_is_refused_and_changes_nothing() -> None:
    steps = [{"run": "go"}, {"resume": "approve"}, {"answer": {"A": "deny", "B": "approve"}}]
    _, refused, answered = expectations(scenario(two_workers(), steps))
    assert refused.unknown_answer
    assert refused.error == "required"
    assert refused.executions == ()
    assert refused.pending == (("A", 1), ("B", 1))
    assert refused.failure_cause is not None
    assert "2 questions are pending" in refused.failure_cause
    assert answered.executions == ("B",)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([{"run": "go"}, {"resume": "approve", "answer": {"A": "approve"}}], "given alone"),
        ([{"run": "go"}, {"resume": "approve"}, {"resend": 1}], "without an id"),
    ],
)
def test_an_answer_without_an_id_is_given_alone_and_never_re_sent(
    steps: list[Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        scenario(two_workers(), steps)


def test_a_tally_in_an_agent_with_a_window_reads_the_model_calls_it_made_so_far() -> None:
    """The window's count of model calls is carried like the key/value state: per call of an
    ephemeral sub-agent, across the calls of a preserve_context one."""

    def tree(preserve_context: bool) -> dict[str, Any]:
        researcher = {
            "name": "r",
            "preserve_context": preserve_context,
            "window": {"size": 40, "per_turn": 1},
            "effects": [{"tool": "lookup", "tally": True}],
            "actions": [{"tool": "act", "label": "A"}],
            "turns": [
                [{"tool": "lookup", "id": "t1"}],
                [{"tool": "act", "id": "t2"}],
                [{"tool": "lookup", "id": "t3"}],
            ],
        }
        calls = [[{"tool": "r", "id": "c1"}], [{"tool": "r", "id": "c2"}]]
        return {"name": "root", "turns": calls, "sub_agents": [researcher]}

    steps = [{"run": "go"}, "restart", {"answer": {"A": "approve"}}, {"answer": {"A": "approve"}}]
    for preserve_context, second_call in ((False, 0), (True, 4)):
        run, _, first, second = expectations(scenario(tree(preserve_context), steps))
        assert run.window_calls == (("root/r", "lookup", "t1", 1),)
        # the first call's answer: its turn 3, then the second call's first turn
        assert first.window_calls == (
            ("root/r", "lookup", "t1", second_call + 1),
            ("root/r", "lookup", "t3", 3),
        )
        assert second.window_calls == (("root/r", "lookup", "t3", second_call + 3),)

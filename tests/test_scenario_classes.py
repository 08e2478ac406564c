"""The recognised scenario classes a findings class narrows by (``scenarios.classes``), read off
the scenario (and the oracle) alone: ``shared-tool-use-ids``, which tells apart the questions a
naming scheme by toolUseId alone gives one name (strands-agents before 1.59) from
``colliding-ids``, the ones a local id of tool and toolUseId does; and the classes of retried
calls and deploys, which agree with what the regression files declare, a retry or a deploy that
changes nothing a question depends on not counted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scenarios import corpus, coverage
from scenarios.classes import WITHIN, classes_of, retries_happen
from scenarios.loading import load_all, load_scenario, parse_scenario, regression_files
from scenarios.model import Corrupt, Restart, Scenario
from scenarios.oracle import CAUSE_CLASSES, Oracle


def asking(name: str, tool: str, tool_use_id: str) -> dict[str, Any]:
    """A sub-agent whose one turn calls its protected action ``tool`` under ``tool_use_id``."""
    return {
        "name": name,
        "actions": [{"tool": tool, "label": f"{name}-act"}],
        "turns": [[{"tool": tool, "id": tool_use_id}]],
    }


def scenario(*sub_agents: dict[str, Any], ids: tuple[str, ...] = ("c1", "c2")) -> Any:
    tree = {
        "name": "orchestrator",
        "sub_agents": list(sub_agents),
        "turns": [[{"tool": sub["name"], "id": ids[n]} for n, sub in enumerate(sub_agents)]],
    }
    data = {"description": "test", "source": "tests", "tree": tree, "steps": [{"run": "p1"}]}
    return parse_scenario(data, "test")


def test_two_agents_asking_under_one_tool_use_id_with_other_tools_share_it_and_do_not_collide() -> (
    None
):
    found = classes_of(scenario(asking("a", "pay", "t1"), asking("b", "mail", "t1")))
    assert "shared-tool-use-ids" in found
    assert "colliding-ids" not in found


def test_the_same_tool_under_one_tool_use_id_is_both_shared_and_colliding() -> None:
    found = classes_of(scenario(asking("a", "pay", "t1"), asking("b", "pay", "t1")))
    assert {"shared-tool-use-ids", "colliding-ids"} <= found


def test_distinct_tool_use_ids_share_nothing() -> None:
    found = classes_of(scenario(asking("a", "pay", "t1"), asking("b", "pay", "t2")))
    assert not {"shared-tool-use-ids", "colliding-ids"} & found


def test_a_call_that_asks_nothing_shares_no_id() -> None:
    # b's tool under t1 is an ordinary tool: it asks nothing, so no question of b is named t1
    quiet = {
        "name": "b",
        "actions": [{"tool": "pay", "label": "b-act"}],
        "effects": [{"tool": "lookup"}],
        "turns": [[{"tool": "lookup", "id": "t1"}, {"tool": "pay", "id": "t2"}]],
    }
    assert "shared-tool-use-ids" not in classes_of(scenario(asking("a", "pay", "t1"), quiet))


def test_one_agent_asking_twice_under_one_tool_use_id_shares_it_with_no_other_agent() -> None:
    again = {
        "name": "a",
        "actions": [{"tool": "pay", "label": "a-act"}],
        "turns": [[{"tool": "pay", "id": "t1"}], [{"tool": "pay", "id": "t1"}]],
    }
    assert "shared-tool-use-ids" not in classes_of(scenario(again, asking("b", "pay", "t2")))


def test_gated_calls_in_two_agents_under_one_tool_use_id_share_it() -> None:
    # the orchestrator asks the gate of its call c1 of a; a asks the gate of its call c1 of b
    inner = {**asking("b", "pay", "t2"), "gate": "b-gate"}
    outer = {
        "name": "a",
        "gate": "a-gate",
        "sub_agents": [inner],
        "turns": [[{"tool": "b", "id": "c1"}]],
    }
    found = classes_of(scenario(outer, ids=("c1",)))
    assert "shared-tool-use-ids" in found
    assert "colliding-ids" not in found


REGRESSIONS = Path(__file__).resolve().parent.parent / "scenarios" / "regressions"
FILES = sorted(REGRESSIONS.glob("*.yaml"))


@pytest.mark.parametrize("recognised", ["retries", "deploy-skew"])
def test_a_regression_file_has_the_class_exactly_when_it_declares_it(recognised: str) -> None:
    declaring = {path.name for path in FILES if recognised in load_scenario(path).classes}
    having = {path.name for path in FILES if recognised in classes_of(load_scenario(path))}
    assert declaring  # the retried-* and deploy-* files
    assert having == declaring


def test_a_scenario_that_corrupts_the_store_has_the_corruption_class() -> None:
    corrupting = {
        path.name
        for path in FILES
        if any(isinstance(step, Corrupt) for step in load_scenario(path).steps)
    }
    having = {path.name for path in FILES if "corruption" in classes_of(load_scenario(path))}
    assert corrupting  # the fault-* and schema-skew-* files
    assert having == corrupting


def notifier(steps: list[object], after: str = "result") -> Scenario:
    return Scenario.model_validate(
        {
            "description": "a notifier whose send call is retried",
            "source": "tests",
            "tree": {
                "name": "orchestrator",
                "turns": [[{"tool": "notifier", "id": "call-1"}]],
                "sub_agents": [
                    {
                        "name": "notifier",
                        "actions": [
                            {
                                "tool": "send",
                                "label": "send-notice",
                                "retry": {"after": after, "times": 1},
                            }
                        ],
                        "turns": [[{"tool": "send", "id": "t1"}]],
                    }
                ],
            },
            "steps": steps,
        }
    )


def test_a_retry_counts_only_once_the_oracle_makes_the_call_again() -> None:
    asked = notifier([{"run": "tell"}])
    assert not retries_happen(asked)  # the call still asks: nothing is retried yet
    assert "retries" not in classes_of(asked)
    approved = notifier([{"run": "tell"}, {"answer": {"send-notice": "approve"}}])
    assert retries_happen(approved)
    assert "retries" in classes_of(approved)
    # a retry after an error, on a call that ends with a result: never made again
    sent = notifier([{"run": "tell"}, {"answer": {"send-notice": "approve"}}], after="error")
    assert not retries_happen(sent)
    assert "retries" not in classes_of(sent)


def test_a_deploy_is_skew_only_while_a_question_is_pending() -> None:
    deploy = load_scenario(REGRESSIONS / "deploy-drops-tool.yaml")
    changed = next(step for step in deploy.steps if "restart" in step.model_dump())
    tree = deploy.tree.model_dump(mode="json", exclude_defaults=True)
    finished = Scenario.model_validate(
        {
            "description": "a deploy once every question is answered",
            "source": "tests",
            "tree": tree,
            "steps": [
                {"run": "deploy and tell everyone"},
                {"answer": {"deploy-v1": "approve", "notify": "approve"}},
                changed.model_dump(mode="json", exclude_defaults=True),
            ],
        }
    )
    found = classes_of(finished)
    assert "deploy-skew" not in found
    assert "restart-after-the-end" in found
    assert "deploy-skew" in classes_of(deploy)


def twin_mailer(prompts: dict[str, Any], called: list[str]) -> Any:
    """One turn calls the mailer once per prompt of ``called``; it has scripts for ``prompts``."""
    mailer = {"name": "mailer", "actions": [{"tool": "send", "label": "send"}], "prompts": prompts}
    mailer["turns"] = [[{"tool": "send", "id": "s1"}]]
    tree = {
        "name": "orchestrator",
        "sub_agents": [mailer],
        "turns": [[{"tool": "mailer", "id": f"c{n}", "prompt": p} for n, p in enumerate(called)]],
    }
    data = {"description": "test", "source": "tests", "tree": tree, "steps": [{"run": "p1"}]}
    return parse_scenario(data, "test")


def test_twin_calls_with_prompts_of_their_own_are_twin_prompts() -> None:
    """Two calls of one sub-agent in a turn, with different prompts one of which has its own
    script; not twin calls playing one script, with one prompt or with no script of their own."""
    own = {"mail Ana": {"answer": "mailed Ana"}}
    assert "twin-prompts" in classes_of(twin_mailer(own, ["mail Ana", "mail Bo"]))
    assert "twin-prompts" not in classes_of(twin_mailer(own, ["mail Ana", "mail Ana"]))
    assert "twin-prompts" not in classes_of(twin_mailer({}, ["mail Ana", "mail Bo"]))
    assert "twin-prompts" not in classes_of(twin_mailer(own, ["mail Ana"]))


def test_twin_calls_of_a_sub_agent_are_finer_classes_of_twin_calls() -> None:
    """twin-calls counts any tool called twice in a turn; the finer classes only a sub-agent's,
    and of those a preserve_context one's."""
    ephemeral = twin_mailer({}, ["mail Ana", "mail Bo"])
    assert {"twin-calls", "twin-agent-calls"} <= classes_of(ephemeral)
    assert "twin-session-calls" not in classes_of(ephemeral)
    data = ephemeral.model_dump(mode="json", exclude_defaults=True)
    data["tree"]["sub_agents"][0]["preserve_context"] = True
    data["tree"]["sub_agents"][0]["session_store"] = True
    session = parse_scenario(data, "session")
    assert {"twin-calls", "twin-agent-calls", "twin-session-calls"} <= classes_of(session)
    # a session sub-agent called once by each of twin calls of its caller serves both at once
    nested = ephemeral.model_dump(mode="json", exclude_defaults=True)
    mailer = nested["tree"]["sub_agents"][0]
    mailer["sub_agents"] = [
        {"name": "archive", "preserve_context": True, "turns": [], "session_store": True}
    ]
    mailer["turns"] = [[{"tool": "archive", "id": "a1"}]]
    assert "twin-session-calls" in classes_of(parse_scenario(nested, "nested"))
    mailer["sub_agents"][0]["preserve_context"] = False
    mailer["sub_agents"][0].pop("session_store")
    assert "twin-session-calls" not in classes_of(parse_scenario(nested, "ephemeral"))
    # an action called twice in one turn is a twin call, not a sub-agent's
    action = ephemeral.model_dump(mode="json", exclude_defaults=True)
    action["tree"]["sub_agents"][0]["turns"] = [
        [{"tool": "send", "id": "s1"}, {"tool": "send", "id": "s2"}]
    ]
    action["tree"]["turns"] = [[{"tool": "mailer", "id": "c0", "prompt": "mail Ana"}]]
    acting = parse_scenario(action, "action")
    assert "twin-calls" in classes_of(acting)
    assert not {"twin-agent-calls", "twin-session-calls"} & classes_of(acting)


@pytest.mark.parametrize(
    ("name", "uncompared"),
    [
        ("restart-anywhere", False),  # compared with its restart-free control (I5, I6, D)
        ("preserve-context-no-store", True),  # a sub-agent without a store: no control
        ("deploy-renames-sub-agent", True),  # a deploy while questions wait: no control
    ],
)
def test_a_restart_between_answers_no_control_is_run_for_is_uncompared(
    name: str, uncompared: bool
) -> None:
    found = classes_of(load_scenario(REGRESSIONS / f"{name}.yaml"))
    assert "restart-between-answers" in found
    assert ("uncompared-restart" in found) is uncompared


@pytest.mark.parametrize(
    ("name", "together"),
    [
        ("upstream-langgraph-6624", True),  # one message calls two actions that both ask
        ("mixed", True),  # a sub-agent's question and an action's, from one message
        ("re-interrupt", False),  # one action asks twice, one question at a time
        ("lookup-then-ask", False),  # one question after an ordinary tool
        ("gated-agent-call", False),  # a gate, then its sub-agent's question: one per step
    ],
)
def test_questions_raised_in_one_step_are_asked_together(name: str, together: bool) -> None:
    found = classes_of(load_scenario(REGRESSIONS / f"{name}.yaml"))
    assert ("questions-asked-together" in found) is together


def test_only_calls_of_one_message_that_both_ask_are_asked_together() -> None:
    """An action that asks again after its approval raises one question per step, and so do two
    actions in turns one after the other; two calls of one message that both ask raise two."""
    sub_agent: dict[str, Any] = {
        "name": "treasurer",
        "actions": [{"tool": "wire_funds", "label": "wire-funds", "questions": 2}],
        "turns": [[{"tool": "wire_funds", "id": "w1"}]],
    }
    data: dict[str, Any] = {
        "description": "test",
        "source": "tests",
        "tree": {
            "name": "orchestrator",
            "sub_agents": [sub_agent],
            "turns": [[{"tool": "treasurer", "id": "c1"}]],
        },
        "steps": [{"run": "pay"}, {"answer": {"wire-funds": "approve"}}],
    }
    assert "questions-asked-together" not in classes_of(parse_scenario(data, "alone"))
    sub_agent["actions"].append({"tool": "notify", "label": "notify"})
    sub_agent["turns"] = [[{"tool": "wire_funds", "id": "w1"}], [{"tool": "notify", "id": "n1"}]]
    assert "questions-asked-together" not in classes_of(parse_scenario(data, "in turn"))
    sub_agent["turns"] = [[{"tool": "wire_funds", "id": "w1"}, {"tool": "notify", "id": "n1"}]]
    assert "questions-asked-together" in classes_of(parse_scenario(data, "at once"))


def every_committed_scenario() -> list[tuple[str, Scenario]]:
    """The regression files (the coverage ones too), the committed ci sample and the coverage
    sample."""
    committed = corpus.find("ci", None)
    assert committed is not None
    return [
        *load_all(regression_files()),
        *load_all(regression_files(REGRESSIONS / "coverage")),
        *corpus.read(committed, "ci"),
        *coverage.read(),
    ]


def test_a_failure_cause_the_oracle_writes_is_written_only_for_its_class() -> None:
    """``CAUSE_CLASSES``: the exemption canary takes an expected sentence that must contain one of
    these causes as naming the violations of that class's scenarios alone (dropping the class from
    a findings class then broadens nothing), so the oracle must write it for no other scenario."""
    written: dict[str, int] = dict.fromkeys(CAUSE_CLASSES, 0)
    for name, each in every_committed_scenario():
        oracle = Oracle(each)
        causes = [oracle.step(index, step).failure_cause for index, step in enumerate(each.steps)]
        for cause, recognised in CAUSE_CLASSES.items():
            if any(cause in (said or "") for said in causes):
                written[cause] += 1
                assert recognised in classes_of(each), (name, cause)
    assert all(written.values()), written  # each cause is written somewhere: the test sees it


def test_a_class_within_another_comes_with_it() -> None:
    """``WITHIN``: the exemption canary takes a witness that names only one class's scenarios as
    naming only those of the classes it lies within too (dropping them from a findings class
    then broadens nothing), so no committed scenario may have the one without the others."""
    met: dict[str, int] = dict.fromkeys(WITHIN, 0)
    for name, each in every_committed_scenario():
        found = classes_of(each)
        for narrower, wider in WITHIN.items():
            if narrower in found:
                met[narrower] += 1
                assert set(wider) <= found, (name, narrower)
    assert all(met.values()), met  # each narrower class occurs: the test sees it


def test_a_stateful_provider_is_in_the_first_tree_of_its_scenario() -> None:
    """``PROVIDER_CLASSES`` (harness.findings.canary): only a stateful provider writes a response
    id, and the class ``stateful-provider`` is read off a scenario's first tree; so no committed
    scenario may deploy one that its first tree lacks (a deploy may not turn a provider
    stateful), or a sentence naming a response id could come from a scenario outside the class."""
    for name, each in every_committed_scenario():
        trees = [each.tree] + [
            step.tree for step in each.steps if isinstance(step, Restart) and step.tree is not None
        ]
        stateful = any(agent.stateful_provider for tree in trees for agent, _ in tree.walk())
        assert not stateful or "stateful-provider" in classes_of(each), name


def test_a_restart_while_nothing_waits_before_a_later_run_is_an_idle_restart() -> None:
    """The idle-restart file has the class; moving its restart to where the question waits (a
    restored parked turn, not a stored session, carries the history then), dropping the later
    run, or the sub-agent's store, each takes it away."""
    idle = load_scenario(REGRESSIONS / "preserve-context-history-across-an-idle-restart.yaml")
    assert "idle-restart" in classes_of(idle)
    data = idle.model_dump(mode="json", exclude_defaults=True)
    steps = data["steps"]
    waiting = {**data, "steps": [steps[0], steps[2], steps[1], steps[3], steps[4]]}
    no_later_run = {**data, "steps": steps[:3]}
    tree = data["tree"]
    no_store = {
        **data,
        "tree": {**tree, "sub_agents": [{**tree["sub_agents"][0], "session_store": False}]},
    }
    for changed in (waiting, no_later_run, no_store):
        assert "idle-restart" not in classes_of(Scenario.model_validate(changed))


@pytest.mark.parametrize(
    "approval",
    [
        {"answer": {"wire-funds": "approve"}},
        {"answer_calls": {"wire-funds": {"do your part": "approve"}}},
        {"resume": "approve"},
    ],
    ids=["by-label", "by-call", "without-an-id"],
)
def test_an_action_asked_again_after_its_approval_is_a_re_interrupt(
    approval: dict[str, Any],
) -> None:
    """However the approval names the question (its label, its call, or no id at all), the
    action's second question asked after it makes the scenario a ``re-interrupt`` one."""
    data = {
        "description": "test",
        "source": "tests",
        "tree": {
            "name": "orchestrator",
            "turns": [[{"tool": "treasurer", "id": "call-1"}]],
            "sub_agents": [
                {
                    "name": "treasurer",
                    "actions": [{"tool": "wire_funds", "label": "wire-funds", "questions": 2}],
                    "turns": [[{"tool": "wire_funds", "id": "t1"}]],
                }
            ],
        },
        "steps": [{"run": "pay the invoice"}, approval],
    }
    asked_again = parse_scenario(data, "test")
    assert Oracle(asked_again).step(0, asked_again.steps[0]).pending == (("wire-funds", 1),)
    assert "re-interrupt" in classes_of(asked_again)
    denied = parse_scenario(
        {**data, "steps": [{"run": "pay the invoice"}, {"resume": "deny"}]}, "t"
    )
    assert "re-interrupt" not in classes_of(denied)

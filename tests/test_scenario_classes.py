"""The recognised classes of retried calls and deploys (``scenarios.classes``): read from the
scenario and the oracle alone, they agree with what the regression files declare, and a retry
or a deploy that changes nothing a question depends on is not counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.classes import classes_of, retries_happen
from scenarios.loading import load_scenario
from scenarios.model import Scenario

REGRESSIONS = Path(__file__).resolve().parent.parent / "scenarios" / "regressions"
FILES = sorted(REGRESSIONS.glob("*.yaml"))


@pytest.mark.parametrize("recognised", ["retries", "deploy-skew"])
def test_a_regression_file_has_the_class_exactly_when_it_declares_it(recognised: str) -> None:
    declaring = {path.name for path in FILES if recognised in load_scenario(path).classes}
    having = {path.name for path in FILES if recognised in classes_of(load_scenario(path))}
    assert declaring  # the retried-* and deploy-* files
    assert having == declaring


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

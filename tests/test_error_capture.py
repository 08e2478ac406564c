"""Every record an SDK logs at ERROR or WARNING during a step reaches the history, in order.

A findings anchor matches "the errors recorded at that step", and O reads them too: a second
error a step logged and the adapter dropped is a bug nobody can see.  Each adapter that listens
to an SDK's logger is driven here through a step during which that logger receives two ERROR
records and two WARNING records (sent from inside the scripted model, so they arrive while the
SDK runs); the step's record must show all four, in order: the first error as ``error``, the
second in ``more_errors``.  It runs on every SDK target installed here (the default environment
has Strands; ``tox -e langgraph`` and ``tox -e openai-agents`` run it on theirs).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, Final

import pytest

from fakes.model import Said, ScriptedModel, ScriptedTurn
from harness.isolation import _observation
from harness.runner import run_scenario
from harness.targets.base import Observation
from harness.targets.registry import available
from scenarios.loading import parse_scenario

# the logger each SDK target listens to during a step (a child logger's records reach it)
SDK_LOGGERS: Final = {
    "strands": "strands",
    "langgraph": "langgraph",
    "langgraph-subgraph-node": "langgraph",
    "openai-agents": "openai.agents",
}
INSTALLED = sorted(name for name in SDK_LOGGERS if name in available())

SCENARIO: Final = {
    "description": "one sub-agent asks once; the SDK logs two errors and two warnings meanwhile",
    "source": "tests/test_error_capture.py",
    "tree": {
        "name": "orchestrator",
        "turns": [[{"tool": "operator", "id": "call-1"}]],
        "sub_agents": [
            {
                "name": "operator",
                "actions": [{"tool": "restart_service", "label": "restart-service"}],
                "turns": [[{"tool": "restart_service", "id": "tool-1"}]],
            }
        ],
    },
    "steps": [{"run": "restart the service"}],
}


def test_there_is_an_sdk_target_to_drive() -> None:
    assert INSTALLED, "no SDK target is installed: this module would judge nothing"


@pytest.mark.parametrize("name", INSTALLED)
def test_a_step_that_logs_two_errors_records_both_in_order(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk_logger = logging.getLogger(f"{SDK_LOGGERS[name]}.harness_test")
    played = ScriptedModel.next_turn
    logged: list[str] = []

    def noisy(
        self: ScriptedModel, conversation: Sequence[Said], count: int, state: dict[str, Any]
    ) -> ScriptedTurn:
        if not logged:  # once, during the first model request of the step
            for level, text in (
                (logging.ERROR, "first error"),
                (logging.WARNING, "first warning"),
                (logging.ERROR, "second error"),
                (logging.WARNING, "second warning"),
            ):
                sdk_logger.log(level, text)
                logged.append(text)
        return played(self, conversation, count, state)

    monkeypatch.setattr(ScriptedModel, "next_turn", noisy)
    target = available()[name]()
    history = run_scenario(target, parse_scenario(SCENARIO, "noisy"), "noisy")
    observed = history.steps[0].observed
    assert logged
    assert observed["error"] == "first error"
    assert observed["more_errors"] == ["second error"]
    assert observed["warnings"] == ["first warning", "second warning"]
    assert history.steps[0].errors == ["first error", "second error"]


def test_a_step_with_one_error_records_it_as_before() -> None:
    """No ``more_errors`` where there is none: a history whose steps logged one error at most
    keeps its bytes (findings recorded against it still match)."""
    history = run_scenario(available()["reference"](), parse_scenario(SCENARIO, "quiet"), "quiet")
    assert "more_errors" not in history.steps[0].observed
    assert history.steps[0].errors == []


def test_the_process_transport_carries_every_error() -> None:
    """``--isolation process`` sends a step's observation back as JSON: every error survives."""
    sent = Observation(
        stop_reason=None, error="raised", more_errors=("logged", "logged again"), warnings=("w",)
    )
    assert _observation(asdict(sent)) == sent

"""tinyagents keeps the restart contract (docs/adapters.md, "Restarts"): everything a step needs
is in the work directory, so a restart in a new process (``--isolation fork``: each stretch
between restarts in a forked process; ``process``: every step in a fresh interpreter) records the
same history, byte for byte, as the restart rebuilt in the harness's own process."""

from __future__ import annotations

import pytest

from harness.commands.inputs import isolated
from harness.runner import run_scenario
from harness.targets import registry
from scenarios.loading import REGRESSIONS, load_scenario

# a restart before and after every step; a nested approval answered after a restart, twice;
# colliding ids answered one at a time across a restart
RESTARTING = ("restart-anywhere", "nested-approval-survives-a-new-process", "colliding-ids")


@pytest.mark.parametrize("stem", RESTARTING)
def test_a_real_restart_records_what_the_in_process_restart_records(stem: str) -> None:
    scenario = load_scenario(REGRESSIONS / f"{stem}.yaml")
    target = registry.get("tinyagents")
    in_process = run_scenario(target, scenario, stem)
    assert any(step.kind == "restart" for step in in_process.steps)
    forked = run_scenario(isolated("tinyagents", target, "fork"), scenario, stem)
    assert forked.to_json() == in_process.to_json()


def test_every_step_in_a_fresh_interpreter_records_the_same_too() -> None:
    stem = "nested-approval-survives-a-new-process"
    scenario = load_scenario(REGRESSIONS / f"{stem}.yaml")
    target = registry.get("tinyagents")
    in_process = run_scenario(target, scenario, stem)
    alone = run_scenario(isolated("tinyagents", target, "process"), scenario, stem)
    assert alone.to_json() == in_process.to_json()

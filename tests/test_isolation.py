"""Process isolation: every step in a fresh process sees the same as the in-process run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.checkers import check
from harness.checkers.conversation import well_formed_conversation
from harness.cli import main
from harness.history import History
from harness.isolation import ProcessIsolated, worker
from harness.runner import Recorder, run_scenario
from harness.scratch import kept_on_file
from harness.targets import registry
from scenarios.loading import load_scenario, regression_files

COLLIDING = next(path for path in regression_files() if path.stem == "colliding-ids")


def observable(history: History) -> list[tuple[Any, ...]]:
    return [
        (
            step.kind,
            step.observed.get("stop_reason"),
            sorted((item["label"], item["id"]) for item in step.pending),
            sorted(record["action"] for record in step.executions),
            [(r["agent"], r["turn"], r["messages"], r["model_state"]) for r in step.requests],
            step.stored,
        )
        for step in history.steps
    ]


@pytest.mark.parametrize("name", ["reference", "strands"])
def test_a_scenario_run_step_by_step_in_fresh_processes_matches_the_in_process_run(
    name: str,
) -> None:
    scenario = load_scenario(COLLIDING)
    in_process = run_scenario(registry.get(name), scenario, COLLIDING.stem)
    isolated_target = ProcessIsolated(name, registry.get(name))
    isolated = run_scenario(isolated_target, scenario, COLLIDING.stem)
    assert isolated.target["name"] == name
    assert observable(isolated) == observable(in_process)
    assert check(isolated) == check(in_process)  # the reference: none; strands: its findings


def test_a_rebuild_that_fails_is_reported_as_the_step_error(tmp_path: Path) -> None:
    scenario = load_scenario(COLLIDING)
    (tmp_path / "scenario.json").write_text(scenario.model_dump_json(), encoding="utf-8")
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "key-tree").write_text("{not json", encoding="utf-8")
    reply = worker("reference", tmp_path, {"op": "run", "prompt": "go"})
    assert reply["error"] is not None
    assert reply["observation"]["stop_reason"] is None
    assert reply["executions"] == []


def test_in_one_process_the_session_holds_its_records_and_only_a_step_process_writes_files(
    tmp_path: Path,
) -> None:
    """What the fakes record lives with the session, unless the next step's process must read
    it: then the ledger, the journal, the events and the reference's store are files, and a new
    session on the same work directory carries on from them."""
    scenario = load_scenario(COLLIDING)
    target = registry.get("reference")
    in_memory, kept = tmp_path / "in-memory", tmp_path / "kept"
    in_memory.mkdir()
    session = target.start(scenario, in_memory)
    steps = Recorder(session, scenario).steps()
    assert any(step.executions for step in steps)
    assert any(step.requests for step in steps)
    assert list(in_memory.iterdir()) == []
    kept.mkdir()
    with kept_on_file():
        written = target.start(scenario, kept)
    Recorder(written, scenario).steps()
    names = {path.name for path in kept.iterdir()}
    assert {"ledger.jsonl", "journal.jsonl", "events.jsonl", "store"} <= names
    with kept_on_file():
        again = target.start(scenario, kept)
    assert again.executions() == session.executions()
    assert again.requests() == session.requests()
    assert again.stored() == session.stored()


def test_the_cli_runs_a_scenario_with_process_isolation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", str(COLLIDING), "--target", "reference", "--isolation", "process"]) == 0
    assert "ran deploy-b" in capsys.readouterr().out


def test_under_process_isolation_a_broken_restore_is_caught_on_its_own() -> None:
    """Every step a fresh process, the control's too: the known-bad variant that sends a
    resumed turn without the last result it parked with breaks the control at the same points,
    so D and I6 see nothing and only I16, which judges each model request alone, catches it."""
    path = next(path for path in regression_files() if path.stem == "lookup-then-ask")
    variant = "bad-drop-restored-result"
    isolated_target = ProcessIsolated(variant, registry.get(variant))
    isolated = run_scenario(isolated_target, load_scenario(path), path.stem)
    assert isolated.control is not None
    assert {violation.invariant for violation in check(isolated)} == {"I16"}
    assert well_formed_conversation(isolated.control) != []  # the control as broken as the run


class RemembersItsTrees:
    """A target whose session says which tree it was started with and which it was deployed."""

    def __init__(self) -> None:
        self.info = registry.get("reference").info
        self.seen: list[str] = []

    def start(self, scenario: Any, workdir: Path) -> Any:
        seen = self.seen
        seen.append(f"start {scenario.tree.name}")

        class Session:
            def deploy(self, tree: Any) -> None:
                seen.append(f"deploy {tree.name}")

            def run(self, prompt: str) -> Any:
                from harness.targets.base import Observation

                return Observation(stop_reason="end_turn")

            def executions(self, start: int = 0) -> list[Any]:
                return []

            requests = events = executions

            def stored(self) -> Any:
                from harness.targets.base import Stored

                return Stored()

        return Session()


def test_a_step_process_after_a_deploy_starts_from_the_scenario_and_deploys_its_tree(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """As a forked segment does: the session starts from the scenario's tree, then the last
    deploy's tree is deployed into it, so what the session knows of the tree a question was asked
    in (openai-agents' adapter: the label of a question whose tool the deploy took away) is what
    it knows in-process, where the session saw both."""
    from harness.isolation import DEPLOYED_FILE, SCENARIO_FILE

    scenario = load_scenario(regression_files()[0])
    deployed = scenario.tree.model_copy(update={"name": "deployed"})
    (tmp_path / SCENARIO_FILE).write_text(scenario.model_dump_json(), encoding="utf-8")
    (tmp_path / DEPLOYED_FILE).write_text(deployed.model_dump_json(), encoding="utf-8")
    target = RemembersItsTrees()
    monkeypatch.setattr(registry, "get", lambda name: target)
    worker("remembers", tmp_path, {"op": "run", "prompt": "go"})
    assert target.seen == [f"start {scenario.tree.name}", "deploy deployed"]

"""Every regression file on the reference: no violation, and a stable recorded history.

The history of each file is kept as a readable JSON snapshot (syrupy) under
``tests/__snapshots__/``; a change in what the reference does shows up as a diff to review.
``pytest --snapshot-update`` rewrites them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from harness.checkers import check
from harness.runner import run_scenario
from harness.targets.reference import ReferenceTarget
from scenarios.loading import load_scenario, regression_files
from scenarios.model import SCENARIO_CLASSES, Scenario

FILES = regression_files()


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_regression_holds_on_the_reference(path: Path, snapshot_json: SnapshotAssertion) -> None:
    history = run_scenario(ReferenceTarget(), load_scenario(path), path.stem)
    assert not history.not_applicable
    assert check(history) == []
    assert history.to_json() == snapshot_json


def test_every_scenario_class_a_file_can_declare_has_a_regression_file() -> None:
    covered = {kind for path in FILES for kind in load_scenario(path).classes}
    assert covered >= set(SCENARIO_CLASSES)  # docs/scenario-format.md#scenario-classes
    assert len(FILES) >= 12


def test_every_regression_file_names_its_source_and_describes_itself() -> None:
    for path in FILES:
        scenario: Scenario = load_scenario(path)
        assert scenario.source.strip(), path
        assert len(scenario.description.split()) >= 8, path


def _pending_labels(step: dict[str, Any]) -> list[str]:
    return sorted(item["label"] for item in step["observed"].get("pending", []))


def test_colliding_ids_reach_the_root_as_two_questions_and_one_answer_runs_one_action() -> None:
    path = next(path for path in FILES if path.stem == "colliding-ids")
    history = run_scenario(ReferenceTarget(), load_scenario(path), path.stem).to_json()
    first, approve_a, _, approve_b = history["steps"]
    ids = [item["id"] for item in first["observed"]["pending"]]
    assert len(set(ids)) == 2
    assert [record["action"] for record in approve_a["executions"]] == ["deploy-a"]
    assert _pending_labels(approve_a) == ["deploy-b"]
    assert [record["action"] for record in approve_b["executions"]] == ["deploy-b"]

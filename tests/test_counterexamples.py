"""Every failing generated scenario of ``check`` and ``faults`` is written as a regression file
under ``<reports>/counterexamples/``, which ``run`` reproduces: the same invariants violated (or,
for a damaged continuation, the same fault class)."""

from __future__ import annotations

import json

import pytest

from harness.campaigns.corruption import classify, is_case
from harness.cli import main
from harness.runner import run_scenario
from harness.targets import registry
from scenarios.loading import REGRESSIONS, load_scenario

REGRESSION = REGRESSIONS / "colliding-ids.yaml"


def test_run_names_the_fault_class_of_a_corruption_case_and_fails_a_bad_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = REGRESSIONS / "fault-foreign.yaml"  # run, corrupt, answer, repair, resend
    assert is_case(load_scenario(path))
    assert not is_case(load_scenario(REGRESSION))
    capsys.readouterr()
    assert main(["run", str(path), "--target", "reference"]) == 0
    assert "\nfault class SAFE: " in capsys.readouterr().out
    variant = registry.get("bad-swallow-restore-failure")
    found = classify(run_scenario(variant, load_scenario(path), "again"))
    assert found.fault_class not in ("SAFE", "TOLERATED")
    assert main(["run", str(path), "--target", variant.info.name, "--json"]) == 1
    shown = json.loads(capsys.readouterr().out)["fault_class"]
    assert shown == {"class": found.fault_class, "reasons": list(found.reasons)}
    assert main(["run", str(REGRESSION), "--target", "reference", "--json"]) == 0
    assert "fault_class" not in json.loads(capsys.readouterr().out)

"""The restarts report (``python -m harness restarts``): check runs under each isolation compared
scenario by scenario, every difference shown with the violations only one side has and its
explanation, an unexplained difference or a stale explanation failing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.restarts import Explanation, compare, markdown, read_explanations

VIOLATION = {
    "invariant": "I2",
    "slug": "exact-delivery-down",
    "step": 2,
    "expected": "deploy runs once",
    "seen": "deploy ran 0 times: approval not delivered",
}


def run(isolation: str, violated: bool, *, excused: bool = False) -> dict[str, Any]:
    """One check run's conformance.json of target ``oa`` on two files, ``survives`` violating
    I2 when ``violated``."""
    column = {"fork": "oa 1.0 [fork]", "process": "oa 1.0 [process]"}.get(isolation, "oa 1.0")
    found = [{"scenario": "survives", **VIOLATION}] if violated else []
    return {
        "targets": [{"name": "oa", "version": "1.0", "isolation": isolation}],
        "cells": {column: {"I2": {"status": "x", "scenarios_checked": 2, "violations": found}}},
        "scenarios": {column: {"survives": "run", "gated": "not-applicable: gated_sub_agents"}},
        "findings": {column: {"new": [] if excused else found}},
    }


def test_the_same_verdicts_everywhere_make_no_difference() -> None:
    comparison = compare([run(i, False) for i in ("in-process", "fork", "process")], [])
    assert comparison.differences == []
    assert comparison.passes
    text = markdown(comparison)
    assert "| oa | in-process, fork, process | 2 | 2 | 0 | 0 |" in text
    assert "| gated | not applicable | not applicable | not applicable |" in text


def test_a_difference_shows_what_only_one_side_sees_and_fails_until_explained() -> None:
    documents = [run("in-process", False), run("fork", True), run("process", True)]
    comparison = compare(documents, [])
    [difference] = comparison.differences
    assert (difference.target, difference.scenario) == ("oa", "survives")
    assert difference.cells == {"in-process": "holds", "fork": "new: I2", "process": "new: I2"}
    assert difference.only["fork"] == [
        "I2 at step 2: expected 'deploy runs once', seen 'deploy ran 0 times: approval not "
        "delivered'"
    ]
    assert difference.only["in-process"] == []
    assert not comparison.passes
    assert "**unexplained**" in markdown(comparison)
    why = Explanation(target="oa", scenario="survives", explanation="a module-level cache")
    explained = compare(documents, [why])
    assert explained.passes
    assert "Why: a module-level cache" in markdown(explained)


def test_an_excused_violation_differs_from_a_new_one_only_in_its_cell() -> None:
    excused = compare([run("in-process", True, excused=True), run("fork", True)], [])
    assert excused.differences == []  # the same violations: the findings' verdict is shared
    assert excused.targets["oa"]["in-process"]["survives"].cell == "excused: I2"


def test_an_explanation_whose_difference_no_longer_shows_is_stale() -> None:
    why = Explanation(target="oa", scenario="survives", explanation="a module-level cache")
    comparison = compare([run("in-process", False), run("fork", False)], [why])
    assert comparison.stale == [why]
    assert not comparison.passes
    assert "- oa: survives: no difference shows any more" in markdown(comparison)
    other = Explanation(target="absent", scenario="survives", explanation="not run here")
    assert compare([run("in-process", False)], [other]).stale == []


def test_the_committed_explanations_read(tmp_path: Path) -> None:
    for item in read_explanations():
        assert item.explanation.strip()
    bad = tmp_path / "restarts.yaml"
    bad.write_text("- target: oa\n  scenario: survives\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"entry 0: explanation: Field required"):
        read_explanations(bad)


def test_the_command_writes_both_reports_and_exits_1_on_an_unexplained_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = []
    for isolation, violated in (("in-process", False), ("fork", True)):
        path = tmp_path / f"{isolation}.json"
        path.write_text(json.dumps(run(isolation, violated)), encoding="utf-8")
        files.append(str(path))
    assert main(["restarts", *files, "--reports", str(tmp_path / "out")]) == 1
    written = json.loads((tmp_path / "out" / "restarts.json").read_text(encoding="utf-8"))
    assert written["passes"] is False
    assert written["differences"][0]["cells"] == {"in-process": "holds", "fork": "new: I2"}
    (tmp_path / "bad.json").write_text("[]", encoding="utf-8")
    assert main(["restarts", str(tmp_path / "bad.json")]) == 2
    assert "not a conformance report" in capsys.readouterr().err


def test_a_fork_run_whose_columns_are_not_its_targets_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fork run's columns carry ' [fork]'; one without (written before they did) would be read
    as a target named 'oa 1.0', so it is refused, not compared."""
    old = json.loads(json.dumps(run("fork", True)).replace('"oa 1.0 [fork]"', '"oa 1.0"'))
    path = tmp_path / "fork.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    assert main(["restarts", str(path), "--reports", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"{path}: column 'oa 1.0' is none of the run's targets (oa 1.0 [fork])")
    assert not (tmp_path / "out").exists()

"""A released SDK's fault campaigns are held to the outcome recorded for it: a new bad class, a
higher count or a worse crash verdict fails; another budget is evidence; a bad file is one line."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from harness.campaigns import expected
from harness.campaigns.expected import ExpectedError, beyond, load_expected, outcome


def entry(**changes: Any) -> dict[str, Any]:
    """One target's results as the fault document holds them (the parts the outcome reads)."""
    results: dict[str, Any] = {
        "name": "toy",
        "version": "1.0",
        "budget": {"examples": 200, "invariant_examples": 100, "seed": 0, "shrink": 30},
        "corruption": {"classes": {"SAFE": 150, "LOUD_LOST": 40, "SILENT_LOST": 10}},
        "crash_points": {
            "verdict": "at most once",
            "scenarios": 17,
            "ran_twice": 0,
            "lost_approvals": 3,
        },
        "privacy": {"violating": 0},
        "isolation": {"violating": 0},
    }
    for path, value in changes.items():
        *parents, last = path.split("__")
        part = results
        for key in parents:
            part = part[key]
        part[last] = value
    return results


RECORDED = outcome(entry(), "toy")


def test_the_recorded_form_keeps_bad_classes_verdict_and_counts_only() -> None:
    assert RECORDED == {
        "target": "toy",
        "version": "1.0",
        "budget": {"examples": 200, "invariant_examples": 100, "seed": 0},
        "corruption": {"SILENT_LOST": 10, "LOUD_LOST": 40},
        "crash_points": {
            "verdict": "at most once",
            "scenarios": 17,
            "ran_twice": 0,
            "lost_approvals": 3,
        },
        "privacy": {"violating": 0},
        "isolation": {"violating": 0},
    }


def test_a_run_within_every_bound_passes() -> None:
    fewer = entry(corruption__classes={"SAFE": 170, "LOUD_LOST": 30})
    assert beyond(entry(), "toy", RECORDED) == []
    assert beyond(fewer, "toy", RECORDED) == []


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"corruption__classes": {"SAFE": 149, "LOUD_LOST": 40, "SILENT_LOST": 10, "UNSAFE": 1}},
            "corruption: 1 UNSAFE cases, recorded at most 0",
        ),
        (
            {"corruption__classes": {"SAFE": 149, "LOUD_LOST": 40, "SILENT_LOST": 11}},
            "corruption: 11 SILENT_LOST cases, recorded at most 10",
        ),
        (
            {"crash_points__verdict": "can run an action twice", "crash_points__ran_twice": 0},
            "crash points: can run an action twice, recorded at most once",
        ),
        ({"crash_points__lost_approvals": 4}, "crash points: lost approvals 4, recorded at most 3"),
        (
            {"crash_points__scenarios": 18, "crash_points__lost_approvals": 9},
            "crash points: run on 18 regression files, recorded on 17: record the outcome again "
            "(faults --record)",
        ),
        ({"isolation__violating": 2}, "isolation: 2 violating cases, recorded at most 0"),
    ],
)
def test_a_new_class_a_higher_count_or_a_worse_verdict_fails(
    changes: dict[str, Any], message: str
) -> None:
    assert beyond(entry(**changes), "toy", RECORDED) == [message]


def test_a_recorded_file_round_trips_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "toy-1.0.yaml").write_text(expected.dumps(RECORDED), encoding="utf-8")
    assert load_expected("toy", "1.0", tmp_path) == RECORDED
    assert load_expected("toy", "2.0", tmp_path) is None

    for broken, field in [
        (RECORDED | {"target": "other"}, "target: expected toy 1.0"),
        (RECORDED | {"corruption": {"SAFE": 3}}, "corruption.SAFE: expected a count of one of"),
        (RECORDED | {"crash_points": {"verdict": "sometimes"}}, "crash_points.verdict: expected"),
        (RECORDED | {"privacy": {"violating": -1}}, "privacy.violating: expected a whole number"),
        (RECORDED | {"extra": 1}, "extra: expected one of target, version"),
        ({**copy.deepcopy(RECORDED), "budget": {"examples": 1}}, "budget.invariant_examples"),
    ]:
        (tmp_path / "toy-1.0.yaml").write_text(expected.dumps(broken), encoding="utf-8")
        with pytest.raises(ExpectedError, match=field) as refused:
            load_expected("toy", "1.0", tmp_path)
        assert str(refused.value).startswith(f"{tmp_path / 'toy-1.0.yaml'}: ")
        assert "\n" not in str(refused.value)


def test_the_bundled_outcome_of_the_latest_strands_is_well_formed() -> None:
    recorded = load_expected("strands", "1.62.0")
    assert recorded is not None
    assert recorded["budget"] == {"examples": 200, "invariant_examples": 100, "seed": 0}


def test_a_released_sdk_is_judged_by_its_record_only_with_the_same_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.campaigns.report import _judge_by_record, _verdict

    monkeypatch.setattr(expected, "EXPECTED", tmp_path)
    unrecorded = entry()
    _judge_by_record(unrecorded, "toy")
    assert (unrecorded["expected"], unrecorded["passes"]) == ("evidence", True)
    assert "no outcome recorded for this release" in _verdict(unrecorded)

    (tmp_path / "toy-1.0.yaml").write_text(expected.dumps(RECORDED), encoding="utf-8")
    worse = entry(crash_points__lost_approvals=5)
    _judge_by_record(worse, "toy")
    assert (worse["expected"], worse["passes"]) == ("recorded", False)
    assert _verdict(worse).endswith("crash points: lost approvals 5, recorded at most 3")

    other_budget = entry(crash_points__lost_approvals=5, budget__examples=50)
    _judge_by_record(other_budget, "toy")
    assert (other_budget["expected"], other_budget["passes"]) == ("evidence", True)
    assert "was recorded with budget examples 200, invariant_examples 100" in _verdict(other_budget)


def test_faults_refuses_a_malformed_record_before_running_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import harness
    from harness.cli import main

    monkeypatch.setattr(expected, "EXPECTED", tmp_path)
    record = tmp_path / f"reference-{harness.__version__}.yaml"
    record.write_text("target: reference\nversion: [1\n", encoding="utf-8")
    reports = tmp_path / "reports"
    assert main(["faults", "--target", "reference", "--reports", str(reports)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"{record}: not YAML")
    assert not reports.exists()

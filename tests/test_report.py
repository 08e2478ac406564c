"""Reports: rendered from the JSON document, mergeable across runs, written atomically."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.conformance import judge
from harness.report import column, conformance_document, markdown, merge
from harness.targets.reference import ReferenceTarget
from scenarios.loading import load_all, regression_files


def reference_document() -> dict[str, object]:
    scenarios = load_all(regression_files()[:3])
    return conformance_document(judge([ReferenceTarget()], scenarios))


def renamed(document: dict[str, object], name: str, version: str) -> dict[str, object]:
    text = json.dumps(document).replace('"reference 0.1.0"', f'"{name} {version}"')
    copy = json.loads(text)
    copy["targets"] = [{**copy["targets"][0], "name": name, "version": version}]
    return copy  # type: ignore[no-any-return]


def test_merge_puts_the_reference_first_then_releases_oldest_to_newest() -> None:
    document = reference_document()
    newer = renamed(document, "sdk", "1.10.0")
    older = renamed(document, "sdk", "1.9.2")
    merged = merge([newer, document, older])
    columns = [f"{t['name']} {t['version']}" for t in merged["targets"]]
    assert columns == ["reference 0.1.0", "sdk 1.9.2", "sdk 1.10.0"]
    header = next(line for line in markdown(merged).splitlines() if line.startswith("| invariant"))
    assert header == "| invariant | reference 0.1.0 | sdk 1.9.2 | sdk 1.10.0 |"


def test_runs_with_real_restarts_keep_columns_of_their_own_in_a_merged_report() -> None:
    """A check run under --isolation fork or process names its columns so, and a merge of the
    runs of one target keeps all three apart; a run in-process has no suffix."""
    document = reference_document()
    runs = [document]
    for isolation in ("fork", "process"):
        text = json.dumps(document).replace('"reference 0.1.0"', f'"reference 0.1.0 [{isolation}]"')
        run = json.loads(text)
        run["targets"] = [{**run["targets"][0], "isolation": isolation}]
        assert conformance_document_columns(run) == [f"reference 0.1.0 [{isolation}]"]
        runs.append(run)
    assert conformance_document_columns(document) == ["reference 0.1.0"]
    merged = merge(runs)
    assert conformance_document_columns(merged) == [
        "reference 0.1.0",
        "reference 0.1.0 [fork]",
        "reference 0.1.0 [process]",
    ]
    header = next(line for line in markdown(merged).splitlines() if line.startswith("| invariant"))
    assert header == (
        "| invariant | reference 0.1.0 | reference 0.1.0 [fork] | reference 0.1.0 [process] |"
    )


def conformance_document_columns(document: dict[str, Any]) -> list[str]:
    return [column(target) for target in document["targets"]]


def test_merge_fails_when_any_run_failed() -> None:
    document = reference_document()
    failed = {**renamed(document, "sdk", "2.0"), "passes": False}
    assert merge([document])["passes"] is True
    assert merge([document, failed])["passes"] is False
    assert "**fails**" in markdown(merge([document, failed]))


def test_findings_are_grouped_by_scenario_and_explanation() -> None:
    document = renamed(reference_document(), "sdk", "1.0")
    why = "the stored turn is dropped"
    document["findings"] = {
        "sdk 1.0": {
            "expected": [
                {"scenario": "s", "invariant": "I3", "explanation": why},
                {"scenario": "s", "invariant": "I9", "explanation": why},
            ],
            "new": [{"scenario": "t", "invariant": "I1", "step": 2, "expected": "a", "seen": "b"}],
            "disappeared": [],
            "stale": [{"scenario": "u", "why": "its content changed since it was recorded"}],
        }
    }
    text = markdown(document)
    assert f"- **I3, I9** `s`: {why}" in text
    assert "## sdk 1.0: NEW violations (no recorded witness matches them)" in text
    assert "- **I1** `t` step 2: expected a; seen b" in text
    assert "## sdk 1.0: findings recorded for another content" in text
    assert "- `u`: its content changed since it was recorded" in text


def test_generated_scenarios_in_a_recorded_class_get_one_line_per_class() -> None:
    document = renamed(reference_document(), "sdk", "1.0")
    why = "in the recorded class `shared-id` (shown by twin-ids)"
    document["findings"] = {
        "sdk 1.0": {
            "expected": [
                {"scenario": "twin-ids", "invariant": "I2", "explanation": "one id for two"},
                *(
                    {"scenario": name, "invariant": i, "explanation": why, "class": "shared-id"}
                    for name, i in [("generated-001", "I2"), ("generated-001", "O")]
                ),
                {
                    "scenario": "generated-004",
                    "invariant": "I2",
                    "explanation": why,
                    "class": "shared-id",
                },
            ],
            "new": [],
            "disappeared": [],
        }
    }
    text = markdown(document)
    assert "- **I2** `twin-ids`: one id for two" in text
    folded = (
        "<details>\n<summary>sdk 1.0: generated scenarios in recorded classes (1 class, "
        "2 scenarios, 3 violations)</summary>\n\n- class `shared-id`, 3 violations in 2 "
        "scenarios: `generated-001` (I2, O), `generated-004` (I2)\n\n</details>\n"
    )
    assert folded in text
    assert "generated-001`:" not in text  # not listed again one by one


def test_the_report_command_merges_files(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    document = reference_document()
    first.write_text(json.dumps(document), encoding="utf-8")
    second.write_text(json.dumps(renamed(document, "sdk", "3.1")), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["report", str(first), str(second), "--reports", str(out)]) == 0
    merged = json.loads((out / "conformance.json").read_text(encoding="utf-8"))
    assert [t["name"] for t in merged["targets"]] == ["reference", "sdk"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [("{not json", "not JSON"), ('{"a": 1}', "not a conformance report")],
)
def test_the_report_command_refuses_what_is_not_a_report(
    tmp_path: Path, content: str, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x.json"
    path.write_text(content, encoding="utf-8")
    assert main(["report", str(path), "--reports", str(tmp_path / "out")]) == 2
    assert problem in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_witness_that_no_longer_shows_is_listed_with_its_pattern() -> None:
    document = renamed(reference_document(), "sdk", "1.0")
    document["findings"] = {
        "sdk 1.0": {
            "expected": [],
            "new": [],
            "disappeared": [
                {"scenario": "s", "invariant": "I2", "witness": "I2 at an answer step, seen ^x$"},
                {"class": "c", "invariant": "I3", "witness": "I3 at a run step, seen ^y$"},
            ],
            "stale": [],
        }
    }
    text = markdown(document)
    assert "- `s`: **I2** (I2 at an answer step, seen ^x$) not seen" in text
    assert (
        "- class `c`: **I3** (I3 at a run step, seen ^y$) covers nothing in the generated" in text
    )

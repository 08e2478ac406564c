"""Reports that fit where they are read: the full Markdown opens with the matrix and what needs
a person, folds its long lists; the summary fits a pull-request comment whatever the size of the
run, names every target and every new finding, and cuts only whole lines, with a count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.cli import main
from harness.conformance import judge
from harness.report import conformance_document, markdown
from harness.summary import BUDGET, LIMIT, summary
from harness.targets.reference import ReferenceTarget
from scenarios.loading import load_all, regression_files

CHECKERS = conformance_document(judge([ReferenceTarget()], load_all(regression_files()[:1])))[
    "checkers"
]


def synthetic(targets: int, scenarios: int, new_per_target: int) -> dict[str, Any]:
    """A merged report of ``targets`` SDK releases, each run on ``scenarios`` generated
    scenarios every one of which a recorded class covers, with ``new_per_target`` new
    violations (of I2) on every third target and a vanished witness on every fifth."""
    document: dict[str, Any] = {
        "targets": [],
        "checkers": CHECKERS,
        "cells": {},
        "scenarios": {},
        "findings": {},
        "adapter_errors": {},
        "passes": False,
    }
    names = [f"generated-sdk-{n:05d}" for n in range(scenarios)]
    for index in range(targets):
        name, version = f"sdk-{index:03d}", f"1.{index}.0"
        column = f"{name} {version}"
        document["targets"].append(
            {"name": name, "version": version, "capabilities": [], "isolation": "in-process"}
        )
        covered = [
            {
                "scenario": scenario,
                "invariant": "I3",
                "explanation": "in the recorded class `lost-turn` (shown by fault-deleted)",
                "class": "lost-turn",
            }
            for scenario in names
        ]
        new = [
            {
                "scenario": f"generated-sdk-{n:05d}",
                "invariant": "I2",
                "slug": "exact-delivery-down",
                "step": 2,
                "expected": f"deploy-{n} runs once",
                "seen": f"deploy-{n} ran 0 times: approval not delivered to {name}",
            }
            for n in range(new_per_target if index % 3 == 0 else 0)
        ]
        first = {**covered[0], "step": 2, "expected": "pending x", "seen": "pending nothing"}
        document["cells"][column] = {
            checker["id"]: {
                "status": "violated"
                if checker["id"] == "I2" and new
                else "expected"
                if checker["id"] == "I3"
                else "holds",
                "scenarios_checked": scenarios,
                "violations": {"I2": new[:1], "I3": [first]}.get(checker["id"], []),
            }
            for checker in CHECKERS
        }
        document["scenarios"][column] = dict.fromkeys(names, "run")
        document["findings"][column] = {
            "expected": covered,
            "new": new,
            "disappeared": [
                {
                    "scenario": "twin-calls",
                    "invariant": "I2",
                    "witness": "I2 at an answer step, seen ^send-mail ran 0 times$",
                    "explanation": "the second call is turned away",
                }
            ]
            if index % 5 == 0
            else [],
            "stale": [],
        }
        document["adapter_errors"][column] = []
    return document


def new_findings(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (column, item["invariant"], item["scenario"])
        for column, verdict in document["findings"].items()
        for item in verdict["new"]
    ]


def test_the_full_report_opens_with_the_matrix_and_what_needs_a_person() -> None:
    document = synthetic(targets=3, scenarios=40, new_per_target=2)
    text = markdown(document)
    order = [
        "| invariant | sdk-000 1.0.0 | sdk-001 1.1.0 | sdk-002 1.2.0 |",
        "## sdk-000 1.0.0: NEW violations (no recorded witness matches them)",
        "## sdk-000 1.0.0: recorded witnesses that no longer show",
        "## sdk-000 1.0.0: first counterexample per invariant with violations",
        "<summary>sdk-000 1.0.0: generated scenarios in recorded classes (1 class, 40 "
        "scenarios, 40 violations)</summary>",
    ]
    positions = [text.index(line) for line in order]
    assert positions == sorted(positions)
    # every target's new and vanished findings come before any target's details
    assert text.index("## sdk-001 1.1.0: first counterexample") > text.index("NEW violations")
    assert text.count("<details>") == text.count("</details>") == 3


def test_the_summary_of_a_huge_run_fits_a_comment_and_names_every_target_and_new_finding() -> None:
    document = synthetic(targets=60, scenarios=3000, new_per_target=2)
    assert len(markdown(document)) > 20 * LIMIT  # the full report could never be a comment
    text = summary(document)
    assert len(text) <= BUDGET < LIMIT
    for target in document["targets"]:
        assert f"| {target['name']} {target['version']} | " in text
    found = new_findings(document)
    assert len(found) == 40
    for column, invariant, scenario in found:
        assert f"- {column}: **{invariant}** `{scenario}` step 2: expected " in text
    assert "- sdk-000 1.0.0: `twin-calls`: **I2** (I2 at an answer step" in text
    assert "generated-sdk-02999" not in text  # the covered scenarios stay in the full report
    assert "| sdk-000 1.0.0 | **fails** | I2 | 2 | 1 | 0 | 0 | 0 | 3000 |" in text
    assert "| sdk-001 1.1.0 | passes | — | 0 | 0 | 0 | 0 | 0 | 3000 |" in text


def test_an_undemonstrated_class_witness_fails_in_a_section_of_its_own() -> None:
    """A class witness no shown_by file shows fails its target (a section of its own, and a
    column in the summary); the other target's verdict is untouched."""
    document = synthetic(targets=2, scenarios=4, new_per_target=0)
    witness = {
        "class": "lost-turn",
        "invariant": "I3",
        "witness": "I3 at an answer step, seen ^pending nothing$",
        "explanation": "the turn is lost",
    }
    document["findings"]["sdk-000 1.0.0"]["undemonstrated"] = [witness]
    text = markdown(document)
    failing = text.index("## sdk-000 1.0.0: class witnesses no shown_by file shows")
    assert "class `lost-turn`: **I3** (I3 at an answer step" in text[failing:]
    assert "## sdk-001 1.1.0: class witnesses no shown_by" not in text
    brief = summary(document)
    assert "| sdk-000 1.0.0 | **fails** | — | 0 | 1 | 0 | 1 | 0 | 4 |" in brief
    assert "| sdk-001 1.1.0 | passes | — | 0 | 0 | 0 | 0 | 0 | 4 |" in brief
    assert "- sdk-000 1.0.0: class `lost-turn`: **I3**" in brief


def test_too_many_new_findings_are_cut_at_a_whole_line_with_a_count() -> None:
    document = synthetic(targets=30, scenarios=200, new_per_target=2000)
    text = summary(document)
    assert len(text) <= BUDGET
    for target in document["targets"]:
        assert f"| {target['name']} {target['version']} | " in text
    lines = text.splitlines()
    listed = [line for line in lines if line.startswith("- sdk-") and "**I2** `generated" in line]
    [more] = [line for line in lines if line.startswith("- … and ")]
    left_out = int(more.split()[3])
    assert len(listed) + left_out == len(new_findings(document)) == 20_000
    expected_lines = {
        f"- {column}: **I2** `{item['scenario']}` step 2: expected {item['expected']}; "
        f"seen {item['seen']}"
        for column, verdict in document["findings"].items()
        for item in verdict["new"]
    }
    assert set(listed) <= expected_lines  # whole lines only
    assert "The invariant x target matrix (30 targets) is in conformance.md." in text


def test_a_small_run_has_its_whole_matrix_in_the_summary() -> None:
    document = synthetic(targets=2, scenarios=10, new_per_target=1)
    text = summary(document)
    assert "| invariant | sdk-000 1.0.0 | sdk-001 1.1.0 |" in text
    assert text.startswith("# Conformance (summary)\n\n10 scenarios on 2 targets; ")


def test_report_and_check_write_the_summary_when_asked(tmp_path: Path) -> None:
    merged = tmp_path / "big.json"
    merged.write_text(json.dumps(synthetic(targets=40, scenarios=1000, new_per_target=1)), "utf-8")
    out = tmp_path / "out"
    assert main(["report", str(merged), "--reports", str(out), "--summary"]) == 1
    text = (out / "conformance-summary.md").read_text(encoding="utf-8")
    assert len(text) <= LIMIT
    assert len((out / "conformance.md").read_text(encoding="utf-8")) > LIMIT
    checked = tmp_path / "checked"
    arguments = ["check", "--target", "reference", "--reports", str(checked)]
    assert main(arguments) == 0
    assert not (checked / "conformance-summary.md").exists()
    assert main([*arguments, "--summary"]) == 0
    assert "| reference 0.1.0 | passes |" in (checked / "conformance-summary.md").read_text("utf-8")

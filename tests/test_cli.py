"""The command line: exit codes, one-line errors, reports written whole or not at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import harness
from harness.checkers import CHECKERS
from harness.cli import main
from harness.findings import FindingsFileError, read_findings_file
from scenarios import corpus

ROOT = Path(__file__).resolve().parent.parent
REGRESSIONS = ROOT / "scenarios" / "regressions"
GOOD = (REGRESSIONS / "colliding-ids.yaml").read_text(encoding="utf-8")


def run_cli(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "harness", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def test_check_on_the_reference_exits_0_and_writes_both_reports(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    status = main(["check", "--target", "reference", "--reports", str(reports)])
    assert status == 0
    document = json.loads((reports / "conformance.json").read_text(encoding="utf-8"))
    assert document["passes"] is True
    column = f"reference {harness.__version__}"
    assert set(document["scenarios"][column]) == {p.stem for p in REGRESSIONS.glob("*.yaml")}
    cells = document["cells"][column]
    assert {cell["status"] for cell in cells.values()} == {"holds"}
    markdown = (reports / "conformance.md").read_text(encoding="utf-8")
    assert "| I1 unique-names-up | holds (" in markdown


def test_check_reports_are_byte_identical_across_runs(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["check", "--target", "reference", "--reports", str(first)]) == 0
    assert main(["check", "--target", "reference", "--reports", str(second)]) == 0
    for name in ("conformance.json", "conformance.md"):
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_run_reproduces_a_regression_file_and_prints_every_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["run", str(REGRESSIONS / "colliding-ids.yaml"), "--target", "reference"])
    out = capsys.readouterr().out
    assert status == 0
    assert "[1] answer" in out
    assert "ran deploy-a" in out
    assert out.count("holds") == len(CHECKERS)  # every checker, and each says it holds


def test_run_json_prints_the_history(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(REGRESSIONS / "twin-calls.yaml"), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    history = document["history"]
    assert [step["kind"] for step in history["steps"]] == ["run", "restart", "answer"]
    assert history["control"] is not None
    assert document["verdicts"]["I1"] == []


def test_targets_lists_the_reference_with_capabilities(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["targets"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("reference ")
    assert "interrupt_ids" in out


def test_a_violation_exits_1(tmp_path: Path) -> None:
    wrong = GOOD.replace("steps:", "expect: {executions: {deploy-a: 2}}\nsteps:")
    scenario = tmp_path / "wrong-expectation.yaml"
    scenario.write_text(wrong, encoding="utf-8")
    reports = tmp_path / "reports"
    assert (
        main(
            [
                "check",
                "--target",
                "reference",
                "--scenarios",
                str(scenario),
                "--reports",
                str(reports),
            ]
        )
        == 1
    )
    document = json.loads((reports / "conformance.json").read_text(encoding="utf-8"))
    assert document["passes"] is False
    [column] = document["findings"]
    assert document["findings"][column]["new"] == [
        {
            "scenario": "wrong-expectation",
            "invariant": "O",
            "slug": "expected-outcome",
            "step": 3,
            "expected": "deploy-a ran 2 times in all (expect)",
            "seen": "ran once",
        }
    ]


@pytest.mark.parametrize("case", ["answer-maybe.yaml", "not-utf8.yaml", "unknown-step-kind.yaml"])
def test_a_malformed_file_through_the_real_entry_point_exits_2_with_one_line(
    tmp_path: Path, case: str
) -> None:
    """The in-process cases live in test_malformed_inputs; these go through ``python -m``."""
    scenario = ROOT / "tests" / "malformed" / case
    result = run_cli("check", "--scenarios", str(scenario), "--reports", "out", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert one_line(result.stderr).startswith(f"{scenario}: ")
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()


def test_check_of_a_folder_names_every_bad_file_and_runs_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "a-good.yaml").write_text(GOOD, encoding="utf-8")
    misspelt = folder / "b-misspelt.yaml"
    misspelt.write_text(GOOD.replace("steps:", "stpes:"), encoding="utf-8")
    unparsed = folder / "c-unparsed.yaml"
    unparsed.write_text("tree: [unclosed\n", encoding="utf-8")
    (folder / "d-good.yaml").write_text(GOOD, encoding="utf-8")
    reports = tmp_path / "reports"
    arguments = ["check", "--target", "reference", "--scenarios", str(folder)]
    status = main([*arguments, "--reports", str(reports)])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.err.splitlines() == [
        f"{misspelt}: stpes: unknown field; did you mean steps?",
        f"{unparsed}: line 1, column 7: not valid YAML: this '[' is never closed with ']'",
    ]
    assert captured.out == ""
    assert not reports.exists()  # nothing ran: no partial report


def test_a_failed_check_leaves_the_previous_report_untouched(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    assert main(["check", "--target", "reference", "--reports", str(reports)]) == 0
    before = (reports / "conformance.md").read_bytes()
    broken = tmp_path / "broken.yaml"
    broken.write_text("description: x\n", encoding="utf-8")
    assert (
        main(
            [
                "check",
                "--target",
                "reference",
                "--scenarios",
                str(broken),
                "--reports",
                str(reports),
            ]
        )
        == 2
    )
    assert (reports / "conformance.md").read_bytes() == before
    assert sorted(path.name for path in reports.iterdir()) == [
        "conformance.json",
        "conformance.md",
        "histories.sha256",
    ]


def test_help_explains_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in ("check", "run", "targets"):
        assert command in out
    assert "examples:" in out


@pytest.mark.slow
def test_check_with_a_profile_adds_the_generated_sample_and_its_statistics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a committed sample cut to its first 24 scenarios: check runs the whole ci sample on the
    # reference in its own environment (tox -e check), and the statistics of the whole sample
    # are tested on the file itself (tests/test_properties.py)
    committed = corpus.find("ci", None)
    assert committed is not None
    first = corpus.read(committed, "ci")[:24]
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "generated.jsonl").write_text(
        corpus.render("ci", None, first), encoding="utf-8"
    )
    monkeypatch.setattr(corpus, "CORPUS", tmp_path)
    reports = tmp_path / "reports"
    assert (
        main(["check", "--target", "reference", "--profile", "ci", "--reports", str(reports)]) == 0
    )
    document = json.loads((reports / "conformance.json").read_text(encoding="utf-8"))
    [names] = document["scenarios"].values()
    generated = [name for name in names if name.startswith("generated-")]
    assert generated == [name for name, _ in first]
    stats = (reports / "generator-stats.md").read_text(encoding="utf-8")
    assert "| colliding-ids |" in stats


def test_record_writes_witnesses_and_a_placeholder_check_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = GOOD.replace("steps:", "expect: {executions: {deploy-a: 2}}\nsteps:")
    scenario = tmp_path / "wrong-expectation.yaml"
    scenario.write_text(wrong, encoding="utf-8")
    findings = tmp_path / "findings.yaml"
    arguments = ["record", "--target", "reference", "--scenarios", str(scenario)]
    assert main([*arguments, "--findings-file", str(findings)]) == 1  # needs a person
    out = capsys.readouterr().out
    assert "`wrong-expectation`: explanation still 'TO BE EXPLAINED'" in out
    text = findings.read_text(encoding="utf-8")
    assert "seen: '^ran once$'" in text
    with pytest.raises(FindingsFileError, match="explanation: still"):
        read_findings_file(findings, "reference", harness.__version__)
    # a person writes why; recording again keeps it, and the file is complete
    findings.write_text(
        text.replace("TO BE EXPLAINED: why does it happen?", "the scenario expects two runs"),
        encoding="utf-8",
    )
    assert main([*arguments, "--findings-file", str(findings)]) == 0
    document = read_findings_file(findings, "reference", harness.__version__)
    [entry] = document.findings
    assert entry.explanation == "the scenario expects two runs"
    assert [witness.invariant for witness in entry.witnesses] == ["O"]


def test_record_refuses_a_findings_file_it_cannot_read_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    findings = tmp_path / "findings.yaml"
    findings.write_text("target: reference\nversion: x\nfindings: 3\n", encoding="utf-8")
    status = main(["record", "--target", "reference", "--findings-file", str(findings)])
    assert status == 2
    message = one_line(capsys.readouterr().err)
    assert message.startswith(f"{findings}: ")

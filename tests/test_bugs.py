"""The bug catalogue (``scenarios/bugs.yaml``, ``harness.bugs``): one identity per bug over the
findings files.  The shipped catalogue must account for everything the shipped findings files
record; a catalogue that cannot be used is refused in one line; the report's cells come from the
conformance reports given, and the README's table is what the command writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.bugs import (
    BEGIN,
    END,
    CatalogueError,
    Source,
    bug_report,
    problems,
    read_catalogue,
    read_findings_files,
    readme_block,
    readme_table,
    replace_block,
    reproducer_command,
)
from harness.cli import main
from harness.findings.document import FindingsFile

ROOT = Path(__file__).resolve().parent.parent
DIGEST = "sha256:" + "0" * 64


def _finding(scenario: str, *invariants: str) -> dict[str, Any]:
    return {
        "scenario": scenario,
        "digest": DIGEST,
        "explanation": f"What {scenario} shows, and why.",
        "witnesses": [{"invariant": i, "step": "answer", "seen": "^x$"} for i in invariants],
    }


def _class(name: str, shown_by: str, *invariants: str) -> dict[str, Any]:
    return {
        "class": name,
        "shown_by": [shown_by],
        "explanation": f"What {name} covers, and why.",
        "witnesses": [{"invariant": i, "step": "answer", "seen": "^x$"} for i in invariants],
    }


def _documents() -> dict[str, FindingsFile]:
    """Two releases of one SDK that share a bug, and another SDK."""
    old = {
        "target": "sdk",
        "version": "1.0",
        "findings": [_finding("twins", "I2", "I3"), _finding("restart", "I5", "I8")],
        "classes": [_class("twin-lost", "twins", "I3")],
    }
    new = {**old, "version": "2.0", "findings": [_finding("twins", "I2", "I3")]}
    other = {"target": "other", "version": "0.1", "findings": [_finding("twins", "I14")]}
    return {
        f"{d['target']}-{d['version']}": FindingsFile.model_validate(d) for d in (old, new, other)
    }


CATALOGUE = """\
bugs:
  - id: sdk-second-call-turned-away
    title: A second call of one agent tool is turned away
    sdk: sdk
    invariants: [I2, I3]
    covers:
      sdk-1.0: {findings: [twins], classes: [twin-lost]}
      sdk-2.0: {findings: [twins], classes: [twin-lost]}
  - id: sdk-restart-loses-the-resume
    title: After a restart the answer never reaches the sub-agent
    sdk: sdk
    invariants: [I5]
    covers:
      sdk-1.0: {findings: [restart]}
  - id: sdk-turn-published-again
    title: A resumed turn is published again in public events
    sdk: sdk
    invariants: [I8]
    covers:
      sdk-1.0: {findings: [restart]}
  - id: other-answer-accepted-twice
    title: An answer is accepted twice without an error
    sdk: other
    invariants: [I14]
    covers:
      other-0.1: {findings: [twins]}
"""


def _catalogue(tmp_path: Path, text: str = CATALOGUE) -> Path:
    path = tmp_path / "bugs.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_catalogue_covers_every_finding_and_class_of_every_findings_file() -> None:
    catalogue, documents = read_catalogue(), read_findings_files()
    assert problems(catalogue, documents) == []
    covered = {
        (stem, name)
        for bug in catalogue.bugs
        for stem, c in bug.covers.items()
        for name in (*c.findings, *c.classes)
    }
    recorded = {
        (stem, name)
        for stem, d in documents.items()
        for name in (*(e.scenario for e in d.findings), *(c.name for c in d.classes))
    }
    assert recorded
    assert recorded <= covered
    assert 20 <= len(catalogue.bugs) <= 60  # the few dozen bugs, not one per violation


def test_a_bug_shown_on_two_releases_is_one_bug_naming_both() -> None:
    catalogue = read_catalogue()
    stems = {bug.id: set(bug.covers) for bug in catalogue.bugs}
    assert {"strands-1.59.0", "strands-1.62.0"} <= stems["strands-second-call-turned-away"]
    assert {"strands-1.58.1", "strands-1.59.0", "strands-1.62.0"} <= stems[
        "strands-answered-id-accepted-again"
    ]
    titles = [bug.title for bug in catalogue.bugs]
    assert len(set(titles)) == len(titles)


def test_a_regression_finding_recorded_alike_on_two_releases_is_the_same_bugs_on_both() -> None:
    """A finding whose explanation is word for word the same on two releases of a target is
    the same bug there: it must not be split into a slug per release."""
    catalogue, documents = read_catalogue(), read_findings_files()
    bugs_of: dict[tuple[str, str], set[str]] = {}
    for bug in catalogue.bugs:
        for stem, covered in bug.covers.items():
            for name in covered.findings:
                bugs_of.setdefault((stem, name), set()).add(bug.id)
    seen: dict[tuple[str, str, str], tuple[str, set[str]]] = {}
    compared = 0
    for stem, document in documents.items():
        for entry in document.findings:
            key = (document.target, entry.scenario, entry.explanation)
            mine = bugs_of[(stem, entry.scenario)]
            if key in seen:
                compared += 1
                assert mine == seen[key][1], f"{entry.scenario}: {stem} vs {seen[key][0]}"
            seen.setdefault(key, (stem, mine))
    assert compared > 10


def test_a_hand_made_catalogue_that_matches_its_findings_files_has_no_problem(
    tmp_path: Path,
) -> None:
    catalogue = read_catalogue(_catalogue(tmp_path))
    assert problems(catalogue, _documents()) == []
    assert catalogue.bugs[0].regressions() == ("twins",)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("id: sdk-second-call-turned-away", "id: Second Call"), "bugs.0.id: String should match"),
        (("invariants: [I5]", "invariants: [I18]"), "bugs.1.invariants.0: String should match"),
        (("invariants: [I5]", "invariants: []"), "bugs.1.invariants: Tuple should have at least"),
        (("sdk: other", "sdk: other\n    severity: high"), "bugs.3.severity: Extra inputs"),
        (("{findings: [restart]}\n  - id: sdk-turn", "{}\n  - id: sdk-turn"), "names no finding"),
        (("{findings: [twins]}\n", "{classes: [twin-lost]}\n"), "covers no regression finding"),
        (("invariants: [I5]", "invariants: [I5]\n    example: twins"), "example: 'twins' is none"),
        (("id: sdk-turn-published-again", "id: sdk-restart-loses-the-resume"), "catalogued twice"),
        (("title: A resumed", "title: |\n      A resumed\n      twice"), "bugs.2.title"),
    ],
)
def test_a_catalogue_that_cannot_be_used_is_refused_in_one_line_naming_the_field(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    assert edit[0] in CATALOGUE
    path = _catalogue(tmp_path, CATALOGUE.replace(edit[0], edit[1], 1))
    with pytest.raises(CatalogueError) as refused:
        read_catalogue(path)
    assert str(refused.value).startswith(f"{path}: ")
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (("sdk-2.0: {", "sdk-3.0: {"), "covers.sdk-3.0: no findings file sdk-3.0.yaml"),
        (
            ("other-0.1: {findings: [twins]}", "other-0.1: {findings: [twin]}"),
            "covers.other-0.1.findings: 'twin' is not in other-0.1.yaml",
        ),
        (
            ("sdk-2.0: {findings: [twins], classes: [twin-lost]}", "sdk-2.0: {findings: [twins]}"),
            "sdk-2.0.yaml: classes: 'twin-lost' is covered by no bug",
        ),
        (
            ("invariants: [I5]", "invariants: [I5, I7]"),
            "invariants: I7 is witnessed by nothing it covers",
        ),
        (
            ("invariants: [I8]", "invariants: [I5]"),
            "sdk-1.0.yaml: findings: 'restart' witnesses I8, which none of its bugs lists",
        ),
        (
            ("sdk: sdk\n    invariants: [I5]", "sdk: other\n    invariants: [I5]"),
            "sdk 'other', but sdk-second-call-turned-away says sdk is 'sdk'",
        ),
    ],
)
def test_a_catalogue_the_findings_files_contradict_is_told_where(
    tmp_path: Path, edit: tuple[str, str], problem: str
) -> None:
    assert edit[0] in CATALOGUE
    catalogue = read_catalogue(_catalogue(tmp_path, CATALOGUE.replace(edit[0], edit[1], 1)))
    found = problems(catalogue, _documents())
    assert any(problem in line for line in found), found


def _conformance() -> dict[str, Any]:
    """A hand-made report: sdk 2.0, sdk 1.5 (judged by 1.0's findings), other, and the
    reference (no findings file)."""

    def item(scenario: str, invariant: str, recorded_class: str | None = None) -> dict[str, Any]:
        shown = {"scenario": scenario, "invariant": invariant, "step": 1, "explanation": "why"}
        return shown | ({"class": recorded_class} if recorded_class else {})

    return {
        "targets": [
            {"name": "sdk", "version": "2.0"},
            {"name": "sdk", "version": "1.5", "findings_version": "1.0"},
            {"name": "other", "version": "0.1"},
            {"name": "reference", "version": "0.1"},
        ],
        "findings": {
            "sdk 2.0": {
                "expected": [
                    item("twins", "I2"),
                    item("twins", "I3"),
                    item("generated-007", "I3", "twin-lost"),
                    item("generated-009", "I3", "twin-lost"),
                ]
            },
            "sdk 1.5": {"expected": [item("restart", "I5"), item("restart", "I8")]},
            "other 0.1": {"expected": []},
            "reference 0.1": {"expected": []},
        },
        "counterexamples": {"sdk 2.0": {"generated-007": "counterexamples/generated-007@sdk.yaml"}},
    }


def test_the_report_counts_each_bugs_excused_violations_per_target_release(tmp_path: Path) -> None:
    catalogue = read_catalogue(_catalogue(tmp_path))
    source = Source(_conformance(), tmp_path / "run")
    document = bug_report(catalogue, _documents(), [source], tmp_path / "out")
    cells = {bug["id"]: bug["cells"] for bug in document["bugs"]}
    assert cells["sdk-second-call-turned-away"] == {
        "sdk 2.0": {"state": "open", "count": 4},
        "sdk 1.5": {"state": "not seen", "count": 0},
        "other 0.1": {"state": "n/a"},
        "reference 0.1": {"state": "n/a"},
    }
    assert cells["sdk-restart-loses-the-resume"]["sdk 1.5"] == {"state": "open", "count": 1}
    assert cells["sdk-turn-published-again"]["sdk 1.5"] == {"state": "open", "count": 1}
    assert cells["sdk-restart-loses-the-resume"]["sdk 2.0"] == {"state": "not seen", "count": 0}
    assert cells["other-answer-accepted-twice"]["other 0.1"] == {"state": "not seen", "count": 0}
    first = document["bugs"][0]["first_counterexample"]
    assert first == {
        "target": "sdk 2.0",
        "scenario": "generated-007",
        "file": "../run/counterexamples/generated-007@sdk.yaml",
    }
    assert document["bugs"][0]["reproducer"] == "none: sdk has no reproducer hook"
    columns = {c["label"]: c for c in document["columns"]}
    assert columns["sdk 1.5"]["findings"] == "sdk-1.0"
    assert columns["reference 0.1"]["findings"] is None
    assert (columns["sdk 2.0"]["excused"], columns["sdk 2.0"]["unattributed"]) == (4, 0)


def test_a_bugs_reproducer_is_its_first_regression_file_the_targets_reproducer_expresses() -> None:
    # gated-agent-call uses a gate, which no template sends: repro refuses it, so the command
    # names the next file, and a bug whose every file is refused says so instead of a command
    assert reproducer_command(["gated-agent-call", "twin-calls"], "strands") == (
        "python -m harness repro twin-calls --target strands"
    )
    assert reproducer_command(["gated-agent-call"], "strands") == (
        "none: the strands reproducer expresses none of its regression files"
    )


def test_a_violation_no_bug_explains_is_counted_as_such(tmp_path: Path) -> None:
    catalogue = read_catalogue(_catalogue(tmp_path))
    report = _conformance()
    report["findings"]["sdk 2.0"]["expected"].append(
        {"scenario": "twins", "invariant": "I9", "step": 2, "explanation": "why"}
    )
    document = bug_report(catalogue, _documents(), [Source(report, tmp_path)], tmp_path)
    column = next(c for c in document["columns"] if c["label"] == "sdk 2.0")
    assert (column["excused"], column["unattributed"]) == (5, 1)


def test_without_a_report_a_column_per_findings_file_says_where_each_bug_is_recorded(
    tmp_path: Path,
) -> None:
    document = bug_report(read_catalogue(_catalogue(tmp_path)), _documents())
    assert [c["label"] for c in document["columns"]] == ["other 0.1", "sdk 1.0", "sdk 2.0"]
    cells = {bug["id"]: bug["cells"] for bug in document["bugs"]}
    assert cells["sdk-restart-loses-the-resume"] == {
        "other 0.1": {"state": "n/a"},
        "sdk 1.0": {"state": "open"},
        "sdk 2.0": {"state": "not seen"},
    }


def test_the_command_writes_the_report_from_conformance_files(tmp_path: Path) -> None:
    report = tmp_path / "run" / "conformance.json"
    report.parent.mkdir()
    report.write_text(
        json.dumps(
            {
                "targets": [{"name": "strands", "version": "1.61.1"}],
                "findings": {
                    "strands 1.61.1": {
                        "expected": [
                            {"scenario": "twin-calls", "invariant": "I3", "step": 1},
                            {
                                "scenario": "g-1",
                                "invariant": "I2",
                                "class": "second-call-turned-away",
                            },
                        ]
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    assert main(["bugs", str(report), "--reports", str(tmp_path / "out")]) == 0
    written = json.loads((tmp_path / "out" / "bugs.json").read_text(encoding="utf-8"))
    assert written["columns"][0]["findings"] == "strands-1.59.0"  # the newest earlier release
    turned_away = next(b for b in written["bugs"] if b["id"] == "strands-second-call-turned-away")
    assert turned_away["cells"]["strands 1.61.1"] == {"state": "open", "count": 2}
    assert turned_away["first_counterexample"] == {"target": "strands 1.61.1", "scenario": "g-1"}
    page = (tmp_path / "out" / "bugs.md").read_text(encoding="utf-8")
    assert "| open (2) |" in page
    assert "python -m harness repro twin-calls --target strands" in page


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not JSON (expected a conformance.json)"),
        ("[]", "not a conformance report (expected targets and findings)"),
        ('{"targets": [{"name": 1}], "findings": {}}', "targets: expected a list of"),
        ('{"targets": [], "findings": {"t": 1}}', "findings: expected a mapping"),
    ],
)
def test_the_command_refuses_a_file_that_is_no_conformance_report_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    path = tmp_path / "conformance.json"
    path.write_text(content, encoding="utf-8")
    assert main(["bugs", str(path), "--reports", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error == f"{path}: {message}" + error.split(message, 1)[1]
    assert error.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_the_readme_shows_the_bug_table_the_command_writes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    generated = readme_block(bug_report(read_catalogue(), read_findings_files()))
    assert readme_table(readme) == generated, (
        "README.md's bug table is stale: run python -m harness bugs --readme README.md"
    )


def test_the_readme_option_rewrites_only_the_table(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme_table(readme)
    stale = tmp_path / "README.md"
    stale.write_text(readme.replace(table, f"{BEGIN}\nan old table\n{END}"), encoding="utf-8")
    assert main(["bugs", "--readme", str(stale), "--reports", str(tmp_path / "out")]) == 0
    assert stale.read_text(encoding="utf-8") == readme


def test_a_readme_without_the_markers_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# a project\n", encoding="utf-8")
    assert main(["bugs", "--readme", str(readme), "--reports", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith(f"{readme}: expected the bug table's markers")
    assert replace_block(f"a\n{BEGIN}\nold\n{END}\nb", "new") == "a\nnew\nb"


def test_the_report_is_the_same_bytes_run_after_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    written = []
    for _ in range(2):
        assert main(["bugs", "--reports", str(out)]) == 0
        written.append([(out / name).read_bytes() for name in ("bugs.md", "bugs.json")])
    assert written[0] == written[1]
    page = written[0][0].decode("utf-8")
    assert page.count("\n## `") == len(read_catalogue().bugs)

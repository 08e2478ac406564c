"""The mutation report: reading mutmut 3's results, scoring them per direction, and the reviewed
list of equivalent mutants.  (Running mutmut itself is ``tox -e mutation``.)"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.mutation import mutants, round_trip, round_trip_report
from harness.mutation.mutants import Mutant, MutationError, Result


@pytest.mark.parametrize(
    ("name", "module", "function"),
    [
        ("harness.reference.naming.x__quote__mutmut_5", "harness.reference.naming", "_quote"),
        (
            "harness.reference.agent_as_tool.xǁSubAgentToolǁprepare__mutmut_21",
            "harness.reference.agent_as_tool",
            "SubAgentTool.prepare",
        ),
        (
            "harness.reference.continuation.x_store__mutmut_3",
            "harness.reference.continuation",
            "store",
        ),
    ],
)
def test_a_mutant_name_says_its_module_and_function(name: str, module: str, function: str) -> None:
    assert mutants.parse_name(name) == (module, function)


def test_a_name_that_is_not_mutmuts_is_refused() -> None:
    with pytest.raises(MutationError, match="not a mutmut 3 mutant name"):
        mutants.parse_name("harness.reference.naming.quote")


@pytest.mark.parametrize(
    ("module", "function", "direction"),
    [
        ("harness.reference.naming", "root_visible_id", "up"),
        ("harness.reference.routing", "responses_for_call", "down"),
        ("harness.reference.continuation", "store", "store"),
        ("harness.reference.continuation", "digest", "store"),
        ("harness.reference.continuation", "restore", "restore"),
        ("harness.reference.continuation", "_require_fields", "restore"),
        ("harness.reference.agent_as_tool", "SubAgentTool.run", "resume"),
    ],
)
def test_each_function_belongs_to_one_direction(module: str, function: str, direction: str) -> None:
    assert round_trip.direction(module, function) == direction


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (0, "survived"),
        (1, "killed"),
        (3, "killed"),
        (33, "no tests"),
        (36, "timeout"),
        (None, "not run"),
    ],
)
def test_mutmut_exit_codes(code: int | None, status: str) -> None:
    assert mutants.status_of(code) == status


def mutant(name: str, status: str) -> Mutant:
    module, function = mutants.parse_name(name)
    return Mutant(name, module, function, status, round_trip.direction(module, function))


QUOTE = "harness.reference.naming.x__quote__mutmut_5"
STORE = "harness.reference.continuation.x_store__mutmut_3"


def test_a_reviewed_equivalent_survivor_passes_and_another_fails() -> None:
    result = Result(
        [
            mutant(QUOTE, "survived"),
            mutant("harness.reference.naming.x__quote__mutmut_1", "killed"),
            mutant(STORE, "survived"),
            mutant("harness.reference.continuation.x_store__mutmut_4", "timeout"),
        ],
        diffs={STORE: "-    raise ValueError\n+    raise ValueError('XX')"},
        tests={"harness.reference.continuation.x_store": ["tests/test_continuation.py::t"]},
    )
    report = round_trip_report.document(result, {QUOTE: "letters are never escaped"}, since=None)

    assert report["scores"]["up"] == {"mutants": 2, "killed": 1, "equivalent": 1, "score": 1.0}
    assert report["scores"]["store"] == {"mutants": 2, "killed": 0, "equivalent": 0, "score": 0.0}
    assert report["unreviewed"] == [STORE]
    assert report["timeouts"] == ["harness.reference.continuation.x_store__mutmut_4"]
    assert report["passes"] is False
    [survivor] = [s for s in report["survivors"] if s["mutant"] == STORE]
    assert survivor["tests"] == ["tests/test_continuation.py::t"]
    text = round_trip_report.markdown(report)
    assert f"### `{STORE}` (store)" in text
    assert "- `harness.reference.naming.x__quote__mutmut_5`: letters are never escaped" in text
    assert text.endswith("Verdict: fails: survivors to kill or review, or stale reviews\n")


def test_a_review_of_a_killed_or_vanished_mutant_fails_the_run() -> None:
    killed = "harness.reference.naming.x__quote__mutmut_1"
    gone = "harness.reference.naming.x__quote__mutmut_9"
    result = Result([mutant(QUOTE, "survived"), mutant(killed, "killed")])
    reviews = {QUOTE: "letters are never escaped", killed: "was equivalent", gone: "was too"}

    report = round_trip_report.document(result, reviews, since=None)
    assert report["unreviewed"] == []
    assert report["stale_reviews"] == [killed, gone]
    assert report["passes"] is False
    assert f"- `{gone}`" in round_trip_report.markdown(report)
    # a run of the changed functions only cannot tell a vanished mutant from one not run
    assert round_trip_report.document(result, reviews, since="HEAD~1")["stale_reviews"] == [killed]
    assert round_trip_report.document(result, {QUOTE: "letters"}, since=None)["passes"] is True


def test_results_are_read_from_mutmuts_files(tmp_path: Path) -> None:
    meta = tmp_path / "mutants" / "harness" / "reference" / "naming.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {QUOTE: 0}}), encoding="utf-8")
    stats = {"tests_by_mangled_function_name": {"harness.reference.naming.x__quote": ["b", "a"]}}
    (tmp_path / "mutants" / "mutmut-stats.json").write_text(json.dumps(stats), encoding="utf-8")

    result = mutants.read_results(tmp_path, round_trip.direction)

    assert [(m.name, m.status, m.direction) for m in result.mutants] == [(QUOTE, "survived", "up")]
    assert result.tests == {"harness.reference.naming.x__quote": ["a", "b"]}


def test_no_results_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(MutationError, match="no mutmut results"):
        mutants.read_results(tmp_path, round_trip.direction)


def test_every_reviewed_equivalent_has_a_reason() -> None:
    equivalent = round_trip.load_equivalent()
    assert equivalent
    for name, reason in equivalent.items():
        mutants.parse_name(name)
        assert len(reason) > 40, name


def test_an_entry_without_a_reason_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "equivalent.yaml"
    path.write_text(f"- mutant: {QUOTE}\n  reason: ok\n", encoding="utf-8")
    with pytest.raises(MutationError, match=r"\[0\]\.reason"):
        round_trip.load_equivalent(path)


def test_since_a_ref_selects_the_functions_whose_lines_changed(tmp_path: Path) -> None:
    def git(*arguments: str) -> None:
        subprocess.run(["git", *arguments], cwd=tmp_path, check=True, capture_output=True)

    source = tmp_path / "pkg" / "mod.py"
    source.parent.mkdir()
    source.write_text(
        "def kept():\n    return 1\n\n\nclass Tool:\n    def run(self):\n        return 2\n",
        encoding="utf-8",
    )
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "0")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "1")
    source.write_text(source.read_text(encoding="utf-8").replace("return 2", "return 3"), "utf-8")

    assert round_trip.changed_functions(tmp_path, "HEAD", ["pkg/mod.py"]) == [
        "pkg.mod.xǁToolǁrun__mutmut_*"
    ]

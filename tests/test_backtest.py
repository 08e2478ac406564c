"""``python -m harness backtest``: how a bug is judged caught, what the report says, the plain
progress lines off a terminal, and the compat shims that let the adapters load old releases.
The end-to-end run (environments per release) is ``tox -e backtest``; here one real release run
goes through a stand-in environment: this interpreter, which has the harness and no SDK."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from harness.cli import main
from harness.commands import backtest
from harness.commands.backtest import (
    ReleaseRun,
    backtest_document,
    backtest_markdown,
    caught,
    tasks_of,
)
from harness.commands.progress import Bar
from harness.releases import requirements
from harness.targets import langgraph_compat, openai_agents_compat
from harness.upstream import Bug, catalogue

FIXED = Bug(
    id="x-1",
    sdk="langgraph",
    tracker="a/b#1",
    title="t",
    symptom="s",
    target="langgraph",
    last_affected="1.0.0",
    first_fixed="1.0.1",
    scenario="scenarios/regressions/colliding-ids.yaml",
    invariants=("I1",),
)
OPEN = FIXED.model_copy(update={"id": "x-2", "first_fixed": None})


def run(role: str, verdict: str, bug: str = "x-1") -> ReleaseRun:
    return ReleaseRun(bug, "1.0.0" if role == "affected" else "1.0.1", role, verdict, (), "n")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("runs", "expected"),
    [
        ([run("affected", "red"), run("fixed", "green")], True),
        ([run("affected", "red"), run("fixed", "red")], False),  # not fixed where it says
        ([run("affected", "green"), run("fixed", "green")], False),  # never seen
        ([run("affected", "unavailable"), run("fixed", "green")], False),
        ([run("affected", "red")], False),  # the fixed release did not run
    ],
)
def test_a_fixed_bug_is_caught_only_red_where_it_lived_and_green_where_it_was_fixed(
    runs: list[ReleaseRun], expected: bool
) -> None:
    assert caught(FIXED, runs) is expected


def test_an_open_bug_is_caught_when_red_on_the_newest_release() -> None:
    assert caught(OPEN, [run("affected", "red", "x-2")])
    assert not caught(OPEN, [run("affected", "green", "x-2")])


def test_a_gap_runs_nothing_and_counts_as_not_caught() -> None:
    gap = FIXED.model_copy(update={"id": "x-3", "scenario": None, "gap": "cannot say it"})
    assert tasks_of([gap], Path("envs")) == []
    document = backtest_document(
        [FIXED, gap], {"x-1": [run("affected", "red"), run("fixed", "green")]}
    )
    assert (document["caught"], document["catalogued"], document["gaps"]) == (1, 2, 1)
    text = backtest_markdown(document)
    assert "**Caught 1 of 2**" in text
    assert "x-3" in text.split("## Gaps")[1]


def test_each_catalogued_bug_runs_on_its_releases_in_the_catalogue_order() -> None:
    bugs = catalogue()
    tasks = tasks_of(bugs, Path("envs"))
    expected = [(bug.id, release) for bug in bugs if bug.gap is None for release in bug.releases()]
    assert [(task.bug, task.release) for task in tasks] == expected
    assert {task.role for task in tasks if task.bug == "langgraph-8579"} == {"affected", "fixed"}


def test_the_report_is_the_same_bytes_for_the_same_runs() -> None:
    runs = {"x-1": [run("affected", "red"), run("fixed", "green")]}
    first = json.dumps(backtest_document([FIXED], runs))
    assert first == json.dumps(backtest_document([FIXED], runs))
    assert "time" not in first


def test_off_a_terminal_progress_is_one_plain_line_per_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with Bar(2, "release runs") as bar:
        bar.advance("a on t 1.0: red")
        bar.advance("a on t 1.1: green")
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["[1/2] a on t 1.0: red", "[2/2] a on t 1.1: green"]


def test_an_unknown_bug_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backtest", "--bug", "no-such-bug"]) == 2
    assert "--bug: no catalogued bug 'no-such-bug'" in capsys.readouterr().err


def test_a_release_run_that_cannot_start_is_unavailable_not_green(tmp_path: Path) -> None:
    """An environment in which the target is not installed: the run exits 2, and the verdict
    says so instead of holding."""
    environment = tmp_path / "langgraph-1.0.0"
    (environment / "bin").mkdir(parents=True)
    python = environment / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    (environment / "requirements.txt").write_text(
        "\n".join(requirements("langgraph", "1.0.0")) + "\n", encoding="utf-8"
    )
    task = replace(tasks_of([FIXED], tmp_path)[0], target="no-such-target")
    result = backtest.run_release(None, task)  # type: ignore[arg-type]
    assert result.verdict == "unavailable"
    assert "unknown target 'no-such-target'" in result.note


def test_older_openai_agents_releases_get_the_openai_of_their_own_floor() -> None:
    assert openai_agents_compat.requirements("0.8.4") == ("openai-agents==0.8.4", "openai==2.19.0")
    assert openai_agents_compat.requirements("0.20.0")[1] == "openai==2.45.0"
    assert openai_agents_compat.requirements("0.24.0") == ("openai-agents==0.24.0",)


def test_without_is_invalid_resume_no_resume_value_is_invalid() -> None:
    """A failure LangGraph did not mark as an invalid resume (every failure, before 1.2.15) is
    the task's own."""
    assert langgraph_compat.is_invalid_resume(ValueError("x")) is False

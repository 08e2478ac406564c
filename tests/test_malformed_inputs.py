"""Bad input gets a clear error: every malformed scenario file under ``tests/malformed`` and every
bad invocation below exits 2 with one line (per problem) naming the file (or option), the field
and what was expected: never a traceback, never a report.

A malformed file is data: its first line says ``# expect: <text the error line must contain>``.
Add a file to add a case.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from scenarios.loading import ScenarioFileError, load_scenario

MALFORMED = Path(__file__).resolve().parent / "malformed"
FILES = sorted(MALFORMED.iterdir())


def expected_text(path: Path) -> str:
    first = path.read_bytes().split(b"\n", 1)[0].decode()
    assert first.startswith("# expect: "), f"{path.name}: first line must be '# expect: ...'"
    return first.removeprefix("# expect: ")


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def problem_lines(text: str, path: Path) -> list[str]:
    """The lines of an error about the file ``path``: one per problem, each naming the file."""
    lines = text.strip().splitlines()
    assert lines, text
    assert "Traceback" not in text
    assert "more problem" not in text  # every problem is named, none counted
    for line in lines:
        assert line.startswith(f"{path}: "), text
    return lines


def test_there_are_enough_cases() -> None:
    assert len(FILES) + len(INVOCATIONS) >= 50


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
@pytest.mark.parametrize("command", ["check", "run"])
def test_a_malformed_scenario_file_exits_2_with_a_line_per_problem_and_no_report(
    path: Path, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    if command == "check":
        arguments = ["check", "--target", "reference", "--scenarios", str(path)]
        arguments += ["--reports", str(reports)]
    else:
        arguments = ["run", str(path)]
    status = main(arguments)
    captured = capsys.readouterr()
    assert status == 2
    assert expected_text(path) in problem_lines(captured.err, path)[0]
    assert captured.out == ""
    assert not reports.exists()


# ``FILE: WHERE: WHAT``; WHERE is a field (``steps[1].answer``: indices in brackets, keys that are
# not plain names quoted) or, for text that does not parse, ``line L, column C``
FIELD = re.compile(r'[A-Za-z_][\w-]*(\.(?!\d+\b)[\w-]+|\[\d+\]|\["[^"]*"\])*')
PLACE = re.compile(r"line \d+, column \d+")
NO_PLACE = ("expected a mapping at the top", "not UTF-8 text")


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_every_scenario_file_error_names_its_place_in_one_style(path: Path) -> None:
    for status_line in _error_lines(path):
        rest = status_line.removeprefix(f"{path}: ")
        if rest.startswith(NO_PLACE):
            continue
        where, _, what = rest.partition(": ")
        assert what, status_line
        assert FIELD.fullmatch(where) or PLACE.fullmatch(where), status_line
        if PLACE.fullmatch(where):
            assert what.startswith("not valid YAML: "), status_line
            assert "found character" not in what, status_line  # the parser's own words
            assert "while scanning" not in what, status_line
        assert "Extra inputs are not permitted" not in what, status_line  # pydantic's words


def _error_lines(path: Path) -> list[str]:
    with pytest.raises(ScenarioFileError) as refused:
        load_scenario(path)
    return problem_lines(str(refused.value), path)


SEVERAL = """\
description: [not, text]
source: written for the scenario format's errors
tree:
  name: orchestrator
  colour: blue
  actions: [{tool: deploy, label: deploy}]
  turns: [[{tool: deploy, id: t1}]]
  sub_agents:
    - name: worker
      wndow: {size: 2}
stpes:
  - run: go
"""


def test_a_schema_error_names_every_problem_with_what_an_unknown_key_may_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Path(write(tmp_path, "several.yaml", SEVERAL))
    status = main(["run", str(path)])
    assert status == 2
    agent_fields = (
        "name, tool_name, preserve_context, session_store, stateful_provider, window, gate, "
    )
    agent_fields += "retry, state, actions, effects, sub_agents, turns, answer, prompts"
    # the missing `steps` is the misspelt `stpes`: one mistake, said once
    assert problem_lines(capsys.readouterr().err, path) == [
        f"{path}: description: Input should be a valid string",
        f"{path}: tree.sub_agents[0].wndow: unknown field; did you mean window?",
        f"{path}: tree.colour: unknown field; expected one of {agent_fields}",
        f"{path}: stpes: unknown field; did you mean steps?",
    ]


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


INVOCATIONS: list[tuple[list[str], str]] = [
    (["check", "--target", "no-such-sdk"], "--target: unknown target 'no-such-sdk'"),
    (["check", "--scenarios", "{tmp}/nowhere"], "nowhere does not exist"),
    (["check", "--scenarios", "{empty}"], "holds no .yaml, .yml or .json file"),
    (["check", "--bogus"], "unrecognized arguments: --bogus"),
    (["check", "--profile", "turbo"], "argument --profile: invalid choice: 'turbo'"),
    (["check", "--isolation", "sideways"], "argument --isolation: invalid choice: 'sideways'"),
    (["check", "--target"], "argument --target: expected one argument"),
    (["run"], "the following arguments are required: FILE"),
    (["run", "{tmp}/missing.yaml"], "missing.yaml: cannot read"),
    (["run", "{good}", "--target", "no-such-sdk"], "unknown target 'no-such-sdk'"),
    (["report", "{tmp}/missing.json"], "missing.json: cannot read"),
    (["report", "{notjson}"], "not JSON (expected a conformance.json)"),
    (["report", "{notreport}"], "not a conformance report (expected targets, cells, passes)"),
    (["report"], "the following arguments are required: FILE"),
    (["targets", "extra"], "unrecognized arguments: extra"),
    (["faults", "--examples", "0"], "argument --examples: expected N or TARGET=N with N >= 1"),
    (["faults", "--examples", "=5"], "argument --examples: expected N or TARGET=N, got '=5'"),
    (["faults", "--examples", "many"], "argument --examples: expected N or TARGET=N with N >= 1"),
    (
        ["faults", "--target", "reference", "--examples", "strands=5"],
        "--examples: 'strands' is not one of the chosen targets ['reference']",
    ),
    (["faults", "--seed", "-1"], "argument --seed: expected a whole number >= 0, got '-1'"),
    (["faults", "--shrink", "x"], "argument --shrink: expected a whole number >= 0, got 'x'"),
    (["faults", "--target", "no-such-sdk"], "unknown target 'no-such-sdk'"),
    (["explode"], "invalid choice: 'explode'"),
    ([], "the following arguments are required: COMMAND"),
]


@pytest.mark.parametrize(
    ("arguments", "expected"), INVOCATIONS, ids=[" ".join(a) or "(none)" for a, _ in INVOCATIONS]
)
def test_a_bad_invocation_exits_2_with_one_line_and_no_report(
    arguments: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = {
        "tmp": str(tmp_path),
        "empty": str(tmp_path / "empty"),
        "good": str(Path(__file__).resolve().parent.parent / "scenarios/regressions/mixed.yaml"),
        "notjson": write(tmp_path, "broken.json", "{not json"),
        "notreport": write(tmp_path, "other.json", json.dumps({"hello": 1})),
    }
    (tmp_path / "empty").mkdir()
    reports = tmp_path / "reports"
    status = main([part.format(**names) for part in arguments] + _reports(arguments, reports))
    captured = capsys.readouterr()
    assert status == 2
    assert expected in one_line(captured.err)
    assert captured.out == ""
    assert not reports.exists()


def _reports(arguments: list[str], reports: Path) -> list[str]:
    """Point any report a command might write into the test's directory."""
    takes_reports = arguments[:1] in (["check"], ["report"], ["faults"])
    return ["--reports", str(reports)] if takes_reports and "--bogus" not in arguments else []

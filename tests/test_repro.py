"""Reproducers (``python -m harness repro``): the script written for a regression file imports
only the SDK and the standard library, is short and ruff-clean, and, run alone in a fresh
interpreter that cannot import the harness (``-I``, an empty working directory), exits 1 on a
release whose findings file records the bug and 0 where nothing is wrong.  Which exit is due
comes from the installed release's findings file, never from running the harness's target.  Each
tox environment runs the scripts of the targets whose SDK it holds (strands: the default one and
strands-1.58/1.59; langgraph; openai-agents)."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.repro import HOOKS, NotExpressible, reproducer
from harness.repro.sources import findings_files
from scenarios.loading import REGRESSIONS, load_scenario, parse_scenario, regression_files

SDK_MODULES = {"strands", "langgraph", "langchain_core", "agents", "openai"}
# a handful per target (each costs seconds of an SDK's import and run), in the tox environment
# holding that target's SDK; docs/reproducers.md gives the loop that runs every one
RUN_IN_CI = {
    "strands": ("stale-answer-id", "restored-turn-not-re-emitted", "nested-partial-answer"),
    "langgraph": ("re-interrupt", "stale-answer-id", "deep-nesting"),
    "langgraph-subgraph-node": ("stale-answer-id", "colliding-ids"),
    "openai-agents": ("nested-call-reuses-a-finished-id", "deep-nesting"),
}
MAX_LINES = 300  # the goal is 200: strands' scripts are 194 to 235 lines, openai-agents' to 283
# the project's own selection of rules (pyproject.toml), on a file outside the project
RUFF = ("ruff", "check", "--isolated", "--line-length", "100", "--select", "E,F,W,I,B,UP,SIM,RUF")

# nothing wrong: the orchestrator's own protected action asks, a restart, the approval
GREEN = {
    "description": "The orchestrator's own action asks; after a restart the approval runs it.",
    "source": "written for the reproducer tests",
    "tree": {
        "name": "orchestrator",
        "actions": [{"tool": "deploy", "label": "deploy"}],
        "turns": [[{"tool": "deploy", "id": "call-1"}]],
    },
    "steps": [{"run": "ship it"}, "restart", {"answer": {"deploy": "approve"}}],
}


def installed(target: str) -> str | None:
    try:
        return version(HOOKS[target].distribution)
    except PackageNotFoundError:
        return None


# the targets whose SDK this environment holds, each with the scripts it runs
RUNS = [
    (target, name) for target, names in RUN_IN_CI.items() if installed(target) for name in names
]


def expressible(target: str = "strands") -> list[tuple[str, str]]:
    """(name, script) of every regression file a reproducer for ``target`` expresses."""
    found = []
    for path in regression_files():
        try:
            found.append((path.stem, reproducer(target, path.stem, load_scenario(path))))
        except NotExpressible:
            continue
    return found


def recorded_on_installed_release(target: str) -> set[str]:
    """The regression files the installed release's findings file records for ``target``."""
    for release, path in findings_files(target):
        if ".".join(map(str, release)) == installed(target):
            document = yaml.safe_load(path.read_text(encoding="utf-8"))
            return {entry["scenario"] for entry in document["findings"]}
    raise AssertionError(f"{target} {installed(target)} has no findings file")


def run_alone(script: str, where: Path) -> subprocess.CompletedProcess[str]:
    (where / "repro.py").write_text(script, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-I", "repro.py"], cwd=where, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("target", sorted(HOOKS))
def test_scripts_import_only_the_sdk_and_the_standard_library_and_stay_short(target: str) -> None:
    scripts = expressible(target)
    assert len(scripts) >= 20  # the files using no gate, retry, window, deploy or corruption
    for name, script in scripts:
        imported = set()
        for node in ast.walk(ast.parse(script)):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add(str(node.module).split(".")[0])
        assert imported <= set(sys.stdlib_module_names) | SDK_MODULES, (name, imported)
        assert script.count("\n") < MAX_LINES, name
        assert HOOKS[target].distribution in script.splitlines()[0], name


@pytest.mark.parametrize("target", sorted(HOOKS))
def test_scripts_are_ruff_clean(target: str, tmp_path: Path) -> None:
    for name, script in expressible(target):
        (tmp_path / f"{name.replace('-', '_')}.py").write_text(script, encoding="utf-8")
    checked = subprocess.run(
        [sys.executable, "-m", *RUFF, str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("target", "name"), RUNS)
def test_script_exits_1_while_the_release_has_the_bug_and_0_where_it_has_none(
    target: str, name: str, tmp_path: Path
) -> None:
    """The exit due is the installed release's findings file's word: 1 for a file it records,
    0 for one it does not (a regression file this release passes)."""
    recorded = name in recorded_on_installed_release(target)
    ran = run_alone(dict(expressible(target))[name], tmp_path)
    assert ran.returncode == (1 if recorded else 0), ran.stdout + ran.stderr
    last = "check(s) failed: the bug is there" if recorded else "every check holds"
    assert ran.stdout.splitlines()[-1].endswith(last)
    assert ("FAIL:" in ran.stdout) == recorded


def test_each_target_runs_a_recorded_bug_and_a_green_file_in_ci() -> None:
    """Both exits are exercised per target: the findings files make the choice (kept true when
    a release is bumped: pick files again)."""
    for target, names in RUN_IN_CI.items():
        for release, path in findings_files(target)[-1:]:
            document = yaml.safe_load(path.read_text(encoding="utf-8"))
            recorded = {entry["scenario"] for entry in document["findings"]}
            assert any(name in recorded for name in names), (target, release)
            assert target == "strands" or any(name not in recorded for name in names), target


@pytest.mark.slow
@pytest.mark.parametrize("target", [target for target in HOOKS if installed(target)])
def test_script_exits_0_where_nothing_is_wrong(target: str, tmp_path: Path) -> None:
    script = reproducer(target, "green", parse_scenario(GREEN, "green"))
    ran = run_alone(script, tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.splitlines()[-1] == "every check holds"
    assert "[1] restart" in ran.stdout


def test_a_target_without_the_hook_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["repro", "stale-answer-id", "--target", "reference"]) == 2
    err = capsys.readouterr().err
    assert err == "--target reference: no reproducer hook\n"


def test_a_scenario_no_template_expresses_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["repro", "gated-agent-call", "--target", "strands"]) == 2
    err = capsys.readouterr().err
    assert err == "gated-agent-call: a strands reproducer cannot express it: uses gate\n"


def test_a_bug_by_its_class_name_uses_its_explanation_and_its_proof(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "repro.py"
    bug = "restored-turn-published-again"
    assert main(["repro", bug, "--target", "strands", "-o", str(out)]) == 0
    script = out.read_text(encoding="utf-8")
    assert "published again" in script.split('"""')[1]  # the class's explanation
    assert "'run'" in script  # the steps of its shown_by file


@pytest.mark.parametrize("stem", ["clone-sub-agents", "resume-without-id-two-pending"])
def test_a_reproducer_refuses_what_its_templates_cannot_send(stem: str) -> None:
    """A tool name apart from the agent's, or an answer without an id, is named as not
    expressible, never written as a reproducer that sends something else."""
    scenario = load_scenario(REGRESSIONS / f"{stem}.yaml")
    with pytest.raises(NotExpressible, match=r"tool_name|resume"):
        reproducer("strands", stem, scenario)

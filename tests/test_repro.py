"""Reproducers (``python -m harness repro``): the script written for a regression file imports
only the SDK and the standard library, is short and ruff-clean, and, run alone in a fresh
interpreter that cannot import the harness (``-I``, an empty working directory), exits 1 on a
release whose findings file records the bug and 0 where nothing is wrong.  Which exit is due
comes from the installed release's findings file, never from running the harness's target."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.repro import NotExpressible, reproducer
from harness.repro.sources import findings_files
from scenarios.loading import load_scenario, parse_scenario, regression_files

SDK_MODULES = {"strands"}
# a handful (each costs a few seconds of an SDK's import and run); docs/reproducers.md gives the
# loop that runs every expressible regression file's script
RUN_IN_CI = ("stale-answer-id", "restored-turn-not-re-emitted", "nested-partial-answer")
MAX_LINES = 240  # the goal is 200; the longest (adversarial-ids: 305-character ids) is 235
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


def expressible() -> list[tuple[str, str]]:
    """(name, script) of every regression file a strands reproducer expresses."""
    found = []
    for path in regression_files():
        try:
            found.append((path.stem, reproducer("strands", path.stem, load_scenario(path))))
        except NotExpressible:
            continue
    return found


def open_on_installed_release() -> set[str]:
    """The regression files the installed strands-agents release's findings file records."""
    installed = version("strands-agents")
    for release, path in findings_files("strands"):
        if ".".join(map(str, release)) == installed:
            document = yaml.safe_load(path.read_text(encoding="utf-8"))
            return {entry["scenario"] for entry in document["findings"]}
    raise AssertionError(f"strands-agents {installed} has no findings file")


def run_alone(script: str, where: Path) -> subprocess.CompletedProcess[str]:
    (where / "repro.py").write_text(script, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-I", "repro.py"], cwd=where, capture_output=True, text=True, timeout=300
    )


def test_scripts_import_only_the_sdk_and_the_standard_library_and_stay_short() -> None:
    scripts = expressible()
    assert len(scripts) >= 25  # the files using no gate, retry, window, deploy or corruption
    for name, script in scripts:
        imported = set()
        for node in ast.walk(ast.parse(script)):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add(str(node.module).split(".")[0])
        assert imported <= set(sys.stdlib_module_names) | SDK_MODULES, (name, imported)
        assert script.count("\n") < MAX_LINES, name
        assert "strands-agents" in script.splitlines()[0], name


def test_scripts_are_ruff_clean(tmp_path: Path) -> None:
    for name, script in expressible():
        (tmp_path / f"{name.replace('-', '_')}.py").write_text(script, encoding="utf-8")
    checked = subprocess.run(
        [sys.executable, "-m", *RUFF, str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", RUN_IN_CI)
def test_script_exits_1_while_the_release_has_the_bug(name: str, tmp_path: Path) -> None:
    assert name in open_on_installed_release()  # the bug is recorded on this release
    script = dict(expressible())[name]
    ran = run_alone(script, tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FAIL:" in ran.stdout
    assert "check(s) failed: the bug is there" in ran.stdout


@pytest.mark.slow
def test_script_exits_0_where_nothing_is_wrong(tmp_path: Path) -> None:
    script = reproducer("strands", "green", parse_scenario(GREEN, "green"))
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

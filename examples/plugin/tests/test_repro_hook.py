"""tinyagents' reproducer hook (``tinyagents.harness_repro``), through the harness's own command:
the script imports only tinyagents and the standard library and, run alone in a fresh interpreter
that cannot import the harness, exits 1 on a regression file whose bug this release's findings
record (colliding-ids: two sub-agents ask under one id, so one answer reaches both) and 0 on
tinyagents' own scenario, which holds."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main

OWN_SCENARIO = Path(__file__).parent / "scenarios" / "second-question-denied.yaml"


def written(source: str, where: Path) -> Path:
    script = where / "repro.py"
    assert main(["repro", source, "--target", "tinyagents", "-o", str(script)]) == 0
    return script


def run_alone(script: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", script.name],
        cwd=script.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_script_imports_only_tinyagents_and_the_standard_library(tmp_path: Path) -> None:
    tree = ast.parse(written("colliding-ids", tmp_path).read_text(encoding="utf-8"))
    imported = {
        (node.module or "").split(".")[0] if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported - set(sys.stdlib_module_names) == {"tinyagents"}


def test_the_script_exits_1_while_the_recorded_bug_is_there(tmp_path: Path) -> None:
    ran = run_alone(written("colliding-ids", tmp_path))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FAIL:" in ran.stdout
    assert ran.stdout.splitlines()[-1].endswith("check(s) failed: the bug is there")


def test_the_script_exits_0_where_nothing_is_wrong(tmp_path: Path) -> None:
    ran = run_alone(written(str(OWN_SCENARIO), tmp_path))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.splitlines()[-1] == "every check holds"
    assert "[2] restart" in ran.stdout


def test_a_preserve_context_sub_agent_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A tinyagents sub-agent keeps its turn in its caller's: no session of its own."""
    assert main(["repro", "shared-session", "--target", "tinyagents"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("shared-session: the tinyagents reproducer cannot express it: uses ")
    assert "preserve_context" in error
    assert error.count("\n") == 1

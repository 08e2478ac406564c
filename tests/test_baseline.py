"""Pull-request mode (``check --baseline``), on two builds of strands-agents that differ from the
pinned release by one line of its agent-as-tool module, each a copy of the installed package put
first on the path of the ``check`` process: one fixes a recorded bug (a resumed sub-agent's
events are no longer forwarded, so its restored turn is not published again: I8), one adds a
new one (nested interrupt ids no longer carry the agent tool call's id, so two sub-agents'
questions collide: I1).  The first review passes and lists the fix; the second fails on the new
violations, with a reproducer, and still lists what is open."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import strands

from harness.cli import main

ROOT = Path(__file__).resolve().parent.parent
MODULE = Path("strands") / "agent" / "_agent_as_tool.py"
FORWARDED = (
    "                else:\n                    yield AgentAsToolStreamEvent(tool_use, event, self)"
)
PATCHES = {
    # a resumed turn's events are stored data: forward only a fresh call's
    "fixes": (
        FORWARDED,
        FORWARDED.replace("else:", "elif not isinstance(prompt, list):"),
    ),
    # every nested question under one prefix, whichever call asked it
    "breaks": (
        "prefix = f\"v1:agent_as_tool:{quote(tool_use_id, safe='')}:\"",
        'prefix = "v1:agent_as_tool:"',
    ),
}
SCENARIOS = ("restored-turn-not-re-emitted", "colliding-ids")

pytestmark = pytest.mark.slow


def review(change: str, tmp_path: Path) -> tuple[int, str, list[dict[str, object]]]:
    """``check --baseline`` of the installed release on a copy of strands with ``change``."""
    copy = tmp_path / "build"
    shutil.copytree(Path(strands.__file__).parent, copy / "strands")
    patched = copy / MODULE
    old, new = PATCHES[change]
    text = patched.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{MODULE} changed: the patch {change!r} no longer applies"
    patched.write_text(text.replace(old, new), encoding="utf-8")
    reports = tmp_path / "reports"
    command = [sys.executable, "-m", "harness", "check", "--target", "strands"]
    command += ["--baseline", version("strands-agents"), "--summary", "--reports", str(reports)]
    for name in SCENARIOS:
        command += ["--scenarios", str(ROOT / "scenarios" / "regressions" / f"{name}.yaml")]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy), str(ROOT)])}
    ran = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True)
    assert "Traceback" not in ran.stderr, ran.stderr
    comment = (reports / "review.md").read_text(encoding="utf-8")
    document = json.loads((reports / "review.json").read_text(encoding="utf-8"))
    return ran.returncode, comment, document


def test_a_build_that_fixes_a_recorded_bug_passes_and_says_so(tmp_path: Path) -> None:
    exit_code, comment, [document] = review("fixes", tmp_path)
    assert exit_code == 0, comment
    assert document["passes"] is True
    assert document["new"] == []
    assert {bug["bug"] for bug in document["fixed"]} == set(SCENARIOS)  # type: ignore[index]
    assert "### Fixed by this build" in comment
    assert "- `restored-turn-not-re-emitted`: At the resume" in comment
    assert "### New" not in comment


def test_a_build_that_adds_a_bug_fails_with_the_new_violations_and_a_reproducer(
    tmp_path: Path,
) -> None:
    exit_code, comment, [document] = review("breaks", tmp_path)
    assert exit_code == 1, comment
    assert document["passes"] is False
    new = document["new"]
    assert {"I1", "I2"} <= {item["invariant"] for item in new}  # type: ignore[union-attr,index]
    assert "### New (fails the review)" in comment
    assert "`colliding-ids` I1 (unique-names-up) at step 0" in comment
    assert "colliding-ids@strands.py" in comment
    assert "```mermaid\nsequenceDiagram\n" in comment  # the new violations' scenario, drawn
    assert "rect rgb(255, 228, 228)" in comment
    assert (tmp_path / "reports" / "repro" / "colliding-ids@strands.py").exists()
    # the I8 witnesses of colliding-ids no longer match, but I8 shows anew: changed, not fixed
    assert "colliding-ids" not in {bug["bug"] for bug in document["fixed"]}  # type: ignore[index]
    assert "- `restored-turn-not-re-emitted` (2 violations)" in comment  # still open


def test_a_baseline_without_findings_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "--target", "strands", "--baseline", "0.0.1"]) == 2
    assert capsys.readouterr().err == "--baseline 0.0.1: no findings file of strands\n"

"""The diagrams of the regression findings, rendered in a real headless browser: every
regression file the installed strands-agents release's findings file records, run on strands,
drawn with its violations (``harness.diagram``), and the whole set rendered by npm's
``@mermaid-js/mermaid-cli`` in Debian's chromium; a diagram that does not render fails.

Not collected by a plain ``pytest`` (its name is no ``test_*.py``): ``tox -e diagrams`` runs it,
outside CI, where ``MMDC`` names the ``mmdc`` executable (default: ``mmdc`` on the path) and
``CHROMIUM`` the browser (default ``/usr/bin/chromium``).  Setting them up:

    apt-get update && apt-get install -y chromium
    PUPPETEER_SKIP_DOWNLOAD=1 npm install @mermaid-js/mermaid-cli@12.2.0
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from importlib.metadata import version
from pathlib import Path

from harness.checkers import CHECKERS, applicable
from harness.diagram import diagram
from harness.findings.loading import load_document
from harness.runner import run_scenario
from harness.targets import registry
from scenarios.loading import REGRESSIONS, load_scenario


def mmdc() -> str:
    found = os.environ.get("MMDC") or shutil.which("mmdc")
    assert found, "no mmdc: set MMDC, or npm install @mermaid-js/mermaid-cli (see the docstring)"
    return found


def recorded_regression_files() -> list[str]:
    """The regression files the findings that judge the installed release record (its own file,
    or the file of a range of releases that covers it), each once, in the file's order."""
    installed = version("strands-agents")
    document = load_document("strands", installed, None)
    assert document is not None, f"strands-agents {installed} has no findings file"
    names = dict.fromkeys(entry.scenario for entry in document.findings)
    return [name for name in names if (REGRESSIONS / f"{name}.yaml").exists()]


def test_the_diagrams_of_the_regression_findings_render_in_a_browser(tmp_path: Path) -> None:
    target = registry.get("strands")
    names = recorded_regression_files()
    assert len(names) >= 40
    blocks = []
    for name in names:
        history = run_scenario(target, load_scenario(REGRESSIONS / f"{name}.yaml"), name)
        found = [v for c in CHECKERS if applicable(c, history) for v in c.function(history)]
        assert found, f"{name}: recorded as a finding, but nothing parts"
        drawn = diagram(history, found)
        assert "rect rgb" in drawn, name  # the step where expected and seen part is marked
        blocks.append(f"## {name}\n\n```mermaid\n{drawn}```\n")
    (tmp_path / "diagrams.md").write_text("\n".join(blocks), encoding="utf-8")
    browser = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    config = {"executablePath": browser, "args": ["--no-sandbox"]}
    (tmp_path / "puppeteer.json").write_text(json.dumps(config), encoding="utf-8")
    command = [mmdc(), "-p", "puppeteer.json", "-i", "diagrams.md", "-o", "rendered.md"]
    rendered = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    pictures = sorted(tmp_path.glob("rendered-*.svg"), key=lambda p: int(p.stem.split("-")[1]))
    # mmdc renders the blocks in order and stops at the first that does not render
    broken = names[len(pictures)] if len(pictures) < len(names) else None
    assert rendered.returncode == 0, f"{broken} does not render: {rendered.stderr[-2000:]}"
    assert len(pictures) == len(names)
    for name, picture in zip(names, pictures, strict=True):
        svg = picture.read_text(encoding="utf-8")
        assert "Syntax error" not in svg, name
        assert "human" in svg, name
        assert "orchestrator" in svg, name

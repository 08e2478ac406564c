"""The diagrams (``harness.diagram``) are Mermaid a renderer accepts: here, cheaply, every line of
the diagrams of the regression files (run on the reference, with each step marked as parting) is
one of the few statements the module writes, every lifeline used is declared, every shaded block
closed, and no message carries a character Mermaid reads as syntax.  ``tests/render_diagrams.py``
renders the diagrams of the regression findings in a real headless browser (tox -e diagrams)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.checkers.violation import Violation
from harness.cli import main
from harness.diagram import diagram, text
from harness.runner import run_scenario
from harness.targets.reference import ReferenceTarget
from scenarios.loading import load_scenario, regression_files

TEXT = r"(?:[^;#<>\n]|#\d+;)+"  # one line; Mermaid's syntax characters only as entities
DECLARED = re.compile(rf"^    (?:actor H as human|participant ([AX]\d+) as {TEXT})$")
STATEMENTS = [
    re.compile(rf"^ *(H|[AX]\d+)-?->>(H|[AX]\d+): {TEXT}$"),
    re.compile(rf"^ *Note over (H|[AX]\d+)(?:,(H|[AX]\d+))?: {TEXT}$"),
    re.compile(r"^ *rect rgb\(\d+, \d+, \d+\)$"),
    re.compile(r"^ *end$"),
]


def problems(drawn: str) -> list[str]:
    """What is wrong with ``drawn`` as the Mermaid this module writes."""
    lines = drawn.splitlines()
    found = [] if lines[0] == "sequenceDiagram" else ["no sequenceDiagram header"]
    declared = {"H"}
    depth = 0
    for line in lines[1:]:
        declaration = DECLARED.match(line)
        if declaration is not None:
            declared.add(declaration.group(1) or "H")
            continue
        matched = next((m for m in (s.match(line) for s in STATEMENTS) if m), None)
        if matched is None:
            found.append(f"not a statement: {line!r}")
            continue
        used = {name for name in matched.groups() if name}
        found += [f"undeclared {name} in {line!r}" for name in sorted(used - declared)]
        depth += line.strip().startswith("rect") - (line.strip() == "end")
        if depth < 0:
            found.append(f"end without rect: {line!r}")
    return found + ([f"{depth} rect(s) left open"] if depth else [])


@pytest.mark.parametrize("path", regression_files(), ids=lambda path: path.stem)
def test_every_regression_file_draws_as_the_statements_mermaid_reads(path: Path) -> None:
    history = run_scenario(ReferenceTarget(), load_scenario(path), path.stem)
    parting = [
        Violation("O", "expected-outcome", step.index, "x; <y> #1", "z") for step in history.steps
    ]
    drawn = diagram(history, parting)
    assert problems(drawn) == []
    assert drawn.count("rect rgb") == len(history.steps)  # every step can be shaded
    assert drawn == diagram(history, parting)  # the same history, the same text


def test_a_history_reads_as_the_human_sees_it() -> None:
    path = next(p for p in regression_files() if p.stem == "deep-nesting")
    history = run_scenario(ReferenceTarget(), load_scenario(path), path.stem)
    drawn = diagram(history).splitlines()
    assert drawn[1:6] == [
        "    actor H as human",
        "    participant A0 as orchestrator",
        "    participant A1 as orchestrator/planner",
        "    participant A2 as orchestrator/planner/executor",
        "    participant X0 as drop-table (action)",
    ]
    assert "    H->>A0: clean up the staging database" in drawn
    assert "    A1->>A2: call: do your part" in drawn
    going_up = [line for line in drawn if "-->>" in line and "asks" in line]
    assert going_up == [
        "    X0-->>A2: asks drop-table#35;1",
        "    A2-->>A1: asks drop-table#35;1",
        "    A1-->>A0: asks drop-table#35;1",
    ]
    assert "    Note over X0: ran drop-table" in drawn
    assert drawn.count("    Note over H,X0: restart: every object rebuilt from storage") == 3


def test_text_is_one_line_with_mermaid_syntax_as_entities() -> None:
    assert text("a;b #1 <c>\nd") == "a#59;b #35;1 #60;c#62; d"
    assert len(text("x" * 500)) == 90


def test_run_prints_the_diagram(capsys: pytest.CaptureFixture[str]) -> None:
    path = next(p for p in regression_files() if p.stem == "deep-nesting")
    assert main(["run", str(path), "--target", "reference", "--diagram"]) == 0
    out = capsys.readouterr().out
    assert "```mermaid\nsequenceDiagram\n" in out
    assert out.rstrip().endswith("```")

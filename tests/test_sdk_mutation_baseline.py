"""The figures of SDK mutation come from one complete run, kept in reports/baselines/ (written
by ``--baseline``: tests/test_sdk_mutation_shards.py), and every figure the docs quote about
SDK mutation is one of a committed baseline's, so the README cannot drift.  With no baseline
committed, the docs quote none."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from harness.mutation.baseline import figures, quotable
from harness.mutation.classify import BEHAVIOUR, EQUIVALENT, MESSAGE_TEXT, UNREACHABLE
from harness.mutation.sdk_report import GATE, document

ROOT = Path(__file__).resolve().parent.parent
BASELINES = ROOT / "reports" / "baselines"
COMMAND = "python -m harness mutate --sdk strands --baseline"

FIGURE = re.compile(
    r"\b\d+/\d+\b|\b\d+(?:\.\d+)?%|\b\d+(?= (?:[\w-]+ ){0,2}(?:mutants|survivors)\b)"
)
NAMED = re.compile(r"reports/baselines/mutation-sdk-[\w.-]+?\.json")


def sdk_mutation_paragraphs(readme: str) -> list[str]:
    """The docs' paragraphs about SDK mutation: those that name the SDK run or its files."""
    return [
        paragraph
        for paragraph in readme.split("\n\n")
        if re.search(r"mutate --sdk|mutation-sdk|SDK mutation", paragraph)
    ]


def quote_problems(text: str, root: Path) -> list[str]:
    """Why the figures ``text`` quotes about SDK mutation are not backed: it quotes one but
    names no baseline, names a baseline that is not there, or quotes a figure its baselines
    do not have.  The gate (95%) is a rule, not a figure of a run."""
    figures = [figure for figure in FIGURE.findall(text) if figure != f"{GATE:.0%}"]
    named = sorted(set(NAMED.findall(text)))
    if not figures:
        return []
    if not named:
        return [
            f"the docs quote SDK mutation figures ({', '.join(figures)}) but names no "
            f"baseline they come from; commit one (`{COMMAND}`, one complete run) and name it"
        ]
    problems: list[str] = []
    backed: set[str] = set()
    for name in named:
        path = root / name
        if not path.exists():
            problems.append(f"the docs name {name}, which is not there: `{COMMAND}` writes it")
            continue
        backed |= quotable(json.loads(path.read_text(encoding="utf-8")))
    problems += [
        f"the docs quote {figure}, which {', '.join(named)} does not have"
        for figure in figures
        if backed and figure not in backed
    ]
    return problems


def baseline_problems(baseline: dict[str, Any], name: str) -> list[str]:
    """Why a committed baseline cannot be a complete run's figures: its name is not its SDK and
    release, a count does not add up, or a review was counted for a killed mutant."""
    problems = []
    expected = f"mutation-sdk-{baseline['sdk']}-{baseline['version']}.json"
    if name != expected:
        problems.append(f"{name}: expected the name {expected}")
    rates = baseline["rates"]
    for suite, rate in rates.items():
        if not rate["killed"] <= rate["mutants"] or not (
            rate["behaviour_killed"] <= rate["behaviour"] <= rate["mutants"]
        ):
            problems.append(f"{name}: rates.{suite}: killed must be part of its whole")
        if rate["mutants"] != rates["both"]["mutants"]:
            problems.append(f"{name}: rates.{suite}: another mutant count than both suites'")
    for kind in (EQUIVALENT, UNREACHABLE):
        # a reviewed mutant of these classes is a survivor of both suites, or the run refused
        left = rates["both"]["survivors_by_class"][kind]
        if baseline["reviewed"][kind] != left:
            problems.append(
                f"{name}: {baseline['reviewed'][kind]} reviewed {kind}, {left} survivors of it: "
                "a review counted for a killed mutant"
            )
    if baseline["reviewed"][MESSAGE_TEXT] > rates["both"]["survivors_by_class"][MESSAGE_TEXT]:
        problems.append(f"{name}: more reviewed message text than message-text survivors")
    return problems


def test_every_sdk_mutation_figure_the_readme_quotes_is_a_committed_baselines() -> None:
    pages = [ROOT / "README.md", ROOT / "docs" / "mutation.md"]
    readme = "\n\n".join(page.read_text(encoding="utf-8") for page in pages)
    paragraphs = sdk_mutation_paragraphs(readme)
    assert paragraphs, "docs/mutation.md no longer says how to run SDK mutation"
    problems = quote_problems("\n\n".join(paragraphs), ROOT)
    assert problems == []
    if not sorted(BASELINES.glob("mutation-sdk-*.json")):
        assert not [f for f in FIGURE.findall("\n\n".join(paragraphs)) if f != f"{GATE:.0%}"]


def test_every_committed_sdk_mutation_baseline_is_a_complete_runs() -> None:
    for path in sorted(BASELINES.glob("mutation-sdk-*.json")):
        baseline = json.loads(path.read_text(encoding="utf-8"))
        assert baseline_problems(baseline, path.name) == []


# The checks themselves, on the figures of a small run

HEADER = {
    "sdk": "strands",
    "distribution": "strands-agents",
    "version": "9.9",
    "module": "strands/agent/_agent_as_tool.py",
    "mutmut": "3.8.1",
}


def _row(number: int, sdk: str, harness: str, syntax: str = BEHAVIOUR) -> dict[str, str]:
    name = f"strands.agent._agent_as_tool.x_f__mutmut_{number}"
    return {"mutant": name, "function": "f", "sdk": sdk, "harness": harness, "syntax": syntax}


def _written(tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """A baseline of 5 mutants under ``tmp_path``: the harness kills 3 of the 4 that change
    behaviour, the SDK's suite 2; one survivor is reviewed equivalent."""
    rows = [
        _row(1, "killed", "killed"),
        _row(2, "survived", "killed"),
        _row(3, "killed", "timeout"),
        _row(4, "survived", "survived"),
        _row(5, "survived", "survived"),
    ]
    reviewed = {"x_f__mutmut_5": (EQUIVALENT, "the value is never read")}
    baseline = figures(document(HEADER, [], rows, reviewed))
    name = "reports/baselines/mutation-sdk-strands-9.9.json"
    (tmp_path / name).parent.mkdir(parents=True)
    (tmp_path / name).write_text(json.dumps(baseline), encoding="utf-8")
    return name, baseline


def test_the_readme_check_refuses_figures_nothing_backs(tmp_path: Path) -> None:
    name, baseline = _written(tmp_path)
    assert baseline["rates"]["harness"]["behaviour_killed"] == 3
    assert quote_problems("The harness kills most of them; the gate is 95%.", tmp_path) == []
    quoted = f"From `{name}`: the harness kills 3/4 (75.0%), the SDK's own suite 2/4 (50.0%)."
    assert quote_problems(quoted, tmp_path) == []
    assert quote_problems(f"From `{name}`: 5 mutants, 4 behaviour-changing.", tmp_path) == []
    assert quote_problems(f"From `{name}`: the harness kills 4/4 (100.0%).", tmp_path) == [
        f"the docs quote 4/4, which {name} does not have",
        f"the docs quote 100.0%, which {name} does not have",
    ]
    assert quote_problems("The harness kills 3/4.", tmp_path) == [
        "the docs quote SDK mutation figures (3/4) but names no baseline they come from; "
        f"commit one (`{COMMAND}`, one complete run) and name it"
    ]
    gone = "reports/baselines/mutation-sdk-strands-0.1.json"
    assert quote_problems(f"From `{gone}`: 3/4.", tmp_path) == [
        f"the docs name {gone}, which is not there: `{COMMAND}` writes it"
    ]


def test_the_baseline_check_refuses_a_review_counted_for_a_killed_mutant(tmp_path: Path) -> None:
    _, baseline = _written(tmp_path)
    assert baseline_problems(baseline, "mutation-sdk-strands-9.9.json") == []
    assert baseline_problems(baseline, "mutation-sdk-strands-1.0.json") == [
        "mutation-sdk-strands-1.0.json: expected the name mutation-sdk-strands-9.9.json"
    ]
    baseline["reviewed"][EQUIVALENT] += 1
    assert baseline_problems(baseline, "mutation-sdk-strands-9.9.json") == [
        "mutation-sdk-strands-9.9.json: 2 reviewed equivalent, 1 survivors of it: a review "
        "counted for a killed mutant"
    ]

"""Verdicts with and without real restarts, side by side: target x scenario, in-process against
``--isolation fork`` and ``--isolation process``, every difference shown as what it is.

A restart in-process rebuilds the SDK's objects inside the process that asked, where whatever the
SDK keeps at module level survives; ``fork`` and ``process`` give each stretch between restarts
(or each step) a process of its own, as production does (``harness.forking``,
``harness.isolation``).  The same scenario on the same target should be judged the same all three
ways, unless module state is what the scenario shows.  This module reads the conformance.json of
a check run per isolation, and for each (target, scenario) compares what was judged: not
applicable, an adapter error, or the violations (invariant, step, expected and seen text), each
excused by a finding or new.

A difference is never excused silently: each one is listed with the violations only one side
has, beside its explanation from ``scenarios/restarts.yaml`` (a target, a scenario, and why:
which module state explains it).  A difference without an explanation, and an explanation whose
difference no longer shows, fail the command, as a finding does that no longer shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.report import ADAPTER_ERROR, NOT_APPLICABLE
from harness.report import column as column_of
from scenarios.loading import read_yaml

ISOLATIONS: Final = ("in-process", "fork", "process")
EXPLANATIONS: Final = Path(__file__).resolve().parent.parent / "scenarios" / "restarts.yaml"


class ExplanationsError(ValueError):
    """``scenarios/restarts.yaml`` cannot be used; the message is one line."""


class Explanation(BaseModel):
    """Why a scenario is judged otherwise on a target once its restarts are real."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str = Field(min_length=1)
    scenario: str = Field(min_length=1)
    explanation: str = Field(min_length=1)


def read_explanations(path: Path = EXPLANATIONS) -> list[Explanation]:
    if not path.exists():
        return []
    try:
        data = read_yaml(path.read_text(encoding="utf-8"))
    except Exception as failure:  # a file that is not YAML: said in one line
        raise ExplanationsError(f"{path}: not YAML ({failure})") from None
    if data is None:
        return []
    if not isinstance(data, list):
        raise ExplanationsError(f"{path}: expected a list of target, scenario, explanation")
    found = []
    for index, item in enumerate(data):
        try:
            found.append(Explanation.model_validate(item))
        except ValidationError as failure:
            first = failure.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "entry"
            raise ExplanationsError(f"{path}: entry {index}: {where}: {first['msg']}") from None
    return found


@dataclass(frozen=True)
class Judged:
    """What one isolation's run said of one scenario on one target."""

    state: str  # run | not applicable | adapter error
    violations: frozenset[str]  # "I2 at step 2: expected ..., seen ..."
    new: frozenset[str]  # those no finding excuses

    @property
    def cell(self) -> str:
        if self.state != "run":
            return self.state
        if not self.violations:
            return "holds"
        counts = _by_invariant(self.violations)
        excused = "new" if self.new else "excused"
        return f"{excused}: {counts}"


def _by_invariant(violations: frozenset[str]) -> str:
    counted: dict[str, int] = {}
    for violation in violations:
        invariant = violation.split(" ", 1)[0]
        counted[invariant] = counted.get(invariant, 0) + 1
    return ", ".join(
        f"{name} x{count}" if count > 1 else name for name, count in sorted(counted.items())
    )


def _violation(entry: Mapping[str, Any]) -> str:
    return (
        f"{entry['invariant']} at step {entry['step']}: expected {entry['expected']!r}, "
        f"seen {entry['seen']!r}"
    )


def judged(document: Mapping[str, Any]) -> dict[str, dict[str, Judged]]:
    """target name -> scenario -> what ``document`` (one check run's conformance.json) said."""
    found: dict[str, dict[str, Judged]] = {}
    names = {column_of(target): target["name"] for target in document["targets"]}
    for column, scenarios in document["scenarios"].items():
        violations: dict[str, set[str]] = {}
        for cell in document["cells"].get(column, {}).values():
            for entry in cell["violations"]:
                violations.setdefault(entry["scenario"], set()).add(_violation(entry))
        new: dict[str, set[str]] = {}
        for entry in document["findings"].get(column, {}).get("new", []):
            new.setdefault(entry["scenario"], set()).add(_violation(entry))
        by_scenario = {}
        for scenario, status in scenarios.items():
            if status.startswith(NOT_APPLICABLE):
                state = "not applicable"
            elif status == ADAPTER_ERROR:
                state = "adapter error"
            else:
                state = "run"
            by_scenario[scenario] = Judged(
                state,
                frozenset(violations.get(scenario, ())),
                frozenset(new.get(scenario, ())),
            )
        found[names.get(column, column)] = by_scenario
    return found


def isolation_of(document: Mapping[str, Any]) -> str:
    """The isolation a check run used (every target of one run shares it); its columns must be
    its targets' (a fork run's carry ``[fork]``), else the run is not read as what it is."""
    kinds = {str(target.get("isolation", "in-process")) for target in document["targets"]}
    if len(kinds) != 1:
        raise ValueError(f"a run with targets under {sorted(kinds)}: one isolation per file")
    columns = {column_of(target) for target in document["targets"]}
    for column in document["scenarios"]:
        if column not in columns:
            raise ValueError(
                f"column {column!r} is none of the run's targets ({', '.join(sorted(columns))}); "
                "a report written before fork runs named their columns: run check again"
            )
    return kinds.pop()


@dataclass(frozen=True)
class Difference:
    target: str
    scenario: str
    cells: dict[str, str]  # isolation -> cell
    only: dict[str, list[str]]  # isolation -> violations that isolation alone shows
    explanation: str | None


@dataclass(frozen=True)
class Comparison:
    targets: dict[str, dict[str, dict[str, Judged]]]  # target -> isolation -> scenario -> it
    differences: list[Difference]
    stale: list[Explanation]  # explanations of a difference that did not show

    @property
    def passes(self) -> bool:
        return not self.stale and all(d.explanation is not None for d in self.differences)


def compare(
    documents: Sequence[Mapping[str, Any]], explanations: Sequence[Explanation]
) -> Comparison:
    """Every target's scenarios judged under each isolation the ``documents`` ran, compared."""
    targets: dict[str, dict[str, dict[str, Judged]]] = {}
    for document in documents:
        isolation = isolation_of(document)
        for target, scenarios in judged(document).items():
            targets.setdefault(target, {})[isolation] = scenarios
    why = {(item.target, item.scenario): item.explanation for item in explanations}
    differences = []
    for target, runs in sorted(targets.items()):
        ran = [isolation for isolation in ISOLATIONS if isolation in runs]
        names = sorted(set().union(*(runs[isolation] for isolation in ran)))
        for scenario in names:
            seen = {isolation: runs[isolation].get(scenario) for isolation in ran}
            if len({(j.state, j.violations) if j else None for j in seen.values()}) <= 1:
                continue
            everywhere = frozenset.intersection(*(j.violations for j in seen.values() if j))
            differences.append(
                Difference(
                    target,
                    scenario,
                    {i: (j.cell if j else "not run") for i, j in seen.items()},
                    {i: sorted(j.violations - everywhere) for i, j in seen.items() if j},
                    why.get((target, scenario)),
                )
            )
    shown = {(d.target, d.scenario) for d in differences}
    stale = [
        item
        for item in explanations
        if item.target in targets and (item.target, item.scenario) not in shown
    ]
    return Comparison(targets, differences, stale)


def markdown(comparison: Comparison) -> str:
    lines = [
        "# Restarts: verdicts in-process, with fork and with process isolation",
        "",
        "Each regression file on each target, judged three ways: restarts rebuilt in the "
        "process that asked (in-process), each stretch between restarts in a process forked "
        "from a server that imported the SDK once (`--isolation fork`), and every step in a "
        "fresh interpreter (`--isolation process`). A cell is the file's verdict: holds, "
        "excused (every violation a recorded finding) or new, with its invariants; `not run`: "
        "that isolation was not run for the target. Written by `python -m harness restarts` "
        "from check's conformance.json files; explanations from `scenarios/restarts.yaml`.",
        "",
        "## Per target",
        "",
        "| target | isolations run | files | same verdict everywhere | differences | unexplained |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for target, runs in sorted(comparison.targets.items()):
        ran = [isolation for isolation in ISOLATIONS if isolation in runs]
        files = len(set().union(*(runs[isolation] for isolation in ran)))
        own = [d for d in comparison.differences if d.target == target]
        unexplained = sum(d.explanation is None for d in own)
        lines.append(
            f"| {target} | {', '.join(ran)} | {files} | {files - len(own)} | {len(own)} "
            f"| {unexplained} |"
        )
    lines += ["", "## Differences", ""]
    if not comparison.differences:
        lines += ["None: every file has the same verdict under every isolation run.", ""]
    for difference in comparison.differences:
        lines += [
            f"### {difference.target}: {difference.scenario}",
            "",
            "| " + " | ".join(difference.cells) + " |",
            "|" + "---|" * len(difference.cells),
            "| " + " | ".join(difference.cells.values()) + " |",
            "",
        ]
        for isolation, violations in difference.only.items():
            for violation in violations:
                lines.append(f"- only {isolation}: {violation}")
        reason = difference.explanation or "**unexplained**: no entry in scenarios/restarts.yaml"
        lines += ["", f"Why: {reason.strip()}", ""]
    if comparison.stale:
        lines += ["## Stale explanations", ""]
        lines += [
            f"- {item.target}: {item.scenario}: no difference shows any more"
            for item in comparison.stale
        ]
        lines.append("")
    lines += ["## Every file", ""]
    for target, runs in sorted(comparison.targets.items()):
        ran = [isolation for isolation in ISOLATIONS if isolation in runs]
        names = sorted(set().union(*(runs[isolation] for isolation in ran)))
        lines += [
            f"<details><summary>{target}: {len(names)} files</summary>",
            "",
            "| file | " + " | ".join(ran) + " |",
            "|---|" + "---|" * len(ran),
        ]
        for name in names:
            cells = [runs[isolation].get(name) for isolation in ran]
            shown = [cell.cell if cell else "not run" for cell in cells]
            lines.append(f"| {name} | " + " | ".join(shown) + " |")
        lines += ["", "</details>", ""]
    lines += ["## Verdict", ""]
    lines.append(
        "passes: every difference is explained, and every explanation still shows"
        if comparison.passes
        else "FAILS: a difference is unexplained, or an explanation no longer shows"
    )
    return "\n".join(lines) + "\n"


def to_json(comparison: Comparison) -> dict[str, Any]:
    return {
        "targets": {
            target: {
                isolation: {scenario: j.cell for scenario, j in sorted(scenarios.items())}
                for isolation, scenarios in runs.items()
            }
            for target, runs in sorted(comparison.targets.items())
        },
        "differences": [
            {
                "target": d.target,
                "scenario": d.scenario,
                "cells": d.cells,
                "only": d.only,
                "explanation": d.explanation,
            }
            for d in comparison.differences
        ],
        "stale": [item.model_dump() for item in comparison.stale],
        "passes": comparison.passes,
    }

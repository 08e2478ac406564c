"""Conformance reports: JSON for machines, Markdown for a pull-request comment.

The JSON document is the report; the Markdown is rendered from it, so documents written by
separate runs (one per SDK version, each in its own environment) can be merged into one
side-by-side matrix (``merge``).  Columns are "target version".  Both renderings are pure (no
clocks, no paths): the same run gives the same bytes.  ``write_atomically`` replaces a report in
one rename, so a failed run never leaves half a report behind.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.checkers import CHECKERS
from harness.conformance import Conformance
from harness.targets.base import TargetInfo

SYMBOLS = {
    "holds": "holds",
    "violated": "**VIOLATED**",
    "expected": "expected finding",
    "not-applicable": "n/a",
}
Document = dict[str, Any]
ADAPTER_ERROR = "adapter-error"  # a scenario's status when its adapter broke the contract
NOT_APPLICABLE = "not-applicable: "


def column(target: dict[str, Any]) -> str:
    isolated = " [process]" if target.get("isolation") == "process" else ""
    return f"{target['name']} {target['version']}{isolated}"


def target_column(info: TargetInfo) -> str:
    """The column of a target, from its info (as ``column`` from a history's target record)."""
    return column({"name": info.name, "version": info.version, "isolation": info.isolation})


def conformance_document(result: Conformance) -> Document:
    columns = {target["name"]: column(target) for target in result.targets}  # one per name
    return {
        "targets": result.targets,
        "checkers": [
            {"id": checker.id, "slug": checker.slug, "title": checker.title} for checker in CHECKERS
        ],
        "cells": {
            columns[target]: {
                checker_id: {
                    "status": cell.status,
                    "scenarios_checked": cell.checked,
                    "violations": [
                        {"scenario": scenario, **violation.to_json()}
                        for scenario, violation in cell.violations
                    ],
                }
                for checker_id, cell in row.items()
            }
            for target, row in result.cells.items()
        },
        "scenarios": {
            columns[target]: {
                **{
                    name: (NOT_APPLICABLE + ", ".join(history.not_applicable))
                    if history.not_applicable
                    else "run"
                    for name, history in histories.items()
                },
                **dict.fromkeys(
                    (error.scenario for error in result.adapter_errors.get(target, [])),
                    ADAPTER_ERROR,
                ),
            }
            for target, histories in result.histories.items()
        },
        "adapter_errors": {
            columns[target]: [error.to_json() for error in errors]
            for target, errors in result.adapter_errors.items()
        },
        "findings": {
            columns[target]: {
                "expected": [finding.to_json() for finding in verdict.expected],
                "new": [{"scenario": s, **violation.to_json()} for s, violation in verdict.new],
                "disappeared": [finding.to_json() for finding in verdict.disappeared],
                "stale": [{"scenario": s, "why": why} for s, why in verdict.stale],
            }
            for target, verdict in result.verdicts.items()
        },
        "passes": result.passes,
    }


def merge(documents: Iterable[Document]) -> Document:
    """One document with every column of ``documents``; a later column of the same name wins."""
    merged: Document = {
        "targets": [],
        "checkers": [],
        "cells": {},
        "scenarios": {},
        "findings": {},
        "adapter_errors": {},
        "passes": True,
    }
    for document in documents:
        merged["checkers"] = document["checkers"]
        for target in document["targets"]:
            merged["targets"] = [t for t in merged["targets"] if column(t) != column(target)]
            merged["targets"].append(target)
        for key in ("cells", "scenarios", "findings", "adapter_errors"):
            merged[key].update(document.get(key, {}))
        merged["passes"] = merged["passes"] and document["passes"]
    merged["targets"].sort(key=_column_order)
    return merged


def _column_order(target: dict[str, Any]) -> tuple[bool, str, tuple[int, ...]]:
    """The reference first, then each target's releases oldest to newest."""
    numbers = tuple(int(part) for part in re.findall(r"\d+", str(target["version"])))
    return (target["name"] != "reference", str(target["name"]), numbers)


def dumps(document: Document) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def markdown(document: Document) -> str:
    columns = [column(target) for target in document["targets"]]
    scenarios = {name for row in document["scenarios"].values() for name in row}
    violations = sum(
        len(cell["violations"]) for row in document["cells"].values() for cell in row.values()
    )
    expected = sum(len(row["expected"]) for row in document["findings"].values())
    broke = sum(len(errors) for errors in document.get("adapter_errors", {}).values())
    lines = [
        "# Conformance",
        "",
        f"{_count(len(scenarios), 'scenario')} on {_count(len(columns), 'target')}; "
        f"{_count(violations, 'violation')}, {expected} of them matched by a recorded witness; "
        + (f"**{_count(broke, 'adapter error')}** (scenarios not judged); " if broke else "")
        + ("passes." if document["passes"] else "**fails**."),
        "",
        "| invariant | " + " | ".join(columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for checker in document["checkers"]:
        cells = []
        for name in columns:
            cell = document["cells"][name][checker["id"]]
            text = f"{SYMBOLS[cell['status']]} ({cell['scenarios_checked']})"
            if cell["violations"]:
                first = cell["violations"][0]
                text += f" first: `{first['scenario']}` step {first['step']}"
            cells.append(text)
        lines.append(f"| {checker['id']} {checker['slug']} | " + " | ".join(cells) + " |")
    lines += ["", "(n) is the number of scenarios that invariant was judged on.", ""]
    for name in columns:
        lines += _adapter_errors(document.get("adapter_errors", {}).get(name, []), name)
        lines += _counterexamples(document, name)
        lines += _findings(document["findings"].get(name), name)
    skipped = sorted(
        (name, scenario, status.removeprefix(NOT_APPLICABLE))
        for name, row in document["scenarios"].items()
        for scenario, status in row.items()
        if status.startswith(NOT_APPLICABLE)
    )
    if skipped:
        lines += ["## Not applicable", ""]
        lines += [f"- `{scenario}` on {name}: needs {needs}" for name, scenario, needs in skipped]
        lines.append("")
    return "\n".join(lines)


def _adapter_errors(errors: list[dict[str, Any]], name: str) -> list[str]:
    if not errors:
        return []
    lines = [f"## {name}: ADAPTER ERRORS (the adapter broke its contract: not judged)", ""]
    for error in errors:
        where = "at start()" if error["step"] is None else f"step {error['step']} ({error['kind']})"
        run = " of the restart-free control run" if error["control"] else ""
        lines.append(f"- `{error['scenario']}` {where}{run}: {error['problem']}")
    return [*lines, ""]


def _counterexamples(document: Document, name: str) -> list[str]:
    titles = {checker["id"]: checker["slug"] for checker in document["checkers"]}
    violated = [
        (checker_id, cell)
        for checker_id, cell in document["cells"][name].items()
        if cell["violations"]
    ]
    if not violated:
        return []
    lines = [f"## {name}: first counterexample per invariant with violations", ""]
    for checker_id, cell in sorted(violated, key=lambda item: list(titles).index(item[0])):
        first = cell["violations"][0]
        lines.append(
            f"- **{checker_id} {titles[checker_id]}** in `{first['scenario']}` at step "
            f"{first['step']}: expected {first['expected']}; seen {first['seen']} "
            f"({_count(len(cell['violations']), 'violation')} in all)"
        )
    return [*lines, ""]


def _findings(verdict: dict[str, Any] | None, name: str) -> list[str]:
    if verdict is None:
        return []
    lines: list[str] = []
    recorded = [item for item in verdict["expected"] if "class" not in item]
    if recorded:
        grouped: dict[tuple[str, str], list[str]] = {}
        for item in recorded:
            invariants = grouped.setdefault((item["scenario"], item["explanation"]), [])
            if item["invariant"] not in invariants:
                invariants.append(item["invariant"])
        lines += [f"## {name}: expected findings (recorded, seen again)", ""]
        lines += [
            f"- **{', '.join(invariants)}** `{scenario}`: {why}"
            for (scenario, why), invariants in grouped.items()
        ]
        lines.append("")
    if verdict["new"]:
        lines += [f"## {name}: NEW violations (no recorded witness matches them)", ""]
        lines += [
            f"- **{item['invariant']}** `{item['scenario']}`"
            + (f" step {item['step']}" if item.get("step") is not None else "")
            + (f": expected {item['expected']}; seen {item['seen']}" if "seen" in item else "")
            for item in verdict["new"]
        ]
        lines.append("")
    if verdict["disappeared"]:
        lines += [f"## {name}: recorded witnesses that no longer show", ""]
        lines += [
            (f"- class `{item['class']}`" if "class" in item else f"- `{item['scenario']}`")
            + f": **{item['invariant']}** "
            + (f"({item['witness']})" if "witness" in item else "")
            + (" covers nothing in the generated sample" if "class" in item else " not seen")
            for item in verdict["disappeared"]
        ]
        lines.append("")
    if verdict.get("stale"):
        lines += [f"## {name}: findings recorded for another content", ""]
        lines += [f"- `{item['scenario']}`: {item['why']}" for item in verdict["stale"]]
        lines.append("")
    return lines + _classes(verdict["expected"], name)


def _classes(expected: list[dict[str, Any]], name: str) -> list[str]:
    """Generated scenarios a recorded class covers, a line per class (each scenario named)."""
    by_class: dict[str, dict[str, list[str]]] = {}
    for item in expected:
        if "class" in item:
            scenarios = by_class.setdefault(item["class"], {})
            invariants = scenarios.setdefault(item["scenario"], [])
            if item["invariant"] not in invariants:
                invariants.append(item["invariant"])
    if not by_class:
        return []
    counts: dict[str, int] = {}
    for item in expected:
        if "class" in item:
            counts[item["class"]] = counts.get(item["class"], 0) + 1
    lines = [f"## {name}: generated scenarios in recorded classes", ""]
    for found, scenarios in by_class.items():
        listed = ", ".join(
            f"`{scenario}` ({', '.join(invariants)})" for scenario, invariants in scenarios.items()
        )
        lines.append(
            f"- class `{found}`, {_count(counts[found], 'violation')} in "
            f"{_count(len(scenarios), 'scenario')}: {listed}"
        )
    return [*lines, ""]


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"

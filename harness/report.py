"""Conformance reports: Markdown for a pull-request comment, JSON for machines.

Both are pure renderings of a ``Conformance`` (no clocks, no paths), so the same run gives the
same bytes.  ``write_atomically`` replaces a report in one rename: a failed run never leaves half
a report behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from harness.checkers import CHECKERS
from harness.conformance import Conformance

SYMBOLS = {"holds": "holds", "violated": "**VIOLATED**", "not-applicable": "n/a"}


def conformance_json(result: Conformance) -> str:
    document: dict[str, Any] = {
        "targets": result.targets,
        "checkers": [
            {"id": checker.id, "slug": checker.slug, "title": checker.title} for checker in CHECKERS
        ],
        "cells": {
            target: {
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
            target: {
                name: ("not-applicable: " + ", ".join(history.not_applicable))
                if history.not_applicable
                else "run"
                for name, history in histories.items()
            }
            for target, histories in result.histories.items()
        },
        "violations": result.violation_count,
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def conformance_markdown(result: Conformance) -> str:
    names = [target["name"] for target in result.targets]
    header = "| invariant | " + " | ".join(
        f"{target['name']} {target['version']}" for target in result.targets
    )
    lines = [
        "# Conformance",
        "",
        f"{_count(len(_scenario_names(result)), 'scenario')} on "
        f"{_count(len(names), 'target')}; {_count(result.violation_count, 'violation')}.",
        "",
        header + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for checker in CHECKERS:
        cells = []
        for target in names:
            cell = result.cells[target][checker.id]
            text = f"{SYMBOLS[cell.status]} ({cell.checked})"
            if cell.violations:
                scenario, first = cell.violations[0]
                text += f" first: `{scenario}` step {first.step}"
            cells.append(text)
        lines.append(f"| {checker.id} {checker.slug} | " + " | ".join(cells) + " |")
    lines += ["", "(n) is the number of scenarios that invariant was judged on.", ""]
    for target in names:
        violated = [
            (checker, result.cells[target][checker.id])
            for checker in CHECKERS
            if result.cells[target][checker.id].violations
        ]
        if not violated:
            continue
        lines += [f"## {target}: first counterexample per violated invariant", ""]
        for checker, cell in violated:
            scenario, first = cell.violations[0]
            lines.append(
                f"- **{checker.id} {checker.slug}** in `{scenario}` at step {first.step}: "
                f"expected {first.expected}; seen {first.seen} "
                f"({_count(len(cell.violations), 'violation')} in all)"
            )
        lines.append("")
    skipped = sorted(
        (target, name, history.not_applicable)
        for target, histories in result.histories.items()
        for name, history in histories.items()
        if history.not_applicable
    )
    if skipped:
        lines += ["## Not applicable", ""]
        lines += [
            f"- `{name}` on {target}: needs {', '.join(missing)}"
            for target, name, missing in skipped
        ]
        lines.append("")
    return "\n".join(lines)


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


def _scenario_names(result: Conformance) -> set[str]:
    return {name for histories in result.histories.values() for name in histories}


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"

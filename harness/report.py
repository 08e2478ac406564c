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
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

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


# a column's suffix by the isolation its run used, so merged reports keep the runs apart (none
# in-process: the reports of runs without real restarts read as they always did)
ISOLATION_SUFFIXES: Final = {"fork": " [fork]", "process": " [process]"}


def column(target: Mapping[str, Any]) -> str:
    isolated = ISOLATION_SUFFIXES.get(str(target.get("isolation", "in-process")), "")
    return f"{target['name']} {target['version']}{isolated}"


def target_column(info: TargetInfo) -> str:
    """The column of a target, from its info (as ``column`` from a history's target record)."""
    return column({"name": info.name, "version": info.version, "isolation": info.isolation})


def conformance_document(
    result: Conformance, counterexamples: Mapping[str, Mapping[str, str]] | None = None
) -> Document:
    """The report of ``result``; ``counterexamples``: each target's counterexample files by
    scenario (``harness.counterexamples``, paths from the report's folder)."""
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
                "undemonstrated": [finding.to_json() for finding in verdict.undemonstrated],
                "conflicts": [conflict.to_json() for conflict in verdict.conflicts],
            }
            for target, verdict in result.verdicts.items()
        },
        "counterexamples": {
            columns[target]: dict(files) for target, files in (counterexamples or {}).items()
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
        "counterexamples": {},
        "passes": True,
    }
    for document in documents:
        merged["checkers"] = document["checkers"]
        for target in document["targets"]:
            merged["targets"] = [t for t in merged["targets"] if column(t) != column(target)]
            merged["targets"].append(target)
        for key in ("cells", "scenarios", "findings", "adapter_errors", "counterexamples"):
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


def headline(document: Document) -> str:
    """The report's first sentence: how much ran, how much was found, and the verdict."""
    scenarios = {name for row in document["scenarios"].values() for name in row}
    violations = sum(
        len(cell["violations"]) for row in document["cells"].values() for cell in row.values()
    )
    expected = sum(len(row["expected"]) for row in document["findings"].values())
    broke = sum(len(errors) for errors in document.get("adapter_errors", {}).values())
    return (
        f"{_count(len(scenarios), 'scenario')} on {_count(len(document['targets']), 'target')}; "
        f"{_count(violations, 'violation')}, {expected} of them matched by a recorded witness; "
        + (f"**{_count(broke, 'adapter error')}** (scenarios not judged); " if broke else "")
        + ("passes." if document["passes"] else "**fails**.")
    )


def matrix(document: Document) -> list[str]:
    """The invariant x target table, a cell per target and invariant."""
    columns = [column(target) for target in document["targets"]]
    lines = ["| invariant | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
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
    return [*lines, "", "(n) is the number of scenarios that invariant was judged on.", ""]


def markdown(document: Document) -> str:
    """The whole report: the matrix and what needs a person first (adapter errors, new
    violations, recorded witnesses that vanished, stale findings), then per target the first
    counterexamples and what the findings excused; the long lists (generated scenarios per
    recorded class, scenarios not applicable) folded in ``<details>``."""
    columns = [column(target) for target in document["targets"]]
    lines = ["# Conformance", "", headline(document), ""]
    lines += [
        f"{column(target)} has no findings file of its own: judged by the findings of "
        f"{target['name']} {target['findings_version']}, the newest earlier release with one.\n"
        for target in document["targets"]
        if "findings_version" in target
    ]
    lines += matrix(document)
    for name in columns:
        verdict = document["findings"].get(name)
        lines += _section(ADAPTER_ERRORS.format(name), adapter_errors(document, name))
        if verdict is not None:
            lines += _section(NEW.format(name), [f"- {line}" for line in new_violations(verdict)])
            lines += _section(VANISHED.format(name), [f"- {line}" for line in vanished(verdict)])
            lines += _section(STALE.format(name), [f"- {line}" for line in stale(verdict)])
            lines += _section(
                UNDEMONSTRATED.format(name), [f"- {line}" for line in undemonstrated(verdict)]
            )
    for name in columns:
        verdict = document["findings"].get(name)
        if verdict is not None:
            items = unresolved(verdict)
            lines += _details(f"{UNRESOLVED.format(name)}: {len(items)}", [f"- {x}" for x in items])
    for name in columns:
        verdict = document["findings"].get(name)
        lines += _counterexamples(document, name)
        lines += counterexample_files(document, name)
        if verdict is not None:
            lines += _expected(verdict, name)
            lines += _classes(verdict["expected"], name)
    skipped = sorted(
        (name, scenario, status.removeprefix(NOT_APPLICABLE))
        for name, row in document["scenarios"].items()
        for scenario, status in row.items()
        if status.startswith(NOT_APPLICABLE)
    )
    lines += _details(
        f"Not applicable: {_count(len(skipped), 'scenario run')} the target cannot express",
        [f"- `{scenario}` on {name}: needs {needs}" for name, scenario, needs in skipped],
    )
    return "\n".join(lines)


ADAPTER_ERRORS = "{}: ADAPTER ERRORS (the adapter broke its contract: not judged)"
NEW = "{}: NEW violations (no recorded witness matches them)"
VANISHED = "{}: recorded witnesses that no longer show"
STALE = "{}: findings recorded for another content"
UNDEMONSTRATED = "{}: class witnesses no shown_by file shows (undemonstrated)"
UNRESOLVED = "{}: records to resolve, reported and not failing (violations two classes both name)"


def _section(title: str, items: list[str]) -> list[str]:
    return [f"## {title}", "", *items, ""] if items else []


def _details(summary: str, items: list[str]) -> list[str]:
    """A list folded away (GitHub renders it collapsed, with ``summary`` to click)."""
    if not items:
        return []
    return ["<details>", f"<summary>{summary}</summary>", "", *items, "", "</details>", ""]


def adapter_errors(document: Document, name: str) -> list[str]:
    """A target's adapter errors, a Markdown list item each."""
    lines = []
    files = document.get("counterexamples", {}).get(name, {})
    for error in document.get("adapter_errors", {}).get(name, []):
        where = "at start()" if error["step"] is None else f"step {error['step']} ({error['kind']})"
        run = " of the restart-free control run" if error["control"] else ""
        written = files.get(error["scenario"])
        lines.append(
            f"- `{error['scenario']}` {where}{run}: {error['problem']}"
            + ("" if written is None else f" (written to `{written}`)")
        )
    return lines


def new_violations(verdict: dict[str, Any], *, sentences: bool = True) -> list[str]:
    """Each new violation in one line (without its sentences unless ``sentences``)."""
    return [
        f"**{item['invariant']}** `{item['scenario']}`"
        + (f" step {item['step']}" if item.get("step") is not None else "")
        + (
            f": expected {item['expected']}; seen {item['seen']}"
            if sentences and "seen" in item
            else ""
        )
        for item in verdict["new"]
    ]


def vanished(verdict: dict[str, Any]) -> list[str]:
    """Each recorded witness that no longer shows, in one line."""
    return [
        (f"class `{item['class']}`" if "class" in item else f"`{item['scenario']}`")
        + f": **{item['invariant']}** "
        + (f"({item['witness']})" if "witness" in item else "")
        + (" covers nothing in the generated sample" if "class" in item else " not seen")
        for item in verdict["disappeared"]
    ]


def stale(verdict: dict[str, Any]) -> list[str]:
    """Each finding recorded for another content, in one line."""
    return [f"`{item['scenario']}`: {item['why']}" for item in verdict.get("stale", [])]


def undemonstrated(verdict: dict[str, Any]) -> list[str]:
    """Each class witness its own shown_by files never show, in one line."""
    return [
        f"class `{item['class']}`: **{item['invariant']}** ({item['witness']}) is not shown by "
        "its shown_by files: a class is only as wide as its demonstration"
        for item in verdict.get("undemonstrated", [])
    ]


def unresolved(verdict: dict[str, Any]) -> list[str]:
    """Each record to resolve that does not fail the run, in one line: a violation two classes
    both name."""
    return [
        f"`{item['scenario']}`: **{item['invariant']}** at step {item['step']} is named by both "
        f"class `{item['classes'][0]}` and class `{item['classes'][1]}`: narrow one"
        for item in verdict.get("conflicts", [])
    ]


def _counterexamples(document: Document, name: str) -> list[str]:
    titles = {checker["id"]: checker["slug"] for checker in document["checkers"]}
    violated = [
        (checker_id, cell)
        for checker_id, cell in document["cells"][name].items()
        if cell["violations"]
    ]
    if not violated:
        return []
    files = document.get("counterexamples", {}).get(name, {})
    lines = [f"## {name}: first counterexample per invariant with violations", ""]
    for checker_id, cell in sorted(violated, key=lambda item: list(titles).index(item[0])):
        first = cell["violations"][0]
        written = next((v["scenario"] for v in cell["violations"] if v["scenario"] in files), None)
        lines.append(
            f"- **{checker_id} {titles[checker_id]}** in `{first['scenario']}` at step "
            f"{first['step']}: expected {first['expected']}; seen {first['seen']} "
            f"({_count(len(cell['violations']), 'violation')} in all)"
            + ("" if written is None else _written(written, first["scenario"], files[written]))
        )
    return [*lines, ""]


def _written(scenario: str, first: str, path: str) -> str:
    """Where the first generated counterexample of an invariant was written."""
    which = "" if scenario == first else f"; the first generated one, `{scenario}`,"
    return f"{which} written to `{path}`"


def counterexample_files(document: Document, name: str) -> list[str]:
    """A target's counterexample files, folded: a line per failing generated scenario."""
    files = document.get("counterexamples", {}).get(name, {})
    target = next((t["name"] for t in document["targets"] if column(t) == name), name)
    return _details(
        f"{name}: {_count(len(files), 'failing generated scenario')} written as regression "
        f"files (paths from this report's folder; `python -m harness run FILE --target {target}` "
        "reproduces each)",
        [f"- `{scenario}`: `{path}`" for scenario, path in files.items()],
    )


def _expected(verdict: dict[str, Any], name: str) -> list[str]:
    """The regression findings that excused violations, a line per scenario and explanation."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for item in verdict["expected"]:
        if "class" not in item:
            invariants = grouped.setdefault((item["scenario"], item["explanation"]), [])
            if item["invariant"] not in invariants:
                invariants.append(item["invariant"])
    return _section(
        f"{name}: expected findings (recorded, seen again)",
        [
            f"- **{', '.join(invariants)}** `{scenario}`: {why}"
            for (scenario, why), invariants in grouped.items()
        ],
    )


def _classes(expected: list[dict[str, Any]], name: str) -> list[str]:
    """Generated scenarios a recorded class covers, a line per class (each scenario named),
    folded: the list grows with the sample."""
    by_class: dict[str, dict[str, list[str]]] = {}
    counts: dict[str, int] = {}
    for item in expected:
        if "class" in item:
            scenarios = by_class.setdefault(item["class"], {})
            invariants = scenarios.setdefault(item["scenario"], [])
            if item["invariant"] not in invariants:
                invariants.append(item["invariant"])
            counts[item["class"]] = counts.get(item["class"], 0) + 1
    lines = []
    for found, scenarios in by_class.items():
        listed = ", ".join(
            f"`{scenario}` ({', '.join(invariants)})" for scenario, invariants in scenarios.items()
        )
        lines.append(
            f"- class `{found}`, {_count(counts[found], 'violation')} in "
            f"{_count(len(scenarios), 'scenario')}: {listed}"
        )
    covered = len({scenario for scenarios in by_class.values() for scenario in scenarios})
    classes = _count(len(by_class), "class", "classes")
    return _details(
        f"{name}: generated scenarios in recorded classes ({classes}, "
        f"{_count(covered, 'scenario')}, {_count(sum(counts.values()), 'violation')})",
        lines,
    )


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


def _count(number: int, noun: str, plural: str | None = None) -> str:
    return f"{number} {noun if number == 1 else plural or noun + 's'}"

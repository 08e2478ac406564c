"""``report``: merge conformance.json files (one per SDK version) into one side-by-side report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.commands.inputs import (
    EXIT_ADAPTER_ERROR,
    EXIT_HOLDS,
    EXIT_VIOLATIONS,
    BadInput,
    read_conformance,
)
from harness.commands.options import Commands, add_command, reports_option, summary_option
from harness.commands.outputs import write_reports
from harness.counterexamples import rebased
from harness.report import merge


def add_parser(commands: Commands) -> None:
    report = add_command(
        commands,
        "report",
        run,
        help="merge conformance.json files (one per SDK version) into one side-by-side report",
        description="Merge conformance.json files written by separate check runs (for example "
        "one per SDK version) into one side-by-side conformance.md and conformance.json.",
    )
    report.add_argument("files", type=Path, nargs="+", metavar="FILE", help="conformance.json")
    reports_option(report)
    summary_option(report)


def run(arguments: argparse.Namespace) -> int:
    documents = []
    for path in arguments.files:
        document = read_conformance(path, ("targets", "cells", "passes"))
        files = document.get("counterexamples", {})
        if not _files(files):
            raise BadInput(
                f"{path}: counterexamples: expected a mapping of target to a mapping of "
                "scenario to file"
            )
        document["counterexamples"] = rebased(files, path.parent, arguments.reports)
        documents.append(document)
    merged = merge(documents)
    write_reports(arguments.reports, merged, summarised=arguments.summary)
    if any(merged["adapter_errors"].values()):
        return EXIT_ADAPTER_ERROR
    return EXIT_HOLDS if merged["passes"] else EXIT_VIOLATIONS


def _files(files: Any) -> bool:
    """Whether a report's ``counterexamples`` has the shape ``check`` writes."""
    return isinstance(files, dict) and all(
        isinstance(paths, dict)
        and all(isinstance(key, str) and isinstance(value, str) for key, value in paths.items())
        for paths in files.values()
    )

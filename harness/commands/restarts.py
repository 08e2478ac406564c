"""``restarts``: each target's regression files judged in-process, with fork and with process
isolation, side by side, every difference with its explanation (reports/restarts.md and .json;
:mod:`harness.restarts`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.commands.inputs import EXIT_HOLDS, EXIT_VIOLATIONS, BadInput, read_conformance
from harness.commands.options import Commands, add_command, reports_option
from harness.report import write_atomically
from harness.restarts import ExplanationsError, compare, isolation_of, markdown, read_explanations
from harness.restarts import to_json as restarts_json


def add_parser(commands: Commands) -> None:
    restarts = add_command(
        commands,
        "restarts",
        run,
        help="verdicts in-process against real restarts (fork, process), differences explained",
        description="Compare check runs of the same targets under --isolation in-process, fork "
        "and process (their conformance.json files); write reports/restarts.md and .json: "
        "target x scenario, every difference beside its explanation from "
        "scenarios/restarts.yaml. Exit 1 on a difference without one, or an explanation whose "
        "difference no longer shows.",
    )
    restarts.add_argument(
        "files", type=Path, nargs="+", metavar="FILE", help="conformance.json (any number)"
    )
    reports_option(restarts)


def run(arguments: argparse.Namespace) -> int:
    documents = []
    for path in arguments.files:
        document = read_conformance(path, ("targets", "cells", "scenarios", "findings"))
        try:
            isolation_of(document)
        except ValueError as problem:
            raise BadInput(f"{path}: {problem}") from None
        documents.append(document)
    try:
        explanations = read_explanations()
    except ExplanationsError as problem:
        raise BadInput(str(problem)) from None
    comparison = compare(documents, explanations)
    text = json.dumps(restarts_json(comparison), indent=2, sort_keys=True) + "\n"
    write_atomically(arguments.reports / "restarts.json", text)
    write_atomically(arguments.reports / "restarts.md", markdown(comparison))
    return EXIT_HOLDS if comparison.passes else EXIT_VIOLATIONS

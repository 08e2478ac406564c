"""``bugs``: the distinct bugs behind the violations, bug x target release (reports/bugs.md and
reports/bugs.json), from the catalogue ``scenarios/bugs.yaml`` (``harness.bugs``), the bundled
findings files and, optionally, conformance.json files (for the counts)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.bugs import (
    CatalogueError,
    Source,
    bug_report,
    check,
    markdown,
    read_catalogue,
    read_findings_files,
    readme_block,
    replace_block,
)
from harness.commands.inputs import EXIT_HOLDS, BadInput, read_conformance
from harness.commands.options import Commands, add_command, reports_option
from harness.findings.search import FindingsFileError
from harness.report import dumps, write_atomically


def add_parser(commands: Commands) -> None:
    bugs = add_command(
        commands,
        "bugs",
        run,
        help="the distinct bugs behind the recorded findings: bug x target release",
        description="Write reports/bugs.md and reports/bugs.json: each bug of the catalogue "
        "scenarios/bugs.yaml, on each target release, open (with the count of violations its "
        "findings and classes excused, from the conformance.json files given), not seen, or "
        "n/a; with its regression files, first counterexample and reproducer command. Without "
        "FILE, a column per findings file (open where recorded).",
    )
    bugs.add_argument(
        "files", type=Path, nargs="*", metavar="FILE", help="conformance.json (any number)"
    )
    reports_option(bugs)
    bugs.add_argument(
        "--readme",
        type=Path,
        metavar="FILE",
        help="also rewrite the generated bug table in FILE (README.md) from the findings files",
    )


def run(arguments: argparse.Namespace) -> int:
    try:
        catalogue = read_catalogue()
        documents = read_findings_files()
        check(catalogue, documents)
    except (CatalogueError, FindingsFileError) as problem:
        raise BadInput(str(problem)) from None
    sources = [Source(_conformance(path), path.parent) for path in arguments.files]
    readme = None
    if arguments.readme is not None:
        try:
            text = arguments.readme.read_text(encoding="utf-8")
            readme = replace_block(text, readme_block(bug_report(catalogue, documents)))
        except OSError as failure:
            raise BadInput(f"{arguments.readme}: cannot read: {failure.strerror}") from None
        except ValueError as problem:
            raise BadInput(f"{arguments.readme}: {problem}") from None
    document = bug_report(catalogue, documents, sources, arguments.reports)
    write_atomically(arguments.reports / "bugs.json", dumps(document))
    write_atomically(arguments.reports / "bugs.md", markdown(document, arguments.reports))
    if readme is not None:
        write_atomically(arguments.readme, readme)
    print(
        f"{len(document['bugs'])} bugs on {len(document['columns'])} target releases: "
        f"{arguments.reports / 'bugs.md'}"
    )
    return EXIT_HOLDS


def _conformance(path: Path) -> dict[str, Any]:
    """A conformance.json, refused in one line when it is none."""
    document = read_conformance(path, ("targets", "findings"))
    targets = document["targets"]
    if not isinstance(targets, list) or not all(
        isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("version"), str)
        for t in targets
    ):
        raise BadInput(f"{path}: targets: expected a list of {{name, version}}")
    findings = document["findings"]
    if not isinstance(findings, dict) or not all(
        isinstance(v, dict) and isinstance(v.get("expected", []), list) for v in findings.values()
    ):
        raise BadInput(f"{path}: findings: expected a mapping of target to its expected list")
    return document

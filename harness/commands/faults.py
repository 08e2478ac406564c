"""``faults``: the fault campaigns (corruption, crash points, privacy, isolation); write
reports/faults.*, and with ``--record`` each released SDK's recorded outcome."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.campaigns.expected import load_expected
from harness.campaigns.report import Budget, fault_document
from harness.campaigns.report import dumps as faults_dumps
from harness.campaigns.report import markdown as faults_markdown
from harness.commands.inputs import (
    EXIT_HOLDS,
    EXIT_VIOLATIONS,
    BadInput,
    check_findings_files,
    connect,
    findings_search_path,
    scenarios_from,
    targets_named,
)
from harness.commands.options import (
    Commands,
    add_command,
    count,
    execution_options,
    findings_option,
    reports_option,
    shown,
    targets_option,
)
from harness.commands.progress import Progress, interactive
from harness.counterexamples import FOLDER, fault_failures, fault_names, replace
from harness.report import target_column, write_atomically
from harness.targets.base import Target

DEFAULT_EXAMPLES, DEFAULT_INVARIANT_EXAMPLES, DEFAULT_SHRINK = 1000, 200, 30


def add_parser(commands: Commands) -> None:
    faults = add_command(
        commands,
        "faults",
        run,
        help="run the fault campaigns (corruption, crash points, privacy, isolation)",
        description="Generate damaged continuations, crashes inside answers, private canaries "
        "and shared sub-agents; classify what each target does; write reports/faults.*.  Exit "
        "1 when a target without a findings file is not clean, or a released SDK goes beyond "
        "the outcome recorded for it with this budget (scenarios/findings/faults/).",
    )
    targets_option(faults)
    findings_option(faults, "as for check")
    faults.add_argument(
        "--examples",
        action="append",
        type=target_number,
        metavar="[T=]N",
        help=f"generated corruption cases, for every target or for target T (repeatable; "
        f"default: {DEFAULT_EXAMPLES})",
    )
    faults.add_argument(
        "--invariant-examples",
        action="append",
        type=target_number,
        metavar="[T=]N",
        help=f"generated privacy and isolation cases, likewise (default: "
        f"{DEFAULT_INVARIANT_EXAMPLES})",
    )
    faults.add_argument("--seed", type=count, default=0, metavar="S", help="default: 0")
    faults.add_argument(
        "--shrink",
        type=count,
        default=DEFAULT_SHRINK,
        metavar="N",
        help="runs spent reducing each class's example, the smallest case drawn (0: keep it "
        f"as drawn; default: {DEFAULT_SHRINK})",
    )
    faults.add_argument(
        "--record",
        action="store_true",
        help="write each released SDK's results as its recorded outcome for this budget "
        "(scenarios/findings/faults/TARGET-VERSION.yaml); read the report before committing it",
    )
    reports_option(faults)
    execution_options(faults, "each campaign case")


def target_number(text: str) -> tuple[str | None, int]:
    """``N`` or ``TARGET=N`` (for argparse)."""
    name, _, number = text.rpartition("=")
    if name == "" and "=" in text:
        raise argparse.ArgumentTypeError(f"expected N or TARGET=N, got {text!r}")
    if not number.isdigit() or int(number) < 1:
        raise argparse.ArgumentTypeError(f"expected N or TARGET=N with N >= 1, got {text!r}")
    return (name or None), int(number)


def run(arguments: argparse.Namespace) -> int:
    targets = targets_named(arguments.target)
    names = sorted({target.info.name for target in targets})
    examples = per_target("--examples", arguments.examples, names, DEFAULT_EXAMPLES)
    probes = per_target(
        "--invariant-examples", arguments.invariant_examples, names, DEFAULT_INVARIANT_EXAMPLES
    )
    folders = findings_search_path(arguments.findings)
    check_findings_files(targets, folders)
    budgets = {
        name: Budget(examples[name], arguments.seed, arguments.shrink, probes[name])
        for name in names
    }
    crash_scenarios = scenarios_from(None)
    progress = Progress() if interactive() else None
    with connect(arguments) as where:
        document = fault_document(
            targets,
            budgets,
            crash_scenarios,
            None if progress is None else progress.note,
            findings=folders,
            execution=where,
        )
    if progress is not None:
        progress.finish()
    for target in targets:
        write_counterexamples(arguments.reports, target, document)
    text = faults_markdown(document)
    write_atomically(arguments.reports / "faults.json", faults_dumps(document))
    write_atomically(arguments.reports / "faults.md", text)
    print(text)
    if arguments.record:
        return record_faults(targets, document)
    return EXIT_HOLDS if document["passes"] else EXIT_VIOLATIONS


def write_counterexamples(reports: Path, target: Target, document: dict[str, Any]) -> None:
    """The examples of the target's failing campaign parts, written to ``reports``/
    counterexamples/ (the files of the parts that pass now deleted); each example in
    ``document`` notes its file."""
    info = target.info
    entry = document["targets"][target_column(info)]
    recorded = load_expected(info.findings_name, info.version)
    failing = fault_failures(entry, recorded)
    written = replace(reports, "faults", info, fault_names(), [found for found, _ in failing])
    for refusal in written.refused:
        print(refusal, file=sys.stderr)
    for counterexample, example in failing:
        if counterexample.name in written.files:
            example["counterexample"] = written.files[counterexample.name]
    if written.files:
        print(
            f"{info.name}: {len(written.files)} failing fault example(s) written to "
            f"{shown(reports / FOLDER)}/ (python -m harness run FILE --target {info.name} "
            "reproduces each)",
            file=sys.stderr,
        )


def record_faults(targets: Sequence[Target], document: dict[str, Any]) -> int:
    """Write each released SDK's outcome in ``document`` as its recorded one."""
    from harness.campaigns import expected

    recorded = 0
    for target in targets:
        entry = document["targets"][target_column(target.info)]
        if entry["expected"] == "clean":
            continue  # no findings file: held to clean, nothing to record
        name, version = target.info.findings_name, target.info.version
        path = expected.expected_path(name, version)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, expected.dumps(expected.outcome(entry, name)))
        print(f"recorded {expected.shown_path(name, version)}", file=sys.stderr)
        recorded += 1
    if not recorded:
        raise BadInput(
            "--record: no target here has a findings file (only released SDKs' "
            "outcomes are recorded; any other target must be clean)"
        )
    return EXIT_HOLDS


def per_target(
    option: str, given: list[tuple[str | None, int]] | None, names: list[str], default: int
) -> dict[str, int]:
    """``option``'s number for each target: ``N`` sets all, ``T=N`` sets one (later wins)."""
    numbers = dict.fromkeys(names, default)
    for name, number in given or []:
        if name is not None and name not in names:
            raise BadInput(f"{option}: {name!r} is not one of the chosen targets {names}")
        numbers.update(dict.fromkeys([name] if name is not None else names, number))
    return numbers

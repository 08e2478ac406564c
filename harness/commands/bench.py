"""``bench``: measure continuation sizes side by side and gate them against the baseline."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.bench import dumps, gate, markdown, plot, size_document, updated
from harness.commands.inputs import EXIT_HOLDS, EXIT_VIOLATIONS, BadInput, targets_named
from harness.commands.options import (
    Commands,
    add_command,
    reports_option,
    shown,
    targets_option,
)
from harness.report import write_atomically

BASELINE = Path(__file__).resolve().parents[2] / "reports" / "baselines" / "continuation-size.json"


def add_parser(commands: Commands) -> None:
    bench = add_command(
        commands,
        "bench",
        run,
        help="measure continuation sizes side by side and gate them against the baseline",
        description="Measure what each target stores (continuations after earlier calls, by "
        "depth and fan-out, the orchestrator's record, the store over call/resume cycles, the "
        "ratio to the information floor); write reports/continuation-size.* (and a PNG with "
        "the plot extra).  Exit 1 when a size grew more than 5%% against the baseline or an "
        "ephemeral continuation grows with earlier calls.",
    )
    targets_option(bench)
    bench.add_argument(
        "--baseline",
        type=Path,
        default=BASELINE,
        metavar="FILE",
        help=f"the sizes to compare with (default: {shown(BASELINE)})",
    )
    bench.add_argument(
        "--update-baseline",
        action="store_true",
        help="write this run's sizes into the baseline, in place of the measured targets' "
        "columns (after reading why they changed); the other targets' columns stay",
    )
    reports_option(bench)


def run(arguments: argparse.Namespace) -> int:
    targets = targets_named(arguments.target)
    baseline = None
    if arguments.baseline.exists():
        try:
            baseline = json.loads(arguments.baseline.read_text(encoding="utf-8"))
        except ValueError:
            raise BadInput(f"{arguments.baseline}: not JSON (expected a baseline)") from None
        if not isinstance(baseline, dict) or not isinstance(baseline.get("targets"), dict):
            raise BadInput(f"{arguments.baseline}: targets: expected a mapping of sizes")
    document = size_document(targets)
    problems = gate(document, baseline)
    text = markdown(document, problems)
    write_atomically(arguments.reports / "continuation-size.json", dumps(document))
    write_atomically(arguments.reports / "continuation-size.md", text)
    plot(document, arguments.reports / "continuation-size.png")
    if arguments.update_baseline:
        write_atomically(arguments.baseline, dumps(updated(baseline, document)))
    print(text)
    return EXIT_HOLDS if not problems or arguments.update_baseline else EXIT_VIOLATIONS

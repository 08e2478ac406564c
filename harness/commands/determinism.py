"""``determinism``: run check again and again, the machine quiet then busy: same bytes every
time?"""

from __future__ import annotations

import argparse
import sys

from harness import determinism
from harness.commands.inputs import (
    EXIT_BAD_INPUT,
    EXIT_VIOLATIONS,
    BadInput,
    check_findings_files,
    findings_search_path,
    targets_named,
)
from harness.commands.options import (
    Commands,
    add_command,
    count,
    findings_option,
    isolation_option,
    positive,
    reports_option,
)
from harness.commands.planning import PROFILES
from harness.report import write_atomically


def add_parser(commands: Commands) -> None:
    repeated = add_command(
        commands,
        "determinism",
        run,
        help="run check again and again, the machine quiet then busy: same bytes every time?",
        description="Run `check` with these options in a fresh process once on the machine as "
        "it is, then REPEATS times under contention (on Linux pinned to one core a busy "
        "process at niceness 5 shares, JOBS runs at a time on cores of their own; elsewhere one "
        "run at a time under one busy process per core), each with another "
        "PYTHONHASHSEED; every report and every history (histories.sha256) must be the same "
        "bytes as the first run's.  The first run writes its reports into --reports as check "
        "would; the others, and every run's log, go to --reports/determinism/; then "
        "determinism.md and .json.  Exit 1 when any run differs, else the first run's exit "
        "code: it stands in for check.",
    )
    repeated.add_argument(
        "--target", action="append", metavar="T", help="as for check (repeatable)"
    )
    repeated.add_argument(
        "--scenarios", action="append", metavar="PATH", help="as for check (repeatable)"
    )
    repeated.add_argument("--profile", choices=PROFILES, help="as for check")
    isolation_option(repeated)
    findings_option(repeated, "as for check")
    repeated.add_argument(
        "--repeats",
        type=count,
        default=1,
        metavar="N",
        help="runs under contention after the first (default 1)",
    )
    repeated.add_argument(
        "--first-seed",
        type=count,
        default=determinism.FIRST_SEED,
        metavar="S",
        help="the first run's PYTHONHASHSEED; run i has S + i (default 1): runs split across "
        "processes cover distinct seeds when each starts where the last one's end",
    )
    repeated.add_argument(
        "--jobs",
        type=positive,
        default=len(determinism.usable_cores()),
        metavar="N",
        help="contended runs at a time, each pinned to a core of its own with a busy process of "
        "its own (default: one per core this process may use; at most that many; where runs "
        "cannot be pinned, one at a time)",
    )
    reports_option(repeated)


def run(arguments: argparse.Namespace) -> int:
    check_arguments = [
        *(f"--target={name}" for name in arguments.target or []),
        *(f"--scenarios={path}" for path in arguments.scenarios or []),
        *([f"--profile={arguments.profile}"] if arguments.profile else []),
        *(f"--findings={path}" for path in arguments.findings or []),
        *([f"--isolation={arguments.isolation}"] if arguments.isolation != "in-process" else []),
    ]
    if arguments.repeats < 1:
        raise BadInput("--repeats: expected at least 1 run under contention")
    if arguments.first_seed + arguments.repeats > determinism.LAST_SEED:
        raise BadInput(
            f"--first-seed: expected at most {determinism.LAST_SEED - arguments.repeats} with "
            f"--repeats {arguments.repeats} (PYTHONHASHSEED ends at {determinism.LAST_SEED}), "
            f"got {arguments.first_seed}"
        )
    targets = targets_named(arguments.target)  # an unknown target is refused before any run
    folders = findings_search_path(arguments.findings)
    check_findings_files(targets, folders)  # so is a bad findings path
    first = determinism.run_once(
        0, check_arguments, arguments.reports, contention=False, first_seed=arguments.first_seed
    )
    runs = [
        first,
        *determinism.contended_runs(
            range(1, arguments.repeats + 1),
            check_arguments,
            arguments.reports,
            first_seed=arguments.first_seed,
            jobs=arguments.jobs,
        ),
    ]
    first_output = (arguments.reports / determinism.RUNS / "run-0.log").read_text(encoding="utf-8")
    if runs[0].exit_code == EXIT_BAD_INPUT:
        print(first_output, file=sys.stderr, end="")
        return EXIT_BAD_INPUT
    print(first_output, end="")  # the first run's report, as check prints it
    report = determinism.document(check_arguments, runs)
    text = determinism.markdown(report)
    write_atomically(arguments.reports / "determinism.json", determinism.dumps(report))
    write_atomically(arguments.reports / "determinism.md", text)
    print(text)
    return runs[0].exit_code if report["identical"] else EXIT_VIOLATIONS

"""``python -m harness``: check targets against the scenarios, run one scenario, list targets.

Exit codes: 0 every invariant holds (or every violation is a recorded finding, and every recorded
finding still shows), 1 otherwise, 2 bad input (a malformed scenario or findings file, an unknown
target, a bad option, a Dask scheduler that cannot be reached), reported as one line naming the
file, the field and what was expected, before anything runs and before any report is written (a
worker that lacks a target, or has another release of it, is found when it gets a task: one line
too, and no report).  Two kinds of mistakes in an adapter are told apart from both: a target that
cannot be loaded (its entry point does not import, its TargetInfo claims an unknown capability) is
refused in one line, exit 2, but ``check`` runs the other targets and writes their reports first;
an adapter that breaks the contract during a scenario (raises, or returns None where an Observation
is due) is an *adapter error*, exit 3: ``check`` lists it in the report as its own verdict and goes
on, other commands stop with its line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from harness import __version__, execution
from harness.commands import (
    backtest,
    bench,
    bugs,
    check,
    determinism,
    faults,
    generate,
    mutate,
    record,
    report,
    repro,
    restarts,
    run,
    targets,
)
from harness.commands.inputs import (
    EXIT_ADAPTER_ERROR,
    EXIT_BAD_INPUT,
    EXIT_HOLDS,
    EXIT_VIOLATIONS,
    BadInput,
)
from harness.commands.options import Parser, Run
from harness.runner import AdapterError

__all__ = [
    "EXIT_ADAPTER_ERROR",
    "EXIT_BAD_INPUT",
    "EXIT_HOLDS",
    "EXIT_VIOLATIONS",
    "BadInput",
    "build_parser",
    "main",
]

# the commands, in the order --help lists them
COMMANDS = (
    check,
    generate,
    record,
    run,
    repro,
    report,
    bugs,
    faults,
    bench,
    mutate,
    determinism,
    backtest,
    restarts,
    targets,
)

DESCRIPTION = """\
Check nested (agent-as-tool) interrupt semantics: does a question raised deep in an agent tree
reach the human under a unique id, does the answer reach exactly the sub-agent that asked, and
does all of it survive a restart?  Each scenario is run on each target, its history is recorded,
and one checker per invariant judges it.
"""

EPILOG = """\
examples:
  python -m harness check                          every regression file on every target
  python -m harness check --target reference       one target
  python -m harness run scenarios/regressions/colliding-ids.yaml --target reference
  python -m harness record --target strands       write a run's witnesses into its findings file
  python -m harness bugs reports/conformance.json  the distinct bugs behind it (reports/bugs.md)
  python -m harness faults --examples strands=200  the fault campaigns (reports/faults.*)
  python -m harness bench                          continuation sizes against the baseline
  python -m harness generate --profile ci          draw the committed ci sample again
  python -m harness backtest                       upstream bugs on the releases they lived in
  python -m harness targets                        what is installed
  python -m harness repro stale-answer-id --target strands -o repro.py   a standalone script

reports: check writes reports/conformance.md and reports/conformance.json (with --summary
also reports/conformance-summary.md, which always fits a pull-request comment); a failed run
leaves the previous reports untouched.  Each generated scenario that fails in check or faults
is written to reports/counterexamples/<scenario>@<target>.yaml, a regression file that
python -m harness run FILE --target T reproduces.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        arguments = build_parser().parse_args(argv)
        command: Run = arguments.run  # what the chosen command's module tied to it
        return command(arguments)
    except BadInput as problem:
        print(problem, file=sys.stderr)
        return EXIT_BAD_INPUT
    except AdapterError as error:  # outside check, which reports it and goes on
        print(error, file=sys.stderr)
        return EXIT_ADAPTER_ERROR
    except (execution.WorkerMismatch, execution.Lost) as problem:  # the workers, not the input
        print(problem, file=sys.stderr)
        return EXIT_BAD_INPUT

"""The parser's shared parts: the options several commands take, and how they are read."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeAlias

from harness import execution
from harness.commands.inputs import ISOLATIONS, BadInput

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
Run: TypeAlias = Callable[[argparse.Namespace], int]


class Parser(argparse.ArgumentParser):
    """A parser whose mistakes are bad input: one line, exit 2, no usage block."""

    def error(self, message: str) -> NoReturn:
        raise BadInput(f"{self.prog}: {message} (see --help)")


def add_command(commands: Commands, name: str, run: Run, **texts: Any) -> argparse.ArgumentParser:
    """The subcommand ``name`` (with its help and description), which ``run`` carries out."""
    parser = commands.add_parser(name, **texts)
    parser.set_defaults(run=run)
    return parser


def targets_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target",
        action="append",
        metavar="T",
        help="a target (repeatable; default: every installed target)",
    )


def findings_option(parser: argparse.ArgumentParser, purpose: str) -> None:
    parser.add_argument(
        "--findings",
        action="append",
        type=Path,
        metavar="DIR",
        help=f"{purpose} (repeatable; the findings path is the bundled folder, the folders "
        "installed plugins declare, then these: docs/findings.md)",
    )


def summary_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--summary",
        action="store_true",
        help="also write conformance-summary.md, which always fits a pull-request comment "
        "(65,536 characters): each target's verdict, then the adapter errors, new and "
        "vanished findings, long lists cut with a count",
    )


def reports_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reports", type=Path, default=Path("reports"), metavar="DIR", help="default: reports"
    )


def execution_options(parser: argparse.ArgumentParser, task: str) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=positive,
        metavar="N",
        help=f"run the tasks ({task}) in N local processes; the report is the same bytes "
        "(default: in this process)",
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help=f"run the tasks on the Dask cluster whose scheduler is at ADDRESS "
        f"(tcp://HOST:PORT; default: ${execution.SCHEDULER_VARIABLE} when set); needs the "
        "dask extra and the harness installed on every worker: docs/cluster.md",
    )


def isolation_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--isolation",
        choices=ISOLATIONS,
        default="in-process",
        help="fork: run each stretch of a scenario between restarts in a process forked for it "
        "from one that imported the SDK once, so a restart forgets all a new process would; "
        "process: run every step in a fresh Python process, as a stateless function host "
        "would; in-process: rebuild the objects in this process (default: in-process)",
    )


def count(text: str) -> int:
    """A whole number >= 0 (for argparse)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def positive(text: str) -> int:
    """A whole number >= 1 (for argparse)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def shown(path: Path) -> str:
    """A path as the user would type it: relative to the working folder where it is inside."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)

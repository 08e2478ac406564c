"""``repro``: write one scenario (or a recorded bug) out as a standalone reproducer script for
an SDK's tracker: it imports only the SDK and the standard library, and exits 1 while the bug is
there, 0 once it is fixed (``harness.repro``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands.inputs import EXIT_HOLDS, BadInput
from harness.commands.options import Commands, add_command
from harness.repro import HOOKS, NoHook, NotExpressible, hook_for, reproducer
from harness.repro.sources import UnknownSource, resolve
from scenarios.loading import ScenarioFileError


def add_parser(commands: Commands) -> None:
    parser = add_command(
        commands,
        "repro",
        run,
        help="write a standalone reproducer script (SDK and standard library only)",
        description="Write FILE (a scenario file, a regression file's name, or a findings class "
        "name) out as a script that imports only the target's SDK and the standard library; it "
        "exits 1 while the bug is there, 0 once it is fixed.",
    )
    parser.add_argument("source", metavar="FILE|BUG", help="a scenario file or a bug's name")
    parser.add_argument(
        "--target",
        required=True,
        metavar="T",
        help=f"one of {', '.join(sorted(HOOKS))}, or a plugin's target with a repro entry point",
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write here (default: print it)"
    )


def run(arguments: argparse.Namespace) -> int:
    try:
        hook_for(arguments.target)
        name, scenario, symptom = resolve(arguments.source, arguments.target)
        script = reproducer(arguments.target, name, scenario, symptom)
    except (NoHook, UnknownSource, ScenarioFileError) as problem:
        raise BadInput(str(problem)) from None
    except NotExpressible as problem:
        raise BadInput(
            f"{arguments.source}: the {arguments.target} reproducer cannot express it: {problem}"
        ) from None
    if arguments.output is None:
        print(script, end="")
    else:
        arguments.output.write_text(script, encoding="utf-8")
    return EXIT_HOLDS

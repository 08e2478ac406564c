"""``targets``: list installed targets, their versions and capabilities, and each target that
cannot be loaded (exit 2 when there is one)."""

from __future__ import annotations

import argparse

from harness.commands.inputs import EXIT_BAD_INPUT, EXIT_HOLDS
from harness.commands.options import Commands, add_command
from harness.targets import registry
from harness.targets.base import CAPABILITIES


def add_parser(commands: Commands) -> None:
    listing = add_command(
        commands,
        "targets",
        run,
        help="list installed targets, their versions and capabilities",
        description="List installed targets, their versions and capabilities, and each target "
        "that cannot be loaded (exit 2 when there is one).",
    )
    listing.add_argument(
        "--verbose", action="store_true", help="also say what each capability means"
    )


def run(arguments: argparse.Namespace) -> int:
    broken = False
    for name in registry.available():
        try:
            info = registry.get(name).info
        except registry.BrokenTarget as problem:
            print(f"{name} BROKEN: {problem.reason}")
            broken = True
            continue
        print(f"{name} {info.version}: {info.description}")
        print(f"  capabilities: {', '.join(sorted(info.capabilities))}")
        if arguments.verbose:
            for capability in sorted(info.capabilities):
                print(f"    {capability}: can {CAPABILITIES[capability]}")
            lacking = sorted(set(CAPABILITIES) - info.capabilities)
            if lacking:
                print(f"  not claimed: {', '.join(lacking)}")
    return EXIT_BAD_INPUT if broken else EXIT_HOLDS

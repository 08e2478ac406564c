"""``mutate``: mutation-test the reference's round trip (mutmut), or with ``--sdk`` the installed
SDK's agent-as-tool module; write reports/mutation.* (or mutation-sdk-NAME.*)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.commands.inputs import EXIT_HOLDS, EXIT_VIOLATIONS, BadInput
from harness.commands.options import Commands, add_command, count, reports_option
from harness.report import write_atomically


def add_parser(commands: Commands) -> None:
    mutate = add_command(
        commands,
        "mutate",
        run,
        help="mutation-test the reference's round trip (mutmut) and write reports/mutation.*",
        description="Run mutmut on the reference's round-trip code ([tool.mutmut] in "
        "pyproject.toml) and write reports/mutation.md and .json: a score per direction, every "
        "survivor with its diff.  Exit 1 when a survivor is not listed, with its reason, in "
        "mutation/equivalent.yaml.",
    )
    mutate.add_argument(
        "--since", metavar="REF", help="only the functions changed since this git ref"
    )
    mutate.add_argument(
        "--max-children", type=count, default=2, metavar="N", help="parallel mutants (default 2)"
    )
    mutate.add_argument(
        "--sdk",
        metavar="NAME",
        help="mutate the installed SDK's agent-as-tool module instead (a scratch copy), against "
        "its own tests and the harness's; reports/mutation-sdk-NAME.* (known: strands)",
    )
    mutate.add_argument(
        "--workdir",
        type=Path,
        default=Path("build/sdk-mutation"),
        metavar="DIR",
        help="with --sdk: where the scratch trees and the SDK's sdist go "
        "(default build/sdk-mutation)",
    )
    mutate.add_argument(
        "--suite",
        metavar="NAME",
        help="with --sdk: rebuild and rerun only this suite's tree (sdk or harness) and reuse the "
        "other tree's last results",
    )
    mutate.add_argument(
        "--report-only",
        action="store_true",
        help="with --sdk: rebuild the report from the scratch trees' last run (after a review)",
    )
    reports_option(mutate)


def run(arguments: argparse.Namespace) -> int:
    from harness.mutation import ROOT, round_trip, round_trip_report
    from harness.mutation.mutants import MutationError

    if arguments.max_children < 1:
        raise BadInput("--max-children: expected a whole number >= 1")
    if arguments.sdk is not None:
        return run_on_sdk(arguments)
    if arguments.report_only:
        raise BadInput("--report-only: only with --sdk")
    if arguments.suite is not None:
        raise BadInput("--suite: only with --sdk")
    try:
        round_trip.load_equivalent()
        report = round_trip.mutate(ROOT, arguments.since, arguments.max_children)
    except MutationError as problem:
        raise BadInput(str(problem)) from None
    text = round_trip_report.markdown(report)
    write_atomically(arguments.reports / "mutation.json", json.dumps(report, indent=2) + "\n")
    write_atomically(arguments.reports / "mutation.md", text)
    print(text)
    return EXIT_HOLDS if report["passes"] else EXIT_VIOLATIONS


def run_on_sdk(arguments: argparse.Namespace) -> int:
    """``mutate --sdk NAME``: the installed SDK's module, against its tests and the harness's."""
    from harness.mutation import sdk_report, sdk_run
    from harness.mutation.mutants import MutationError
    from harness.mutation.sdk import SDKS, SUITES

    if arguments.since is not None:
        raise BadInput("--since: not with --sdk (the SDK run mutates the whole module)")
    sdk = SDKS.get(arguments.sdk)
    if sdk is None:
        known = ", ".join(sorted(SDKS))
        raise BadInput(f"--sdk: unknown SDK {arguments.sdk!r}; expected one of: {known}")
    suites: tuple[str, ...] = SUITES
    if arguments.suite is not None:
        if arguments.suite not in SUITES:
            expected = ", ".join(SUITES)
            raise BadInput(
                f"--suite: unknown suite {arguments.suite!r}; expected one of: {expected}"
            )
        if arguments.report_only:
            raise BadInput("--suite: not with --report-only (which reruns no suite)")
        suites = (arguments.suite,)
    try:
        report = sdk_run.mutate_sdk(
            sdk,
            arguments.workdir.resolve(),
            arguments.max_children,
            rerun=not arguments.report_only,
            suites=suites,
        )
    except MutationError as problem:
        raise BadInput(str(problem)) from None
    text = sdk_report.markdown(report)
    stem = f"mutation-sdk-{sdk.name}"
    write_atomically(arguments.reports / f"{stem}.json", json.dumps(report, indent=2) + "\n")
    write_atomically(arguments.reports / f"{stem}.md", text)
    print(text)
    return EXIT_HOLDS if not sdk_report.verdict(report) else EXIT_VIOLATIONS

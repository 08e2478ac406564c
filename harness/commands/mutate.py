"""``mutate``: mutation-test the reference's round trip (mutmut), or with ``--sdk`` the installed
SDK's agent-as-tool module; write reports/mutation.* (or mutation-sdk-NAME.*).  With ``--sdk``,
``--shard I/N`` runs one shard of the mutants and ``--merge`` joins the shards' results into the
report one run writes; ``--baseline`` writes a complete run's figures to reports/baselines/."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.commands.inputs import EXIT_HOLDS, EXIT_VIOLATIONS, BadInput
from harness.commands.options import Commands, add_command, count, reports_option
from harness.report import write_atomically

if TYPE_CHECKING:
    from harness.mutation.shards import Merged


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
    mutate.add_argument(
        "--shard",
        metavar="I/N",
        help="with --sdk: run only the mutants of shard I of N (split by mutant name) and write "
        "reports/mutation-sdk-NAME-shard-I-of-N.json, for --merge",
    )
    mutate.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        metavar="SHARD",
        help="merge the shard results of one campaign (every shard once) into the report a "
        "single --sdk run writes, the reviews in mutation/ applied",
    )
    mutate.add_argument(
        "--baseline",
        action="store_true",
        help="with --sdk (a complete run) or --merge: also write its figures to "
        "reports/baselines/mutation-sdk-NAME-VERSION.json",
    )
    reports_option(mutate)


def run(arguments: argparse.Namespace) -> int:
    from harness.mutation import ROOT, round_trip, round_trip_report
    from harness.mutation.mutants import MutationError

    if arguments.max_children < 1:
        raise BadInput("--max-children: expected a whole number >= 1")
    if arguments.merge is not None:
        return run_merge(arguments)
    if arguments.sdk is not None:
        return run_on_sdk(arguments)
    for option, given in (
        ("--report-only", arguments.report_only),
        ("--suite", arguments.suite is not None),
        ("--shard", arguments.shard is not None),
        ("--baseline", arguments.baseline),
    ):
        if given:
            raise BadInput(f"{option}: only with --sdk")
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
    from harness.mutation import sdk_run
    from harness.mutation.mutants import MutationError
    from harness.mutation.sdk import SDKS, SUITES
    from harness.mutation.shards import WHOLE, merge, parse_shard

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
    shard = WHOLE
    if arguments.shard is not None:
        try:
            shard = parse_shard(arguments.shard)
        except MutationError as problem:
            raise BadInput(str(problem)) from None
        for option, given in (
            ("--suite", arguments.suite is not None),
            ("--report-only", arguments.report_only),
        ):
            if given:
                raise BadInput(f"--shard: not with {option} (a shard runs both suites)")
        if arguments.baseline:
            raise BadInput("--baseline: not with --shard (give it to --merge of every shard)")
    if arguments.baseline and (arguments.suite is not None or arguments.report_only):
        raise BadInput(
            "--baseline: not with --suite or --report-only (a baseline comes from one run of "
            "both suites)"
        )
    try:
        result = sdk_run.mutate_sdk(
            sdk,
            arguments.workdir.resolve(),
            arguments.max_children,
            rerun=not arguments.report_only,
            suites=suites,
            shard=shard,
        )
    except MutationError as problem:
        raise BadInput(str(problem)) from None
    kept = arguments.reports / shard.file_name(sdk.name)
    write_atomically(kept, json.dumps(result, indent=2) + "\n")
    if arguments.shard is not None:
        print(_shard_line(result, kept))
        return EXIT_HOLDS
    try:
        return _write_report(arguments, merge([(kept, result)]))
    except MutationError as problem:
        raise BadInput(f"{problem}; the run's results are in {kept} (mutate --merge it)") from None


def run_merge(arguments: argparse.Namespace) -> int:
    """``mutate --merge SHARD...``: the shards of one campaign, as one run's report."""
    from harness.mutation.mutants import MutationError
    from harness.mutation.shards import merge, read_shard

    for option, given in (
        ("--sdk", arguments.sdk is not None),
        ("--since", arguments.since is not None),
        ("--suite", arguments.suite is not None),
        ("--report-only", arguments.report_only),
        ("--shard", arguments.shard is not None),
    ):
        if given:
            raise BadInput(f"--merge: not with {option} (the shard results say what was run)")
    try:
        merged = merge([(path, read_shard(path)) for path in arguments.merge])
        return _write_report(arguments, merged)
    except MutationError as problem:
        raise BadInput(str(problem)) from None


def _write_report(arguments: argparse.Namespace, merged: Merged) -> int:
    """The report of a whole run (and, with ``--baseline``, its figures); the exit code."""
    from harness.mutation import sdk_report, sdk_run
    from harness.mutation.baseline import baseline_path, figures
    from harness.mutation.mutants import MutationError

    if arguments.baseline and merged.stitched is not None:
        raise MutationError(
            f"--baseline: {merged.stitched} did not run both suites itself (--suite or "
            "--report-only); expected a baseline from one run of both suites"
        )
    report = sdk_run.report_of(merged)
    text = sdk_report.markdown(report)
    stem = f"mutation-sdk-{report['sdk']}"
    write_atomically(arguments.reports / f"{stem}.json", json.dumps(report, indent=2) + "\n")
    write_atomically(arguments.reports / f"{stem}.md", text)
    if arguments.baseline:
        kept = figures(report)
        path = baseline_path(arguments.reports, report["sdk"], report["version"])
        write_atomically(path, json.dumps(kept, indent=2) + "\n")
    print(text)
    return EXIT_HOLDS if not sdk_report.verdict(report) else EXIT_VIOLATIONS


def _shard_line(result: dict[str, Any], kept: Path) -> str:
    from harness.mutation.sdk_report import DETECTED, SUITE_TITLES

    rows = result["mutants"]
    tally = ", ".join(
        f"{sum(row[suite] in DETECTED for row in rows)} killed by {SUITE_TITLES[suite]}"
        for suite in result["suites_run"]
    )
    return (
        f"shard {result['shard']} of {result['distribution']} {result['version']}: "
        f"{len(rows)} of {len(result['all_mutants'])} mutants ({tally}); written to {kept}"
    )

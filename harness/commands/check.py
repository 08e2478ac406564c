"""``check``: run every scenario on every chosen target; write reports/conformance.*."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from harness.commands.inputs import (
    EXIT_ADAPTER_ERROR,
    EXIT_BAD_INPUT,
    EXIT_HOLDS,
    EXIT_VIOLATIONS,
    BadInput,
    check_findings_files,
    connect,
    findings_search_path,
    loaded_targets,
)
from harness.commands.options import (
    Commands,
    add_command,
    execution_options,
    findings_option,
    isolation_option,
    shown,
    summary_option,
)
from harness.commands.outputs import write_reports
from harness.commands.planning import PROFILES, planned, with_demonstrations
from harness.commands.progress import Progress, interactive
from harness.conformance import Conformance, judge
from harness.counterexamples import FOLDER, Written, check_failures, replace, reported
from harness.determinism import DIGESTS, digest_lines
from harness.pull_request import BaselineError, add_options, baselines, write_review
from harness.report import conformance_document, write_atomically
from harness.review import rejudge
from harness.targets.base import Target
from scenarios.loading import REGRESSIONS
from scenarios.model import Scenario


def add_parser(commands: Commands) -> None:
    check = add_command(
        commands,
        "check",
        run,
        help="run scenarios on targets and write the conformance reports",
        description="Run every scenario on every chosen target; write reports/conformance.*.",
    )
    check.add_argument(
        "--target",
        action="append",
        metavar="T",
        help="a target to check (repeatable; default: every installed target)",
    )
    check.add_argument(
        "--scenarios",
        action="append",
        type=Path,
        metavar="PATH",
        help=f"a scenario file or a folder of them (repeatable; default: {shown(REGRESSIONS)})",
    )
    isolation_option(check)
    findings_option(check, "a folder of findings files to judge by, besides the bundled one")
    check.add_argument(
        "--profile",
        choices=PROFILES,
        help="also run the generated scenarios a derandomized run of this hypothesis profile "
        "draws (ci: 200 + 200, the sample committed in scenarios/corpus/ci/, the same on every "
        "machine), and write reports/generator-stats.md; each one that fails is written to "
        "DIR/counterexamples/ as a regression file",
    )
    check.add_argument(
        "--coverage",
        action="store_true",
        help="also run the coverage sample (scenarios/corpus/coverage/: answered adversarial "
        "ids, retries after a parked turn, refused restores of several questions, retried gated "
        "calls, state read back after a restored turn, two root sessions over one agent tool, a "
        "restart while nothing waits), "
        "drawn within every capability: not applicable where a target cannot express it",
    )
    check.add_argument(
        "--reports",
        type=Path,
        default=Path("reports"),
        metavar="DIR",
        help="where to write conformance.md, conformance.json and counterexamples/ (default: "
        "reports)",
    )
    summary_option(check)
    add_options(check)
    execution_options(check, "each scenario on each target")


def run(arguments: argparse.Namespace) -> int:
    targets, broken = loaded_targets(arguments.target, arguments.isolation)
    folders = findings_search_path(arguments.findings)
    findings = check_findings_files(targets, folders)  # read once: the run is judged by these
    try:
        baseline = baselines(arguments, targets, folders)
    except BaselineError as unusable:
        raise BadInput(str(unusable)) from None
    scenarios, own, generated, stats = planned(arguments, targets)
    if arguments.scenarios is None or arguments.profile is not None or arguments.coverage:
        with_demonstrations(targets, findings, scenarios, own)  # the check judges its classes
    for problem in broken:  # refused, while the others run
        print(problem.refusal, file=sys.stderr)
    if not targets:
        return EXIT_BAD_INPUT
    progress = Progress() if interactive() else None
    with connect(arguments) as where:
        result = judge(
            targets, scenarios, progress, own, generated, findings=findings, execution=where
        )
    if stats is not None:
        write_atomically(arguments.reports / "generator-stats.md", stats)
    if progress is not None:
        progress.finish()
    for errors in result.adapter_errors.values():
        for error in errors:
            print(error, file=sys.stderr)
    reviews = rejudge(result, baseline)  # pull-request mode: judged by the baseline's findings
    written = counterexamples(arguments, result, targets, scenarios, own, generated)
    document = conformance_document(result, reported(written))
    write_atomically(arguments.reports / DIGESTS, digest_lines(result.histories))
    write_reports(arguments.reports, document, summarised=arguments.summary)
    if reviews:
        lists = {t.info.name: own.get(t.info.name, scenarios) for t in targets}
        write_review(
            arguments.reports,
            reviews,
            written,
            lists,
            result.histories,
            summarised=arguments.summary,
        )
    if broken:
        return EXIT_BAD_INPUT
    if result.broken_adapters:
        return EXIT_ADAPTER_ERROR
    return EXIT_HOLDS if result.passes else EXIT_VIOLATIONS


def counterexamples(
    arguments: argparse.Namespace,
    result: Conformance,
    targets: Sequence[Target],
    scenarios: Sequence[tuple[str, Scenario]],
    own: Mapping[str, Sequence[tuple[str, Scenario]]],
    generated: Collection[str],
) -> dict[str, Written]:
    """Each target's failing generated scenarios, written to ``--reports``/counterexamples/
    (the files of the ones that pass now, from an earlier check, deleted); what was written is
    said on stderr."""
    written = {}
    for target in targets:
        info = target.info
        if info.name not in result.verdicts:
            continue
        ran, failing = check_failures(
            info,
            own.get(info.name, scenarios),
            generated,
            result.verdicts[info.name],
            result.adapter_errors.get(info.name, []),
            arguments.profile,
        )
        written[info.name] = found = replace(arguments.reports, "check", info, ran, failing)
        for refusal in found.refused:
            print(refusal, file=sys.stderr)
        if found.files:
            folder = shown(arguments.reports / FOLDER)
            print(
                f"{info.name}: {len(found.files)} failing generated scenario(s) written to "
                f"{folder}/ (python -m harness run FILE --target {info.name} reproduces each)",
                file=sys.stderr,
            )
    return written

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
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from hypothesis import __version__ as hypothesis_version

from harness import __version__, determinism, execution
from harness.bench import dumps as bench_dumps
from harness.bench import gate, plot, size_document
from harness.bench import markdown as bench_markdown
from harness.campaigns.report import Budget, fault_document
from harness.campaigns.report import dumps as faults_dumps
from harness.campaigns.report import markdown as faults_markdown
from harness.checkers import CHECKERS, applicable
from harness.conformance import judge
from harness.determinism import DIGESTS, digest_lines
from harness.findings import (
    PLACEHOLDER,
    FindingsFileError,
    dump_findings_file,
    findings_path,
    load_document,
    load_findings,
    read_findings_file,
    record,
)
from harness.findings_search import BUNDLED, locate, search_path
from harness.history import StepRecord
from harness.isolation import ProcessIsolated
from harness.report import (
    conformance_document,
    dumps,
    markdown,
    merge,
    target_column,
    write_atomically,
)
from harness.runner import AdapterError, run_scenario
from harness.summary import summary
from harness.targets import registry
from harness.targets.base import CAPABILITIES, Target
from scenarios import corpus
from scenarios.loading import REGRESSIONS, ScenarioFileError, load_scenario, regression_files
from scenarios.model import Scenario
from scenarios.statistics import class_frequencies, frequency_report
from scenarios.strategies import DRAWN_CAPABILITIES, Capabilities

EXIT_HOLDS, EXIT_VIOLATIONS, EXIT_BAD_INPUT, EXIT_ADAPTER_ERROR = 0, 1, 2, 3
SUMMARY = "conformance-summary.md"  # what --summary writes beside conformance.md
DEFAULT_EXAMPLES, DEFAULT_INVARIANT_EXAMPLES, DEFAULT_SHRINK = 1000, 200, 30
BASELINE = (
    Path(__file__).resolve().parent.parent / "reports" / "baselines" / "continuation-size.json"
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
  python -m harness faults --examples strands=200  the fault campaigns (reports/faults.*)
  python -m harness bench                          continuation sizes against the baseline
  python -m harness generate --profile ci          draw the committed ci sample again
  python -m harness targets                        what is installed

reports: check writes reports/conformance.md and reports/conformance.json (with --summary
also reports/conformance-summary.md, which always fits a pull-request comment); a failed run
leaves the previous reports untouched.
"""


class BadInput(Exception):
    """Input the user must fix; the message is the one line to show."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise BadInput(f"{self.prog}: {message} (see --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m harness",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    check = commands.add_parser(
        "check",
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
        help=f"a scenario file or a folder of them (repeatable; default: {_shown(REGRESSIONS)})",
    )
    _isolation_option(check)
    _findings_option(check, "a folder of findings files to judge by, besides the bundled one")
    check.add_argument(
        "--profile",
        choices=("ci", "dev", "deep"),
        help="also run the generated scenarios a derandomized run of this hypothesis profile "
        "draws (ci: 200 + 200, the sample committed in scenarios/corpus/ci/, the same on every "
        "machine), and write reports/generator-stats.md",
    )
    check.add_argument(
        "--reports",
        type=Path,
        default=Path("reports"),
        metavar="DIR",
        help="where to write conformance.md and conformance.json (default: reports)",
    )
    _summary_option(check)
    _execution_options(check, "each scenario on each target")

    generate = commands.add_parser(
        "generate",
        help="draw the ci sample of generated scenarios and write it to scenarios/corpus/",
        description="Draw the sample that check --profile ci runs, with the installed "
        "hypothesis: the shared one, and one for each narrower set of capabilities a built-in "
        "target draws its own within; write each as JSON lines under CORPUS/PROFILE/ (and remove "
        "the folder's other .jsonl files).  The files are committed: a new sample is a reviewed "
        "change, and the findings files' classes must be triaged again against it.",
    )
    generate.add_argument(
        "--profile", choices=corpus.COMMITTED, default="ci", help="the profile (default: ci)"
    )
    generate.add_argument(
        "--corpus",
        type=Path,
        default=corpus.CORPUS,
        metavar="CORPUS",
        help=f"where to write (default: {_shown(corpus.CORPUS)})",
    )

    recording = commands.add_parser(
        "record",
        help="write or update a target's findings file from a run",
        description="Run the scenarios on one target and write its findings file: each "
        "regression file that shows violations is recorded with its digest and a witness per "
        "violation (a new one with a placeholder explanation that check refuses until a person "
        "writes one; an existing explanation is never overwritten).  Violations of generated "
        "scenarios that no class covers are listed, for a person to write a class.  Exit 1 while "
        "the file needs a person.",
    )
    recording.add_argument("--target", required=True, metavar="T", help="the target to record")
    recording.add_argument(
        "--scenarios",
        action="append",
        type=Path,
        metavar="PATH",
        help=f"a scenario file or a folder of them (repeatable; default: {_shown(REGRESSIONS)})",
    )
    recording.add_argument(
        "--profile",
        choices=("ci", "dev", "deep"),
        help="also run this hypothesis profile's generated sample (its classes are checked)",
    )
    _findings_option(
        recording,
        "the folder to write the target's findings file into (created if missing); further "
        "ones are searched as for check (default: the folder on the findings path that holds "
        "the file, else the bundled one)",
    )
    recording.add_argument(
        "--findings-file",
        type=Path,
        metavar="PATH",
        help="write this file instead (a draft: check reads only the findings path)",
    )
    _isolation_option(recording)

    run = commands.add_parser(
        "run",
        help="run one scenario file and print its history and every checker's verdict",
        description="Run one scenario on one target; print the history and the verdicts.",
    )
    run.add_argument("file", type=Path, metavar="FILE", help="a scenario file (YAML or JSON)")
    run.add_argument("--target", default="reference", metavar="T", help="default: reference")
    run.add_argument("--json", action="store_true", help="print the whole history as JSON")
    _isolation_option(run)

    report = commands.add_parser(
        "report",
        help="merge conformance.json files (one per SDK version) into one side-by-side report",
        description="Merge conformance.json files written by separate check runs (for example "
        "one per SDK version) into one side-by-side conformance.md and conformance.json.",
    )
    report.add_argument("files", type=Path, nargs="+", metavar="FILE", help="conformance.json")
    _reports_option(report)
    _summary_option(report)

    faults = commands.add_parser(
        "faults",
        help="run the fault campaigns (corruption, crash points, privacy, isolation)",
        description="Generate damaged continuations, crashes inside answers, private canaries "
        "and shared sub-agents; classify what each target does; write reports/faults.*.  Exit "
        "1 when a target without a findings file is not clean, or a released SDK goes beyond "
        "the outcome recorded for it with this budget (scenarios/findings/faults/).",
    )
    _targets_option(faults)
    _findings_option(faults, "as for check")
    faults.add_argument(
        "--examples",
        action="append",
        type=_examples,
        metavar="[T=]N",
        help=f"generated corruption cases, for every target or for target T (repeatable; "
        f"default: {DEFAULT_EXAMPLES})",
    )
    faults.add_argument(
        "--invariant-examples",
        action="append",
        type=_examples,
        metavar="[T=]N",
        help=f"generated privacy and isolation cases, likewise (default: "
        f"{DEFAULT_INVARIANT_EXAMPLES})",
    )
    faults.add_argument("--seed", type=_count, default=0, metavar="S", help="default: 0")
    faults.add_argument(
        "--shrink",
        type=_count,
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
    _reports_option(faults)
    _execution_options(faults, "each campaign case")

    bench = commands.add_parser(
        "bench",
        help="measure continuation sizes side by side and gate them against the baseline",
        description="Measure what each target stores (continuations after earlier calls, by "
        "depth and fan-out, the orchestrator's record, the store over call/resume cycles, the "
        "ratio to the information floor); write reports/continuation-size.* (and a PNG with "
        "the plot extra).  Exit 1 when a size grew more than 5%% against the baseline or an "
        "ephemeral continuation grows with earlier calls.",
    )
    _targets_option(bench)
    bench.add_argument(
        "--baseline",
        type=Path,
        default=BASELINE,
        metavar="FILE",
        help=f"the sizes to compare with (default: {_shown(BASELINE)})",
    )
    bench.add_argument(
        "--update-baseline",
        action="store_true",
        help="write this run's sizes as the new baseline (after reading why they changed)",
    )
    _reports_option(bench)

    mutate = commands.add_parser(
        "mutate",
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
        "--max-children", type=_count, default=2, metavar="N", help="parallel mutants (default 2)"
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
    _reports_option(mutate)

    determinism = commands.add_parser(
        "determinism",
        help="run check again and again, the machine quiet then busy: same bytes every time?",
        description="Run `check` with these options in a fresh process once on the machine as "
        "it is, then REPEATS times under contention (on Linux pinned to one core a busy "
        "process at niceness 5 shares; elsewhere one busy process per core), each with another "
        "PYTHONHASHSEED; every report and every history (histories.sha256) must be the same "
        "bytes as the first run's.  The first run writes its reports into --reports as check "
        "would; the others, and every run's log, go to --reports/determinism/; then "
        "determinism.md and .json.  Exit 1 when any run differs, else the first run's exit "
        "code: it stands in for check.",
    )
    determinism.add_argument(
        "--target", action="append", metavar="T", help="as for check (repeatable)"
    )
    determinism.add_argument(
        "--scenarios", action="append", metavar="PATH", help="as for check (repeatable)"
    )
    determinism.add_argument("--profile", choices=("ci", "dev", "deep"), help="as for check")
    _findings_option(determinism, "as for check")
    determinism.add_argument(
        "--repeats",
        type=_count,
        default=1,
        metavar="N",
        help="runs under contention after the first (default 1)",
    )
    _reports_option(determinism)

    targets = commands.add_parser(
        "targets",
        help="list installed targets, their versions and capabilities",
        description="List installed targets, their versions and capabilities, and each target "
        "that cannot be loaded (exit 2 when there is one).",
    )
    targets.add_argument(
        "--verbose", action="store_true", help="also say what each capability means"
    )
    return parser


def _targets_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target",
        action="append",
        metavar="T",
        help="a target (repeatable; default: every installed target)",
    )


def _findings_option(parser: argparse.ArgumentParser, purpose: str) -> None:
    parser.add_argument(
        "--findings",
        action="append",
        type=Path,
        metavar="DIR",
        help=f"{purpose} (repeatable; the findings path is the bundled folder, the folders "
        "installed plugins declare, then these: docs/findings.md)",
    )


def _findings_path(given: Sequence[Path] | None, *, existing: bool = True) -> tuple[Path, ...]:
    """The findings search path with the ``--findings`` folders (which must exist, unless
    ``existing`` is false: record creates the one it writes into)."""
    for folder in given or []:
        if (existing or folder.exists()) and not folder.is_dir():
            raise BadInput(f"--findings: {folder} is not a folder")
    try:
        return search_path(given or [])
    except FindingsFileError as problem:
        raise BadInput(str(problem)) from None


def _summary_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--summary",
        action="store_true",
        help="also write conformance-summary.md, which always fits a pull-request comment "
        "(65,536 characters): each target's verdict, then the adapter errors, new and "
        "vanished findings, long lists cut with a count",
    )


def _reports_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reports", type=Path, default=Path("reports"), metavar="DIR", help="default: reports"
    )


def _count(text: str) -> int:
    """A whole number >= 0 (for argparse)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def _positive(text: str) -> int:
    """A whole number >= 1 (for argparse)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def _examples(text: str) -> tuple[str | None, int]:
    """``N`` or ``TARGET=N`` (for argparse)."""
    name, _, number = text.rpartition("=")
    if name == "" and "=" in text:
        raise argparse.ArgumentTypeError(f"expected N or TARGET=N, got {text!r}")
    if not number.isdigit() or int(number) < 1:
        raise argparse.ArgumentTypeError(f"expected N or TARGET=N with N >= 1, got {text!r}")
    return (name or None), int(number)


def _execution_options(parser: argparse.ArgumentParser, task: str) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=_positive,
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


def _execution(arguments: argparse.Namespace) -> execution.Execution:
    try:
        return execution.connect(arguments.workers, arguments.scheduler)
    except execution.Unavailable as problem:
        raise BadInput(str(problem)) from None


def _isolation_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--isolation",
        choices=("in-process", "process"),
        default="in-process",
        help="process: run every step in a fresh Python process, as a stateless function host "
        "would (default: in-process)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        arguments = build_parser().parse_args(argv)
        if arguments.command == "check":
            return _check(arguments)
        if arguments.command == "run":
            return _run(arguments)
        if arguments.command == "generate":
            return _generate(arguments)
        if arguments.command == "record":
            return _record(arguments)
        if arguments.command == "report":
            return _report(arguments)
        if arguments.command == "faults":
            return _faults(arguments)
        if arguments.command == "bench":
            return _bench(arguments)
        if arguments.command == "mutate":
            return _mutate(arguments)
        if arguments.command == "determinism":
            return _determinism(arguments)
        return _targets(arguments.verbose)
    except BadInput as problem:
        print(problem, file=sys.stderr)
        return EXIT_BAD_INPUT
    except AdapterError as error:  # outside check, which reports it and goes on
        print(error, file=sys.stderr)
        return EXIT_ADAPTER_ERROR
    except (execution.WorkerMismatch, execution.Lost) as problem:  # the workers, not the input
        print(problem, file=sys.stderr)
        return EXIT_BAD_INPUT


def _targets_named(names: Sequence[str] | None, isolation: str = "in-process") -> list[Target]:
    """The targets, every one of them loaded (else the first broken one's line, exit 2)."""
    targets, broken = _loaded_targets(names, isolation)
    if broken:
        raise BadInput(broken[0].refusal)
    return targets


def _loaded_targets(
    names: Sequence[str] | None, isolation: str = "in-process"
) -> tuple[list[Target], list[registry.BrokenTarget]]:
    """The targets that load, and the ones that do not (an unknown name is bad input)."""
    chosen = list(dict.fromkeys(names or registry.available()))
    targets: list[Target] = []
    broken: list[registry.BrokenTarget] = []
    for name in chosen:
        try:
            target = registry.get(name)
        except registry.UnknownTarget as unknown:
            raise BadInput(f"--target: {unknown.args[0]}") from None
        except registry.BrokenTarget as problem:
            broken.append(problem)
            continue
        targets.append(ProcessIsolated(name, target) if isolation == "process" else target)
    return targets, broken


def _scenarios_from(paths: Sequence[Path] | None) -> list[tuple[str, Scenario]]:
    files: list[Path] = []
    for path in paths or [REGRESSIONS]:
        if path.is_dir():
            found = regression_files(path)
            if not found:
                raise BadInput(f"--scenarios: {path} holds no .yaml, .yml or .json file")
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise BadInput(f"--scenarios: {path} does not exist")
    return [(path.stem, _load(path)) for path in files]


def _load(path: Path) -> Scenario:
    try:
        return load_scenario(path)
    except ScenarioFileError as problem:
        raise BadInput(str(problem)) from None


def _check(arguments: argparse.Namespace) -> int:
    targets, broken = _loaded_targets(arguments.target, arguments.isolation)
    folders = _findings_path(arguments.findings)
    _check_findings_files(targets, folders)
    scenarios, own, generated, stats = _planned(arguments, targets)
    for problem in broken:  # refused, while the others run
        print(problem.refusal, file=sys.stderr)
    if not targets:
        return EXIT_BAD_INPUT
    progress = _Progress() if _interactive() else None
    with _execution(arguments) as where:
        result = judge(
            targets, scenarios, progress, own, generated, findings=folders, execution=where
        )
    if stats is not None:
        write_atomically(arguments.reports / "generator-stats.md", stats)
    if progress is not None:
        progress.finish()
    for errors in result.adapter_errors.values():
        for error in errors:
            print(error, file=sys.stderr)
    document = conformance_document(result)
    write_atomically(arguments.reports / DIGESTS, digest_lines(result.histories))
    _write_reports(arguments.reports, document, summarised=arguments.summary)
    if broken:
        return EXIT_BAD_INPUT
    if result.broken_adapters:
        return EXIT_ADAPTER_ERROR
    return EXIT_HOLDS if result.passes else EXIT_VIOLATIONS


def _planned(
    arguments: argparse.Namespace, targets: Sequence[Target]
) -> tuple[list[tuple[str, Scenario]], dict[str, list[tuple[str, Scenario]]], set[str], str | None]:
    """The scenarios to run (``--scenarios``, plus the ``--profile`` sample), each target's own
    list where it draws its own sample, the drawn scenarios' names, and the generator stats."""
    regressions = _scenarios_from(arguments.scenarios)
    scenarios = list(regressions)
    own: dict[str, list[tuple[str, Scenario]]] = {}
    generated: set[str] = set()  # the names of the drawn scenarios, which classes may cover
    stats = None
    if arguments.profile is not None:
        shared = _generated(arguments.profile, None, "")
        scenarios += shared
        generated.update(name for name, _ in shared)
        general = [scenario for name, scenario in shared if not name.startswith(RESTORE)]
        for target in targets:
            expressible = target.info.expressible
            if not expressible >= DRAWN_CAPABILITIES:
                # drawn within what it can express, instead of mostly not applicable
                drawn = _generated(arguments.profile, expressible, f"{target.info.name}-")
                own[target.info.name] = regressions + drawn
                generated.update(name for name, _ in drawn)
        stats = frequency_report(arguments.profile, class_frequencies(general), len(general))
    return scenarios, own, generated, stats


def _record(arguments: argparse.Namespace) -> int:
    (target,) = _targets_named([arguments.target], arguments.isolation)
    info = target.info
    folders = _findings_path(arguments.findings, existing=False)
    path = _recorded_file(arguments, info.findings_name, info.version, folders)
    try:
        before = (
            read_findings_file(path, info.findings_name, info.version, drafts=True)
            if path.exists()
            else None
        )
    except FindingsFileError as problem:
        raise BadInput(str(problem)) from None
    try:  # the target's own findings file, which the run is judged by, must be readable too
        load_document(info.findings_name, info.version, folders, drafts=True)
    except FindingsFileError as problem:
        raise BadInput(str(problem)) from None
    scenarios, own, generated, _ = _planned(arguments, [target])
    progress = _Progress() if _interactive() else None
    result = judge([target], scenarios, progress, own, generated, drafts=True, findings=folders)
    if progress is not None:
        progress.finish()
    for error in result.adapter_errors[info.name]:  # not judged: its findings are kept as they are
        print(error, file=sys.stderr)
    after, done = record(before, info.findings_name, info.version, result.runs[info.name])
    header = path.read_text(encoding="utf-8").split("\n") if path.exists() else []
    comments = "\n".join(line for line in header[: _first_field(header)] if line.startswith("#"))
    write_atomically(path, dump_findings_file(after, comments))
    print(f"{path}: recorded {len(done.added)}, dropped {len(done.removed)}")
    for name in done.added:
        print(f"  recorded `{name}` (its digest and a witness per violation)")
    for name in done.removed:
        print(f"  dropped `{name}`: it ran without a violation")
    for name in done.unexplained:
        print(f"  `{name}`: explanation still {PLACEHOLDER!r}: write why (check refuses it)")
    for name, violation in done.uncovered:
        print(
            f"  no class covers {violation.invariant} `{name}` step {violation.step}: "
            f"expected {violation.expected}; seen {violation.seen}"
        )
    if result.broken_adapters:
        return EXIT_ADAPTER_ERROR
    return EXIT_VIOLATIONS if done.unexplained or done.uncovered else EXIT_HOLDS


def _recorded_file(
    arguments: argparse.Namespace, target: str, version: str, folders: Sequence[Path]
) -> Path:
    """The file ``record`` writes: ``--findings-file``; else the target's file in the first
    ``--findings`` folder, which no other folder of the path may hold one for; else the file on
    the path, or a new one in the bundled folder."""
    if arguments.findings_file is not None:
        return Path(arguments.findings_file)
    try:
        found = locate(target, version, folders)
    except FindingsFileError as problem:
        raise BadInput(str(problem)) from None
    if not arguments.findings:
        return found or findings_path(target, version, BUNDLED)
    path = findings_path(target, version, arguments.findings[0])
    if found is not None and found.resolve() != path.resolve():
        raise BadInput(
            f"{found}: the findings path already holds {target} {version}'s findings file; "
            f"record into its folder (--findings {found.parent}) or move it"
        )
    return path


def _first_field(lines: Sequence[str]) -> int:
    """Where the first YAML field of a findings file is (the comments above it are kept)."""
    return next((i for i, line in enumerate(lines) if line and not line.startswith("#")), 0)


RESTORE = corpus.RESTORE  # the names of the focused family's scenarios


def _generated(profile: str, capabilities: Capabilities, prefix: str) -> list[tuple[str, Scenario]]:
    """The profile's sample of both generated families within ``capabilities``, under names
    with ``prefix``: for ci the committed file drawn within the same capabilities, else (or
    when none is committed) drawn here."""
    drawn = None
    if profile in corpus.COMMITTED:
        try:
            found = corpus.find(profile, capabilities)
            drawn = None if found is None else corpus.read(found, profile)
        except corpus.CorpusError as problem:
            raise BadInput(str(problem)) from None
        if drawn is None:
            whose = f"{prefix.removesuffix('-')}'s capabilities" if prefix else "every capability"
            print(
                f"{_shown(corpus.folder(profile))}: no sample drawn within {whose}; drawing it "
                f"with hypothesis {hypothesis_version}",
                file=sys.stderr,
            )
    if drawn is None:
        drawn = corpus.draw(profile, capabilities)
    return corpus.named(drawn, prefix)


def _generate(arguments: argparse.Namespace) -> int:
    profile, folder = arguments.profile, corpus.folder(arguments.profile, arguments.corpus)
    stems: dict[Capabilities, str] = {None: corpus.SHARED}
    for name, expressible in registry.built_in_expressible().items():
        stems.setdefault(corpus.drawn_within(expressible), f"{corpus.SHARED}-{name}")
    written = []
    for capabilities, stem in stems.items():
        drawn = corpus.draw(profile, capabilities)
        path = folder / f"{stem}.jsonl"
        write_atomically(path, corpus.render(profile, capabilities, drawn))
        written.append(path)
        within = "every capability" if capabilities is None else ", ".join(sorted(capabilities))
        print(f"{_shown(path)}: {len(drawn)} scenarios drawn within {within}")
    for stale in sorted(set(corpus.files(profile, arguments.corpus)) - set(written)):
        stale.unlink()
        print(f"{_shown(stale)}: removed (no built-in target draws within its capabilities)")
    print(
        f"drawn with hypothesis {hypothesis_version}: review the diff, then run check --profile "
        f"{profile} on every target and triage its findings again"
    )
    return EXIT_HOLDS


def _faults(arguments: argparse.Namespace) -> int:
    targets = _targets_named(arguments.target)
    names = sorted({target.info.name for target in targets})
    examples = _per_target("--examples", arguments.examples, names, DEFAULT_EXAMPLES)
    probes = _per_target(
        "--invariant-examples", arguments.invariant_examples, names, DEFAULT_INVARIANT_EXAMPLES
    )
    folders = _findings_path(arguments.findings)
    _check_findings_files(targets, folders)
    budgets = {
        name: Budget(examples[name], arguments.seed, arguments.shrink, probes[name])
        for name in names
    }
    crash_scenarios = _scenarios_from(None)
    progress = _Progress() if _interactive() else None
    with _execution(arguments) as where:
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
    text = faults_markdown(document)
    write_atomically(arguments.reports / "faults.json", faults_dumps(document))
    write_atomically(arguments.reports / "faults.md", text)
    print(text)
    if arguments.record:
        return _record_faults(targets, document)
    return EXIT_HOLDS if document["passes"] else EXIT_VIOLATIONS


def _record_faults(targets: Sequence[Target], document: dict[str, Any]) -> int:
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


def _bench(arguments: argparse.Namespace) -> int:
    targets = _targets_named(arguments.target)
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
    text = bench_markdown(document, problems)
    write_atomically(arguments.reports / "continuation-size.json", bench_dumps(document))
    write_atomically(arguments.reports / "continuation-size.md", text)
    plot(document, arguments.reports / "continuation-size.png")
    if arguments.update_baseline:
        write_atomically(arguments.baseline, bench_dumps(document))
    print(text)
    return EXIT_HOLDS if not problems or arguments.update_baseline else EXIT_VIOLATIONS


def _mutate(arguments: argparse.Namespace) -> int:
    from harness import mutation

    if arguments.max_children < 1:
        raise BadInput("--max-children: expected a whole number >= 1")
    if arguments.sdk is not None:
        return _mutate_sdk(arguments)
    if arguments.report_only:
        raise BadInput("--report-only: only with --sdk")
    if arguments.suite is not None:
        raise BadInput("--suite: only with --sdk")
    try:
        mutation.load_equivalent()
        report = mutation.mutate(mutation.ROOT, arguments.since, arguments.max_children)
    except mutation.MutationError as problem:
        raise BadInput(str(problem)) from None
    text = mutation.markdown(report)
    write_atomically(arguments.reports / "mutation.json", json.dumps(report, indent=2) + "\n")
    write_atomically(arguments.reports / "mutation.md", text)
    print(text)
    return EXIT_HOLDS if report["passes"] else EXIT_VIOLATIONS


def _mutate_sdk(arguments: argparse.Namespace) -> int:
    from harness import sdk_mutation
    from harness.mutation import MutationError

    if arguments.since is not None:
        raise BadInput("--since: not with --sdk (the SDK run mutates the whole module)")
    sdk = sdk_mutation.SDKS.get(arguments.sdk)
    if sdk is None:
        known = ", ".join(sorted(sdk_mutation.SDKS))
        raise BadInput(f"--sdk: unknown SDK {arguments.sdk!r}; expected one of: {known}")
    suites: tuple[str, ...] = sdk_mutation.SUITES
    if arguments.suite is not None:
        if arguments.suite not in sdk_mutation.SUITES:
            expected = ", ".join(sdk_mutation.SUITES)
            raise BadInput(
                f"--suite: unknown suite {arguments.suite!r}; expected one of: {expected}"
            )
        if arguments.report_only:
            raise BadInput("--suite: not with --report-only (which reruns no suite)")
        suites = (arguments.suite,)
    try:
        report = sdk_mutation.mutate_sdk(
            sdk,
            arguments.workdir.resolve(),
            arguments.max_children,
            rerun=not arguments.report_only,
            suites=suites,
        )
    except MutationError as problem:
        raise BadInput(str(problem)) from None
    text = sdk_mutation.markdown(report)
    stem = f"mutation-sdk-{sdk.name}"
    write_atomically(arguments.reports / f"{stem}.json", json.dumps(report, indent=2) + "\n")
    write_atomically(arguments.reports / f"{stem}.md", text)
    print(text)
    return EXIT_HOLDS if not sdk_mutation.verdict(report) else EXIT_VIOLATIONS


def _check_findings_files(targets: Sequence[Target], folders: Sequence[Path]) -> None:
    """Refuse, before anything runs, a findings file (or a recorded fault outcome) of these
    targets that cannot be read."""
    from harness.campaigns.expected import ExpectedError, load_expected

    for target in targets:
        try:
            load_findings(target.info.findings_name, target.info.version, folders)
            load_expected(target.info.findings_name, target.info.version)
        except (FindingsFileError, ExpectedError) as problem:
            raise BadInput(str(problem)) from None


def _per_target(
    option: str, given: list[tuple[str | None, int]] | None, names: list[str], default: int
) -> dict[str, int]:
    """``option``'s number for each target: ``N`` sets all, ``T=N`` sets one (later wins)."""
    numbers = dict.fromkeys(names, default)
    for name, number in given or []:
        if name is not None and name not in names:
            raise BadInput(f"{option}: {name!r} is not one of the chosen targets {names}")
        numbers.update(dict.fromkeys([name] if name is not None else names, number))
    return numbers


def _determinism(arguments: argparse.Namespace) -> int:
    check_arguments = [
        *(f"--target={name}" for name in arguments.target or []),
        *(f"--scenarios={path}" for path in arguments.scenarios or []),
        *([f"--profile={arguments.profile}"] if arguments.profile else []),
        *(f"--findings={path}" for path in arguments.findings or []),
    ]
    if arguments.repeats < 1:
        raise BadInput("--repeats: expected at least 1 run under contention")
    targets = _targets_named(arguments.target)  # an unknown target is refused before any run
    _check_findings_files(targets, _findings_path(arguments.findings))  # so is a bad findings path
    runs = [
        determinism.run_once(index, check_arguments, arguments.reports, contention=index > 0)
        for index in range(arguments.repeats + 1)
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


def _write_reports(reports: Path, document: dict[str, object], *, summarised: bool) -> None:
    text = markdown(document)
    write_atomically(reports / "conformance.json", dumps(document))
    write_atomically(reports / "conformance.md", text)
    if summarised:
        write_atomically(reports / SUMMARY, summary(document))
    print(text)


def _report(arguments: argparse.Namespace) -> int:
    documents = []
    for path in arguments.files:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except OSError as failure:
            raise BadInput(f"{path}: cannot read: {failure.strerror}") from None
        except ValueError:
            raise BadInput(f"{path}: not JSON (expected a conformance.json)") from None
        if not isinstance(document, dict) or not {"targets", "cells", "passes"} <= set(document):
            raise BadInput(f"{path}: not a conformance report (expected targets, cells, passes)")
        documents.append(document)
    merged = merge(documents)
    _write_reports(arguments.reports, merged, summarised=arguments.summary)
    if any(merged["adapter_errors"].values()):
        return EXIT_ADAPTER_ERROR
    return EXIT_HOLDS if merged["passes"] else EXIT_VIOLATIONS


def _run(arguments: argparse.Namespace) -> int:
    target = _targets_named([arguments.target], arguments.isolation)[0]
    scenario = _load(arguments.file)
    history = run_scenario(target, scenario, arguments.file.stem)
    verdicts = {
        checker.id: checker.function(history) if applicable(checker, history) else None
        for checker in CHECKERS
    }
    violations = sum(len(found) for found in verdicts.values() if found)
    if arguments.json:
        document = {
            "history": history.to_json(),
            "verdicts": {
                checker_id: None if found is None else [v.to_json() for v in found]
                for checker_id, found in verdicts.items()
            },
        }
        print(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False))
        return EXIT_VIOLATIONS if violations else EXIT_HOLDS
    print(f"{arguments.file} on {target.info.name} {target.info.version}")
    if history.not_applicable:
        print(f"not applicable: needs {', '.join(history.not_applicable)}")
    for step in history.steps:
        print(_step_line(step))
    for checker in CHECKERS:
        found = verdicts[checker.id]
        verdict = "n/a" if found is None else "VIOLATED" if found else "holds"
        print(f"{checker.id:>3} {checker.slug:<24} {verdict}")
        for violation in found or []:
            print(
                f"      step {violation.step}: expected {violation.expected}; seen {violation.seen}"
            )
    return EXIT_VIOLATIONS if violations else EXIT_HOLDS


def _step_line(step: StepRecord) -> str:
    observed = step.observed
    shown = ("stop_reason", "final_answer", "error", "note")
    seen = [f"{key} {observed[key]}" for key in shown if observed.get(key) is not None]
    if step.kind in {"run", "answer", "resend"}:
        pending = [
            f"{item['label']}#{item['reason'].get('question', '?')}" for item in step.pending
        ]
        seen.append("pending " + (", ".join(pending) or "nothing"))
    ran = [record["action"] for record in step.executions]
    if ran:
        seen.append("ran " + ", ".join(ran))
    asked = json.dumps(step.step, ensure_ascii=False)
    return f"  [{step.index}] {step.kind} {asked} -> " + ("; ".join(seen) or "ok")


def _targets(verbose: bool) -> int:
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
        if verbose:
            for capability in sorted(info.capabilities):
                print(f"    {capability}: can {CAPABILITIES[capability]}")
            lacking = sorted(set(CAPABILITIES) - info.capabilities)
            if lacking:
                print(f"  not claimed: {', '.join(lacking)}")
    return EXIT_BAD_INPUT if broken else EXIT_HOLDS


def _interactive() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


class _Progress:
    def __call__(self, done: int, total: int, violations: int) -> None:
        print(f"\r{done}/{total} scenario runs, {violations} violations", end="", file=sys.stderr)

    def note(self, text: str) -> None:
        print(f"\r{text}", end="", file=sys.stderr)

    def finish(self) -> None:
        print(file=sys.stderr)


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)

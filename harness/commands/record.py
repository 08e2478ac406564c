"""``record``: write or update a target's findings file from a run."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from harness.commands.inputs import (
    EXIT_ADAPTER_ERROR,
    EXIT_HOLDS,
    EXIT_VIOLATIONS,
    BadInput,
    findings_search_path,
    targets_named,
)
from harness.commands.options import (
    Commands,
    add_command,
    findings_option,
    isolation_option,
    shown,
)
from harness.commands.planning import PROFILES, planned
from harness.commands.progress import Progress, interactive
from harness.conformance import judge
from harness.findings import (
    PLACEHOLDER,
    FindingsFileError,
    dump_findings_file,
    findings_path,
    load_document,
    read_findings_file,
    record,
)
from harness.findings.loading import covering_file
from harness.findings.search import BUNDLED, plugin_folders
from harness.findings.search import ENTRY_POINT_GROUP as FINDINGS_ENTRY_POINTS
from harness.report import write_atomically
from harness.targets import registry
from scenarios.loading import REGRESSIONS


def add_parser(commands: Commands) -> None:
    recording = add_command(
        commands,
        "record",
        run,
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
        help=f"a scenario file or a folder of them (repeatable; default: {shown(REGRESSIONS)})",
    )
    recording.add_argument(
        "--profile",
        choices=PROFILES,
        help="also run this hypothesis profile's generated sample (its classes are checked)",
    )
    findings_option(
        recording,
        "the folder to write the target's findings file into (created if missing); further "
        "ones are searched as for check (default: the folder on the findings path that holds "
        "the file, else the folder the target's plugin declares, else the bundled one)",
    )
    recording.add_argument(
        "--findings-file",
        type=Path,
        metavar="PATH",
        help="write this file instead (a draft: check reads only the findings path)",
    )
    isolation_option(recording)


def run(arguments: argparse.Namespace) -> int:
    (target,) = targets_named([arguments.target], arguments.isolation)
    info = target.info
    folders = findings_search_path(arguments.findings, existing=False)
    path = recorded_file(arguments, info.findings_name, info.version, folders)
    try:
        before = (
            read_findings_file(path, info.findings_name, drafts=True) if path.exists() else None
        )
    except FindingsFileError as problem:
        raise BadInput(str(problem)) from None
    if before is not None and not before.covers(info.version):
        raise BadInput(
            f"{path}: version: covers {info.findings_name} {before.version}"
            + (f" through {before.through}" if before.through else "")
            + f", not {info.version}"
        )
    try:  # the target's own findings file, which the run is judged by, must be readable too
        load_document(info.findings_name, info.version, folders, drafts=True)
    except FindingsFileError as problem:
        raise BadInput(str(problem)) from None
    scenarios, own, generated, _ = planned(arguments, [target])
    progress = Progress() if interactive() else None
    result = judge([target], scenarios, progress, own, generated, drafts=True, findings=folders)
    if progress is not None:
        progress.finish()
    for error in result.adapter_errors[info.name]:  # not judged: its findings are kept as they are
        print(error, file=sys.stderr)
    after, done = record(before, info.findings_name, info.version, result.runs[info.name])
    header = path.read_text(encoding="utf-8").split("\n") if path.exists() else []
    comments = "\n".join(line for line in header[: first_field(header)] if line.startswith("#"))
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


def recorded_file(
    arguments: argparse.Namespace, target: str, version: str, folders: Sequence[Path]
) -> Path:
    """The file ``record`` writes: ``--findings-file``; else the target's file in the first
    ``--findings`` folder, which no other folder of the path may hold one for; else the file on
    the path that covers ``version`` (its own, or a file of a range of releases), or a new one
    in the folder the target's plugin declares (a built-in target's: the bundled folder)."""
    if arguments.findings_file is not None:
        return Path(arguments.findings_file)
    try:  # its own file, or a file of a range of releases that covers it
        covering = covering_file(target, version, folders, drafts=True)
    except FindingsFileError as problem:
        raise BadInput(str(problem)) from None
    found = None if covering is None else covering[0]
    if not arguments.findings:
        if found is not None:
            return found
        try:
            folder = declared_folder(arguments.target) or BUNDLED
        except FindingsFileError as problem:
            raise BadInput(str(problem)) from None
        return findings_path(target, version, folder)
    path = findings_path(target, version, arguments.findings[0])
    if found is not None and found.parent.resolve() == Path(arguments.findings[0]).resolve():
        return found  # the range's file in that folder
    if found is not None and found.resolve() != path.resolve():
        raise BadInput(
            f"{found}: the findings path already holds {target} {version}'s findings file; "
            f"record into its folder (--findings {found.parent}) or move it"
        )
    return path


def first_field(lines: Sequence[str]) -> int:
    """Where the first YAML field of a findings file is (the comments above it are kept)."""
    return next((i for i, line in enumerate(lines) if line and not line.startswith("#")), 0)


def declared_folder(target: str) -> Path | None:
    """The findings folder the plugin that provides ``target`` (by its entry point in
    ``nested_interrupt_harness.targets``) declares: the one declared under the target's own
    name, else the only one its package declares; None for a built-in target, or a plugin that
    declares none.  ``record`` writes a plugin target's first findings file there, beside its
    adapter, never into the harness's own bundled folder (site-packages, for an installed
    harness).  A declaration that cannot be used is refused as ``search_path`` refuses it."""
    if target in registry.BUILT_IN:
        return None
    provided = [e for e in entry_points(group=registry.ENTRY_POINT_GROUP) if e.name == target]
    if not provided:
        return None
    # plugin_folders gives one folder per declaration, in the order of their names
    declared = sorted(entry_points(group=FINDINGS_ENTRY_POINTS), key=lambda e: e.name)
    folders = list(zip(declared, plugin_folders(), strict=True))
    package = _package(provided[0])
    same_name = [folder for point, folder in folders if point.name == target]
    same_package = [
        folder for point, folder in folders if package is not None and _package(point) == package
    ]
    if same_name:
        return same_name[0]
    return same_package[0] if len(same_package) == 1 else None


def _package(entry_point: EntryPoint) -> str | None:
    """The name of the distribution that declares ``entry_point`` (None: not known)."""
    distribution = getattr(entry_point, "dist", None)
    return None if distribution is None else str(distribution.name)

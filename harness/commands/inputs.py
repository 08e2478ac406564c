"""What the commands read before anything runs: targets, scenario files, the findings path.

Input the user must fix is raised as :class:`BadInput`, whose message is the line to show (a line
per problem where there are several), exit 2, before anything runs and before any report is
written.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from harness import execution
from harness.findings import FindingsFileError, ReadFindings, read_once
from harness.findings.search import search_path
from harness.forking import ForkIsolated
from harness.isolation import ProcessIsolated
from harness.targets import registry
from harness.targets.base import Target
from scenarios.loading import REGRESSIONS, ScenarioFileError, load_scenario, regression_files
from scenarios.model import Scenario

EXIT_HOLDS, EXIT_VIOLATIONS, EXIT_BAD_INPUT, EXIT_ADAPTER_ERROR = 0, 1, 2, 3
# where a scenario's steps run: this process; each stretch between restarts in a forked process
# (harness.forking); each step in a fresh interpreter (harness.isolation)
ISOLATIONS = ("in-process", "fork", "process")


class BadInput(Exception):
    """Input the user must fix; the message is the line to show (one per problem)."""


def targets_named(names: Sequence[str] | None, isolation: str = "in-process") -> list[Target]:
    """The targets, every one of them loaded (else the first broken one's line, exit 2)."""
    targets, broken = loaded_targets(names, isolation)
    if broken:
        raise BadInput(broken[0].refusal)
    return targets


def loaded_targets(
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
        targets.append(isolated(name, target, isolation))
    return targets, broken


def isolated(name: str, target: Target, isolation: str) -> Target:
    """``target`` (named ``name`` in the registry) with its steps run where ``isolation`` says."""
    if isolation == "process":
        return ProcessIsolated(name, target)
    if isolation == "fork":
        return ForkIsolated(name, target)
    return target


def scenarios_from(paths: Sequence[Path] | None) -> list[tuple[str, Scenario]]:
    """The scenario files ``--scenarios`` names (default: the regression files), loaded.  Every
    path and file that cannot be used is refused together, one line per problem, so a folder of
    them is fixed in one go: nothing runs while one is bad."""
    files: list[Path] = []
    problems: list[str] = []
    for path in paths or [REGRESSIONS]:
        if path.is_dir():
            found = regression_files(path)
            if not found:
                problems.append(f"--scenarios: {path} holds no .yaml, .yml or .json file")
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            problems.append(f"--scenarios: {path} does not exist")
    loaded = []
    for path in files:
        try:
            loaded.append((path.stem, load_scenario(path)))
        except ScenarioFileError as problem:
            problems.append(str(problem))
    if problems:
        raise BadInput("\n".join(problems))
    return loaded


def load(path: Path) -> Scenario:
    """One scenario file (a malformed one is bad input)."""
    try:
        return load_scenario(path)
    except ScenarioFileError as problem:
        raise BadInput(str(problem)) from None


def findings_search_path(
    given: Sequence[Path] | None, *, existing: bool = True
) -> tuple[Path, ...]:
    """The findings search path with the ``--findings`` folders (which must exist, unless
    ``existing`` is false: record creates the one it writes into)."""
    for folder in given or []:
        if (existing or folder.exists()) and not folder.is_dir():
            raise BadInput(f"--findings: {folder} is not a folder")
    try:
        return search_path(given or [])
    except FindingsFileError as problem:
        raise BadInput(str(problem)) from None


def check_findings_files(targets: Sequence[Target], folders: Sequence[Path]) -> ReadFindings:
    """The findings files of these targets, read before anything runs: the copy a run is then
    judged by (a file edited meanwhile changes nothing of it); one that cannot be read (or a
    recorded fault outcome that cannot) is refused."""
    from harness.campaigns.expected import ExpectedError, load_expected

    try:
        read = read_once([(t.info.findings_name, t.info.version) for t in targets], folders)
        for target in targets:
            load_expected(target.info.findings_name, target.info.version)
    except (FindingsFileError, ExpectedError) as problem:
        raise BadInput(str(problem)) from None
    return read


def connect(arguments: argparse.Namespace) -> execution.Execution:
    """Where the tasks run, from ``--workers`` and ``--scheduler`` (an unreachable scheduler is
    bad input)."""
    try:
        return execution.connect(arguments.workers, arguments.scheduler)
    except execution.Unavailable as problem:
        raise BadInput(str(problem)) from None


def read_conformance(path: Path, needed: Collection[str]) -> dict[str, Any]:
    """A conformance.json with the top-level fields ``needed``, refused in one line when it
    cannot be read, is not JSON, or is no such report."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as failure:
        raise BadInput(f"{path}: cannot read: {failure.strerror}") from None
    except ValueError:
        raise BadInput(f"{path}: not JSON (expected a conformance.json)") from None
    if not isinstance(document, dict) or not set(needed) <= set(document):
        named = list(needed)
        listed = " and ".join(named) if len(named) == 2 else ", ".join(named)
        raise BadInput(f"{path}: not a conformance report (expected {listed})")
    return document

"""A pytest plugin: scenario files become test items, so a project can run them in its own suite.

    pytest --harness-target reference path/to/scenarios/

collects every ``.yaml``/``.yml`` scenario file under the given paths (files whose top level has
``tree`` and ``steps``) as one test item per target.  Each item is judged as ``check`` judges
it, against the findings files on the findings path (``harness.findings_search``; add folders
with ``--harness-findings DIR``):

- no violation: it passes;
- every violation matched by the recorded finding of that scenario: it is an expected failure,
  a *strict* xfail whose reason is the finding's explanation (a finding whose witnesses are all
  ``sometimes`` is a non-strict one: it may not show);
- a violation no witness matches, a recorded witness that no longer shows, or a finding recorded
  for another content of the file: it fails, saying which;
- a scenario the target cannot express is skipped, the reason and the location naming the
  scenario file; an adapter error or a target that cannot be loaded fails it in one line.

A file that looks like a scenario (``tree:`` or ``steps:`` at its top level) but cannot be read
or parsed is a collection error, in the loader's one line, never silently left out.
``--harness-regressions`` adds the harness's own regression files to the run.  Without
``--harness-target`` the plugin collects nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.checkers import check
from harness.findings import (
    FindingEntry,
    FindingsFileError,
    judge_findings,
    load_document,
    observe,
    scenario_digest,
)
from harness.findings_search import search_path
from harness.runner import AdapterError, run_scenario
from harness.targets import registry
from harness.targets.base import TargetInfo
from scenarios.loading import REGRESSIONS, ScenarioFileError, load_scenario
from scenarios.model import Scenario

FOLDERS = pytest.StashKey[tuple[Path, ...]]()  # the findings path of this session
INFOS = pytest.StashKey[dict[str, TargetInfo | None]]()  # each target's info, None: not loadable
SCENARIO_KEYS = re.compile(r"^(tree|steps)\s*:", re.MULTILINE)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nested-interrupt-harness")
    group.addoption(
        "--harness-target",
        action="append",
        default=[],
        metavar="T",
        help="run scenario files found in the collected paths on target T (repeatable)",
    )
    group.addoption(
        "--harness-regressions",
        action="store_true",
        help="also collect the harness's own regression scenarios",
    )
    group.addoption(
        "--harness-findings",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="a folder of findings files to judge by, besides the bundled one and the "
        "plugins' (repeatable, as check --findings)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("--harness-target"):
        return
    if config.getoption("--harness-regressions"):
        config.args.append(str(REGRESSIONS))
    given: list[Path] = config.getoption("--harness-findings")
    for folder in given:
        if not folder.is_dir():
            raise pytest.UsageError(f"--harness-findings: {folder} is not a folder")
    try:
        config.stash[FOLDERS] = search_path(given)
    except FindingsFileError as problem:
        raise pytest.UsageError(str(problem)) from None
    config.stash[INFOS] = {}


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not parent.config.getoption("--harness-target"):
        return None
    if file_path.suffix not in {".yaml", ".yml"} or not _looks_like_scenario(file_path):
        return None
    collected: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
    return collected


def _looks_like_scenario(path: Path) -> bool:
    """A mapping with ``tree`` and ``steps``; or, when it does not parse, a text with either
    at its top level (so a broken scenario is reported, and other YAML files left alone)."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return False
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return SCENARIO_KEYS.search(text) is not None
    if isinstance(data, dict):
        return "tree" in data and "steps" in data
    return SCENARIO_KEYS.search(text) is not None


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[ScenarioItem]:
        try:
            scenario = load_scenario(self.path)
        except ScenarioFileError as problem:
            raise self.CollectError(str(problem)) from None
        for target in self.config.getoption("--harness-target"):
            item = ScenarioItem.from_parent(
                self, name=f"{self.path.stem}[{target}]", target=target, scenario=scenario
            )
            expected = _recorded_finding(self.config, target, self.path.stem, scenario)
            if expected is not None:
                item.add_marker(
                    pytest.mark.xfail(
                        reason=f"recorded finding: {expected.explanation}",
                        raises=RecordedFindingShown,
                        strict=any(not witness.sometimes for witness in expected.witnesses),
                    )
                )
            yield item


def _recorded_finding(
    config: pytest.Config, target: str, name: str, scenario: Scenario
) -> FindingEntry | None:
    """The finding recorded for this scenario (this content) on ``target``, if any; a target
    or findings file that cannot be used is left to the item, which fails saying why."""
    infos = config.stash[INFOS]
    if target not in infos:
        try:
            infos[target] = registry.get(target).info
        except (registry.UnknownTarget, registry.BrokenTarget):
            infos[target] = None
    info = infos[target]
    if info is None:
        return None
    try:
        document = load_document(info.findings_name, info.version, config.stash[FOLDERS])
    except FindingsFileError:
        return None
    entry = None if document is None else document.entry(name)
    if entry is None or entry.digest != scenario_digest(scenario):
        return None
    return entry


class ScenarioItem(pytest.Item):
    def __init__(self, *, target: str, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target = target
        self.scenario = scenario

    def runtest(self) -> None:
        try:
            target = registry.get(self.target)
        except registry.UnknownTarget as unknown:
            raise ScenarioFailure(str(unknown)) from None
        except registry.BrokenTarget as broken:
            raise ScenarioFailure(broken.refusal) from None
        name = self.path.stem
        try:
            history = run_scenario(target, self.scenario, name)
        except AdapterError as error:  # the adapter's bug, not a verdict on the implementation
            raise ScenarioFailure(str(error)) from None
        if history.not_applicable:
            # the target cannot express this scenario: reported as such, never as a pass
            raise pytest.skip.Exception(
                f"{name}: not applicable on {self.target}: needs "
                + ", ".join(history.not_applicable),
                _use_item_location=True,
            )
        info = target.info
        try:
            document = load_document(info.findings_name, info.version, self.config.stash[FOLDERS])
        except FindingsFileError as problem:
            raise ScenarioFailure(str(problem)) from None
        violations = check(history)
        verdict = judge_findings(
            document, [observe(history, self.scenario, violations, generated=False)]
        )
        problems = [
            f"{v.invariant} {v.slug} at step {v.step}: expected {v.expected}; seen {v.seen}"
            for _, v in verdict.new
        ]
        problems += [
            f"recorded finding no longer shows: {missing.witness.describe()} (update the "
            f"findings file of {info.findings_name} {info.version})"
            for missing in verdict.disappeared
        ]
        problems += [f"recorded finding does not apply: {why}" for _, why in verdict.stale]
        if problems:
            raise ScenarioFailure("\n".join(problems))
        if verdict.expected:
            raise RecordedFindingShown(verdict.expected[0].explanation)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        if isinstance(excinfo.value, ScenarioFailure | RecordedFindingShown):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.path.stem} on {self.target}"


class ScenarioFailure(Exception):
    """A scenario's violations (or why it could not be judged), shown as the item's failure."""


class RecordedFindingShown(Exception):
    """Every violation of the scenario is its recorded finding: the item's expected failure."""

"""A pytest plugin: scenario files become test items, so a project can run them in its own suite.

    pytest --harness-target reference path/to/scenarios/

collects every ``.yaml``/``.yml`` scenario file under the given paths (files whose top level has
``tree`` and ``steps``) as one test item per target; an item fails with the violations found.
``--harness-regressions`` adds the harness's own regression files to the run.  Without
``--harness-target`` the plugin collects nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.checkers import check
from harness.runner import AdapterError, run_scenario
from harness.targets import registry
from scenarios.loading import REGRESSIONS, ScenarioFileError, load_scenario


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


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--harness-regressions") and config.getoption("--harness-target"):
        config.args.append(str(REGRESSIONS))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not parent.config.getoption("--harness-target"):
        return None
    if file_path.suffix not in {".yaml", ".yml"} or not _looks_like_scenario(file_path):
        return None
    collected: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
    return collected


def _looks_like_scenario(path: Path) -> bool:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "tree" in data and "steps" in data


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[ScenarioItem]:
        for target in self.config.getoption("--harness-target"):
            yield ScenarioItem.from_parent(self, name=f"{self.path.stem}[{target}]", target=target)


class ScenarioItem(pytest.Item):
    def __init__(self, *, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target = target

    def runtest(self) -> None:
        try:
            target = registry.get(self.target)
        except registry.UnknownTarget as unknown:
            raise ScenarioFailure(str(unknown)) from None
        except registry.BrokenTarget as broken:
            raise ScenarioFailure(broken.refusal) from None
        try:
            scenario = load_scenario(self.path)
        except ScenarioFileError as problem:
            raise ScenarioFailure(str(problem)) from None
        try:
            history = run_scenario(target, scenario, self.path.stem)
        except AdapterError as error:  # the adapter's bug, not a verdict on the implementation
            raise ScenarioFailure(str(error)) from None
        if history.not_applicable:
            # the target cannot express this scenario: reported as such, never as a pass
            pytest.skip(
                f"not applicable on {self.target}: needs {', '.join(history.not_applicable)}"
            )
        violations = check(history)
        if violations:
            raise ScenarioFailure(
                "\n".join(
                    f"{v.invariant} {v.slug} at step {v.step}: expected {v.expected}; seen {v.seen}"
                    for v in violations
                )
            )

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        if isinstance(excinfo.value, ScenarioFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.path.stem} on {self.target}"


class ScenarioFailure(Exception):
    """A scenario's violations, shown as the item's failure."""

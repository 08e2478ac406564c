"""Reading scenario files, with errors a person can act on in one line.

A regression case is a YAML (or JSON) file under ``scenarios/regressions/``.  A file that does not
parse, does not match the schema, or asks for a step that is impossible at that point raises
``ScenarioFileError`` naming the file, the field and what was expected.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from scenarios.model import Scenario
from scenarios.oracle import ScenarioError, expectations

REGRESSIONS = Path(__file__).parent / "regressions"


class ScenarioFileError(ValueError):
    """A scenario file that cannot be used; the message is one line."""


def load_scenario(path: Path) -> Scenario:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as failure:
        raise ScenarioFileError(f"{path}: cannot read: {failure.strerror}") from None
    except UnicodeDecodeError:
        raise ScenarioFileError(f"{path}: not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as failure:
        mark = getattr(failure, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "somewhere"
        problem = getattr(failure, "problem", None) or "invalid YAML"
        raise ScenarioFileError(f"{path}: {where}: {problem}") from None
    return parse_scenario(data, str(path))


def parse_scenario(data: Any, origin: str) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioFileError(f"{origin}: expected a mapping at the top, got {_kind(data)}")
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as failure:
        raise ScenarioFileError(f"{origin}: {_first_error(failure)}") from None
    try:
        expectations(scenario)
    except ScenarioError as failure:
        raise ScenarioFileError(f"{origin}: {failure}") from None
    return scenario


def regression_files(directory: Path = REGRESSIONS) -> list[Path]:
    return sorted(path for path in directory.iterdir() if path.suffix in {".yaml", ".yml", ".json"})


def load_all(paths: Iterable[Path]) -> list[tuple[str, Scenario]]:
    return [(path.stem, load_scenario(path)) for path in paths]


def _first_error(failure: ValidationError) -> str:
    error = failure.errors(include_url=False)[0]
    location = ".".join(str(part) for part in error["loc"] if not _is_union_tag(part))
    message = error["msg"].removeprefix("Value error, ")
    field = location or "(top level)"
    count = failure.error_count()
    more = f" (and {count - 1} more problem{'s' if count > 2 else ''})" if count > 1 else ""
    return f"{field}: {message}{more}".replace("\n", " ")


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and part in {
        "Run",
        "Answer",
        "Restart",
        "Corrupt",
        "Repair",
        "Resend",
    }


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__

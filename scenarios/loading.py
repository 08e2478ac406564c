"""Reading scenario files, with errors a person can act on in one line.

A regression case is a YAML (or JSON) file under ``scenarios/regressions/``.  A file that does not
parse, does not match the schema, or asks for a step that is impossible at that point raises
``ScenarioFileError`` naming the file, the field and what was expected, in one style::

    FILE: steps[1].answer: no action labelled ['deploy-z']
    FILE: tree.sub_agents[0].window.size: Input should be greater than or equal to 2
    FILE: line 4, column 1: not valid YAML: a tab: indent with spaces
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import ValidationError

from scenarios.fields import FieldError, field_path
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
        data = read_yaml(text)
    except yaml.YAMLError as failure:
        raise ScenarioFileError(f"{path}: {yaml_problem(failure, text)}") from None
    return parse_scenario(data, str(path))


# libyaml's parser, where PyYAML was built with it: the same constructor and resolver as
# yaml.safe_load, so the same values, in about an eighth of the time
_LIBYAML: Final = getattr(yaml, "CSafeLoader", None)


def read_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, through libyaml where it is installed.  A text libyaml refuses
    is read again by PyYAML's own parser, and its error is the one raised, so every message about
    a file that does not parse is the same with or without libyaml."""
    if _LIBYAML is not None:
        try:
            return yaml.load(text, Loader=_LIBYAML)
        except yaml.YAMLError:
            pass
    return yaml.safe_load(text)


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
    """``FIELD: PROBLEM``: the first problem pydantic found, under the field it is in."""
    error = failure.errors(include_url=False)[0]
    location = tuple(part for part in error["loc"] if not _is_union_tag(part))
    message = error["msg"].removeprefix("Value error, ")
    found = error.get("ctx", {}).get("error")
    if isinstance(found, FieldError):  # a validator's problem in a field below its model
        location += found.location
        message = found.problem
    count = failure.error_count()
    more = f" (and {count - 1} more problem{'s' if count > 2 else ''})" if count > 1 else ""
    field = field_path(location)
    return f"{field + ': ' if field else ''}{message}{more}".replace("\n", " ")


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and part in {
        "Run",
        "Answer",
        "Restart",
        "Corrupt",
        "Repair",
        "Resend",
        "PlainRestart",
        "DeployRestart",
    }


# What PyYAML's problems mean in a scenario file, in words a person can act on; True: the place
# to name is where the construct starts (an unclosed bracket or quote), not where the file ends.
YAML_PROBLEMS: Final = (
    (r"found character '\\t' that cannot start any token", "a tab: indent with spaces", False),
    (
        r"found character '(.)' that cannot start any token",
        "a value cannot start with {0!r}: put it in quotes",
        False,
    ),
    (r"expected ',' or '\]', but got", "this '[' is never closed with ']'", True),
    (r"expected ',' or '}', but got", "this '{{' is never closed with '}}'", True),
    (r"found unexpected end of stream", "this quote is never closed", True),
    (
        r"mapping values are not allowed here",
        "a ':' where no 'key: value' can start: put the value in quotes, or fix the indentation",
        False,
    ),
    (
        r"could not find expected ':'",
        "neither 'key: value' nor '- item': a ':' is missing, or the indentation is off",
        True,
    ),
    (r"expected <block end>, but found", "the indentation does not match the lines above", False),
)


def yaml_problem(failure: yaml.YAMLError, text: str = "") -> str:
    """``line L, column C: not valid YAML: WHAT`` in one line, for any PyYAML error on
    ``text``."""
    mark = getattr(failure, "problem_mark", None)
    problem = str(getattr(failure, "problem", None) or "")
    if isinstance(failure, yaml.reader.ReaderError):
        mark = failure
        code = failure.character
        code = ord(code) if isinstance(code, str) else int(code)
        problem = f"a character YAML does not allow (U+{code:04X})"
    what = problem or "the file does not parse"
    for pattern, meaning, at_start in YAML_PROBLEMS:
        matched = re.search(pattern, problem)
        if matched:
            what = meaning.format(*matched.groups())
            opened = getattr(failure, "context_mark", None)
            if at_start and opened is not None:
                mark = opened
            break
    if mark is None:
        return f"not valid YAML: {what}"
    line, column = _line_and_column(mark, text)
    return f"line {line}, column {column}: not valid YAML: {what}".replace("\n", " ")


def _line_and_column(mark: Any, text: str) -> tuple[int, int]:
    """1-based, from a PyYAML mark (``line``/``column``) or a reader error (``position``)."""
    line, column = getattr(mark, "line", None), getattr(mark, "column", None)
    if isinstance(line, int) and isinstance(column, int):
        return line + 1, column + 1
    before = text[: int(getattr(mark, "position", 0))]
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__

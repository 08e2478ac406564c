"""Reading scenario files, with errors a person can act on in one line.

A regression case is a YAML (or JSON) file under ``scenarios/regressions/``.  A file that does not
parse, does not match the schema, or asks for a step that is impossible at that point raises
``ScenarioFileError`` naming the file, the field and what was expected, in one style, one line
per problem (every problem the schema finds, an unknown key with the field it may have meant)::

    FILE: steps[1].answer: no action labelled ['deploy-z']
    FILE: tree.sub_agents[0].window.size: Input should be greater than or equal to 2
    FILE: stpes: unknown field; did you mean steps?
    FILE: line 4, column 1: not valid YAML: a tab: indent with spaces
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import get_close_matches
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import ValidationError

from scenarios.fields import FieldError, field_path
from scenarios.model import STEP_KEYS, Scenario
from scenarios.oracle import ScenarioError, expectations
from scenarios.schema import fields_at

REGRESSIONS = Path(__file__).parent / "regressions"


class ScenarioFileError(ValueError):
    """A scenario file that cannot be used; the message is one line per problem, each naming
    the file."""


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
        problems = _problems(failure, data)
        raise ScenarioFileError("\n".join(f"{origin}: {problem}" for problem in problems)) from None
    try:
        expectations(scenario)
    except ScenarioError as failure:
        raise ScenarioFileError(f"{origin}: {failure}") from None
    return scenario


def regression_file(name: str) -> Path:
    """The regression file ``name`` (its stem): in ``REGRESSIONS``, else among the coverage
    shapes' (``REGRESSIONS / "coverage"``, which the default set leaves out); the first path
    when neither holds it."""
    top = REGRESSIONS / f"{name}.yaml"
    coverage = REGRESSIONS / "coverage" / f"{name}.yaml"
    return coverage if not top.is_file() and coverage.is_file() else top


def regression_files(directory: Path = REGRESSIONS) -> list[Path]:
    return sorted(path for path in directory.iterdir() if path.suffix in {".yaml", ".yml", ".json"})


def load_all(paths: Iterable[Path]) -> list[tuple[str, Scenario]]:
    return [(path.stem, load_scenario(path)) for path in paths]


def _problems(failure: ValidationError, data: Any) -> list[str]:
    """``FIELD: PROBLEM`` for every problem pydantic found, in its order.  An unknown key says
    which field it may have meant (``difflib``, among the fields the object lacks) or else which
    ones there are; a required field such a key was taken for is not reported missing too (it is
    the same mistake)."""
    found: list[tuple[tuple[Any, ...], str, str]] = []  # (location, problem, pydantic's type)
    meant: set[tuple[Any, ...]] = set()  # required fields an unknown key was taken for
    for error in failure.errors(include_url=False):
        location = tuple(part for part in error["loc"] if not _is_union_tag(part))
        message = error["msg"].removeprefix("Value error, ")
        found_error = error.get("ctx", {}).get("error")
        if isinstance(found_error, FieldError):  # a validator's problem in a field below its model
            location += found_error.location
            message = found_error.problem
        elif error["type"] == "extra_forbidden" and location:
            message, suggested = _unknown_key(location[:-1], str(location[-1]), data)
            if suggested is not None:
                meant.add((*location[:-1], suggested))
        elif error["type"] == "step_kind":
            location, message = _unknown_step(location, error.get("input"), message)
        found.append((location, message, error["type"]))
    lines = []
    for location, message, kind in found:
        if kind == "missing" and location in meant:
            continue
        field = field_path(location)
        lines.append(f"{field + ': ' if field else ''}{message}".replace("\n", " "))
    return lines


def _unknown_key(where: tuple[Any, ...], key: str, data: Any) -> tuple[str, str | None]:
    """What to say of ``key``, unknown in the object at ``where`` of ``data``: the problem, and
    the field it may have meant (None: no close one)."""
    known = fields_at(where)
    present = _value_at(data, where)
    lacking = [name for name in known if not isinstance(present, dict) or name not in present]
    # a field the object lacks first; then one it has (given twice, once misspelt)
    close = get_close_matches(key, lacking, n=1) or get_close_matches(key, known, n=1)
    if close:
        return f"unknown field; did you mean {close[0]}?", close[0]
    return f"unknown field; expected one of {', '.join(known)}", None


def _unknown_step(location: tuple[Any, ...], step: Any, message: str) -> tuple[Any, str]:
    """A step none of whose keys names a kind of step: the key (or bare word) it may have
    meant, when one is close."""
    words = [*STEP_KEYS, "restart", "repair"]
    keys = [key for key in step if isinstance(key, str)] if isinstance(step, dict) else []
    for key in keys:
        close = get_close_matches(key, words, n=1)
        if close:
            return (*location, key), f"did you mean {close[0]}? {message}"
    if isinstance(step, str):
        close = get_close_matches(step, ["restart", "repair"], n=1)
        if close:
            return location, f"{step!r}: did you mean {close[0]}? {message}"
    return location, message


def _value_at(data: Any, where: tuple[Any, ...]) -> Any:
    """The part of the file's data at ``where``, None when there is none."""
    for part in where:
        listed = isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        if not listed and not (isinstance(data, dict) and part in data):
            return None
        data = data[part]
    return data


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

"""Failing generated scenarios as ready-to-commit regression files.

A counterexample file is a scenario file like any under ``scenarios/regressions/`` (valid under
``docs/scenario.schema.json``): its ``description`` says what it broke, its ``source`` where it
was drawn, and ``python -m harness run FILE --target T`` reproduces it.  Three writers make them:

* a property test (``tests/test_properties.py``): hypothesis shrinks a failing scenario, and the
  last failing example it replays is the minimal one, so writing a file on every failure leaves
  the shrunk scenario on disk, as ``<invariant>-<target>-<digest>.yaml``;
* ``python -m harness check`` and ``faults`` (``harness.counterexamples``): each failing
  generated scenario of the run, as ``<scenario>@<target>.yaml`` (``file_name``).

Every file opens with a header line naming its writer and its target (``header``); only a file
whose first line is the header of a command and a target is ever replaced or deleted by that
command's next run on that target, so a file put there by hand, or whose header line was
deleted, is never touched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import yaml

from scenarios.model import Scenario

COUNTEREXAMPLES = Path("reports") / "counterexamples"
PROPERTY_TEST = "a property test (tests/test_properties.py)"


class Broken(Protocol):
    """What a violation says (``harness.checkers.violation.Violation``)."""

    @property
    def invariant(self) -> str: ...

    @property
    def slug(self) -> str: ...

    @property
    def step(self) -> int | None: ...

    @property
    def expected(self) -> str: ...

    @property
    def seen(self) -> str: ...


def file_name(scenario: str, target: str) -> str:
    """``<scenario>@<target>.yaml``, each part percent-escaped outside ``[A-Za-z0-9_.~-]``, so
    two (scenario, target) pairs never share a file and no name leaves the folder."""
    return f"{quote(scenario, safe='')}@{quote(target, safe='')}.yaml"


def owner(command: str, target: str) -> str:
    """The start of the header line of the files ``command`` writes for ``target``: what marks a
    file as one that command's next run there may replace or delete."""
    return f"# Written by python -m harness {command} on target {target} "


def header(command: str, target: str, version: str) -> str:
    return (
        f"{owner(command, target)}{version}; its next {command} there rewrites or deletes this "
        "file (delete this line to keep it)\n"
    )


def breaks(target: str, violations: Sequence[Broken]) -> str:
    """A description: the invariants ``violations`` break, and the first one's sentences."""
    first = violations[0]
    broken = sorted({f"{v.invariant} {v.slug}" for v in violations})
    return (
        f"Generated counterexample on {target}: breaks {', '.join(broken)}. First: step "
        f"{first.step}, expected {first.expected}; seen {first.seen}."
    )


def scenario_text(scenario: Scenario, description: str, source: str) -> str:
    """The scenario as a regression file: ``description`` and ``source`` first, then the rest as
    the model dumps it (no defaults), so the same scenario always gives the same bytes."""
    data: dict[str, Any] = {"description": description, "source": source}
    dumped = scenario.model_dump(mode="json", exclude_defaults=True)
    data |= {key: value for key, value in dumped.items() if key not in data}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def write_counterexample(
    scenario: Scenario,
    target: str,
    violations: Sequence[Broken],
    directory: Path = COUNTEREXAMPLES,
) -> Path:
    """A property test's failing scenario, with what it broke; return the file's path."""
    source = f"hypothesis (scenarios.strategies), shrunk, on target {target}"
    text = scenario_text(scenario, breaks(target, violations), source)
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{violations[0].invariant}-{target}-{digest}.yaml"
    path.write_text(f"# Written by {PROPERTY_TEST} on target {target}\n{text}", encoding="utf-8")
    return path

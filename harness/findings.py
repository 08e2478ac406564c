"""Expected findings: violations already found in a released implementation, kept as evidence.

A finding against a real SDK is reported, never hidden: it is a violation of that target, and
it is written down in ``scenarios/findings/<target>-<version>.yaml`` with the regression file that
shows it and a one-line explanation.  A run then passes only when it finds exactly what is written
there: a new violation fails it, and so does a recorded finding that no longer shows (the file
must be updated, so the record stays true).  Matching is by (scenario, invariant); one entry may
name several invariants that one bug breaks in one scenario, under one explanation.

The generated suite draws hundreds of scenarios, and a known bug shows in many of them under
names that change whenever a strategy does.  A findings file may therefore record a *class*: a
bug already shown by a recorded regression file (``shown_by``), the invariants it breaks, and how
to recognise a scenario it reaches: scenario classes of DESIGN.md the scenario must have (read off
the scenario alone) and/or ``evidence``, a pattern the run's recorded errors must match.  A class
covers only generated scenarios, and only the invariants it lists: any other violation in the
same scenario is new.  A class is never required to show, since the sample changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scenarios.statistics import CLASSES

FINDINGS = Path(__file__).resolve().parent.parent / "scenarios" / "findings"


class FindingsFileError(ValueError):
    """A findings file that cannot be used; the message is one line."""


InvariantId = Annotated[str, Field(pattern=r"^(I([1-9]|1[0-2])|D|O)$")]


class FindingEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario: Annotated[str, Field(min_length=1)]
    invariants: Annotated[tuple[InvariantId, ...], Field(min_length=1)]
    # shown in some runs only, by a race inside the SDK: allowed, never required
    sometimes: tuple[InvariantId, ...] = ()
    explanation: Annotated[str, Field(min_length=10)]


@dataclass(frozen=True)
class Finding:
    """One recorded (scenario, invariant) pair and why it happens."""

    scenario: str
    invariant: str
    explanation: str
    required: bool = True  # False: a race in the SDK shows it in some runs only
    recorded_class: str | None = None  # set when a recorded class covers a generated scenario

    def to_json(self) -> dict[str, str]:
        shown = {
            "scenario": self.scenario,
            "invariant": self.invariant,
            "explanation": self.explanation,
        }
        if self.recorded_class is not None:
            shown["class"] = self.recorded_class
        return shown


class FindingClass(BaseModel):
    """A recorded bug as it shows in generated scenarios (see the module's docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: Annotated[str, Field(alias="class", pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
    shown_by: Annotated[tuple[str, ...], Field(min_length=1)]
    scenario_classes: tuple[str, ...] = ()
    evidence: str | None = None
    invariants: Annotated[tuple[InvariantId, ...], Field(min_length=1)]
    explanation: Annotated[str, Field(min_length=10)]

    @field_validator("scenario_classes")
    @classmethod
    def _known_classes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - set(CLASSES))
        if unknown:
            raise ValueError(f"unknown scenario class {unknown[0]!r}; valid ones: docs/findings.md")
        return value

    @field_validator("evidence")
    @classmethod
    def _a_pattern(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as failure:
                raise ValueError(f"not a regular expression ({failure})") from None
        return value

    @model_validator(mode="after")
    def _recognisable(self) -> FindingClass:
        if not self.scenario_classes and self.evidence is None:
            raise ValueError("a class needs scenario_classes or evidence to know its scenarios")
        return self

    def covers(self, scenario_classes: set[str], errors: Iterable[str]) -> bool:
        """Whether a generated scenario with these classes and recorded errors is one of ours."""
        if not set(self.scenario_classes) <= scenario_classes:
            return False
        pattern = self.evidence
        return pattern is None or any(re.search(pattern, error) for error in errors)


class FindingsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str
    version: str
    findings: tuple[FindingEntry, ...] = ()
    classes: tuple[FindingClass, ...] = ()

    @model_validator(mode="after")
    def _classes_shown_by_recorded_files(self) -> FindingsFile:
        recorded = {entry.scenario for entry in self.findings}
        for index, found in enumerate(self.classes):
            missing = [name for name in found.shown_by if name not in recorded]
            if missing:
                raise ValueError(
                    f"classes.{index}.shown_by: {missing[0]!r} is not a scenario recorded in "
                    "findings (a class must be shown by a recorded regression file)"
                )
        return self


@dataclass(frozen=True)
class Verdict:
    expected: tuple[Finding, ...]  # recorded and seen again
    new: tuple[tuple[str, str], ...]  # (scenario, invariant) seen, not recorded
    disappeared: tuple[Finding, ...]  # recorded, not seen

    @property
    def passes(self) -> bool:
        return not self.new and not self.disappeared


def findings_path(target: str, version: str, directory: Path = FINDINGS) -> Path:
    return directory / f"{target}-{version}.yaml"


def load_findings(target: str, version: str, directory: Path = FINDINGS) -> tuple[Finding, ...]:
    document = _read(target, version, directory)
    if document is None:
        return ()
    return tuple(
        Finding(
            entry.scenario, invariant, entry.explanation, required=invariant in entry.invariants
        )
        for entry in document.findings
        for invariant in (*entry.invariants, *entry.sometimes)
    )


def load_classes(target: str, version: str, directory: Path = FINDINGS) -> tuple[FindingClass, ...]:
    document = _read(target, version, directory)
    return () if document is None else document.classes


GENERATED = "generated-"  # the names of generated scenarios, the only ones a class covers


def class_findings(
    classes: Iterable[FindingClass],
    scenario: str,
    scenario_classes: set[str],
    errors: Iterable[str],
    seen: Iterable[str],
) -> tuple[Finding, ...]:
    """The findings that recorded classes give one scenario: an invariant ``seen`` there that a
    class covering the scenario lists (never required)."""
    if not scenario.startswith(GENERATED):
        return ()
    errors = list(errors)
    invariants = set(seen)
    return tuple(
        Finding(
            scenario,
            invariant,
            f"in the recorded class `{found.name}` (shown by {', '.join(found.shown_by)})",
            required=False,
            recorded_class=found.name,
        )
        for found in classes
        if found.covers(scenario_classes, errors)
        for invariant in found.invariants
        if invariant in invariants
    )


def _read(target: str, version: str, directory: Path) -> FindingsFile | None:
    path = findings_path(target, version, directory)
    if not path.exists():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        document = FindingsFile.model_validate(data)
    except yaml.YAMLError as failure:
        raise FindingsFileError(f"{path}: not valid YAML ({failure})".replace("\n", " ")) from None
    except ValidationError as failure:
        error = failure.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        raise FindingsFileError(f"{path}: {where}: {error['msg']}") from None
    if (document.target, document.version) != (target, version):
        raise FindingsFileError(
            f"{path}: target/version say {document.target} {document.version}, "
            f"expected {target} {version}"
        )
    return document


def judge_findings(
    seen: Iterable[tuple[str, str]], recorded: Iterable[Finding], scenarios: Iterable[str]
) -> Verdict:
    """Compare (scenario, invariant) pairs seen with the recorded findings for the scenarios run.

    A recorded finding whose scenario was not run this time is neither seen nor missing; one
    recorded as ``sometimes`` (a race in the SDK) is never missing.
    """
    seen_pairs = set(seen)
    ran = set(scenarios)
    relevant = [finding for finding in recorded if finding.scenario in ran]
    recorded_pairs = {(finding.scenario, finding.invariant) for finding in relevant}
    return Verdict(
        expected=tuple(f for f in relevant if (f.scenario, f.invariant) in seen_pairs),
        new=tuple(sorted(seen_pairs - recorded_pairs)),
        disappeared=tuple(
            f for f in relevant if f.required and (f.scenario, f.invariant) not in seen_pairs
        ),
    )

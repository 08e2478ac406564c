"""Expected findings: violations already found in a released implementation, kept as evidence.

A finding against a real SDK is reported, never hidden: it is a violation of that target, and
it is written down in ``scenarios/findings/<target>-<version>.yaml`` with the regression file that
shows it and a one-line explanation.  A run then passes only when it finds exactly what is written
there: a new violation fails it, and so does a recorded finding that no longer shows (the file
must be updated, so the record stays true).  Matching is by (scenario, invariant); one entry may
name several invariants that one bug breaks in one scenario, under one explanation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

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

    def to_json(self) -> dict[str, str]:
        return {
            "scenario": self.scenario,
            "invariant": self.invariant,
            "explanation": self.explanation,
        }


class FindingsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str
    version: str
    findings: tuple[FindingEntry, ...] = ()


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
    path = findings_path(target, version, directory)
    if not path.exists():
        return ()
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
    return tuple(
        Finding(
            entry.scenario, invariant, entry.explanation, required=invariant in entry.invariants
        )
        for entry in document.findings
        for invariant in (*entry.invariants, *entry.sometimes)
    )


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

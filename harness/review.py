"""Pull-request mode: a build judged against a named release's findings.

A reviewer of an SDK pull request has an unreleased build (any version string) and the findings
of the last release.  ``check --baseline V`` (or ``--baseline-findings FILE``) judges the build's
runs by that file, as the verdict always does (``harness.findings.verdict``: each violation
matched by a recorded witness, each witness that matched nothing), and reads the result the way
a review needs it:

* a violation a recorded witness matches is a bug still open;
* a recorded witness that no longer shows is a bug this build fixes: listed, never a failure
  (for a release's own check it fails the run: the file is out of date); unless its regression
  file shows new violations of the same invariant (the bug changed its face: those fail);
* a violation no witness matches is new, and fails the review, as does a regression file whose
  record no longer applies (stale).

A bug is a recorded finding (named by its regression file) or a recorded class (by its name).
This module is a thin layer over the verdict: it chooses the file and reinterprets its
``disappeared``; what matches what is the verdict's business alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.checkers.violation import Violation
from harness.conformance import Cell, Conformance
from harness.findings import FindingsFile, judge_findings


@dataclass(frozen=True)
class Bug:
    """A recorded bug as this build shows it."""

    name: str  # the regression file of a finding, or a class's name
    explanation: str
    matched: int = 0  # violations of this build its witnesses matched (still open)
    gone: tuple[str, ...] = ()  # its witnesses that no longer show (fixed, or partly)
    witnesses: int = 0  # how many it records (what "every witness gone" is measured on)

    @property
    def fixed(self) -> bool:
        return not self.matched and bool(self.gone)


@dataclass(frozen=True)
class Review:
    target: str
    version: str  # the build under review
    baseline: str  # the release whose findings judge it
    still_open: tuple[Bug, ...]
    fixed: tuple[Bug, ...]  # every witness gone, or (partly) some
    new: tuple[tuple[str, Violation], ...]  # (scenario, violation) no witness matches
    stale: tuple[tuple[str, str], ...]

    @property
    def passes(self) -> bool:
        return not self.new and not self.stale

    def to_json(self) -> dict[str, Any]:
        def bug(item: Bug) -> dict[str, Any]:
            return {"bug": item.name, "explanation": item.explanation, "matched": item.matched}

        return {
            "target": self.target,
            "version": self.version,
            "baseline": self.baseline,
            "passes": self.passes,
            "fixed": [bug(item) | {"gone": list(item.gone)} for item in self.fixed],
            "still_open": [bug(item) for item in self.still_open],
            "new": [{"scenario": name, **v.to_json()} for name, v in self.new],
            "stale": [{"scenario": name, "why": why} for name, why in self.stale],
        }


def rejudge(result: Conformance, baselines: Mapping[str, FindingsFile]) -> dict[str, Review]:
    """Each target in ``baselines`` judged again by its baseline findings file; its verdict in
    ``result`` replaced by that judgement, less what no longer shows (fixed: never a failure),
    and its cells recomputed, so the reports and the exit agree with the review."""
    reviews: dict[str, Review] = {}
    for described in result.targets:
        name = str(described["name"])
        document = baselines.get(name)
        if document is None or name not in result.runs:
            continue
        verdict = judge_findings(document, result.runs[name])
        # what no longer shows is fixed, a class's demonstration included
        verdict = replace(verdict, undemonstrated=())
        result.verdicts[name] = replace(verdict, disappeared=())
        excused = {(item.scenario, id(item.violation)) for item in verdict.expected}
        result.cells[name] = {
            checker: _restated(cell, excused) for checker, cell in result.cells[name].items()
        }
        bugs: dict[str, Bug] = {}
        recorded = {entry.scenario: entry for entry in document.findings}
        recorded_classes = {found.name: found for found in document.classes}
        for item in verdict.expected:
            key = item.recorded_class or item.scenario
            explanation = recorded_classes[key].explanation if item.recorded_class else ""
            explanation = explanation or recorded[key].explanation
            known = bugs.get(key, Bug(key, explanation))
            bugs[key] = replace(known, matched=known.matched + 1)
        # a regression file showing new violations of an invariant whose recorded witnesses no
        # longer match changed (the new ones fail the review), it is not fixed
        changed = {(name, violation.invariant) for name, violation in verdict.new}
        for missing in verdict.disappeared:
            if (missing.scenario, missing.witness.invariant) in changed:
                continue
            key = missing.recorded_class or missing.scenario or "?"
            known = bugs.get(key, Bug(key, missing.explanation))
            bugs[key] = replace(known, gone=(*known.gone, missing.witness.describe()))
        for key, known in bugs.items():
            source = recorded_classes.get(key) or recorded.get(key)
            bugs[key] = replace(known, witnesses=0 if source is None else len(source.witnesses))
        reviews[name] = Review(
            target=name,
            version=str(described["version"]),
            baseline=document.version,
            still_open=tuple(bug for bug in bugs.values() if bug.matched),
            fixed=tuple(bug for bug in bugs.values() if bug.gone),
            new=verdict.new,
            stale=verdict.stale,
        )
    return reviews


def _restated(cell: Cell, excused: set[tuple[str, int]]) -> Cell:
    if not cell.violations:
        return cell
    every = all((name, id(violation)) in excused for name, violation in cell.violations)
    return replace(cell, status="expected" if every else "violated")


def first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    head, dot, _ = flat.partition(". ")
    return head + (dot.strip() or "")


def comment(
    reviews: Sequence[Review],
    evidence: Mapping[tuple[str, str], Sequence[Path]] | None = None,
    diagrams: Mapping[tuple[str, str], str] | None = None,
) -> str:
    """The reviews as a pull-request comment (Markdown): per target, what this build fixes,
    what is new (with its counterexample file and reproducer, ``evidence`` by (target,
    scenario)), and what is still open.  ``diagrams``: a Mermaid sequence diagram per (target,
    scenario) of a new violation."""
    lines: list[str] = []
    for review in reviews:
        verdict = "passes" if review.passes else "fails"
        lines += [
            f"## {review.target} {review.version} against the findings of {review.baseline}: "
            f"{verdict}",
            "",
            f"{len(review.fixed)} fixed · {len(review.new)} new · "
            f"{len(review.still_open)} still open",
            "",
        ]
        if review.fixed:
            lines += ["### Fixed by this build", ""]
            for bug in review.fixed:
                partly = "" if bug.fixed else " (partly: some of its witnesses still show)"
                lines.append(f"- `{bug.name}`{partly}: {first_sentence(bug.explanation)}")
                lines += [f"  - no longer shows: {gone}" for gone in bug.gone[:3]]
                if len(bug.gone) > 3:
                    lines.append(f"  - … and {len(bug.gone) - 3} more")
            lines.append("")
        if review.new or review.stale:
            lines += ["### New (fails the review)", ""]
            for scenario, violation in review.new:
                step = "run-wide" if violation.step is None else f"step {violation.step}"
                lines.append(
                    f"- `{scenario}` {violation.invariant} ({violation.slug}) at {step}: "
                    f"expected {violation.expected}; seen {violation.seen}"
                )
            for scenario, why in review.stale:
                lines.append(f"- `{scenario}`: its record no longer applies: {why}")
            shown = sorted({scenario for scenario, _ in review.new})
            for scenario in shown:
                files = (evidence or {}).get((review.target, scenario), ())
                if files:
                    lines.append(f"- `{scenario}`: " + ", ".join(f"`{file}`" for file in files))
                drawn = (diagrams or {}).get((review.target, scenario))
                if drawn:
                    lines += ["", "```mermaid", drawn.rstrip(), "```", ""]
            lines.append("")
        if review.still_open:
            lines += ["### Still open", ""]
            lines += [
                f"- `{bug.name}` ({bug.matched} violations): {first_sentence(bug.explanation)}"
                for bug in review.still_open
            ]
            lines.append("")
    return "\n".join(lines)

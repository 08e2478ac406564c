"""What ``record`` writes: the findings file brought up to a run (a witness per violation no
recorded witness names, the findings that no longer show dropped), and its YAML text."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import yaml

from harness.checkers.violation import Violation
from harness.findings.document import (
    DRAFTS,
    PLACEHOLDER,
    FindingEntry,
    FindingsFile,
    Witness,
    first_match,
)
from harness.findings.releases import admits, narrowed
from harness.findings.verdict import Observed, judge_findings


@dataclass(frozen=True)
class Recorded:
    """What ``record`` changed, and what a person must still do."""

    added: tuple[str, ...]  # regression findings new or re-recorded (scenario names)
    removed: tuple[str, ...]  # regression findings that no longer show, dropped
    unexplained: tuple[str, ...]  # findings whose explanation is still the placeholder
    uncovered: tuple[tuple[str, Violation], ...]  # generated violations no class covers


def literal(text: str) -> str:
    """``text`` as a pattern that matches only itself (only what is special escaped, so the
    recorded sentence stays readable)."""
    return re.sub(r"([\\.^$*+?{}\[\]()|])", r"\\\1", text)


def exact_witness(violation: Violation, kind: str) -> Witness:
    """A witness that names exactly this violation: its invariant, step kind and sentences."""
    return Witness.model_validate(
        {
            "invariant": violation.invariant,
            "step": kind,
            "expected": f"^{literal(violation.expected)}$",
            "seen": f"^{literal(violation.seen)}$",
        }
    )


def record(
    document: FindingsFile | None, target: str, version: str, runs: Iterable[Observed]
) -> tuple[FindingsFile, Recorded]:
    """The findings file updated from ``runs`` of release ``version``: each regression file that
    ran gets its digest and a witness per violation (the recorded witnesses that still match are
    kept, with their explanation; a new finding gets the placeholder explanation ``check``
    refuses); a regression finding whose scenario ran clean is dropped unless a class is shown by
    it.  In a file of a range of releases (``through``) only what ``version`` shows differently
    is written: what it no longer shows stops applying to it (``releases`` gains
    ``!=version``), what it shows new applies to it alone (``==version``), and the other
    releases' findings stay as they are.  Classes are kept as written: a person generalises
    generated violations into a class (``uncovered``)."""
    runs = list(runs)
    old = document or FindingsFile(target=target, version=version)
    verdict = judge_findings(old.as_of(version), runs)
    shown_by = {name for found in old.classes for name in found.shown_by}
    ran = {run.scenario: run for run in runs if not run.generated}
    releases = _Releases(version, old.ranged, (*old.named_releases(), version))
    entries: list[FindingEntry] = []
    added: list[str] = []
    removed: list[str] = []
    for entry in old.findings:
        run = ran.pop(entry.scenario, None)
        if run is None:
            entries.append(entry)
            continue
        updated = _rerecorded(entry, run, releases)
        if updated is None and entry.scenario not in shown_by:
            removed.append(entry.scenario)
            continue
        updated = updated or entry
        if updated != entry:
            added.append(entry.scenario)
        entries.append(updated)
    for run in ran.values():
        fresh = _rerecorded(None, run, releases)
        if fresh is not None:
            entries.append(fresh)
            added.append(run.scenario)
    updated_document = FindingsFile.model_validate(
        {
            "target": old.target,
            "version": old.version,
            "through": old.through,
            "findings": [entry.model_dump(by_alias=True) for entry in entries],
            "classes": [found.model_dump(by_alias=True) for found in old.classes],
        },
        context={DRAFTS: True},
    )
    generated = {run.scenario for run in runs if run.generated}
    uncovered = tuple((name, v) for name, v in verdict.new if name in generated)
    unexplained = tuple(
        [e.scenario for e in entries if PLACEHOLDER in e.explanation]
        + [f"class {c.name}" for c in old.classes if PLACEHOLDER in c.explanation]
    )
    return updated_document, Recorded(tuple(added), tuple(removed), unexplained, uncovered)


@dataclass(frozen=True)
class _Releases:
    """The release being recorded, whether its file covers others too, and the releases that
    file names (a witness must still apply to one of them)."""

    version: str
    ranged: bool
    named: tuple[str, ...]

    def alive(self, witness: Witness) -> bool:
        return any(admits(witness.releases, each) for each in self.named)


def _rerecorded(
    entry: FindingEntry | None, run: Observed, releases: _Releases
) -> FindingEntry | None:
    """``entry`` brought up to ``run`` of ``releases.version`` (None when nothing of it is
    left)."""
    version = releases.version
    witnesses: tuple[Witness, ...] = () if entry is None else entry.witnesses
    outer = None if entry is None else entry.releases
    if outer is not None and not admits(outer, version) and run.violations:
        # the finding said it is not this release's: its witnesses keep their releases
        witnesses = tuple(
            w.model_copy(update={"releases": ",".join(filter(None, (outer, w.releases)))})
            for w in witnesses
        )
        outer = None
    if not run.violations and not releases.ranged:
        return None
    kept: list[Witness] = []
    for witness in witnesses:
        applies = admits(outer, version) and admits(witness.releases, version)
        shown = applies and any(witness.matches(v, kind, run.steps) for v, kind in run.violations)
        if not applies or shown or witness.sometimes:
            kept.append(witness)
        elif releases.ranged:  # no longer shown on this release; still on the others
            narrower = witness.model_copy(update={"releases": narrowed(witness.releases, version)})
            if releases.alive(narrower):
                kept.append(narrower)
    mine = [w for w in kept if admits(outer, version) and admits(w.releases, version)]
    for violation, kind in run.violations:
        if first_match(mine, violation, kind, run.steps) is None:
            exact = exact_witness(violation, kind)
            if releases.ranged:
                exact = exact.model_copy(update={"releases": f"=={version}"})
            kept.append(exact)
            mine.append(exact)
    if not kept:
        return None
    explanation = entry.explanation if entry is not None else f"{PLACEHOLDER}: why does it happen?"
    return FindingEntry.model_validate(
        {
            "scenario": run.scenario,
            "releases": outer,
            "digest": run.digest,
            "explanation": explanation,
            "witnesses": [witness.model_dump(exclude_defaults=True) for witness in kept],
        },
        context={DRAFTS: True},
    )


def dump_findings_file(document: FindingsFile, header: str = "") -> str:
    """The YAML text of ``document``, in the layout of the shipped files (``header``: comment
    lines to keep at the top)."""
    lines = [line for line in header.splitlines() if line.startswith("#")]
    lines += [f"target: {_scalar(document.target)}", f"version: {_scalar(document.version)}"]
    if document.through is not None:
        lines.append(f"through: {_scalar(document.through)}")
    if document.findings:
        lines.append("findings:")
        for entry in document.findings:
            lines.append(f"  - scenario: {_scalar(entry.scenario)}")
            if entry.releases is not None:
                lines.append(f"    releases: {_scalar(entry.releases)}")
            lines.append(f"    digest: {entry.digest}")
            lines += _folded("    explanation", entry.explanation)
            lines += _witnesses("    ", entry.witnesses)
    if document.classes:
        lines.append("classes:")
        for found in document.classes:
            lines.append(f"  - class: {found.name}")
            if found.releases is not None:
                lines.append(f"    releases: {_scalar(found.releases)}")
            lines.append(f"    shown_by: [{', '.join(map(_scalar, found.shown_by))}]")
            if found.scenario_classes:
                lines.append(f"    scenario_classes: [{', '.join(found.scenario_classes)}]")
            lines += _folded("    explanation", found.explanation)
            lines += _witnesses("    ", found.witnesses)
    return "\n".join(lines) + "\n"


def _witnesses(indent: str, witnesses: Sequence[Witness]) -> list[str]:
    lines = [f"{indent}witnesses:"]
    for witness in witnesses:
        fields = witness.model_dump(exclude_defaults=True)
        first = True
        for key in Witness.model_fields:  # in the order the model declares them
            if key not in fields:
                continue
            value = fields[key]
            shown = "true" if value is True else _scalar(str(value))
            lines.append(f"{indent}{'  - ' if first else '    '}{key}: {shown}")
            first = False
    return lines


def _folded(key: str, text: str) -> list[str]:
    indent = " " * (len(key) - len(key.lstrip()) + 2)
    # YAML folds a line break back into a space: break only at spaces, so every explanation
    # reads back as written ("sub-agent's", never "sub- agent's")
    wrapped = textwrap.wrap(
        " ".join(text.split()),
        width=100 - len(indent),
        break_on_hyphens=False,
        break_long_words=False,
    )
    return [f"{key}: >", *(indent + line for line in wrapped)]


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar that reads back as the same string."""
    plain = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", text) is not None
    if plain and yaml.safe_load(text) == text:
        return text
    if "\n" in text or not text.isprintable():
        return json.dumps(text, ensure_ascii=False)
    return "'" + text.replace("'", "''") + "'"

"""Bugs, not violations: the catalogue ``scenarios/bugs.yaml`` gives each distinct bug the findings
files record one identity (a stable slug, a title, its SDK and invariants) and says which classes
and regression findings of which findings file show it; :func:`bug_report` crosses it with
conformance reports into bug x target release.

The catalogue only *refers* to the findings files, which stay the witnesses' one record.  It is
held to them (:func:`problems`): every regression finding and class of every findings file is
covered by a bug, every reference names something recorded there, every invariant a bug lists is
witnessed by what it covers, and every invariant a covered finding or class witnesses belongs to
one of the bugs covering it (so each excused violation is some bug's).  A bug shows on several
releases under one slug: it names each findings file it shows in.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

import scenarios
from harness.findings.document import FindingsFile, InvariantId
from harness.findings.loading import read_findings_file, release_views
from harness.findings.search import BUNDLED, file_name, inherited, release
from harness.report import column
from harness.repro import NoHook, NotExpressible, hook_for, reproducer
from scenarios.loading import load_scenario, read_yaml, regression_file

CATALOGUE: Final = Path(scenarios.__file__).resolve().parent / "bugs.yaml"
REGRESSIONS: Final = Path(scenarios.__file__).resolve().parent / "regressions"
Slug = Annotated[str, Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
Stem = Annotated[str, Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*-[0-9][0-9A-Za-z.+-]*$")]
OPEN, NOT_SEEN, NOT_APPLICABLE = "open", "not seen", "n/a"


class CatalogueError(ValueError):
    """A catalogue that cannot be used, or that does not match the findings files: one line."""


class Covered(BaseModel):
    """What of one findings file shows a bug: regression findings by scenario, classes by name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    findings: tuple[Slug, ...] = ()
    classes: tuple[Slug, ...] = ()

    @model_validator(mode="after")
    def _something(self) -> Covered:
        if not (self.findings or self.classes):
            raise ValueError("names no finding and no class")
        return self


class Bug(BaseModel):
    """One bug of an SDK, as a maintainer would file it upstream."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Slug
    title: Annotated[str, Field(min_length=10, max_length=160, pattern=r"^[^\n]+$")]
    sdk: Slug
    invariants: Annotated[tuple[InvariantId, ...], Field(min_length=1)]
    example: Slug | None = None  # the regression file to start from (default: the first)
    covers: Annotated[dict[Stem, Covered], Field(min_length=1)]

    @model_validator(mode="after")
    def _shown_by_a_regression_file(self) -> Bug:
        if not any(covered.findings for covered in self.covers.values()):
            raise ValueError("covers no regression finding: a bug needs a file that shows it")
        if self.example is not None and self.example not in self.regressions():
            raise ValueError(f"example: {self.example!r} is none of the findings it covers")
        return self

    def names(self, stem: str) -> Covered:
        return self.covers.get(stem, Covered.model_construct())

    def regressions(self) -> tuple[str, ...]:
        """Every regression file that shows it, on any release: its example first."""
        names = sorted({name for c in self.covers.values() for name in c.findings})
        return tuple(sorted(names, key=lambda name: name != self.example))


class Catalogue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    bugs: Annotated[tuple[Bug, ...], Field(min_length=1)]

    @model_validator(mode="after")
    def _unique(self) -> Catalogue:
        ids = [bug.id for bug in self.bugs]
        for index, name in enumerate(ids):
            if name in ids[:index]:
                raise ValueError(f"bugs.{index}.id: {name!r} is catalogued twice")
        return self


def read_catalogue(path: Path = CATALOGUE) -> Catalogue:
    """The catalogue at ``path``, refused in one line naming the field when it cannot be used."""
    try:
        return Catalogue.model_validate(read_yaml(path.read_text(encoding="utf-8")))
    except OSError as failure:
        raise CatalogueError(f"{path}: cannot read: {failure.strerror}") from None
    except yaml.YAMLError as failure:
        raise CatalogueError(f"{path}: not valid YAML ({failure})".replace("\n", " ")) from None
    except ValidationError as failure:
        error = failure.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        message = str(error["msg"]).removeprefix("Value error, ")
        raise CatalogueError(f"{path}: {where}: {message}".replace("\n", " ")) from None


def read_findings_files(folder: Path = BUNDLED) -> dict[str, FindingsFile]:
    """Every findings file of ``folder`` by stem (``strands-1.62.0``), a file of a range of
    releases as its view as of each release it names (``strands-1.59.0`` through ``1.62.0``:
    ``strands-1.59.0`` and ``strands-1.62.0``); one that cannot be used is refused in one line
    (``FindingsFileError``)."""
    return {
        stem: view
        for path in sorted(folder.glob("*.yaml"))
        for stem, view in release_views(read_findings_file(path)).items()
    }


def problems(catalogue: Catalogue, documents: Mapping[str, FindingsFile]) -> list[str]:
    """Where ``catalogue`` and the findings files disagree, one line each (empty: they agree)."""
    found: list[str] = []
    covering: dict[tuple[str, str, str], list[Bug]] = {}
    sdk_of: dict[str, tuple[str, str]] = {}  # findings target -> (sdk, the bug that said so)
    for index, bug in enumerate(catalogue.bugs):
        where = f"bugs.{index} ({bug.id})"
        witnessed: set[str] = set()
        for stem, covered in bug.covers.items():
            document = documents.get(stem)
            if document is None:
                found.append(f"{where}: covers.{stem}: no findings file {stem}.yaml")
                continue
            known = sdk_of.setdefault(document.target, (bug.sdk, bug.id))
            if known[0] != bug.sdk:
                found.append(
                    f"{where}: sdk {bug.sdk!r}, but {known[1]} says {document.target} is "
                    f"{known[0]!r}"
                )
            for kind, name in _references(covered):
                invariants = _witnessed(document, kind, name)
                if invariants is None:
                    found.append(f"{where}: covers.{stem}.{kind}: {name!r} is not in {stem}.yaml")
                    continue
                witnessed |= invariants
                covering.setdefault((stem, kind, name), []).append(bug)
        for invariant in bug.invariants:
            if invariant not in witnessed:
                found.append(f"{where}: invariants: {invariant} is witnessed by nothing it covers")
    for stem, document in documents.items():
        for kind, name in _recorded(document):
            bugs = covering.get((stem, kind, name))
            if not bugs:
                found.append(f"{stem}.yaml: {kind}: {name!r} is covered by no bug")
                continue
            claimed = {invariant for bug in bugs for invariant in bug.invariants}
            for invariant in sorted(_witnessed(document, kind, name) or set()):
                if invariant not in claimed:
                    found.append(
                        f"{stem}.yaml: {kind}: {name!r} witnesses {invariant}, which none of "
                        f"its bugs lists ({', '.join(bug.id for bug in bugs)})"
                    )
    return found


def check(catalogue: Catalogue, documents: Mapping[str, FindingsFile]) -> None:
    """Refuse, in the first problem's line, a catalogue the findings files contradict."""
    found = problems(catalogue, documents)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise CatalogueError(f"{CATALOGUE.name}: {found[0]}{more}")


def _references(covered: Covered) -> Iterable[tuple[str, str]]:
    yield from (("findings", name) for name in covered.findings)
    yield from (("classes", name) for name in covered.classes)


def _recorded(document: FindingsFile) -> Iterable[tuple[str, str]]:
    yield from (("findings", entry.scenario) for entry in document.findings)
    yield from (("classes", found.name) for found in document.classes)


def _witnessed(document: FindingsFile, kind: str, name: str) -> set[str] | None:
    """The invariants the finding or class ``name`` witnesses; None when it is not recorded."""
    if kind == "findings":
        entry = document.entry(name)
        return None if entry is None else {witness.invariant for witness in entry.witnesses}
    for found in document.classes:
        if found.name == name:
            return {witness.invariant for witness in found.witnesses}
    return None


@dataclass(frozen=True)
class Column:
    """One target release of the table: its label, its target, and the findings file that
    judges it (None: it has none, so no bug applies)."""

    label: str
    target: str
    stem: str | None


def shipped_columns(documents: Mapping[str, FindingsFile]) -> list[Column]:
    """A column per findings file, by target and then release."""
    ordered = sorted(
        documents.items(),
        key=lambda item: (item[1].target, release(item[1].version) or (), item[1].version),
    )
    return [Column(f"{d.target} {d.version}", d.target, stem) for stem, d in ordered]


def report_columns(
    report: Mapping[str, Any], documents: Mapping[str, FindingsFile], folder: Path = BUNDLED
) -> list[Column]:
    """A column per target of a conformance report, with the findings file that judged it (its
    own, or the newest earlier release's: ``findings_version``)."""
    columns = []
    for target in report["targets"]:
        name, version = str(target["name"]), str(target["version"])
        version = str(target.get("findings_version") or version)
        if file_name(name, version).removesuffix(".yaml") not in documents:
            version = inherited(name, version, [folder]) or version
        stem = file_name(name, version).removesuffix(".yaml")
        columns.append(Column(column(target), name, stem if stem in documents else None))
    return columns


@dataclass(frozen=True)
class Source:
    """A conformance report (``conformance.json``) and the folder its paths are relative to."""

    report: Mapping[str, Any]
    folder: Path


def bug_report(
    catalogue: Catalogue,
    documents: Mapping[str, FindingsFile],
    sources: Sequence[Source] = (),
    reports: Path = Path("reports"),
) -> dict[str, Any]:
    """Bug x target release.  Without ``sources``, a column per findings file and each cell
    ``open`` (recorded there), ``not seen`` or ``n/a`` (another SDK's release); with them, a
    column per target of each report, each cell ``open`` with the count of violations the bug's
    findings and classes excused there (of its invariants: a violation of a finding that shows
    two bugs counts for each whose invariant it is), ``not seen`` (none), or ``n/a`` (no
    findings file judged that target, or it is another SDK's)."""
    sdk_of = {
        documents[stem].target: bug.sdk
        for bug in catalogue.bugs
        for stem in bug.covers
        if stem in documents
    }
    columns: list[tuple[Column, Source | None]] = (
        [(each, source) for source in sources for each in report_columns(source.report, documents)]
        if sources
        else [(each, None) for each in shipped_columns(documents)]
    )
    bugs = []
    attributed: dict[str, set[int]] = {place.label: set() for place, source in columns if source}
    for bug in catalogue.bugs:
        cells: dict[str, dict[str, Any]] = {}
        first: dict[str, str] | None = None
        for place, source in columns:
            if place.stem is None or sdk_of.get(place.target) != bug.sdk:
                cells[place.label] = {"state": NOT_APPLICABLE}
                continue
            covered = bug.names(place.stem)
            if source is None:
                recorded = bool(covered.findings or covered.classes)
                cells[place.label] = {"state": OPEN if recorded else NOT_SEEN}
                continue
            excused = _excused(bug, covered, source.report, place.label)
            attributed[place.label] |= {id(item) for item in excused}
            cells[place.label] = {"state": OPEN if excused else NOT_SEEN, "count": len(excused)}
            if first is None:
                first = _first_counterexample(excused, source, place.label, reports)
        regressions = bug.regressions()
        target, explanation, explained_in = _where(bug, documents)
        bugs.append(
            {
                "id": bug.id,
                "title": bug.title,
                "sdk": bug.sdk,
                "invariants": list(bug.invariants),
                "regressions": list(regressions),
                "cells": cells,
                "first_counterexample": first,
                "explanation": explanation,
                "explained_in": explained_in,
                "reproducer": reproducer_command(regressions, target),
            }
        )
    return {
        "columns": [
            {
                "label": place.label,
                "target": place.target,
                "findings": place.stem,
                **(_totals(source.report, place.label, attributed[place.label]) if source else {}),
            }
            for place, source in columns
        ],
        "bugs": bugs,
    }


def _totals(report: Mapping[str, Any], label: str, attributed: set[int]) -> dict[str, int]:
    """How many violations a report's column excused, and how many of them no bug explains
    (a findings file recorded since the catalogue was last updated)."""
    expected = report["findings"].get(label, {}).get("expected", [])
    return {
        "excused": len(expected),
        "unattributed": sum(1 for item in expected if id(item) not in attributed),
    }


def _excused(
    bug: Bug, covered: Covered, report: Mapping[str, Any], label: str
) -> list[Mapping[str, Any]]:
    """The violations of a report's column that ``bug``'s findings and classes excused."""
    expected: list[Mapping[str, Any]] = report["findings"].get(label, {}).get("expected", [])
    return [
        item
        for item in expected
        if item.get("invariant") in bug.invariants
        and (
            item["class"] in covered.classes
            if "class" in item
            else item.get("scenario") in covered.findings
        )
    ]


def _first_counterexample(
    excused: Sequence[Mapping[str, Any]], source: Source, label: str, reports: Path
) -> dict[str, str] | None:
    """The first generated scenario a bug's class covered in a report's column, with the
    counterexample file ``check`` wrote for it (its path from ``reports``), if any."""
    scenario = next((str(item["scenario"]) for item in excused if "class" in item), None)
    if scenario is None:
        return None
    first = {"target": label, "scenario": scenario}
    path = source.report.get("counterexamples", {}).get(label, {}).get(scenario)
    if isinstance(path, str):
        first["file"] = Path(os.path.relpath(source.folder / path, reports)).as_posix()
    return first


def _newest(bug: Bug, documents: Mapping[str, FindingsFile]) -> FindingsFile | None:
    """The findings file of the newest release that records the bug's example (its first
    regression file)."""
    first = bug.regressions()[0]
    shown = [documents[s] for s, c in bug.covers.items() if first in c.findings and s in documents]
    return max(shown, key=lambda d: (release(d.version) or (), d.target), default=None)


def _where(bug: Bug, documents: Mapping[str, FindingsFile]) -> tuple[str, str, str]:
    """The target to reproduce the bug's example on, and what its finding there says (where to
    look: the findings files name the SDK's code)."""
    newest = _newest(bug, documents)
    if newest is None:  # a catalogue that has not been checked against these files
        return next(iter(bug.covers)).rsplit("-", 1)[0], "", ""
    entry = newest.entry(bug.regressions()[0])
    where = f"scenarios/findings/{file_name(newest.target, newest.version)}"
    return newest.target, "" if entry is None else entry.explanation, where


def reproducer_command(regressions: Sequence[str], target: str) -> str:
    """The command writing the bug's reproducer for ``target``: with its first regression file
    that target's reproducer expresses (``repro`` refuses one that uses what no template or the
    SDK can send), or why there is none."""
    try:
        hook_for(target)
    except NoHook:
        return f"none: {target} has no reproducer hook"
    for name in regressions:
        try:
            reproducer(target, name, load_scenario(regression_file(name)))
        except NotExpressible:
            continue
        return f"python -m harness repro {name} --target {target}"
    return f"none: the {target} reproducer expresses none of its regression files"


def cell_text(cell: Mapping[str, Any]) -> str:
    return f"{cell['state']} ({cell['count']})" if "count" in cell else str(cell["state"])


def tables(document: Mapping[str, Any], link: str) -> list[str]:
    """The table per SDK (only its own releases' columns), a row per bug; ``link`` is the path
    from the page to ``scenarios/regressions/``."""
    lines: list[str] = []
    for sdk in dict.fromkeys(bug["sdk"] for bug in document["bugs"]):
        rows = [bug for bug in document["bugs"] if bug["sdk"] == sdk]
        labels = [
            c["label"]
            for c in document["columns"]
            if any(bug["cells"][c["label"]]["state"] != NOT_APPLICABLE for bug in rows)
        ]
        lines += [f"**{sdk}**", "", "| bug | " + " | ".join(labels) + " | shown by |"]
        lines.append("|---|" + "---|" * len(labels) + "---|")
        for bug in rows:
            cells = " | ".join(cell_text(bug["cells"][label]) for label in labels)
            first, more = bug["regressions"][0], len(bug["regressions"]) - 1
            shown = f"[{first}]({link}/{_under(first)})" + (f" (+{more})" if more else "")
            lines.append(f"| `{bug['id']}`: {bug['title']} | {cells} | {shown} |")
        lines.append("")
    return lines


def _under(name: str) -> str:
    """The regression file ``name``'s path under ``scenarios/regressions/`` (a coverage shape's
    sits in ``coverage/``)."""
    return regression_file(name).resolve().relative_to(REGRESSIONS).as_posix()


def markdown(document: Mapping[str, Any], reports: Path) -> str:
    """``bugs.md``: the tables, then each bug with its regression files, its first
    counterexample and the command line of its reproducer."""
    link = Path(os.path.relpath(REGRESSIONS, reports.resolve())).as_posix()
    lines = [
        "# Bugs",
        "",
        f"{len(document['bugs'])} distinct bugs (scenarios/bugs.yaml), each with the findings "
        "files (target releases) it is recorded in. A cell is `open` where the bug's findings or "
        "classes excused violations (their count, when a conformance report was given), `not "
        "seen` where none did, `n/a` where no findings file judged that target (or it is "
        "another SDK's).",
        "",
        *_explained(document),
        *tables(document, link),
    ]
    for bug in document["bugs"]:
        lines += [
            f"## `{bug['id']}`",
            "",
            f"{bug['title']} ({bug['sdk']}; {', '.join(bug['invariants'])})",
            "",
        ]
        if bug["explanation"]:
            lines += [f"> {bug['explanation']}", ""]
            lines += [f"(the finding of `{bug['regressions'][0]}` in {bug['explained_in']})", ""]
        lines.append(
            "- regression files: "
            + ", ".join(f"[{r}]({link}/{_under(r)})" for r in bug["regressions"])
        )
        first = bug["first_counterexample"]
        if first is not None:
            where = f" (`{first['file']}`)" if "file" in first else ""
            lines.append(
                f"- first counterexample: `{first['scenario']}` on {first['target']}{where}"
            )
        command = bug["reproducer"]
        lines += [f"- reproducer: {command if command.startswith('none') else f'`{command}`'}", ""]
    return "\n".join(lines)


def _explained(document: Mapping[str, Any]) -> list[str]:
    """A line per column of a conformance report: its excused violations, the bugs open there,
    and how many violations no bug explains (then the catalogue needs updating)."""
    lines = []
    for place in document["columns"]:
        if "excused" not in place:
            continue
        label = place["label"]
        open_there = sum(1 for bug in document["bugs"] if bug["cells"][label]["state"] == OPEN)
        left = place["unattributed"]
        lines.append(
            f"- {label}: {place['excused']} violations matched by a recorded witness, "
            f"{open_there} bugs open"
            + (f"; {left} of them explained by no bug: update scenarios/bugs.yaml" if left else "")
        )
    return [*lines, ""] if lines else []


BEGIN: Final = (
    "<!-- the bug table: generated from scenarios/bugs.yaml and the findings files by "
    "`python -m harness bugs --readme README.md`; tests/test_bugs.py checks it -->"
)
END: Final = "<!-- end of the bug table -->"


def readme_block(document: Mapping[str, Any]) -> str:
    """The README's bug table (a report without counts: the findings files alone), between its
    markers."""
    intro = (
        f"{len(document['bugs'])} distinct bugs, each recorded in the findings files of the "
        "releases it shows on (`open`; `not seen`: the release's file records none of it). "
        "Each links the regression file that shows it; `python -m harness bugs` writes this "
        "table with the counts of a run (`reports/bugs.md`), each bug's first counterexample "
        "and its reproducer."
    )
    return "\n".join([BEGIN, "", intro, "", *tables(document, "scenarios/regressions"), END])


def replace_block(text: str, block: str) -> str:
    """``text`` with what lies between the bug table's markers (included) replaced by
    ``block``; a ValueError when the markers are not there once each, in order."""
    start, end = text.find(BEGIN), text.find(END)
    if text.count(BEGIN) != 1 or text.count(END) != 1 or end < start:
        raise ValueError("expected the bug table's markers once each (see harness/bugs.py)")
    return text[:start] + block + text[end + len(END) :]


def readme_table(text: str) -> str:
    """The bug table a README holds, markers included (a ValueError when it has none)."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError("expected the bug table's markers (see harness/bugs.py)")
    return text[start : end + len(END)]

"""Reading findings files: a target's document on the findings path (``harness.findings.search``),
refused in one line when it cannot be used, and the coarse view of it the target tests and the
fault campaigns use."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import ValidationError

from harness.findings.document import DRAFTS, FindingClass, FindingsFile, Witness
from harness.findings.search import (
    BUNDLED,
    FindingsFileError,
    file_name,
    inherited,
    locate,
    search_path,
)
from scenarios.loading import read_yaml

FINDINGS = BUNDLED  # the bundled folder, first on the search path (harness.findings.search)


@dataclass(frozen=True)
class Finding:
    """One recorded (scenario, invariant) of a regression finding: the coarse view the target
    tests and the fault campaigns use (the verdict itself matches witnesses)."""

    scenario: str
    invariant: str
    explanation: str
    required: bool = True  # False: every witness of it is a race in the SDK (``sometimes``)
    witnesses: tuple[Witness, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class ReadFindings:
    """Findings files read once, before a run: a check (and what it writes) is judged by this
    copy, so a file edited while the run goes on changes nothing of it, and cannot refuse it
    half-way.  ``documents`` holds each (target, version) read, None where the path had no
    file; any other is searched for in ``folders``, as a search path would be."""

    folders: tuple[Path, ...]
    documents: Mapping[tuple[str, str], FindingsFile | None]
    drafts: bool = False  # read allowing placeholders: a copy only for readers that allow them

    def holds(self, target: str, version: str, *, drafts: bool) -> bool:
        """Whether this copy answers for ``target`` ``version``, read as ``drafts`` asks."""
        return (target, version) in self.documents and (drafts or not self.drafts)


# one folder, a search path, findings read once, or None: the default path
Folders = Path | Sequence[Path] | ReadFindings | None


def findings_path(target: str, version: str, directory: Path = FINDINGS) -> Path:
    return directory / file_name(target, version)


def folders_of(where: Folders) -> tuple[Path, ...]:
    """The folders to search: ``where`` as given, or the default search path (the bundled
    folder and every plugin's, ``harness.findings.search``)."""
    if where is None:
        return search_path()
    if isinstance(where, ReadFindings):
        return where.folders
    return (where,) if isinstance(where, Path) else tuple(where)


def read_once(
    targets: Iterable[tuple[str, str]], where: Folders = None, *, drafts: bool = False
) -> ReadFindings:
    """The findings files of ``targets`` ((name, version) pairs) on the path ``where``, each
    read now and once; refused in one line (``FindingsFileError``) as ``load_document`` refuses
    one."""
    folders = folders_of(where)
    documents = {
        (target, version): load_document(target, version, folders, drafts=drafts)
        for target, version in targets
    }
    return ReadFindings(folders, documents, drafts)


def load_document(
    target: str, version: str, where: Folders = None, *, drafts: bool = False
) -> FindingsFile | None:
    """The findings that judge ``target`` ``version`` on the search path ``where``: the view as
    of it (``FindingsFile.as_of``) of its own file or of the file whose range covers it; for a
    release no file covers, the newest earlier release's findings (``inherited``: a file of a
    range judges as of its ``through``); None when there is none.  Refused in one line
    (``FindingsFileError``) when a file cannot be used or when two folders hold one.
    ``drafts`` allows placeholders.  Findings read once answer from their copy."""
    if isinstance(where, ReadFindings) and where.holds(target, version, drafts=drafts):
        return where.documents[target, version]
    found = judging_file(target, version, where, drafts=drafts)
    if found is None:
        return None
    document = found[1]
    return document.as_of(version if document.covers(version) else document.last)


def judging_file(
    target: str, version: str, where: Folders = None, *, drafts: bool = False
) -> tuple[Path, FindingsFile] | None:
    """The findings file (its path and its whole content, every release of it) that judges
    ``target`` ``version``: its own, else the newest earlier release's (``inherited``), which
    may cover it (a file of a range of releases) or not; None when there is none."""
    folders = folders_of(where)
    first = inherited(target, version, folders) or version
    path = locate(target, first, folders)
    if path is None:
        return None
    return path, read_findings_file(path, target, first, drafts=drafts)


def covering_file(
    target: str, version: str, where: Folders = None, *, drafts: bool = False
) -> tuple[Path, FindingsFile] | None:
    """The findings file whose releases include ``target`` ``version`` (its own, or a file of a
    range of releases that covers it), or None: where ``record`` writes that release's
    findings."""
    found = judging_file(target, version, where, drafts=drafts)
    return found if found is not None and found[1].covers(version) else None


def read_findings_file(
    path: Path, target: str | None = None, version: str | None = None, *, drafts: bool = False
) -> FindingsFile:
    try:
        data = read_yaml(path.read_text(encoding="utf-8"))
        document = FindingsFile.model_validate(data, context={DRAFTS: drafts})
    except OSError as failure:
        raise FindingsFileError(f"{path}: cannot read: {failure.strerror}") from None
    except yaml.YAMLError as failure:
        raise FindingsFileError(f"{path}: not valid YAML ({failure})".replace("\n", " ")) from None
    except ValidationError as failure:
        error = failure.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        message = str(error["msg"]).removeprefix("Value error, ")
        raise FindingsFileError(f"{path}: {where}: {message}".replace("\n", " ")) from None
    expected = (target or document.target, version or document.version)
    if (document.target, document.version) != expected:
        raise FindingsFileError(
            f"{path}: target/version say {document.target} {document.version}, "
            f"expected {expected[0]} {expected[1]}"
        )
    return document


def load_findings(target: str, version: str, where: Folders = None) -> tuple[Finding, ...]:
    document = load_document(target, version, where)
    if document is None:
        return ()
    found = []
    for entry in document.findings:
        invariants = dict.fromkeys(witness.invariant for witness in entry.witnesses)
        for invariant in invariants:
            mine = tuple(w for w in entry.witnesses if w.invariant == invariant)
            required = any(not witness.sometimes for witness in mine)
            found.append(Finding(entry.scenario, invariant, entry.explanation, required, mine))
    return tuple(found)


def load_classes(target: str, version: str, where: Folders = None) -> tuple[FindingClass, ...]:
    document = load_document(target, version, where)
    return () if document is None else document.classes


def release_views(document: FindingsFile) -> dict[str, FindingsFile]:
    """A findings file as the files of each release it names, by stem (``strands-1.59.0``): a
    file of one release is itself; a file of a range, its view as of each release it names
    (``FindingsFile.named_releases``)."""
    releases = document.named_releases() if document.ranged else (document.version,)
    return {
        file_name(document.target, version).removesuffix(".yaml"): document.as_of(version)
        for version in releases
    }

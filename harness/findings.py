"""Expected findings: violations already found in a released implementation, kept as evidence.

A finding against a real SDK is reported, never hidden: it is a violation of that target, written
down in ``<target>-<version>.yaml`` (in a folder of the findings search path,
``harness.findings_search``: the bundled ``scenarios/findings/``, plugins' folders, ``--findings``)
with the regression file that shows it, a one-line explanation, and a *witness* for every
violation it excuses.  A run passes only when
every violation it shows is matched by a recorded witness and every recorded witness still shows.
A violation no witness matches is new, even in a scenario with other recorded findings, even of an
invariant recorded there (another step, another action).

The format::

    target: strands                 # the target's findings name and the SDK's version
    version: 1.62.0
    findings:                       # regression files, by name and by content
      - scenario: twin-calls        # the file's stem in scenarios/regressions/
        digest: sha256:3f0c...      # of what it does (scenario_digest; not its prose): an
                                    # edited or renamed file must be re-recorded deliberately
        explanation: >              # why, for a person (a placeholder is refused)
          ...
        witnesses:
          - invariant: I2           # the checker id: I1..I14, D, O
            step: answer            # the kind of the violation's step: run, answer, restart,
                                    # corrupt, repair, resend, or none (a run-wide violation)
            seen: '^send-mail ran 0 times: approval not delivered$'
            expected: '^send-mail runs once$'      # optional, like seen
            error: '^.*already processing a request.*$'  # optional: a recorded error of the run
            sometimes: true         # optional: a race in the SDK shows it in some runs only
    classes:                        # the same bugs as they show in generated scenarios
      - class: second-call-turned-away
        shown_by: [twin-calls]      # recorded regression files that show the bug
        scenario_classes: [twin-calls]   # optional: only narrows the witnesses below
        explanation: >
          ...
        witnesses: [...]            # as above (required: a class is recognised by them)

A witness matches a violation of its invariant at a step of its kind when every pattern it gives
matches in full: ``expected`` and ``seen`` the violation's own sentences, ``error`` some error the
run recorded (a step's ``observed["error"]``, in the run or its restart-free control; notes are
not errors).  Patterns must be anchored (start with ``^``, end with ``$``, no top-level ``|``) and
are matched with ``re.fullmatch``; a witness gives at least one, and none may match any text
(``^.*$``).

A regression finding applies only to the scenario of its name *and* digest.  A class applies only
to generated scenarios (and only to those with its ``scenario_classes``), and only when generated
scenarios were run; then each of its witnesses must match at least one violation of the sample,
as a regression witness must match one in its scenario (unless ``sometimes``): a dead witness
fails the run until the file is updated, so the record stays true.  A violation is credited to
the first witness that names it (classes in the file's order), so the report can say how many
violations each finding and each class excuses.

``python -m harness record --target T`` writes a run into the file (``record``): each regression
file that shows violations gets its digest and a witness per violation that no recorded witness
names (its exact sentences), a new finding the explanation ``TO BE EXPLAINED`` that ``check``
refuses until a person writes one; an existing explanation is never overwritten.  Classes are
written by a person, who generalises what the generated scenarios show (the canary in
``tests/test_exemption_canary.py`` then checks no known-bad variant of the reference hides behind
them).
"""

from __future__ import annotations

import hashlib
import json
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from harness.checkers.violation import Violation
from harness.findings_search import BUNDLED, file_name, locate, search_path
from harness.findings_search import FindingsFileError as FindingsFileError  # raised here too
from harness.history import History
from scenarios.classes import CLASSES, classes_of
from scenarios.model import Scenario

FINDINGS = BUNDLED  # the bundled folder, first on the search path (harness.findings_search)
PLACEHOLDER = "TO BE EXPLAINED"  # what ``record`` writes where a person must write why
GENERATED = "generated-"  # the names of generated scenarios, the only ones a class covers
DRAFTS = "drafts"  # validation context key: placeholders allowed (``record`` reads its own drafts)


InvariantId = Annotated[str, Field(pattern=r"^(I([1-9]|1[0-4])|D|O)$")]
StepKind = Literal["run", "answer", "restart", "corrupt", "repair", "resend", "none"]
Digest = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]


def anchored(pattern: str) -> str:
    """``pattern`` if it is an anchored regular expression, else a ``ValueError`` saying why."""
    if not (pattern.startswith("^") and pattern.endswith("$") and not _escaped_end(pattern)):
        raise ValueError(f"expected an anchored pattern (^...$), got {pattern!r}")
    try:
        re.compile(pattern)
    except re.error as failure:
        raise ValueError(f"not a regular expression ({failure}): {pattern!r}") from None
    if _top_level_bar(pattern):
        raise ValueError(
            f"a top-level | splits the anchors; group the alternatives, ^(a|b)$: {pattern!r}"
        )
    if all(re.fullmatch(pattern, probe) for probe in ANY_TEXT):
        raise ValueError(f"matches any text; name what the violation or error says: {pattern!r}")
    return pattern


ANY_TEXT = ("", "an unrelated sentence", "x\ny")  # a pattern matching all of these names nothing


def _escaped_end(pattern: str) -> bool:
    """Whether the final ``$`` is a literal (an odd number of backslashes before it)."""
    body = pattern[:-1]
    return (len(body) - len(body.rstrip("\\"))) % 2 == 1


def _top_level_bar(pattern: str) -> bool:
    depth, escaped = 0, False
    opened = -1  # where the character class being read opened, or -1
    for position, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif opened >= 0:
            first = opened + (2 if pattern[opened + 1 : opened + 2] == "^" else 1)
            if char == "]" and position > first:
                opened = -1
        elif char == "[":
            opened = position
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
    return False


class Witness(BaseModel):
    """The violations one recorded finding excuses (see the module's docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    invariant: InvariantId
    step: StepKind
    expected: str | None = None
    seen: str | None = None
    error: str | None = None
    sometimes: bool = False

    @field_validator("expected", "seen", "error")
    @classmethod
    def _anchored(cls, value: str | None) -> str | None:
        return None if value is None else anchored(value)

    @model_validator(mode="after")
    def _a_pattern(self) -> Witness:
        if self.expected is None and self.seen is None and self.error is None:
            raise ValueError("a witness needs a pattern: expected, seen or error")
        return self

    def matches(self, violation: Violation, kind: str, errors: Sequence[str]) -> bool:
        """Whether this witness names ``violation`` (at a step of ``kind``, in a run that
        recorded ``errors``)."""
        return (
            violation.invariant == self.invariant
            and kind == self.step
            and _full(self.expected, violation.expected)
            and _full(self.seen, violation.seen)
            and (self.error is None or any(re.fullmatch(self.error, e) for e in errors))
        )

    def describe(self) -> str:
        parts = [
            f"{self.invariant} at a {self.step} step"
            if self.step != "none"
            else f"{self.invariant} run-wide"
        ]
        parts += [
            f"{key} {value}"
            for key, value in (
                ("expected", self.expected),
                ("seen", self.seen),
                ("error", self.error),
            )
            if value is not None
        ]
        return ", ".join(parts)


def recorded_errors(history: History) -> tuple[str, ...]:
    """The errors a run recorded (each step's ``observed["error"]``, then its control's); notes,
    which every corruption leaves, are not errors."""
    own = tuple(
        str(step.observed["error"])
        for step in history.steps
        if step.observed.get("error") is not None
    )
    return own + (() if history.control is None else recorded_errors(history.control))


def step_kind(history: History, violation: Violation) -> str:
    """The kind of the step a violation showed at (``none`` for a run-wide one)."""
    if violation.step is None or not 0 <= violation.step < len(history.steps):
        return "none"
    return history.steps[violation.step].kind


def _full(pattern: str | None, text: str) -> bool:
    return pattern is None or re.fullmatch(pattern, text) is not None


def _explained(value: str, info: ValidationInfo) -> str:
    drafts = isinstance(info.context, Mapping) and bool(info.context.get(DRAFTS))
    if PLACEHOLDER in value and not drafts:
        raise ValueError(f"still {PLACEHOLDER!r}: write why this happens (one or two sentences)")
    return " ".join(value.split())  # one line, however the YAML folded it


def _no_old_fields(data: Any, old: tuple[str, ...]) -> Any:
    if isinstance(data, dict):
        for name in old:
            if name in data:
                raise ValueError(
                    f"{name!r} is the old format: record witnesses instead (harness/findings.py)"
                )
    return data


class FindingEntry(BaseModel):
    """A regression file's recorded violations, bound to its name and content."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario: Annotated[str, Field(min_length=1)]
    digest: Digest
    explanation: Annotated[str, Field(min_length=10)]
    witnesses: Annotated[tuple[Witness, ...], Field(min_length=1)]

    @model_validator(mode="before")
    @classmethod
    def _new_format(cls, data: Any) -> Any:
        return _no_old_fields(data, ("invariants", "sometimes"))

    @field_validator("explanation")
    @classmethod
    def _not_a_placeholder(cls, value: str, info: ValidationInfo) -> str:
        return _explained(value, info)


class FindingClass(BaseModel):
    """A recorded bug as it shows in generated scenarios (see the module's docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: Annotated[str, Field(alias="class", pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
    shown_by: Annotated[tuple[str, ...], Field(min_length=1)]
    scenario_classes: tuple[str, ...] = ()
    explanation: Annotated[str, Field(min_length=10)]
    witnesses: Annotated[tuple[Witness, ...], Field(min_length=1)]

    @model_validator(mode="before")
    @classmethod
    def _new_format(cls, data: Any) -> Any:
        return _no_old_fields(data, ("invariants", "evidence"))

    @field_validator("scenario_classes")
    @classmethod
    def _known_classes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - set(CLASSES))
        if unknown:
            raise ValueError(f"unknown scenario class {unknown[0]!r}; valid ones: docs/findings.md")
        return value

    @field_validator("explanation")
    @classmethod
    def _not_a_placeholder(cls, value: str, info: ValidationInfo) -> str:
        return _explained(value, info)

    def narrows_to(self, scenario_classes: Iterable[str]) -> bool:
        """Whether a generated scenario with these classes is one this class may cover."""
        return set(self.scenario_classes) <= set(scenario_classes)


class FindingsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str
    version: str
    findings: tuple[FindingEntry, ...] = ()
    classes: tuple[FindingClass, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> FindingsFile:
        recorded = [entry.scenario for entry in self.findings]
        for index, name in enumerate(recorded):
            if name in recorded[:index]:
                raise ValueError(f"findings.{index}.scenario: {name!r} is recorded twice")
        names = [found.name for found in self.classes]
        for index, found in enumerate(self.classes):
            if found.name in names[:index]:
                raise ValueError(f"classes.{index}.class: {found.name!r} is recorded twice")
            missing = [name for name in found.shown_by if name not in recorded]
            if missing:
                raise ValueError(
                    f"classes.{index}.shown_by: {missing[0]!r} is not a scenario recorded in "
                    "findings (a class must be shown by a recorded regression file)"
                )
        return self

    def entry(self, scenario: str) -> FindingEntry | None:
        return next((entry for entry in self.findings if entry.scenario == scenario), None)


PROSE = ("description", "source")  # what a person reads; no run depends on it


def scenario_digest(scenario: Scenario) -> str:
    """The digest a regression finding is bound to: sha256 of the scenario's normalised JSON
    (its model dump without defaults, keys sorted) less its prose, so what the scenario does
    counts (its tree, steps, expectations, classes) and formatting, comments, the description and
    the source do not."""
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    for key in PROSE:
        data.pop(key, None)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- what a run showed, and the verdict ---------------------------------------------------------


@dataclass(frozen=True)
class Observed:
    """One scenario's run on one target, as the findings judge it."""

    scenario: str
    digest: str
    classes: frozenset[str]  # the scenario's classes (scenarios.classes.classes_of)
    violations: tuple[tuple[Violation, str], ...]  # each with its step's kind (or "none")
    errors: tuple[str, ...]  # the errors the run (and its control) recorded, not notes
    generated: bool = False  # drawn by the generator: classes may cover it, findings never


@dataclass(frozen=True)
class Excused:
    """A violation matched by a recorded witness."""

    scenario: str
    violation: Violation
    explanation: str
    recorded_class: str | None = None
    witness: int = 0  # its position in the finding's (or class's) witnesses

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "scenario": self.scenario,
            "invariant": self.violation.invariant,
            "step": self.violation.step,
            "explanation": self.explanation,
        }
        if self.recorded_class is not None:
            shown["class"] = self.recorded_class
        return shown


@dataclass(frozen=True)
class Missing:
    """A recorded witness that matched nothing: in its scenario, or (a class's) in the sample."""

    witness: Witness
    explanation: str
    scenario: str | None = None
    recorded_class: str | None = None

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "invariant": self.witness.invariant,
            "witness": self.witness.describe(),
            "explanation": self.explanation,
        }
        if self.scenario is not None:
            shown["scenario"] = self.scenario
        if self.recorded_class is not None:
            shown["class"] = self.recorded_class
        return shown


@dataclass(frozen=True)
class Verdict:
    expected: tuple[Excused, ...] = ()  # violations a recorded witness matched
    new: tuple[tuple[str, Violation], ...] = ()  # (scenario, violation) no witness matched
    disappeared: tuple[Missing, ...] = ()  # recorded witnesses that no longer show
    stale: tuple[tuple[str, str], ...] = ()  # (scenario, why its record does not apply)

    @property
    def passes(self) -> bool:
        return not self.new and not self.disappeared and not self.stale

    def excused_by(self) -> dict[tuple[str, str | None], int]:
        """How many violations each (scenario or class, class) excused."""
        counts: dict[tuple[str, str | None], int] = {}
        for item in self.expected:
            key = (item.recorded_class or item.scenario, item.recorded_class)
            counts[key] = counts.get(key, 0) + 1
        return counts


def observe(
    history: History, scenario: Scenario, violations: Iterable[Violation], *, generated: bool
) -> Observed:
    """What the findings judge of one run: its violations with their steps' kinds."""
    return Observed(
        history.scenario_name,
        scenario_digest(scenario),
        frozenset(classes_of(scenario)),
        tuple((violation, step_kind(history, violation)) for violation in violations),
        recorded_errors(history),
        generated,
    )


def judge_findings(document: FindingsFile | None, runs: Iterable[Observed]) -> Verdict:
    """Match every violation of ``runs`` against the recorded witnesses.

    A regression finding whose scenario was not run is neither seen nor missing; one whose
    scenario ran with another content is stale (it excuses nothing, and the run fails until it is
    re-recorded).  Classes are judged only when a generated scenario ran.
    """
    runs = list(runs)
    findings = () if document is None else document.findings
    classes = () if document is None else document.classes
    expected: list[Excused] = []
    new: list[tuple[str, Violation]] = []
    disappeared: list[Missing] = []
    stale: list[tuple[str, str]] = []
    by_digest = {entry.digest: entry.scenario for entry in findings}
    ran = {run.scenario for run in runs if not run.generated}
    class_hits: dict[tuple[str, int], int] = {}
    for run in runs:
        entry = None
        if not run.generated:
            entry = next((e for e in findings if e.scenario == run.scenario), None)
            if entry is not None and entry.digest != run.digest:
                stale.append(
                    (run.scenario, "its content changed since it was recorded: re-record it")
                )
                entry = None
            elif entry is None and run.digest in by_digest and by_digest[run.digest] not in ran:
                stale.append(
                    (
                        run.scenario,
                        f"has the content recorded as {by_digest[run.digest]!r}: "
                        "renamed? re-record it under its new name",
                    )
                )
        fitting = [found for found in classes if run.generated and found.narrows_to(run.classes)]
        shown: set[int] = set()
        for violation, kind in run.violations:
            excused = _excuse(entry, fitting, run, violation, kind)
            if excused is None:
                new.append((run.scenario, violation))
                continue
            expected.append(excused)
            if excused.recorded_class is None:
                shown.add(excused.witness)
            else:
                key = (excused.recorded_class, excused.witness)
                class_hits[key] = class_hits.get(key, 0) + 1
        if entry is not None:
            disappeared += [
                Missing(witness, entry.explanation, scenario=entry.scenario)
                for position, witness in enumerate(entry.witnesses)
                if position not in shown and not witness.sometimes
            ]
    if any(run.generated for run in runs):
        disappeared += [
            Missing(witness, found.explanation, recorded_class=found.name)
            for found in classes
            for position, witness in enumerate(found.witnesses)
            if not class_hits.get((found.name, position)) and not witness.sometimes
        ]
    return Verdict(tuple(expected), tuple(new), tuple(disappeared), tuple(stale))


def _excuse(
    entry: FindingEntry | None,
    classes: Sequence[FindingClass],
    run: Observed,
    violation: Violation,
    kind: str,
) -> Excused | None:
    """The first recorded witness that names ``violation``: its regression finding's, else a
    class's (in the file's order)."""
    if entry is not None:
        position = _first_match(entry.witnesses, violation, kind, run.errors)
        if position is not None:
            return Excused(run.scenario, violation, entry.explanation, None, position)
    for found in classes:
        position = _first_match(found.witnesses, violation, kind, run.errors)
        if position is not None:
            explanation = f"in the recorded class `{found.name}` (shown by " + (
                ", ".join(found.shown_by) + ")"
            )
            return Excused(run.scenario, violation, explanation, found.name, position)
    return None


def _first_match(
    witnesses: Sequence[Witness], violation: Violation, kind: str, errors: Sequence[str]
) -> int | None:
    return next(
        (i for i, witness in enumerate(witnesses) if witness.matches(violation, kind, errors)),
        None,
    )


# --- reading ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One recorded (scenario, invariant) of a regression finding: the coarse view the target
    tests and the fault campaigns use (the verdict itself matches witnesses)."""

    scenario: str
    invariant: str
    explanation: str
    required: bool = True  # False: every witness of it is a race in the SDK (``sometimes``)
    witnesses: tuple[Witness, ...] = field(default=(), compare=False)


Folders = Path | Sequence[Path] | None  # one folder, a search path, or None: the default path


def findings_path(target: str, version: str, directory: Path = FINDINGS) -> Path:
    return directory / file_name(target, version)


def folders_of(where: Folders) -> tuple[Path, ...]:
    """The folders to search: ``where`` as given, or the default search path (the bundled
    folder and every plugin's, ``harness.findings_search``)."""
    if where is None:
        return search_path()
    return (where,) if isinstance(where, Path) else tuple(where)


def load_document(
    target: str, version: str, where: Folders = None, *, drafts: bool = False
) -> FindingsFile | None:
    """The findings file of ``target`` ``version`` on the search path ``where``, or None when
    there is none; refused in one line (``FindingsFileError``) when it cannot be used or when
    two folders hold one.  ``drafts`` allows placeholders."""
    path = locate(target, version, folders_of(where))
    if path is None:
        return None
    return read_findings_file(path, target, version, drafts=drafts)


def read_findings_file(
    path: Path, target: str | None = None, version: str | None = None, *, drafts: bool = False
) -> FindingsFile:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
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


# --- recording ----------------------------------------------------------------------------------


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
    """The findings file updated from ``runs``: each regression file that ran gets its digest
    and a witness per violation (the recorded witnesses that still match are kept, with their
    explanation; a new finding gets the placeholder explanation ``check`` refuses); a regression
    finding whose scenario ran clean is dropped unless a class is shown by it.  Classes are kept
    as written: a person generalises generated violations into a class (``uncovered``)."""
    runs = list(runs)
    old = document or FindingsFile(target=target, version=version)
    verdict = judge_findings(old, runs)
    shown_by = {name for found in old.classes for name in found.shown_by}
    ran = {run.scenario: run for run in runs if not run.generated}
    entries: list[FindingEntry] = []
    added: list[str] = []
    removed: list[str] = []
    for entry in old.findings:
        run = ran.pop(entry.scenario, None)
        if run is None:
            entries.append(entry)
            continue
        updated = _rerecorded(entry, run)
        if updated is None and entry.scenario not in shown_by:
            removed.append(entry.scenario)
            continue
        updated = updated or entry
        if updated != entry:
            added.append(entry.scenario)
        entries.append(updated)
    for run in ran.values():
        fresh = _rerecorded(None, run)
        if fresh is not None:
            entries.append(fresh)
            added.append(run.scenario)
    updated_document = FindingsFile.model_validate(
        {
            "target": old.target,
            "version": old.version,
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


def _rerecorded(entry: FindingEntry | None, run: Observed) -> FindingEntry | None:
    """``entry`` brought up to ``run`` (None when the run shows nothing)."""
    if not run.violations:
        return None
    kept: list[Witness] = []
    if entry is not None:
        for witness in entry.witnesses:
            shown = any(witness.matches(v, kind, run.errors) for v, kind in run.violations)
            if shown or witness.sometimes:
                kept.append(witness)
    for violation, kind in run.violations:
        if _first_match(kept, violation, kind, run.errors) is None:
            kept.append(exact_witness(violation, kind))
    explanation = entry.explanation if entry is not None else f"{PLACEHOLDER}: why does it happen?"
    return FindingEntry.model_validate(
        {
            "scenario": run.scenario,
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
    if document.findings:
        lines.append("findings:")
        for entry in document.findings:
            lines.append(f"  - scenario: {_scalar(entry.scenario)}")
            lines.append(f"    digest: {entry.digest}")
            lines += _folded("    explanation", entry.explanation)
            lines += _witnesses("    ", entry.witnesses)
    if document.classes:
        lines.append("classes:")
        for found in document.classes:
            lines.append(f"  - class: {found.name}")
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
        for key in ("invariant", "step", "expected", "seen", "error", "sometimes"):
            if key not in fields:
                continue
            value = fields[key]
            shown = "true" if value is True else _scalar(str(value))
            lines.append(f"{indent}{'  - ' if first else '    '}{key}: {shown}")
            first = False
    return lines


def _folded(key: str, text: str) -> list[str]:
    indent = " " * (len(key) - len(key.lstrip()) + 2)
    wrapped = textwrap.wrap(" ".join(text.split()), width=100 - len(indent))
    return [f"{key}: >", *(indent + line for line in wrapped)]


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar that reads back as the same string."""
    plain = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", text) is not None
    if plain and yaml.safe_load(text) == text:
        return text
    if "\n" in text or not text.isprintable():
        return json.dumps(text, ensure_ascii=False)
    return "'" + text.replace("'", "''") + "'"

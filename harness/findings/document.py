"""The findings file's data model: its witnesses, its regression findings and classes, and the
digest a regression finding is bound to; validation refuses what cannot be used, naming the field
(the format: ``harness.findings``)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Final, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from harness.checkers import CHECKERS
from harness.checkers.violation import Violation
from harness.findings.patterns import anchored, full
from harness.findings.releases import admits, named, specifier, within
from harness.findings.search import release
from scenarios.classes import RECOGNISED
from scenarios.model import Scenario
from scenarios.steps import keys_sorted

PLACEHOLDER = "TO BE EXPLAINED"  # what ``record`` writes where a person must write why
DRAFTS = "drafts"  # validation context key: placeholders allowed (``record`` reads its own drafts)


@dataclass(frozen=True)
class Evidence:
    """What one step of a run recorded besides its violations, for a witness's patterns to name:
    its errors (``error``), the tool results its model requests carried (``result``), what
    the SDK logged at WARNING (``warning``) and whose sub-agent turns the target's store held
    when the step ended (``stored``: one text, the owners in order or ``nothing``; none where the
    target does not say) and the questions shown at the root from the run's start to the end of
    the step (``shown``: one text, ``label as 'id'`` each in the order first shown, or
    ``nothing``; docs/findings.md), and the invariants the run's own violations at that step
    break, one per violation (``beside``: never the restart-free control's, and nothing a
    variant logs), with what each saw (``beside_seen``).  ``kind`` is the step's kind."""

    kind: str = "none"
    errors: tuple[str, ...] = ()
    results: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    stored: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    violated: tuple[str, ...] = ()
    violated_seen: tuple[str, ...] = ()  # each of ``violated``'s seen sentence, in its order


def evidence_for(
    steps: Sequence[Evidence], step: int | None, anchored_at: str | None, by_then: bool = False
) -> tuple[Evidence, ...]:
    """The steps whose evidence may anchor a witness of a violation at ``step``: that step
    alone, or, when the witness names a step kind (``anchored_at``), every step of that kind in
    the run (a bug often shows before the error that names it is logged, or after), or only
    those up to ``step`` itself (``by_then``: what the bug shows first).  Never the restart-free
    control's: it is not this run."""
    if anchored_at is None:
        return (steps[step],) if step is not None and 0 <= step < len(steps) else ()
    last = len(steps) - 1 if step is None or not by_then else step
    return tuple(item for item in steps[: last + 1] if item.kind == anchored_at)


def besides(steps: Sequence[Evidence], violation: Violation) -> tuple[Evidence, ...]:
    """``steps`` with ``violation`` itself taken out of its own step's ``violated``: what stands
    beside a violation is another one."""
    found = tuple(steps)
    at = violation.step
    if at is None or not 0 <= at < len(found) or violation.invariant not in found[at].violated:
        return found
    pairs = list(_beside(found[at]))
    if (violation.invariant, violation.seen) in pairs:
        pairs.remove((violation.invariant, violation.seen))
    else:
        pairs.remove(next(pair for pair in pairs if pair[0] == violation.invariant))
    others = replace(
        found[at],
        violated=tuple(invariant for invariant, _ in pairs),
        violated_seen=tuple(seen for _, seen in pairs if seen is not None),
    )
    return (*found[:at], others, *found[at + 1 :])


def _beside(evidence: Evidence) -> tuple[tuple[str, str | None], ...]:
    """Each violation recorded at a step: its invariant, and its seen sentence where recorded."""
    if len(evidence.violated_seen) == len(evidence.violated):
        return tuple(zip(evidence.violated, evidence.violated_seen, strict=True))
    return tuple((invariant, None) for invariant in evidence.violated)


InvariantId = Annotated[str, Field(pattern=r"^(I([1-9]|1[0-7])|D|O)$")]
INVARIANTS: Final = tuple(checker.id for checker in CHECKERS)
StepKind = Literal["run", "answer", "restart", "corrupt", "repair", "resend", "none"]
DIGEST: Final = "sha256:"  # how a scenario digest begins: then 64 hexadecimal digits
Digest = Annotated[str, Field(pattern=rf"^{DIGEST}[0-9a-f]{{64}}$")]


class Witness(BaseModel):
    """The violations one recorded finding excuses (the format: ``harness.findings``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    invariant: InvariantId
    step: StepKind
    expected: str | None = None
    seen: str | None = None
    error: str | None = None
    result: str | None = None
    warning: str | None = None
    stored: str | None = None  # whose sub-agent turns the store held (Evidence.stored)
    shown: str | None = None  # the questions pending at the root, as shown (Evidence.shown)
    beside: str | None = None  # another violation's invariant at that step (Evidence.violated)
    beside_seen: str | None = None  # and what that violation saw (Evidence.violated_seen)
    anchored_at: StepKind | None = None  # where the error/result/warning/stored was recorded
    anchored_by_then: bool = False  # ... at a step of that kind no later than the violation's
    sometimes: bool = False
    releases: str | None = None  # the releases it applies to (harness.findings.releases)

    @field_validator(
        "expected", "seen", "error", "result", "warning", "stored", "shown", "beside_seen"
    )
    @classmethod
    def _anchored(cls, value: str | None) -> str | None:
        return None if value is None else anchored(value)

    @field_validator("beside")
    @classmethod
    def _over_invariants(cls, value: str | None) -> str | None:
        if value is None:
            return None
        pattern = re.compile(anchored(value))
        named = [each for each in INVARIANTS if pattern.fullmatch(each)]
        if not named or len(named) == len(INVARIANTS):
            raise ValueError(
                "expected an anchored pattern over invariant ids (I1 ... I17, D, O) naming some "
                f"but not all of them, such as '^I5$', got {value!r}"
            )
        return value

    @field_validator("releases")
    @classmethod
    def _releases(cls, value: str | None) -> str | None:
        return specifier(value)

    @model_validator(mode="before")
    @classmethod
    def _no_owed_mark(cls, data: Any) -> Any:
        return _no_old_fields(
            data,
            ("undemonstrated",),
            "no longer excuses a class witness: each must be shown by a run of its class's "
            'shown_by files (docs/findings.md, "Dead witnesses and dead classes"); demonstrate '
            "it or remove it",
        )

    @model_validator(mode="after")
    def _a_pattern(self) -> Witness:
        if self.expected is None and self.seen is None and self.error is None:
            raise ValueError("a witness needs a pattern: expected, seen or error")
        if self.beside_seen is not None and self.beside is None:
            raise ValueError("beside_seen names what the violation a beside names saw")
        if self.anchored_at is not None and not self.anchored:
            raise ValueError(
                "anchored_at names where an error, result, warning, stored, shown or beside was "
                "recorded"
            )
        if self.anchored_by_then and self.anchored_at is None:
            raise ValueError(
                "anchored_by_then keeps the steps anchored_at names to those up to the "
                "violation's own: it needs anchored_at"
            )
        return self

    @property
    def anchored(self) -> bool:
        """Whether it names evidence besides the violation's sentences."""
        return any(
            value is not None
            for value in (
                self.error,
                self.result,
                self.warning,
                self.stored,
                self.shown,
                self.beside,
            )
        )

    def matches(self, violation: Violation, kind: str, steps: Sequence[Evidence]) -> bool:
        """Whether this witness names ``violation`` (at a step of ``kind``, in a run whose
        steps recorded ``steps``): its anchors must have been recorded at the violation's own
        step, or at a step of the kind it names (``anchored_at``); ``beside`` names another
        violation of this run recorded there, never ``violation`` itself."""
        if not (
            violation.invariant == self.invariant
            and kind == self.step
            and full(self.expected, violation.expected)
            and full(self.seen, violation.seen)
        ):
            return False
        if not self.anchored:
            return True
        return any(
            _some(self.error, evidence.errors)
            and _some(self.result, evidence.results)
            and _some(self.warning, evidence.warnings)
            and _some(self.stored, evidence.stored)
            and _some(self.shown, evidence.shown)
            and self._stands_beside(evidence)
            for evidence in evidence_for(
                steps if self.beside is None else besides(steps, violation),
                violation.step,
                self.anchored_at,
                self.anchored_by_then,
            )
        )

    def _stands_beside(self, evidence: Evidence) -> bool:
        """Whether ``evidence`` holds a violation ``beside`` names (and, with ``beside_seen``,
        one that saw what it says): no ``beside`` asks nothing."""
        if self.beside is None:
            return True
        return any(
            re.fullmatch(self.beside, invariant)
            and (self.beside_seen is None or (seen is not None and full(self.beside_seen, seen)))
            for invariant, seen in _beside(evidence)
        )

    def describe(self) -> str:
        parts = [
            f"{self.invariant} at {'an' if self.step[0] in 'aeiou' else 'a'} {self.step} step"
            if self.step != "none"
            else f"{self.invariant} run-wide"
        ]
        where = self.anchored_at and f"{self.anchored_at} step"
        if where and self.anchored_by_then:
            where += " no later than its own"
        parts += [
            f"{key} {value}"
            for key, value in (
                ("expected", self.expected),
                ("seen", self.seen),
                ("error", self.error),
                ("result", self.result),
                ("warning", self.warning),
                ("stored", self.stored),
                ("shown", self.shown),
                ("beside", self.beside),
                ("beside_seen", self.beside_seen),
                ("recorded at a", where),
            )
            if value is not None
        ]
        return ", ".join(parts)


def _some(pattern: str | None, texts: Sequence[str]) -> bool:
    """Whether ``pattern`` matches one of ``texts`` in full (no pattern: it asks nothing)."""
    return pattern is None or any(re.fullmatch(pattern, text) for text in texts)


def first_match(
    witnesses: Sequence[Witness], violation: Violation, kind: str, steps: Sequence[Evidence]
) -> int | None:
    """The position of the first of ``witnesses`` that names ``violation``, or None."""
    return next(
        (i for i, witness in enumerate(witnesses) if witness.matches(violation, kind, steps)),
        None,
    )


def _explained(value: str, info: ValidationInfo) -> str:
    drafts = isinstance(info.context, Mapping) and bool(info.context.get(DRAFTS))
    if PLACEHOLDER in value and not drafts:
        raise ValueError(f"still {PLACEHOLDER!r}: write why this happens (one or two sentences)")
    return " ".join(value.split())  # one line, however the YAML folded it


def _no_old_fields(
    data: Any,
    old: tuple[str, ...],
    instead: str = "is the old format: record witnesses instead (docs/findings.md)",
) -> Any:
    if isinstance(data, dict):
        for name in old:
            if name in data:
                raise ValueError(f"{name!r} {instead}")
    return data


class FindingEntry(BaseModel):
    """A regression file's recorded violations, bound to its name and content."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario: Annotated[str, Field(min_length=1)]
    releases: str | None = None  # the releases it applies to (harness.findings.releases)
    digest: Digest
    explanation: Annotated[str, Field(min_length=10)]
    witnesses: Annotated[tuple[Witness, ...], Field(min_length=1)]

    @field_validator("releases")
    @classmethod
    def _releases(cls, value: str | None) -> str | None:
        return specifier(value)

    @model_validator(mode="before")
    @classmethod
    def _new_format(cls, data: Any) -> Any:
        return _no_old_fields(data, ("invariants", "sometimes"))

    @field_validator("explanation")
    @classmethod
    def _not_a_placeholder(cls, value: str, info: ValidationInfo) -> str:
        return _explained(value, info)


class FindingClass(BaseModel):
    """A recorded bug as it shows in generated scenarios (the format: ``harness.findings``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: Annotated[str, Field(alias="class", pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
    releases: str | None = None  # the releases it applies to (harness.findings.releases)
    shown_by: Annotated[tuple[str, ...], Field(min_length=1)]
    scenario_classes: tuple[str, ...] = ()
    explanation: Annotated[str, Field(min_length=10)]
    witnesses: Annotated[tuple[Witness, ...], Field(min_length=1)]

    @field_validator("releases")
    @classmethod
    def _releases(cls, value: str | None) -> str | None:
        return specifier(value)

    @model_validator(mode="before")
    @classmethod
    def _new_format(cls, data: Any) -> Any:
        return _no_old_fields(data, ("invariants", "evidence"))

    @field_validator("scenario_classes")
    @classmethod
    def _known_classes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - set(RECOGNISED))
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
    """A target's findings for one release, or for a run of releases (``version`` to
    ``through``): a release is judged by the view ``as_of`` it (harness.findings.releases)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str
    version: str
    through: str | None = None  # the newest release the file covers (default: version alone)
    findings: tuple[FindingEntry, ...] = ()
    classes: tuple[FindingClass, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> FindingsFile:
        self.refuse_inconsistency()
        return self

    def refuse_inconsistency(self) -> None:
        """A ``ValueError`` naming the field, for a finding recorded twice or a class shown by
        no recorded finding."""
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

    @model_validator(mode="after")
    def _releases_covered(self) -> FindingsFile:
        """Every item applies to a release the file names, and the file's view as of each of
        those releases is a consistent findings file (a class shown by a finding of that
        release)."""
        specifiers = list(self._specifiers())
        if self.through is None and all(value is None for _, value in specifiers):
            return self
        if release(self.version) is None:
            raise ValueError(
                f"version: {self.version!r} is no plain release; a file with through or "
                "releases covers plain releases only"
            )
        first, last = release(self.version), release(self.through or "")
        if self.through is not None and (last is None or first is None or last <= first):
            raise ValueError(
                f"through: expected a plain release after version {self.version}, "
                f"got {self.through!r}"
            )
        checked = named(self.version, self.last, (value for _, value in specifiers))
        for where, value in specifiers:
            if value is not None and not any(admits(value, each) for each in checked):
                raise ValueError(
                    f"{where}.releases: {value!r} admits none of the releases the file names "
                    f"({', '.join(checked)})"
                )
        for where, outer, inner in self._witness_specifiers():
            if not any(admits(outer, each) and admits(inner, each) for each in checked):
                raise ValueError(
                    f"{where}.releases: {inner!r} admits none of the releases its finding or "
                    f"class applies to ({', '.join(c for c in checked if admits(outer, c))})"
                )
        for each in checked:
            try:
                self.as_of(each).refuse_inconsistency()
            except ValueError as problem:
                raise ValueError(f"as of {each}: {problem}") from None
        return self

    def _specifiers(self) -> Iterable[tuple[str, str | None]]:
        for index, entry in enumerate(self.findings):
            yield f"findings.{index}", entry.releases
        for index, found in enumerate(self.classes):
            yield f"classes.{index}", found.releases

    def _witness_specifiers(self) -> Iterable[tuple[str, str | None, str]]:
        items: list[tuple[str, str | None, tuple[Witness, ...]]] = [
            (f"findings.{i}", entry.releases, entry.witnesses)
            for i, entry in enumerate(self.findings)
        ] + [
            (f"classes.{i}", found.releases, found.witnesses)
            for i, found in enumerate(self.classes)
        ]
        for where, outer, witnesses in items:
            for index, witness in enumerate(witnesses):
                if witness.releases is not None:
                    yield f"{where}.witnesses.{index}", outer, witness.releases

    @property
    def last(self) -> str:
        """The newest release the file covers."""
        return self.through or self.version

    @property
    def ranged(self) -> bool:
        """Whether the file covers more than one release."""
        return self.through is not None

    def covers(self, version: str) -> bool:
        """Whether ``version`` is one of the releases the file covers."""
        return version == self.version or (self.ranged and within(version, self.version, self.last))

    def named_releases(self) -> tuple[str, ...]:
        """The releases the file names: its version, its through, and those its items'
        ``releases`` name within them (harness.findings.releases)."""
        specifiers = [value for _, value in self._specifiers()]
        specifiers += [inner for _, _, inner in self._witness_specifiers()]
        return named(self.version, self.last, specifiers)

    def as_of(self, version: str) -> FindingsFile:
        """The findings that judge ``version``: the file's items whose ``releases`` admit it, as
        a file of that release alone (no ``through``, no ``releases``).  A file of one release
        that says no ``releases`` is its own view (it judges the releases that inherit it as
        itself, under its own version)."""
        if (
            not self.ranged
            and all(value is None for _, value in self._specifiers())
            and not any(True for _ in self._witness_specifiers())
        ):
            return self
        findings = _items_as_of(self.findings, version)
        classes = _items_as_of(self.classes, version)
        return self.model_copy(
            update={"version": version, "through": None, "findings": findings, "classes": classes}
        )

    def entry(self, scenario: str) -> FindingEntry | None:
        return next((entry for entry in self.findings if entry.scenario == scenario), None)


_Item = TypeVar("_Item", "FindingEntry", "FindingClass")


def _items_as_of(items: Sequence[_Item], version: str) -> tuple[_Item, ...]:
    """The findings or classes whose ``releases`` admit ``version``, each with only the
    witnesses that do (an item left with none is dropped), as items of that release alone."""
    return tuple(
        item.model_copy(update={"releases": None, "witnesses": mine})
        for item in items
        if admits(item.releases, version)
        for mine in [_admitted(item.witnesses, version)]
        if mine
    )


def _admitted(witnesses: Sequence[Witness], version: str) -> tuple[Witness, ...]:
    return tuple(
        witness.model_copy(update={"releases": None})
        for witness in witnesses
        if admits(witness.releases, version)
    )


PROSE = ("description", "source")  # what a person reads; no run depends on it


def scenario_digest(scenario: Scenario) -> str:
    """The digest a regression finding is bound to: sha256 of the scenario's normalised JSON
    (its model dump without defaults, keys sorted but an answer's, which are sent in the order
    written) less its prose, so what the scenario does counts (its tree, steps and the order of
    its answers, expectations, classes) and formatting, comments, the description and the source
    do not."""
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    for key in PROSE:
        data.pop(key, None)
    text = json.dumps(keys_sorted(data), separators=(",", ":"), ensure_ascii=False)
    return DIGEST + hashlib.sha256(text.encode("utf-8")).hexdigest()

"""The catalogue of public upstream bugs (``scenarios/upstream/``): the SDKs' own nested-interrupt
bugs, each with the release it last lived in, the release that fixed it (none while it is open),
the regression file that shows it and the invariants it must break.

It is the harness's benchmark in the manner of Defects4J: ``python -m harness backtest`` runs
each bug's regression file on both releases and counts the bugs it catches (red on the affected
release by the bug's own invariants, green for them on the fixed one).  A bug the scenario
language cannot express is still catalogued, as a *gap* with its reason, so the count says what
the harness misses as well as what it finds.

The releases in an entry are the result of running them (the backtest shows them), never a guess
from dates; a file whose fields contradict each other is refused in one line, as a scenario file
is.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.checkers import CHECKERS
from scenarios.loading import ScenarioFileError, load_scenario, read_yaml

CATALOGUE: Final = Path(__file__).resolve().parent.parent / "scenarios" / "upstream"
ROOT: Final = CATALOGUE.parent.parent

# the SDK (its PyPI name) -> the targets that drive it
TARGETS_OF: Final = {
    "strands-agents": ("strands", "strands-snapshot"),
    "langgraph": ("langgraph", "langgraph-subgraph-node", "langgraph-toolnode"),
    "openai-agents": ("openai-agents",),
    "google-adk": ("adk", "adk-single-turn"),
}
INVARIANTS: Final = tuple(checker.id for checker in CHECKERS)

Release = Annotated[str, Field(pattern=r"^\d+(\.\d+)*$")]


class CatalogueError(ValueError):
    """A catalogue entry that cannot be used; the message is one line."""


class Bug(BaseModel):
    """One public upstream bug."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="The entry's file name.")
    sdk: Literal["strands-agents", "langgraph", "openai-agents", "google-adk"]
    tracker: str = Field(
        pattern=r"^[\w.-]+/[\w.-]+#\d+$",
        description="Where it is reported or fixed: owner/repository#number.",
    )
    title: str = Field(min_length=1, description="The tracker's title, as written there.")
    symptom: str = Field(min_length=1, description="What a user sees, in one line.")
    target: str = Field(description="The harness target its regression file runs on.")
    last_affected: Release | None = Field(
        default=None, description="The last release the bug lives in (for an open bug: the newest)."
    )
    first_fixed: Release | None = Field(
        default=None, description="The first release without it; none while it is open."
    )
    scenario: str | None = Field(
        default=None, description="Its regression file, from the checkout's root."
    )
    invariants: tuple[str, ...] = Field(
        default=(), description="The invariants it must break on the affected release."
    )
    gap: str | None = Field(
        default=None, description="Why the harness cannot show it yet (then no scenario)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> Bug:
        if self.target not in TARGETS_OF[self.sdk]:
            raise ValueError(
                f"target: {self.target!r} does not drive {self.sdk} "
                f"(one of {', '.join(TARGETS_OF[self.sdk])})"
            )
        unknown = [name for name in self.invariants if name not in INVARIANTS]
        if unknown:
            raise ValueError(f"invariants: unknown {unknown} (known: {', '.join(INVARIANTS)})")
        if self.gap is None:
            if self.scenario is None:
                raise ValueError("scenario: needed unless the entry is a gap")
            if not self.invariants:
                raise ValueError("invariants: name at least one unless the entry is a gap")
            if self.last_affected is None:
                raise ValueError("last_affected: needed unless the entry is a gap")
        elif self.scenario is not None:
            raise ValueError("gap: a gap has no scenario (the scenario would show it)")
        fixed, affected = self.first_fixed, self.last_affected
        if fixed is not None and affected is not None and _key(fixed) <= _key(affected):
            raise ValueError(f"first_fixed: {fixed} is not after last_affected {affected}")
        return self

    @property
    def is_open(self) -> bool:
        return self.first_fixed is None

    def releases(self) -> tuple[str, ...]:
        """The releases the backtest runs it on: the last affected, then the first fixed."""
        found = (self.last_affected, self.first_fixed)
        return tuple(release for release in found if release is not None)


def _key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


def release_key(release: str) -> tuple[int, ...]:
    """A release as numbers, for comparing two releases of one SDK."""
    return _key(release)


def load_bug(path: Path) -> Bug:
    """One catalogue entry; ``CatalogueError`` (one line) for a file that cannot be used."""
    try:
        data = read_yaml(path.read_text(encoding="utf-8"))
    except OSError as failure:
        raise CatalogueError(f"{path}: cannot read: {failure.strerror}") from None
    except Exception as failure:  # a YAML error: its first line names the place
        raise CatalogueError(f"{path}: not valid YAML: {str(failure).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise CatalogueError(f"{path}: expected a mapping at the top")
    try:
        bug = Bug.model_validate(data)
    except ValidationError as failure:
        error = failure.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        raise CatalogueError(f"{path}: {where + ': ' if where else ''}{message}") from None
    if bug.id != path.stem:
        raise CatalogueError(f"{path}: id: {bug.id!r} is not the file's name {path.stem!r}")
    if bug.scenario is not None:
        scenario = ROOT / bug.scenario
        try:
            load_scenario(scenario)
        except ScenarioFileError as problem:
            raise CatalogueError(f"{path}: scenario: {problem}") from None
    return bug


def catalogue(folder: Path = CATALOGUE) -> list[Bug]:
    """Every entry of the catalogue, by id."""
    files = sorted(path for path in folder.iterdir() if path.suffix in {".yaml", ".yml"})
    return [load_bug(path) for path in files]


def scenario_path(bug: Bug) -> Path:
    """The bug's regression file (it has one: it is no gap)."""
    if bug.scenario is None:
        raise ValueError(f"{bug.id} is a gap: {bug.gap}")
    return ROOT / bug.scenario


TRACKER_URL: Final = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)#(?P<number>\d+)$")


def tracker_url(bug: Bug) -> str:
    """The tracker reference as a link (GitHub sends an issue number to its pull request)."""
    match = TRACKER_URL.match(bug.tracker)
    assert match is not None  # the field's pattern
    return f"https://github.com/{match['repo']}/issues/{match['number']}"

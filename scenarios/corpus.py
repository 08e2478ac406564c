"""The ci sample of generated scenarios as committed data, read instead of drawn.

Which scenarios hypothesis draws, even derandomized, changes with its release; the findings
files' classes explain one particular sample.  So ``python -m harness generate --profile ci``
draws the sample once and writes it under ``scenarios/corpus/<profile>/``, and
``python -m harness check --profile ci`` runs what is committed there: regenerating is a
deliberate change, reviewed like any other, that means triaging the findings again.

One JSON-lines file per sample: ``generated.jsonl`` for the targets that can express every
capability the generators consult (``DRAWN_CAPABILITIES``), and ``generated-<target>.jsonl`` for
each narrower set a built-in target draws its own sample within (the first built-in target with
that set names the file; a check matches a file by the set in its header, never by name).  The
first line is a header, then one line per scenario, family by family in the order of
``FAMILIES`` (the general one, then the focused ones: restore, effects, gated, ids, retried,
deploy, twins), each in the order drawn (a family that needs a capability the file was not drawn
within has no lines there)::

    {"capabilities":null,"hypothesis":"6.170.17","profile":"ci","regenerate":"...","scenarios":400}
    {"name":"generated-000","scenario":{"description":"generated",...}}

``capabilities`` is the sorted list of the drawn capabilities the sample was drawn within (null:
all of them), ``hypothesis`` the release that drew it.  A scenario is its
``model_dump(mode="json", exclude_defaults=True)`` and is read back through the same validation
as a regression file (``scenarios.loading.parse_scenario``).  Names are the shared sample's:
``generated-`` and the family's prefix, then the number (``generated-007``,
``generated-restore-007``, ``generated-effects-007``); a target running a narrower file gets its
name after that (``generated-strands-007``, ``generated-effects-strands-007``), as when it drew
its own sample.  A family added later is appended after the others, so the lines of the
families before it (and their names, which findings record) stay as they were: the header's
count changes, and its capabilities where the new family needs one the generators did not
consult before (``retries`` and ``changed_tree`` came so; ``retries`` parted langgraph's two
shapes into two files, alike but for the retried calls).  Every line is ``json.dumps`` with
sorted keys (but an answer step's, which keep the order they were drawn in: the order the runner
sends them in), no ASCII escaping and no spaces, so the same hypothesis release writes the same
bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import hypothesis
from hypothesis.strategies import SearchStrategy

from scenarios.classes import COVERAGE_PREFIXES
from scenarios.loading import ScenarioFileError, parse_scenario
from scenarios.model import Scenario
from scenarios.statistics import sample
from scenarios.steps import keys_sorted
from scenarios.strategies import (
    DRAWN_CAPABILITIES,
    Capabilities,
    effects_scenarios,
    ids_scenarios,
    restore_scenarios,
    scenarios,
)
from scenarios.strategies.deploys import DEPLOY_NEEDS, deploy_scenarios
from scenarios.strategies.gates import GATE_CAPABILITY, gated_scenarios
from scenarios.strategies.retries import RETRY_CAPABILITY, retried_scenarios
from scenarios.strategies.twins import twin_scenarios

CORPUS: Final = Path(__file__).parent / "corpus"
COMMITTED: Final = ("ci",)  # the profiles whose sample is committed; the others are drawn
SHARED: Final = "generated"  # the file stem of the sample every fully capable target runs
GENERATED: Final = "generated-"  # how a generated scenario's name begins (the general family's)
REGENERATE: Final = "python -m harness generate --profile {profile}"
HEADER_KEYS: Final = ("capabilities", "hypothesis", "profile", "regenerate", "scenarios")


@dataclass(frozen=True)
class Family:
    """One family of generated scenarios: its names begin with ``generated-`` and ``prefix``;
    ``draw`` is its strategy within some capabilities; ``share`` of the profile's examples are
    drawn from it; ``statistics`` says whether the class statistics count it (a family focused
    on one shape by design would skew them); ``needs`` are the capabilities (of
    ``DRAWN_CAPABILITIES``) without any of which every scenario of it would be not applicable:
    it is drawn only within capabilities that have them all."""

    prefix: str
    draw: Callable[[Capabilities], SearchStrategy[Scenario]]
    share: float = 1.0
    statistics: bool = True
    needs: frozenset[str] = frozenset()

    def drawn_within(self, within: Capabilities) -> bool:
        return within is None or self.needs <= within

    @property
    def names(self) -> str:
        return f"{GENERATED}{self.prefix}"


# the families, in the order their lines are written: append a new one at the end
FAMILIES: Final = (
    Family("", lambda within: scenarios(capabilities=within)),
    Family("restore-", lambda within: restore_scenarios(capabilities=within), statistics=False),
    # an eighth of the profile's examples: 25 of the ci sample's 425, about 6% of it
    Family("effects-", lambda within: effects_scenarios(capabilities=within), share=1 / 8),
    # gates on the general family's sub-agents, for targets that can express them: 25 more
    Family(
        "gated-",
        lambda within: gated_scenarios(capabilities=within),
        share=1 / 8,
        needs=frozenset({GATE_CAPABILITY}),
    ),
    # the general family with adversarial toolUseIds (prefixes across separators, percent-escapes,
    # NFC/NFD twins, long ids): 25 more
    Family("ids-", lambda within: ids_scenarios(capabilities=within), share=1 / 8),
    # retries on the general family's sub-agents and actions, kept where a retry happens, for
    # targets that can express them: 25 more
    Family(
        "retried-",
        lambda within: retried_scenarios(capabilities=within),
        share=1 / 8,
        needs=frozenset({RETRY_CAPABILITY}),
    ),
    # the general family's trees asked, then deployed changed (renamed sub-agents, replaced
    # tools, added actions, resized windows, preserve_context turned), for targets that can
    # rebuild from a changed tree: 25 more
    Family(
        "deploy-",
        lambda within: deploy_scenarios(capabilities=within),
        share=1 / 8,
        needs=DEPLOY_NEEDS,
    ),
    # one sub-agent called with two or three prompts in one turn, each acting and answering its
    # own way, so results or approvals crossed between twins show: 25 more
    Family(
        "twins-", lambda within: twin_scenarios(capabilities=within), share=1 / 8, statistics=False
    ),
)
RESTORE: Final = FAMILIES[1].names  # how a name of the focused (restore) family begins
EFFECTS: Final = FAMILIES[2].names  # and of the side-effects family
GATED: Final = FAMILIES[3].names  # and of the gated-call family
IDS: Final = FAMILIES[4].names  # and of the adversarial-ids family
RETRIED: Final = FAMILIES[5].names  # and of the retried-call family
DEPLOY: Final = FAMILIES[6].names  # and of the deploy family
TWINS: Final = FAMILIES[7].names  # and of the twin-call family
# a generated scenario's name: its family's beginning (longest first), then its number
NAME: Final = re.compile(
    "("
    + "|".join(
        sorted(
            (
                re.escape(name)
                for name in [family.names for family in FAMILIES]
                + [f"{GENERATED}{prefix}" for prefix in COVERAGE_PREFIXES]
            ),
            key=len,
            reverse=True,
        )
    )
    + r")(\d{3,})"
)


def counted(name: str) -> bool:
    """Whether the class statistics count the generated scenario ``name`` (its family does)."""
    matched = NAME.fullmatch(name)
    family = next((f for f in FAMILIES if matched and f.names == matched[1]), None)
    return family is not None and family.statistics


Named = list[tuple[str, Scenario]]


class CorpusError(ValueError):
    """A corpus file that cannot be used; the message is one line naming the file and line."""


def drawn_within(capabilities: Capabilities) -> Capabilities:
    """The part of ``capabilities`` the generators consult, which alone decides what is drawn;
    None when that is every one of them (the shared sample)."""
    if capabilities is None or capabilities >= DRAWN_CAPABILITIES:
        return None
    return capabilities & DRAWN_CAPABILITIES


def draw(profile: str, capabilities: Capabilities) -> Named:
    """The sample a derandomized run of ``profile`` draws within ``capabilities``: every family
    it can express in turn, under the shared sample's names."""
    within = drawn_within(capabilities)
    drawn: Named = []
    for family in (family for family in FAMILIES if family.drawn_within(within)):
        found = sample(profile, _strategy(family, within), family.share)
        drawn += [(f"{family.names}{i:03d}", scenario) for i, scenario in enumerate(found)]
    return drawn


def _strategy(family: Family, within: Capabilities) -> Callable[[], SearchStrategy[Scenario]]:
    return lambda: family.draw(within)


def named(drawn: Named, prefix: str) -> Named:
    """The names a target with ``prefix`` (``strands-``; "" for the shared sample) runs them
    under: ``generated-strands-007``, ``generated-restore-strands-007``."""
    return [(_prefixed(name, prefix), scenario) for name, scenario in drawn]


def _prefixed(name: str, prefix: str) -> str:
    matched = NAME.fullmatch(name)
    assert matched is not None, name  # read() and draw() give no other names
    return f"{matched[1]}{prefix}{matched[2]}"


def render(
    profile: str, capabilities: Capabilities, drawn: Named, regenerate: str | None = None
) -> str:
    """The file's text: the header, then one line per scenario.  The header names the command
    that writes the file: ``generate --profile PROFILE``, or ``regenerate`` (a sample in the same
    format that another command writes)."""
    within = drawn_within(capabilities)
    header = {
        "capabilities": None if within is None else sorted(within),
        "hypothesis": hypothesis.__version__,
        "profile": profile,
        "regenerate": REGENERATE.format(profile=profile) if regenerate is None else regenerate,
        "scenarios": len(drawn),
    }
    lines = [header] + [
        {"name": name, "scenario": scenario.model_dump(mode="json", exclude_defaults=True)}
        for name, scenario in drawn
    ]
    return "".join(_line(line) + "\n" for line in lines)


def _line(value: Any) -> str:
    return json.dumps(keys_sorted(value), ensure_ascii=False, separators=(",", ":"))


def folder(profile: str, corpus: Path | None = None) -> Path:
    return (CORPUS if corpus is None else corpus) / profile


def files(profile: str, corpus: Path | None = None) -> list[Path]:
    directory = folder(profile, corpus)
    return sorted(directory.glob("*.jsonl")) if directory.is_dir() else []


def find(profile: str, capabilities: Capabilities, corpus: Path | None = None) -> Path | None:
    """The committed file of ``profile`` drawn within the same drawn capabilities as
    ``capabilities`` (by its header), or None.  Every file's header is read, so a malformed
    one is refused even when another would match."""
    wanted = drawn_within(capabilities)
    found: dict[Capabilities, Path] = {}
    for path in files(profile, corpus):
        within = header(path, profile)["capabilities"]
        if within in found:
            raise CorpusError(
                f"{path}: line 1: capabilities: expected a set no other file has, "
                f"{found[within].name} has the same"
            )
        found[within] = path
    return found.get(wanted)


def header(path: Path, profile: str) -> dict[str, Any]:
    """The file's header, checked; ``capabilities`` as a frozenset (None: every one)."""
    text = _text(path)
    first = text.split("\n", 1)[0]
    return _header(path, first, profile)


def read(path: Path, profile: str) -> Named:
    """Every scenario of the file, in order, each validated as a regression file is."""
    text = _text(path)
    if not text.endswith("\n"):
        raise CorpusError(f"{path}: line {text.count(chr(10)) + 1}: expected a newline at the end")
    lines = text.split("\n")[:-1]
    count = _header(path, lines[0], profile)["scenarios"]
    seen: set[str] = set()
    drawn: Named = []
    for number, line in enumerate(lines[1:], start=2):
        data = _object(path, number, line, 'a scenario line: {"name": ..., "scenario": ...}')
        keys = sorted(data)
        if keys != ["name", "scenario"]:
            raise CorpusError(
                f"{path}: line {number}: expected the keys name and scenario, got {_listed(keys)}"
            )
        name = data["name"]
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise CorpusError(
                f"{path}: line {number}: name: expected "
                + " or ".join(f"{family.names}NNN" for family in FAMILIES)
                + f", got {name!r}"
            )
        if name in seen:
            raise CorpusError(f"{path}: line {number}: name: {name} is already an earlier line's")
        seen.add(name)
        try:
            scenario = parse_scenario(data["scenario"], f"{path}: line {number}: scenario")
        except ScenarioFileError as problem:
            raise CorpusError(str(problem)) from None
        drawn.append((name, scenario))
    if len(drawn) != count:
        raise CorpusError(
            f"{path}: line {len(lines)}: expected {count} scenarios after the header "
            f"(its scenarios), found {len(drawn)}"
        )
    return drawn


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as failure:
        raise CorpusError(f"{path}: cannot read: {failure.strerror}") from None
    except UnicodeDecodeError:
        raise CorpusError(f"{path}: not UTF-8 text") from None


def _header(path: Path, line: str, profile: str) -> dict[str, Any]:
    expected = "the header: {" + ", ".join(f'"{key}": ...' for key in HEADER_KEYS) + "}"
    data = _object(path, 1, line, expected)
    keys = sorted(data)
    if keys != sorted(HEADER_KEYS):
        raise CorpusError(
            f"{path}: line 1: expected the header's keys {_listed(HEADER_KEYS)}, "
            f"got {_listed(keys)}"
        )
    if data["profile"] != profile:
        raise CorpusError(
            f"{path}: line 1: profile: expected {profile!r} (the folder it is in), "
            f"got {data['profile']!r}"
        )
    within = data["capabilities"]
    if within is not None and not (
        isinstance(within, list) and all(isinstance(name, str) for name in within)
    ):
        raise CorpusError(
            f"{path}: line 1: capabilities: expected null or a list of capability names, "
            f"got {within!r}"
        )
    if not isinstance(data["hypothesis"], str):
        raise CorpusError(f"{path}: line 1: hypothesis: expected the release that drew it")
    count = data["scenarios"]
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise CorpusError(
            f"{path}: line 1: scenarios: expected how many lines follow, got {count!r}"
        )
    return {**data, "capabilities": None if within is None else frozenset(within)}


def _object(path: Path, number: int, line: str, expected: str) -> dict[str, Any]:
    if not line.strip():
        raise CorpusError(f"{path}: line {number}: expected {expected}, got an empty line")
    try:
        data = json.loads(line)
    except ValueError as failure:
        problem = getattr(failure, "msg", "does not parse")
        raise CorpusError(
            f"{path}: line {number}: not JSON ({problem}): expected {expected}"
        ) from None
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: line {number}: expected {expected}, got {type(data).__name__}")
    return data


def _listed(keys: Iterable[str]) -> str:
    return ", ".join(keys) or "none"

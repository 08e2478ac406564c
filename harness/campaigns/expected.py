"""What the fault campaigns are expected to show on a released SDK, and whether a run stayed within.

A released SDK fails some campaigns (its findings file says why), so its results cannot be held to
"clean".  They are held to what was recorded for the release instead: a file per release under
``scenarios/findings/faults/`` holds, for one budget (examples, probes, seed), the most cases of
each bad corruption class, the worst crash verdict and the most crash points that ran an action
twice or lost an approval (and on how many regression files the crash campaign ran: another set
must be recorded again), and the most violating privacy and isolation cases.  A run with the
same budget passes only within every bound: a bad class not recorded, a count above its bound or
a worse crash verdict fails it.  A run with another budget cannot be compared and is reported as
evidence, saying so.

    python -m harness faults --target strands --examples strands=200 --record

writes the file from a run (the counts it saw, as bounds); a person reads the report before
committing it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import yaml

from harness.campaigns.corruption import CLASSES
from harness.findings import FINDINGS
from scenarios.loading import read_yaml

EXPECTED: Final = FINDINGS / "faults"
PROJECT: Final = FINDINGS.parent.parent
BAD_CLASSES: Final = tuple(name for name in CLASSES if name not in ("SAFE", "TOLERATED"))
VERDICTS: Final = ("at most once", "can run an action twice")  # better first
CRASH_COUNTS: Final = ("ran_twice", "lost_approvals")
CRASH_SCENARIOS: Final = "scenarios"  # how many regression files the crash campaign ran on
INVARIANT_CAMPAIGNS: Final = ("privacy", "isolation")
BUDGET: Final = ("examples", "invariant_examples", "seed")
KEYS: Final = ("target", "version", "budget", "corruption", "crash_points", *INVARIANT_CAMPAIGNS)


class ExpectedError(ValueError):
    """A malformed expected-outcome file: one line naming the file, the field and what was
    expected."""


def expected_path(target: str, version: str, directory: Path | None = None) -> Path:
    return (EXPECTED if directory is None else directory) / f"{target}-{version}.yaml"


def shown_path(target: str, version: str) -> str:
    """The bundled file's path as reports show it: from the project's root, whatever the
    working directory (reports hold no machine's paths)."""
    path = expected_path(target, version)
    return path.relative_to(PROJECT).as_posix() if path.is_relative_to(PROJECT) else str(path)


def load_expected(
    target: str, version: str, directory: Path | None = None
) -> dict[str, Any] | None:
    """The recorded outcome of ``target`` ``version``, checked; None when there is none."""
    path = expected_path(target, version, directory)
    if not path.is_file():
        return None
    try:
        data = read_yaml(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as problem:
        raise ExpectedError(f"{path}: not YAML ({type(problem).__name__})") from None
    _check(path, data, target, version)
    return data  # type: ignore[no-any-return]


def _check(path: Path, data: Any, target: str, version: str) -> None:
    def refuse(field: str, expected: str) -> None:
        raise ExpectedError(f"{path}: {field}: expected {expected}")

    if not isinstance(data, dict):
        refuse("(top level)", "a mapping")
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        refuse(unknown[0], "one of " + ", ".join(KEYS))
    if data.get("target") != target or str(data.get("version")) != version:
        refuse("target", f"{target} {version}, as the file's name says")
    for key in KEYS[2:]:
        if not isinstance(data.get(key), dict):
            refuse(key, "a mapping")
    for key in BUDGET:
        if not _count(data["budget"].get(key)):
            refuse(f"budget.{key}", "a whole number >= 0")
    for key, value in data["corruption"].items():
        if key not in BAD_CLASSES or not _count(value):
            refuse(f"corruption.{key}", f"a count of one of {', '.join(BAD_CLASSES)}")
    crashes = data["crash_points"]
    if crashes.get("verdict") not in VERDICTS:
        refuse("crash_points.verdict", " or ".join(repr(verdict) for verdict in VERDICTS))
    for key in (CRASH_SCENARIOS, *CRASH_COUNTS):
        if not _count(crashes.get(key)):
            refuse(f"crash_points.{key}", "a whole number >= 0")
    for key in INVARIANT_CAMPAIGNS:
        if not _count(data[key].get("violating")):
            refuse(f"{key}.violating", "a whole number >= 0")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def budget_of(entry: dict[str, Any]) -> dict[str, int]:
    return {key: entry["budget"][key] for key in BUDGET}


def outcome(entry: dict[str, Any], target: str) -> dict[str, Any]:
    """A target's results in the recorded form (``target``: its findings name): what
    ``--record`` writes."""
    corruption = entry["corruption"]
    classes = corruption["classes"] if corruption is not None else {}
    crashes = entry["crash_points"]
    return {
        "target": target,
        "version": entry["version"],
        "budget": budget_of(entry),
        "corruption": {name: classes[name] for name in BAD_CLASSES if classes.get(name)},
        "crash_points": {"verdict": crashes["verdict"]}
        | {key: crashes[key] for key in (CRASH_SCENARIOS, *CRASH_COUNTS)},
        **{key: {"violating": entry[key]["violating"]} for key in INVARIANT_CAMPAIGNS},
    }


def beyond(entry: dict[str, Any], target: str, expected: dict[str, Any]) -> list[str]:
    """Where a run with the recorded budget went past the recorded outcome (nothing: it passes)."""
    seen = outcome(entry, target)
    found = []
    for name in BAD_CLASSES:
        count, bound = seen["corruption"].get(name, 0), expected["corruption"].get(name, 0)
        if count > bound:
            found.append(f"corruption: {count} {name} cases, recorded at most {bound}")
    verdict, allowed = seen["crash_points"]["verdict"], expected["crash_points"]["verdict"]
    if VERDICTS.index(verdict) > VERDICTS.index(allowed):
        found.append(f"crash points: {verdict}, recorded {allowed}")
    ran_on, recorded_on = (
        seen["crash_points"][CRASH_SCENARIOS],
        expected["crash_points"][CRASH_SCENARIOS],
    )
    if ran_on != recorded_on:
        # other regression files, other crash points: the counts say nothing against each other
        found.append(
            f"crash points: run on {ran_on} regression files, recorded on {recorded_on}: "
            "record the outcome again (faults --record)"
        )
    else:
        for key in CRASH_COUNTS:
            count, bound = seen["crash_points"][key], expected["crash_points"][key]
            if count > bound:
                found.append(
                    f"crash points: {key.replace('_', ' ')} {count}, recorded at most {bound}"
                )
    for key in INVARIANT_CAMPAIGNS:
        count, bound = seen[key]["violating"], expected[key]["violating"]
        if count > bound:
            found.append(f"{key}: {count} violating cases, recorded at most {bound}")
    return found


def dumps(recorded: dict[str, Any]) -> str:
    header = (
        f"# What the fault campaigns show on {recorded['target']} {recorded['version']} with this\n"
        "# budget: each count is a bound a run with the same budget must stay within (a bad\n"
        "# corruption class not named here: none). Written by `python -m harness faults --record`\n"
        "# from a run; the findings file next to this folder says why each happens.\n"
    )
    return header + yaml.safe_dump(recorded, sort_keys=False, allow_unicode=True, width=100)

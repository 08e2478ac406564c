"""Every failing generated scenario of a ``check`` or ``faults`` run, written as a regression file.

``check``: a generated scenario (the committed ci sample, or a sample drawn on the spot) fails on a
target when it shows a violation no recorded witness matches, or when the target's adapter broke
its contract on it.  It is written as it ran, not shrunk: the sample is data already, each
scenario a whole file's content, and the name the report gives it is the name of its file.  A
scenario file (``--scenarios``, the regression files) is a file already and is never rewritten.

``faults``: a target fails a campaign part when it has more bad cases there than allowed (none for
a target without a findings file; a released SDK's recorded bound, ``harness.campaigns.expected``;
a run reported as evidence fails nothing).  Each failing corruption class and each failing
privacy or isolation campaign has one example in the report, the simplest drawn (a corruption
class's is also reduced, ``harness.campaigns.corruption.simplest``); that example is written,
damage steps and all.  The crash-point campaign runs the regression files, already files: a crash
point (step, boundary, occurrence) is not a step of the scenario language, so the report names the
file and the point and ``faults`` replays them.

Files go to ``<reports>/counterexamples/<scenario>@<target>.yaml``
(``scenarios.counterexamples.file_name``): check's are named after the generated scenario
(``generated-007``, ``generated-restore-strands-012``), faults' after the campaign part
(``faults-corruption-silent-lost``, ``faults-privacy``, ``faults-isolation``), so no two
targets, campaigns or commands share a file.  A run replaces the files of what it ran on each
target: it writes the failing ones and deletes the earlier files of the passing ones, but only
files whose first line is that command's header for that target; a file without it is left
alone, and a failing scenario whose file is such a file is not written (``Written.refused``).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from harness.campaigns.expected import BAD_CLASSES, INVARIANT_CAMPAIGNS
from harness.checkers.violation import Violation
from harness.findings import Verdict
from harness.report import write_atomically
from harness.runner import AdapterError
from harness.targets.base import TargetInfo
from scenarios.counterexamples import breaks, file_name, header, owner, scenario_text
from scenarios.model import Scenario

FOLDER: Final = "counterexamples"  # under the run's --reports folder
FAULTS: Final = "faults-"  # the names of the fault campaigns' counterexamples


@dataclass(frozen=True)
class Counterexample:
    name: str  # the scenario's name in the run: generated-007, faults-privacy
    scenario: Scenario
    description: str  # what it broke
    source: str  # where it was drawn


@dataclass
class Written:
    """What a run left in the folder for one target."""

    files: dict[str, str] = field(default_factory=dict)  # scenario -> file, from --reports
    refused: list[str] = field(default_factory=list)  # one line each: a file not ours was there


def replace(
    reports: Path,
    command: str,
    info: TargetInfo,
    ran: Iterable[str],
    failing: Sequence[Counterexample],
) -> Written:
    """The files of the scenarios ``command`` ran on ``info``'s target: each of ``failing``
    written, every other one this command wrote there earlier deleted."""
    folder = reports / FOLDER
    by_name = {counterexample.name: counterexample for counterexample in failing}
    written = Written()
    for name in dict.fromkeys([*ran, *by_name]):
        path = folder / file_name(name, info.name)
        ours = _owned(path, command, info.name)
        found = by_name.get(name)
        if found is None:
            if ours:
                path.unlink()
        elif path.exists() and not ours:
            written.refused.append(
                f"{path}: not written: a file there does not start with the header "
                f"{owner(command, info.name).strip()!r}; move it away to get the "
                "counterexample"
            )
        else:
            text = scenario_text(found.scenario, found.description, found.source)
            write_atomically(path, header(command, info.name, info.version) + text)
            written.files[name] = f"{FOLDER}/{path.name}"
    return written


def _owned(path: Path, command: str, target: str) -> bool:
    """Whether ``path`` is a file ``command`` wrote for ``target`` (by its first line)."""
    try:
        with path.open(encoding="utf-8") as stream:
            return stream.readline().startswith(owner(command, target))
    except (OSError, UnicodeDecodeError):
        return False


def check_failures(
    info: TargetInfo,
    scenarios: Sequence[tuple[str, Scenario]],
    generated: Collection[str],
    verdict: Verdict,
    adapter_errors: Sequence[AdapterError],
    profile: str | None,
) -> tuple[list[str], list[Counterexample]]:
    """The generated scenarios ``check`` ran on a target, and those that failed there: a
    violation no recorded witness matched (``verdict.new``), or an adapter error."""
    ran = [name for name, _ in scenarios if name in generated]
    new: dict[str, list[Violation]] = {}
    for name, violation in verdict.new:
        new.setdefault(name, []).append(violation)
    broke = {error.scenario: error for error in adapter_errors if error.scenario in generated}
    source = (
        f"python -m harness check --profile {profile}: its sample of generated scenarios, as "
        "drawn (not shrunk)"
    )
    target = f"{info.name} {info.version}"
    failing = []
    for name, scenario in dict(scenarios).items():
        if name not in generated:
            continue
        if name in broke:
            error = broke[name]
            where = "at start()" if error.step is None else f"at step {error.step} ({error.kind})"
            control = " of the restart-free control run" if error.control else ""
            description = (
                f"Generated scenario on {target}: the adapter broke its contract {where}"
                f"{control}: {error.problem}"
            )
        elif name in new:
            description = breaks(target, new[name])
        else:
            continue
        failing.append(Counterexample(name, scenario, description, f"{name} of {source}"))
    return ran, failing


def fault_names() -> list[str]:
    """Every name a fault campaign's counterexample may have, in report order."""
    return [_corruption_name(name) for name in BAD_CLASSES] + [
        FAULTS + campaign for campaign in INVARIANT_CAMPAIGNS
    ]


def _corruption_name(fault_class: str) -> str:
    return f"{FAULTS}corruption-{fault_class.lower().replace('_', '-')}"


def fault_failures(
    entry: Mapping[str, Any], recorded: Mapping[str, Any] | None
) -> list[tuple[Counterexample, dict[str, Any]]]:
    """The examples of a target's failing campaign parts (each with the report's example, where
    the file is noted): every bad part of a target held to clean, the parts beyond ``recorded``
    of one held to its recorded outcome, none of a run reported as evidence."""
    if entry["expected"] == "evidence":
        return []
    bounds = recorded if entry["expected"] == "recorded" and recorded is not None else {}
    target = f"{entry['name']} {entry['version']}"
    budget = entry["budget"]
    found: list[tuple[Counterexample, dict[str, Any]]] = []
    corruption = entry["corruption"]
    for fault_class in BAD_CLASSES if corruption is not None else ():
        allowed = bounds.get("corruption", {}).get(fault_class, 0)
        example = corruption["examples"].get(fault_class)
        if example is None or corruption["classes"][fault_class] <= allowed:
            continue
        description = (
            f"Fault campaign counterexample on {target}: the stored turn damaged by "
            f"{example['corruption']['corrupt']} leaves the approval {fault_class}: "
            + "; ".join(example["reasons"])
            + "."
        )
        source = (
            f"the corruption campaign of python -m harness faults (seed {budget['seed']}, "
            f"{budget['examples']} cases): the simplest {fault_class} case, reduced in at most "
            f"{budget['shrink']} runs"
        )
        scenario = Scenario.model_validate(example["scenario"])
        found.append(
            (Counterexample(_corruption_name(fault_class), scenario, description, source), example)
        )
    for campaign in INVARIANT_CAMPAIGNS:
        result = entry[campaign]
        allowed = bounds.get(campaign, {}).get("violating", 0)
        if result["example"] is None or result["violating"] <= allowed:
            continue
        violations = [Violation(**violation) for violation in result["example"]["violations"]]
        source = (
            f"the {campaign} campaign of python -m harness faults (seed {budget['seed']}, "
            f"{budget['invariant_examples']} cases): its smallest violating case"
        )
        scenario = Scenario.model_validate(result["example"]["scenario"])
        counterexample = Counterexample(
            FAULTS + campaign, scenario, breaks(target, violations), source
        )
        found.append((counterexample, result["example"]))
    return found


def reported(written: Mapping[str, Written]) -> dict[str, dict[str, str]]:
    """Each target's files, as a report holds them (paths from the report's folder)."""
    return {target: dict(found.files) for target, found in written.items() if found.files}


def rebased(files: Mapping[str, Mapping[str, str]], source: Path, report: Path) -> dict[str, Any]:
    """Paths from the folder of the report ``source`` came from, made paths from ``report``'s
    folder (``report`` merges conformance.json files of several folders)."""
    return {
        column: {
            scenario: Path(os.path.relpath(source / path, report)).as_posix()
            for scenario, path in paths.items()
        }
        for column, paths in files.items()
    }

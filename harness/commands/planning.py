"""The scenarios a check or a record runs: the scenario files, plus a profile's generated sample
(for ci the committed one), drawn within each target's capabilities where it draws its own."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hypothesis import __version__ as hypothesis_version

from harness.commands.inputs import BadInput, load, scenarios_from
from harness.commands.options import shown
from harness.findings import Folders, load_document
from harness.targets.base import Target
from scenarios import corpus, coverage
from scenarios.loading import regression_file
from scenarios.model import Scenario
from scenarios.statistics import class_frequencies, frequency_report
from scenarios.strategies import DRAWN_CAPABILITIES, Capabilities

PROFILES = ("ci", "dev", "deep")  # the hypothesis profiles --profile names


def planned(
    arguments: argparse.Namespace, targets: Sequence[Target]
) -> tuple[list[tuple[str, Scenario]], dict[str, list[tuple[str, Scenario]]], set[str], str | None]:
    """The scenarios to run (``--scenarios``, plus the ``--profile`` sample), each target's own
    list where it draws its own sample, the drawn scenarios' names, and the generator stats."""
    regressions = scenarios_from(arguments.scenarios)
    scenarios = list(regressions)
    own: dict[str, list[tuple[str, Scenario]]] = {}
    drawn_names: set[str] = set()  # the names of the drawn scenarios, which classes may cover
    stats = None
    if arguments.profile is not None:
        shared = generated(arguments.profile, None, "")
        scenarios += shared
        drawn_names.update(name for name, _ in shared)
        counted = [scenario for name, scenario in shared if corpus.counted(name)]
        for target in targets:
            expressible = target.info.expressible
            if not expressible >= DRAWN_CAPABILITIES:
                # drawn within what it can express, instead of mostly not applicable
                drawn = generated(arguments.profile, expressible, f"{target.info.name}-")
                own[target.info.name] = regressions + drawn
                drawn_names.update(name for name, _ in drawn)
        stats = frequency_report(arguments.profile, class_frequencies(counted), len(counted))
    if getattr(arguments, "coverage", False):
        try:
            shapes = corpus.named(coverage.read(), "")
        except corpus.CorpusError as problem:
            raise BadInput(str(problem)) from None
        scenarios += shapes
        drawn_names.update(name for name, _ in shapes)
        for mine in own.values():
            mine += shapes
    return scenarios, own, drawn_names, stats


def with_demonstrations(
    targets: Sequence[Target],
    findings: Folders,
    scenarios: list[tuple[str, Scenario]],
    own: dict[str, list[tuple[str, Scenario]]],
) -> None:
    """Give each target's list (in ``own``) the ``shown_by`` files of its findings classes that
    it leaves out (a coverage regression file, which the default set does not hold), so that
    each class's demonstration is judged in the run its class judges: a class is judged only
    where every one of its ``shown_by`` files ran."""
    for target in targets:
        info = target.info
        document = load_document(info.findings_name, info.version, findings)
        if document is None:
            continue
        mine = own.get(info.name, scenarios)
        ran = {name for name, _ in mine}
        missing = sorted(
            {name for found in document.classes for name in found.shown_by} - ran,
        )
        # a name no bundled file holds (a plugin's) is judged where it runs
        extra = [
            (name, load(regression_file(name)))
            for name in missing
            if regression_file(name).is_file()
        ]
        if extra:
            own[info.name] = [*mine, *extra]


def generated(profile: str, capabilities: Capabilities, prefix: str) -> list[tuple[str, Scenario]]:
    """The profile's sample of both generated families within ``capabilities``, under names
    with ``prefix``: for ci the committed file drawn within the same capabilities, else (or
    when none is committed) drawn here."""
    drawn = None
    if profile in corpus.COMMITTED:
        try:
            found = corpus.find(profile, capabilities)
            drawn = None if found is None else corpus.read(found, profile)
        except corpus.CorpusError as problem:
            raise BadInput(str(problem)) from None
        if drawn is None:
            whose = f"{prefix.removesuffix('-')}'s capabilities" if prefix else "every capability"
            print(
                f"{shown(corpus.folder(profile))}: no sample drawn within {whose}; drawing it "
                f"with hypothesis {hypothesis_version}",
                file=sys.stderr,
            )
    if drawn is None:
        drawn = corpus.draw(profile, capabilities)
    return corpus.named(drawn, prefix)

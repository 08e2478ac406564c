"""The coverage sample: the shapes where bugs hide (``scenarios.classes.COVERAGE``), one family
each, committed as a file of its own beside the ci sample.

The ci sample (``scenarios.corpus``) is what the findings files are triaged against: a family
appended to it changes its files, and every target's findings must be triaged again.  So the
coverage families are drawn into ``scenarios/corpus/coverage/generated-coverage.jsonl``
(``python -m harness generate --coverage``), in the ci sample's format: derandomized under the ci
profile, a quarter of its examples per family (50 each), drawn within every capability (a target
that cannot express a scenario finds it not applicable).  Each family keeps only draws that have
its class, so each class is a seventh of the file.  ``python -m harness check --coverage`` runs it
beside whatever else it runs; CI runs it on the reference, which must be clean
(``tests/test_coverage_sample.py``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Final

from scenarios import corpus
from scenarios.classes import COVERAGE, COVERAGE_PREFIXES
from scenarios.model import Scenario
from scenarios.statistics import sample
from scenarios.strategies.coverage import coverage_family

PROFILE: Final = "ci"  # the profile its draws follow (derandomized, committed)
SHARE: Final = 1 / 4  # of the profile's examples, per family
FILE: Final = corpus.CORPUS / "coverage" / "generated-coverage.jsonl"
REGENERATE: Final = "python -m harness generate --coverage"
# each class of ``COVERAGE`` with the beginning of its family's names, in the order written
FAMILIES: Final = tuple(zip(COVERAGE, COVERAGE_PREFIXES, strict=True))


def draw() -> corpus.Named:
    """Every coverage family's draws, family by family, under their names."""
    drawn: corpus.Named = []
    for name, prefix in FAMILIES:
        found = sample(PROFILE, functools.partial(coverage_family, name), SHARE)
        names = (f"{corpus.GENERATED}{prefix}{i:03d}" for i in range(len(found)))
        drawn += list(zip(names, found, strict=True))
    return drawn


def render(drawn: corpus.Named) -> str:
    """The file's text: the ci sample's format, its header naming the command that writes it."""
    return corpus.render(PROFILE, None, drawn, REGENERATE)


def read(path: Path = FILE) -> list[tuple[str, Scenario]]:
    """The committed coverage sample, each scenario validated as a regression file is."""
    return corpus.read(path, PROFILE)

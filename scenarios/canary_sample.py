"""The canary sample: more draws of the ci sample's families, for the exemption canary alone.

The exemption canary (``harness.canary``) asks whether a shipped class excuses a known-bad
variant's run whole, and whether each class witness is narrower than its broadenings, on the
variants' runs of the ci sample and the coverage sample.  Those are the samples the findings are
triaged against, so they stay as they are; but a class too wide for a look-alike, or a narrowing
no variant needs, shows only in a scenario of the right shape, and a few hundred draws hold few
of some (a re-send after a restart between answers, twin calls with a corrupted turn).  So the
canary also runs the variants on a second draw of the same families, which no SDK target is
checked on and no findings file is triaged against: only the variants of the reference run it,
and the reference must hold on it (``tests/test_canary_sample.py``).

It is drawn as the ci sample is (the ci profile's settings, within every capability) but seeded
(``SEED``) instead of derandomized, ``EXAMPLES`` draws of the general and restore families and
that share of them of each focused one, each scenario once and none the ci sample holds, and
committed as ``scenarios/corpus/canary/generated-canary.jsonl`` in the ci sample's format
(``python -m harness generate --canary``).  Its names are the ci sample's families' numbered
from ``FIRST``, so that none is a name of the ci sample (``generated-1000``,
``generated-effects-1000``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Final

from scenarios import corpus
from scenarios.model import Scenario
from scenarios.statistics import seeded_sample

PROFILE: Final = "ci"  # the profile whose settings its draws follow
SEED: Final = 7  # hypothesis' seed: a draw the derandomized ci sample is not
EXAMPLES: Final = 300  # draws of a family of share 1 (the general and restore families)
FIRST: Final = 1000  # the first number of each family's names
FILE: Final = corpus.CORPUS / "canary" / "generated-canary.jsonl"
REGENERATE: Final = "python -m harness generate --canary"


def draw() -> corpus.Named:
    """Every family's draws, family by family, under their names: each scenario once, and none
    the ci sample holds (the canary runs those there)."""
    committed = corpus.find(PROFILE, None)
    assert committed is not None, "the ci sample is committed (scenarios/corpus/ci/)"
    known = {scenario.model_dump_json() for _, scenario in corpus.read(committed, PROFILE)}
    drawn: corpus.Named = []
    for family in corpus.FAMILIES:
        strategy = functools.partial(family.draw, None)
        found = seeded_sample(PROFILE, strategy, max(1, round(EXAMPLES * family.share)), SEED)
        new = []
        for scenario in found:
            text = scenario.model_dump_json()
            if text not in known:
                known.add(text)
                new.append(scenario)
        drawn += [(f"{family.names}{FIRST + i}", scenario) for i, scenario in enumerate(new)]
    return drawn


def render(drawn: corpus.Named) -> str:
    """The file's text: the ci sample's format, its header naming the command that writes it."""
    return corpus.render(PROFILE, None, drawn, REGENERATE)


def read(path: Path = FILE) -> list[tuple[str, Scenario]]:
    """The committed canary sample, each scenario validated as a regression file is."""
    return corpus.read(path, PROFILE)

"""What the generators actually produce: a deterministic sample, and how often each recognised
scenario class (listed in docs/findings.md) occurs in it.

``sample(profile)`` draws exactly the examples a derandomized run of that profile draws with the
installed hypothesis; ``python -m harness generate`` commits the ci profile's draws
(``scenarios.corpus``), which ``python -m harness check --profile ci`` and its class-frequency
report then read instead of drawing.  ``classes_of`` recognises a class from the scenario and the
oracle alone (``scenarios.classes``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Final

from hypothesis import Phase, given, seed, settings
from hypothesis.strategies import SearchStrategy

from scenarios.classes import CLASSES, classes_of
from scenarios.model import Scenario
from scenarios.profiles import register_profiles
from scenarios.strategies import scenarios

MINIMUM_SHARE: Final = 0.05


def sample(
    profile: str,
    family: Callable[[], SearchStrategy[Scenario]] = scenarios,
    share: float = 1.0,
) -> list[Scenario]:
    """The scenarios a derandomized run of ``profile`` draws from ``family``, in order; with
    ``share`` below 1, a run of that share of the profile's examples (at least one).

    Hypothesis seeds a derandomized run from the source of ``collect`` below, decorators
    included: editing those lines draws every committed sample anew (``scenarios.corpus``)."""
    register_profiles()
    profile = _with_share(profile, share)
    drawn: list[Scenario] = []

    @settings(
        settings.get_profile(profile),
        derandomize=True,
        database=None,
        phases=[Phase.generate],
    )
    @given(family())
    def collect(scenario: Scenario) -> None:
        drawn.append(scenario)

    collect()
    return drawn


def seeded_sample(
    profile: str, family: Callable[[], SearchStrategy[Scenario]], examples: int, start: int
) -> list[Scenario]:
    """The ``examples`` scenarios a run of ``profile`` seeded with ``start`` draws from
    ``family``, in order: another draw than ``sample``'s derandomized one, as repeatable with the
    same hypothesis release (``sample`` itself must not change: its source seeds its draws)."""
    register_profiles()

    drawn: list[Scenario] = []

    @seed(start)
    @settings(
        settings.get_profile(profile),
        max_examples=examples,
        derandomize=False,
        database=None,
        phases=[Phase.generate],
    )
    @given(family())
    def collect(scenario: Scenario) -> None:
        drawn.append(scenario)

    collect()
    return drawn


def _with_share(profile: str, share: float) -> str:
    """The name of a profile like ``profile`` that runs ``share`` of its examples (registered
    here; ``profile`` itself for the whole)."""
    if share >= 1:
        return profile
    parent = settings.get_profile(profile)
    examples = max(1, round(parent.max_examples * share))
    name = f"{profile}-{examples}-examples"
    settings.register_profile(name, parent=parent, max_examples=examples)
    return name


def class_frequencies(drawn: list[Scenario]) -> dict[str, float]:
    counts: Counter[str] = Counter()
    for scenario in drawn:
        counts.update(classes_of(scenario))
    total = max(len(drawn), 1)
    return {name: counts[name] / total for name in CLASSES}


def frequency_report(profile: str, frequencies: dict[str, float], examples: int) -> str:
    lines = [
        f"# Generated scenarios: class frequencies under the `{profile}` profile",
        "",
        f"{examples} examples; every class must occur in at least {MINIMUM_SHARE:.0%} of them.",
        "",
        "| class | share | |",
        "|---|---|---|",
    ]
    for name in CLASSES:
        share = frequencies[name]
        verdict = "ok" if share >= MINIMUM_SHARE else "**too rare**"
        lines.append(f"| {name} | {share:.1%} | {verdict} |")
    return "\n".join(lines) + "\n"

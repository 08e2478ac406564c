"""The coverage sample (``scenarios/corpus/coverage/``): it is what ``generate --coverage``
writes, each shape where bugs hide is at least 5% of it, the reference holds on it and on the
coverage regression files, and only those catch the coverage variants among the regression files.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from harness.checkers import check
from harness.cli import main
from harness.runner import run_scenario
from harness.targets import registry
from scenarios import corpus, coverage
from scenarios.classes import COVERAGE, classes_of
from scenarios.loading import REGRESSIONS, load_all, regression_files
from scenarios.model import Scenario
from scenarios.statistics import MINIMUM_SHARE

# the suite's fixture (conftest.py): what the reference violates on each scenario of a sample
Reference = Callable[[Iterable[tuple[str, Scenario]]], dict[str, list[str]]]

COVERAGE_REGRESSIONS = REGRESSIONS / "coverage"
# each coverage variant (``harness.targets.variants_coverage``) with the regression file of its
# shape, the only one that catches it (but where ALSO_CAUGHT_BY says)
CAUGHT_BY = {
    "loose-answer-lookup": "adversarial-ids-answered",
    "retry-continues-parked": "retried-parked-call",
    "refused-restore-keeps-one": "refused-restore-of-several",
    "gate-approval-stands": "retried-gated-call-after-result",
    "restore-drops-state": "state-read-after-resume",
    "parked-by-shared-key": "two-root-sessions",
    "restore-drops-window-count": "state-read-after-resume",
    "provider-state-on-the-tool": "two-sessions-restart-between-calls",
    "provider-state-on-the-tool-as-a-result": "two-sessions-restart-between-calls",
    "agent-state-on-the-tool": "two-sessions-window-count",
    "window-counted-twice": "state-read-after-resume",
    "parked-messages-on-the-tool": "two-sessions-restart-between-calls",
}
# the restored sub-agents retry-continues-parked keeps by toolUseId, never dropped, sit on the
# agent-tool object: two root sessions calling it under one toolUseId are handed each other's.
# What a call leaves on the agent tool for the next (the ``-on-the-tool`` variants) shows
# wherever one agent tool is called twice and the second call reads it: across two root
# sessions, and within one session where the same bug of strands' has a regression file of its
# own (a provider's response id; a lookup's tally, beside a window's count; a parked twin's
# messages)
SHARED_BY_TWO_SESSIONS = [
    "two-root-sessions",
    "two-sessions-provider-state",
    "two-sessions-window-count",
    "two-sessions-nested-provider-state",
]
# where one call's provider response id reaches the next call of the same agent tool
CARRIED_RESPONSE_ID = [
    "ephemeral-call-after-a-restart",
    "ephemeral-call-asks-after-provider-state",
    "ephemeral-call-fresh-provider-state",
    "ephemeral-call-refused-at-an-answer-then-at-a-run",
    "two-sessions-provider-state",
    "two-sessions-nested-provider-state",
]
ALSO_CAUGHT_BY = {
    # ... and a retried call whose first attempt parked and was restored: its retry continues
    # that turn wherever the retry comes, after a re-sent approval too
    "retry-continues-parked": [
        "re-sent-approval-answers-the-retrys-question",
        *SHARED_BY_TWO_SESSIONS,
    ],
    "parked-by-shared-key": SHARED_BY_TWO_SESSIONS[1:],
    "provider-state-on-the-tool": CARRIED_RESPONSE_ID,
    # ... and the same where the agent tool hands its caller the provider's refusal as a result
    "provider-state-on-the-tool-as-a-result": CARRIED_RESPONSE_ID,
    "agent-state-on-the-tool": ["window-count-per-call"],
    "window-counted-twice": ["two-sessions-window-count", "window-count-per-call"],
    # a damaged turn of several questions that must be refused whole, beside the root's own
    "refused-restore-keeps-one": [
        "truncated-nested-turns-beside-root-questions",
        "corrupt-twin-nested-calls-one-skipped-silently",
        "resumed-twin-nested-questions-repaired-one-comes-back",
    ],
    "parked-messages-on-the-tool": [
        "deep-twin-calls-beside-a-root-question",
        "deep-twin-calls-the-asking-one-turned-away",
        "twin-calls-answer-order",
        "twin-calls-answered-by-id",
        "twin-calls-answered-one-by-one",
        "twin-calls-answered-per-call",
        "twin-calls-results-per-call",
        "twin-calls-same-prompt",
        "twin-calls-then-a-call-told-the-root-prompt",
        "twin-calls-made-at-an-answer",
        "twin-calls-turned-away-then-the-answer-re-sent",
        "twin-calls-turned-away-then-the-second-turn-corrupted",
        "twin-calls",
        "twin-calls-resumed-after-a-siblings-answer",
        "resent-approval-answers-a-twin-calls-question",
        "gated-call-then-twin-calls-across-a-restart",
        "retried-calls-run-again-on-their-first-answers",
        "gated-releaser-twin-deploys-asked-again",
        "corrupt-twin-nested-calls-one-skipped-silently",
        *SHARED_BY_TWO_SESSIONS,
    ],
}


@functools.cache
def committed() -> list[tuple[str, Scenario]]:
    return coverage.read()


def test_the_committed_coverage_sample_is_what_generate_writes(tmp_path: Path) -> None:
    assert main(["generate", "--coverage", "--corpus", str(tmp_path)]) == 0
    written = tmp_path / coverage.FILE.relative_to(corpus.CORPUS)
    assert written.read_bytes() == coverage.FILE.read_bytes(), "regenerate deliberately"


def test_every_coverage_class_is_at_least_five_percent_of_the_sample() -> None:
    counts: Counter[str] = Counter()
    for _, scenario in committed():
        counts.update(classes_of(scenario) & set(COVERAGE))
    total = len(committed())
    assert total >= 100
    shares = {name: counts[name] / total for name in COVERAGE}
    assert all(share >= MINIMUM_SHARE for share in shares.values()), shares


def test_each_family_draws_only_its_own_class() -> None:
    for name, prefix in coverage.FAMILIES:
        family = [s for n, s in committed() if n.startswith(f"generated-{prefix}")]
        assert family, name
        assert all(name in classes_of(scenario) for scenario in family), name


def test_the_reference_holds_on_the_coverage_sample_and_regression_files(
    broken_on_the_reference: Reference,
) -> None:
    runs = committed() + load_all(regression_files(COVERAGE_REGRESSIONS))
    assert broken_on_the_reference(runs) == {}


@pytest.mark.parametrize("slug", sorted(CAUGHT_BY))
def test_a_coverage_variant_is_caught_by_its_shape_and_by_no_other_regression_file(
    slug: str,
) -> None:
    target = registry.get(f"bad-{slug}")
    caught = []
    for name, scenario in load_all(regression_files()) + load_all(
        regression_files(COVERAGE_REGRESSIONS)
    ):
        history = run_scenario(target, scenario, name)
        if check(history):
            caught.append(name)
    assert sorted(caught) == sorted([CAUGHT_BY[slug], *ALSO_CAUGHT_BY.get(slug, [])])

"""The canary sample (``scenarios/corpus/canary/``): it is what ``generate --canary`` writes, a
draw of every family of the ci sample under names the ci sample does not use, other scenarios
than the ci sample's, the reference holds on it, and the whole exemption canary runs it."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from harness import canary
from harness.cli import main
from scenarios import canary_sample, corpus
from scenarios.model import Scenario

# the suite's fixture (conftest.py): what the reference violates on each scenario of a sample
Reference = Callable[[Iterable[tuple[str, Scenario]]], dict[str, list[str]]]


@functools.cache
def committed() -> list[tuple[str, Scenario]]:
    return canary_sample.read()


@functools.cache
def ci_sample() -> list[tuple[str, Scenario]]:
    found = corpus.find("ci", None)
    assert found is not None
    return corpus.read(found, "ci")


def test_the_committed_canary_sample_is_what_generate_writes(tmp_path: Path) -> None:
    assert main(["generate", "--canary", "--corpus", str(tmp_path)]) == 0
    written = tmp_path / canary_sample.FILE.relative_to(corpus.CORPUS)
    assert written.read_bytes() == canary_sample.FILE.read_bytes(), "regenerate deliberately"


def test_generate_draws_one_sample_at_a_time(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--canary", "--coverage"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "--canary" in error
    assert "--coverage" in error


def test_every_family_is_drawn_and_numbered_past_the_ci_samples_names() -> None:
    names = [name for name, _ in committed()]
    for family in corpus.FAMILIES:
        numbers = [
            int(name.removeprefix(family.names))
            for name in names
            if (matched := corpus.NAME.fullmatch(name)) and matched[1] == family.names
        ]
        assert numbers, family.names
        assert numbers == list(range(canary_sample.FIRST, canary_sample.FIRST + len(numbers)))
    assert not set(names) & {name for name, _ in ci_sample()}


def test_it_draws_each_scenario_once_and_none_of_the_ci_samples() -> None:
    ci = {scenario.model_dump_json() for _, scenario in ci_sample()}
    drawn = [scenario.model_dump_json() for _, scenario in committed()]
    assert len(drawn) >= 600
    assert len(set(drawn)) == len(drawn)
    assert not set(drawn) & ci


def test_the_reference_holds_on_the_canary_sample(broken_on_the_reference: Reference) -> None:
    """Every violation a variant shows here is its bug: the reference shows none."""
    assert broken_on_the_reference(committed()) == {}


def test_the_whole_canary_runs_it_and_the_part_does_not() -> None:
    names = {name for name, _ in committed()}
    whole = {name for name, _, _ in canary.canary_scenarios(True)}
    parts = {name for name, _, _ in canary.canary_scenarios(False)}
    assert names <= whole
    assert not names & parts

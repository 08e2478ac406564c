"""Suite-wide setup: the hypothesis profile, the ``slow`` mark, an empty selection reported as a
failure, a fixture that makes thread timing vary as heavy load does, and one that runs the
reference on a sample."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from scenarios.model import Scenario
from scenarios.profiles import DatabaseChoiceError, load_profile

NO_TESTS_COLLECTED = 5
# what mutmut's stats run recorded (in mutants/, where it runs every mutant's tests)
MUTMUT_STATS = Path("mutmut-stats.json")
# what `tox -e fast` leaves out (-m "not slow"): modules that drive real SDKs, start processes,
# or run campaigns and generated samples; what is left runs in seconds
SLOW_MODULES = frozenset(
    {
        "test_bench.py",
        "test_campaigns.py",
        "test_cluster.py",
        "test_corpus.py",
        "test_coverage_sample.py",
        "test_determinism.py",
        "test_exemption_canary.py",
        "test_isolation.py",
        "test_langgraph_target.py",
        "test_openai_agents_target.py",
        "test_plugin_sample.py",
        "test_properties.py",
        "test_pytest_plugin.py",
        "test_sdk_mutation.py",
        "test_shared_database.py",
        "test_stateful.py",
        "test_strands_agent_as_tool.py",
        "test_strands_target.py",
    }
)


def pytest_configure(config: pytest.Config) -> None:
    try:
        load_profile()
    except DatabaseChoiceError as problem:  # one line, not a traceback
        raise pytest.UsageError(str(problem)) from None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    if "MUTANT_UNDER_TEST" in os.environ:
        fastest_first(items, MUTMUT_STATS)


def fastest_first(items: list[pytest.Item], stats: Path) -> None:
    """Under mutmut, the tests that reach a mutant run with ``-x``, so a killed mutant costs the
    tests before the first that fails; mutmut hands them over as a set, in no useful order.
    Sorted by the time each took in mutmut's own stats run, the cheap ones (most of them unit
    tests that pin one function) come first, and a kill comes sooner.  The same tests run and the
    same verdicts come out: a survivor still passes every one of them."""
    try:
        durations = json.loads(stats.read_text(encoding="utf-8"))["duration_by_test"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # no stats yet (mutmut's own stats run): the order it gave
    items.sort(key=lambda item: durations.get(item.nodeid, math.inf))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == NO_TESTS_COLLECTED:
        print("no test ran: an empty selection is a failure, not a pass", file=sys.stderr)


@pytest.fixture
def threads_switch_often() -> Iterator[None]:
    """The interpreter hands the GIL from thread to thread as often as it can, as a loaded
    machine makes it do: a history that depends on thread timing then differs between runs."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


Broken = dict[str, list[str]]


@pytest.fixture
def broken_on_the_reference() -> Callable[[Iterable[tuple[str, Scenario]]], Broken]:
    """What the reference violates on a sample: each scenario it violates anything on, by name,
    with those invariants (a sample that tests a variant's violations as its bug must give none).
    Every scenario must run: the reference can express them all."""
    from harness.checkers import check
    from harness.runner import run_scenario
    from harness.targets.reference import ReferenceTarget

    def broken(scenarios: Iterable[tuple[str, Scenario]]) -> Broken:
        target = ReferenceTarget()
        found: Broken = {}
        for name, scenario in scenarios:
            history = run_scenario(target, scenario, name)
            assert not history.not_applicable, name
            violations = check(history)
            if violations:
                found[name] = sorted({violation.invariant for violation in violations})
        return found

    return broken

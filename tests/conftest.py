"""Suite-wide setup: the hypothesis profile, the ``slow`` mark, an empty selection reported as a
failure, and a fixture that makes thread timing vary as heavy load does."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from scenarios.profiles import DatabaseChoiceError, load_profile

NO_TESTS_COLLECTED = 5
# what `tox -e fast` leaves out (-m "not slow"): modules that drive real SDKs, start processes,
# or run campaigns and generated samples; what is left runs in seconds
SLOW_MODULES = frozenset(
    {
        "test_bench.py",
        "test_campaigns.py",
        "test_cluster.py",
        "test_corpus.py",
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

"""Suite-wide setup: the hypothesis profile, an empty selection reported as a failure, and a
fixture that makes thread timing vary as heavy load does."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from scenarios.profiles import load_profile

NO_TESTS_COLLECTED = 5

load_profile()


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

"""Suite-wide setup: the hypothesis profile, and an empty selection reported as a failure."""

from __future__ import annotations

import sys

import pytest

from scenarios.profiles import load_profile

NO_TESTS_COLLECTED = 5

load_profile()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == NO_TESTS_COLLECTED:
        print("no test ran: an empty selection is a failure, not a pass", file=sys.stderr)

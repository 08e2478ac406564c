"""Root conftest: tests import this checkout, never an installed copy; the collector skips what
lives for the whole session."""

import gc
import sys
from importlib.util import find_spec
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# a framework target's tests need that framework; its own tox environment installs it and runs
# them (``tox -e langgraph``, ``tox -e openai-agents``, ``tox -e adk``), other environments do not
# collect them
FRAMEWORK_TESTS = {
    "tests/test_langgraph_target.py": "langgraph",
    "tests/test_openai_agents_target.py": "agents",
    "tests/test_adk_target.py": "google.adk",
}
# the tests that start a Dask cluster need the dask extra (tox -e dask): collected only there
OPTIONAL_TESTS = {**FRAMEWORK_TESTS, "tests/test_cluster.py": "distributed"}


def _missing(module: str) -> bool:
    """Whether ``module`` cannot be imported (a dotted name whose parent is missing too)."""
    try:
        return find_spec(module) is None
    except ModuleNotFoundError:
        return True


collect_ignore = [path for path, module in OPTIONAL_TESTS.items() if _missing(module)]


# Python starts a full collection each time its long-lived heap grows by a quarter, and scans all
# of it: the modules, the SDKs and the collected tests, again and again (13% of the sample env's
# CPU).  So what is there once pytest is configured is frozen (skipped by every collection;
# refcounting still frees it), and after each test what it left is collected and what lives on
# is frozen too.  (This is what harness.execution does between the tasks of python -m harness.)


def pytest_configure() -> None:
    gc.freeze()


def pytest_runtest_logfinish() -> None:
    gc.collect()
    gc.freeze()

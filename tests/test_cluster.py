"""Check and the fault campaigns on other processes give the same bytes as in this process: in a
local process pool (``--workers 2``), and on a real Dask cluster, a scheduler and two workers each
its own process on 127.0.0.1 started with dask's CLI, also when a worker is killed mid-run; an
adapter error raised on a worker is the same adapter error; an unreachable scheduler is one line.

On the regression files, which take seconds; ``tox -e dask`` runs the same comparison on the ci
sample, timed (benchmarks/scale_out.py).  Needs the dask extra (root conftest.py)."""

from __future__ import annotations

import os
import socket
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import dask.config
import pytest

from benchmarks.scale_out import REPORTS, Cluster, check, differing
from harness.cli import EXIT_ADAPTER_ERROR, EXIT_BAD_INPUT, main
from harness.execution import Lost, connect
from harness.targets.base import Target
from harness.targets.reference import ReferenceTarget

ROOT = Path(__file__).resolve().parent.parent
RESTARTS = ROOT / "scenarios" / "regressions" / "twin-calls.yaml"  # run, restart, answer
TARGETS = ["--target", "reference", "--target", "strands"]
FAULTS = ["faults", "--target", "reference", "--examples", "6", "--invariant-examples", "4"]
PLUGIN = '''\
"""A target whose adapter raises on restart: an installed plugin, found by its entry point."""

from harness.targets.base import TargetInfo
from harness.targets.reference import ReferenceTarget


class Session:
    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def restart(self):
        raise RuntimeError("lost the store handle")


class RaisingSdk:
    info = TargetInfo(
        name="raising-sdk", version="1.0", capabilities=ReferenceTarget.info.capabilities
    )

    def start(self, scenario, workdir):
        return Session(ReferenceTarget().start(scenario, workdir))
'''


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that installs the plugin wherever it is on the path."""
    return installed(tmp_path_factory.mktemp("plugin"), PLUGIN)


def installed(folder: Path, source: str) -> Path:
    """``folder``, holding the plugin's module and its distribution's metadata with the entry
    point: on the path, it is installed."""
    folder.mkdir(exist_ok=True)
    (folder / "raising_sdk_plugin.py").write_text(source, encoding="utf-8")
    metadata = folder / "raising_sdk_plugin-1.0.dist-info"
    metadata.mkdir()
    (metadata / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: raising-sdk-plugin\nVersion: 1.0\n", encoding="utf-8"
    )
    (metadata / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [nested_interrupt_harness.targets]
            raising-sdk = raising_sdk_plugin:RaisingSdk
            """
        ),
        encoding="utf-8",
    )
    return folder


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, plugin: Path) -> Iterator[Cluster]:
    with Cluster(tmp_path_factory.mktemp("cluster"), workers=2, path=[plugin]) as started:
        yield started


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    """Check on the regression files, reference and strands, in this process: its exit code
    and its reports."""
    reports = tmp_path_factory.mktemp("in-process")
    return main(["check", *TARGETS, "--reports", str(reports)]), reports


def test_check_in_two_local_processes_writes_the_same_bytes(
    in_process: tuple[int, Path], tmp_path: Path
) -> None:
    code, reports = in_process
    assert main(["check", *TARGETS, "--workers", "2", "--reports", str(tmp_path)]) == code
    assert differing(reports, tmp_path) == []


def test_check_on_a_dask_cluster_writes_the_same_bytes(
    in_process: tuple[int, Path], cluster: Cluster, tmp_path: Path
) -> None:
    code, reports = in_process
    arguments = ["check", *TARGETS, "--scheduler", cluster.address, "--reports", str(tmp_path)]
    assert main(arguments) == code
    assert differing(reports, tmp_path) == []


def test_a_worker_killed_mid_run_loses_no_result(
    in_process: tuple[int, Path], tmp_path: Path
) -> None:
    code, reports = in_process
    with Cluster(tmp_path / "cluster", workers=2) as cluster:
        arguments = [*TARGETS, f"--scheduler={cluster.address}"]
        status, errors, _, killed = check(arguments, tmp_path / "reports", kill_at=(cluster, 5))
        survivors = sorted(cluster.names().values())
    assert killed is not None, "check ended before 5 results came in"
    name, in_hand = killed
    assert in_hand > 0  # it died holding tasks of this run: they ran again on the other worker
    assert survivors == sorted({"w0", "w1"} - {name})
    assert status == code, errors
    assert differing(reports, tmp_path / "reports") == []


@pytest.mark.parametrize("where", ["workers", "scheduler"])
def test_an_adapter_error_on_a_worker_is_the_same_adapter_error(
    where: str,
    plugin: Path,
    cluster: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.syspath_prepend(str(plugin))
    arguments = ["check", "--target", "raising-sdk", "--target", "reference"]
    arguments += ["--scenarios", str(RESTARTS)]
    assert main([*arguments, "--reports", str(tmp_path / "here")]) == EXIT_ADAPTER_ERROR
    here = capsys.readouterr().err
    assert "adapter error: target raising-sdk, scenario twin-calls, step 1 (restart)" in here
    assert "RuntimeError: lost the store handle (raised at raising_sdk_plugin.py:" in here
    option = ["--workers", "2"] if where == "workers" else ["--scheduler", cluster.address]
    elsewhere = [*arguments, *option, "--reports", str(tmp_path / "there")]
    assert main(elsewhere) == EXIT_ADAPTER_ERROR
    assert capsys.readouterr().err == here
    assert differing(tmp_path / "here", tmp_path / "there") == []


def test_workers_with_another_release_of_a_target_are_refused_in_one_line(
    cluster: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    newer = installed(tmp_path / "newer", PLUGIN.replace('version="1.0"', 'version="2.0"'))
    monkeypatch.syspath_prepend(str(newer))  # here 2.0; the workers have 1.0
    monkeypatch.delitem(sys.modules, "raising_sdk_plugin", raising=False)
    arguments = ["check", "--target", "raising-sdk", "--scenarios", str(RESTARTS)]
    arguments += ["--scheduler", cluster.address, "--reports", str(tmp_path / "reports")]
    assert main(arguments) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith("target raising-sdk on worker ")
    assert "its version is '1.0' there, '2.0' here; install the same packages" in error
    assert not (tmp_path / "reports").exists()


def test_the_fault_campaigns_on_a_dask_cluster_write_the_same_bytes(
    cluster: Cluster, tmp_path: Path
) -> None:
    assert main([*FAULTS, "--reports", str(tmp_path / "here")]) == 0
    assert (
        main([*FAULTS, "--scheduler", cluster.address, "--reports", str(tmp_path / "there")]) == 0
    )
    for name in ("faults.json", "faults.md"):
        assert (tmp_path / "there" / name).read_bytes() == (tmp_path / "here" / name).read_bytes()


def dies(target: Target, item: str) -> str:
    """A task whose process dies under it (a pool process killed by the OOM killer, say)."""
    os._exit(9)


def test_a_pool_process_that_dies_is_one_line_not_a_lost_result() -> None:
    with connect(1, None, {}) as pool:
        results = pool.map(dies, [(ReferenceTarget(), "first"), (ReferenceTarget(), "second")])
        with pytest.raises(Lost, match=r"^the tasks could not be run in 1 local process: "):
            next(results)


def test_an_unreachable_scheduler_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
    arguments = ["check", "--target", "reference", "--scheduler", address]
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert main([*arguments, "--reports", str(tmp_path)]) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert error.startswith(f"--scheduler {address}: cannot reach the Dask scheduler: ")
    assert error.count("\n") == 1
    assert not any((tmp_path / name).exists() for name in REPORTS)

"""The execution seam (``harness.execution``): tasks are data, a worker rebuilds the target by
name and refuses one that is not the same, results come back in the order given whichever task
finished first, an adapter error comes back as the same error, and asking for an executor that
cannot be had is one line and exit 2.  The runs on real process pools and a real Dask cluster
are in tests/test_cluster.py."""

from __future__ import annotations

import os
import pickle
import select
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness import canary, execution
from harness.cli import EXIT_BAD_INPUT, main
from harness.conformance import judge
from harness.execution import IN_PROCESS, Execution, TargetRef, WorkerMismatch, connect, rebuilt
from harness.isolation import ProcessIsolated
from harness.runner import AdapterError, record_run
from harness.targets.base import Target
from harness.targets.reference import ReferenceTarget
from harness.targets.variants import REAL_RESTART_ONLY
from scenarios.loading import load_scenario, regression_files

SCENARIOS = [(path.stem, load_scenario(path)) for path in regression_files()[:4]]
RESTARTS = Path(__file__).resolve().parent.parent / "scenarios" / "regressions" / "twin-calls.yaml"


class _Deferred(Future[Any]):
    def __init__(self, executor: Backwards) -> None:
        super().__init__()
        self.executor = executor

    def result(self, timeout: float | None = None) -> Any:
        self.executor.run()
        return super().result(timeout)


class Backwards(Executor):
    """An executor that runs nothing until a result is asked for, then everything it was given,
    the last task first: the order tasks finish in is not the order they were given."""

    def __init__(self) -> None:
        self.pending: list[tuple[_Deferred, Callable[..., Any], tuple[Any, ...]]] = []
        self.finished: list[Any] = []  # each task's item, in the order it finished

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future = _Deferred(self)
        self.pending.append((future, fn, args))
        return future

    def run(self) -> None:
        while self.pending:
            future, fn, args = self.pending.pop()
            self.finished.append(args[-1])
            future.set_result(fn(*args))


def tasks(target: Target) -> list[tuple[Target, tuple[str, str, bool]]]:
    return [(target, (name, scenario.model_dump_json(), False)) for name, scenario in SCENARIOS]


def test_in_this_process_each_task_runs_when_its_result_is_asked_for() -> None:
    ran: list[str] = []

    def work(target: Target, item: str) -> str:
        ran.append(item)
        return item.upper()

    target = ReferenceTarget()
    results = IN_PROCESS.map(work, [(target, "a"), (target, "b"), (target, "c")])
    assert ran == []
    assert next(results) == "A"
    assert ran == ["a"]
    results.close()
    assert ran == ["a"]


def test_results_come_back_in_the_order_given_whichever_finished_first() -> None:
    backwards = Backwards()
    here = list(IN_PROCESS.map(record_run, tasks(ReferenceTarget())))
    there = list(Execution(backwards).map(record_run, tasks(ReferenceTarget())))
    names = [name for name, _ in SCENARIOS]
    assert [name for name, _, _ in backwards.finished] == names[::-1]
    assert all(isinstance(steps, tuple) and steps for steps in here)
    assert there == here


def test_judge_is_the_same_whichever_order_the_runs_finished_in() -> None:
    here = judge([ReferenceTarget()], SCENARIOS)
    there = judge([ReferenceTarget()], SCENARIOS, execution=Execution(Backwards()))
    assert there.cells == here.cells
    assert {name: history.dumps() for name, history in there.histories["reference"].items()} == {
        name: history.dumps() for name, history in here.histories["reference"].items()
    }


def test_a_task_is_data_and_a_worker_rebuilds_its_target_by_name() -> None:
    info = ReferenceTarget.info
    task = pickle.loads(pickle.dumps((execution.perform, TargetRef(info), SCENARIOS[0])))
    assert task[1] == TargetRef(info)
    assert rebuilt(TargetRef(info)).info == info
    isolated = ProcessIsolated("reference", ReferenceTarget()).info
    assert isinstance(rebuilt(TargetRef(isolated)), ProcessIsolated)


def test_a_worker_refuses_a_target_it_does_not_have_or_that_is_not_the_same() -> None:
    info = ReferenceTarget.info
    with pytest.raises(WorkerMismatch, match=r"^target nowhere-sdk on worker .*unknown target"):
        rebuilt(TargetRef(replace(info, name="nowhere-sdk")))
    with pytest.raises(
        WorkerMismatch, match=r"its version is '[^']+' there, '0\.0-elsewhere' here"
    ):
        rebuilt(TargetRef(replace(info, version="0.0-elsewhere")))


def test_an_adapter_error_is_a_result_and_the_same_error_in_another_process() -> None:
    class RaisesAtStart:
        info = replace(ReferenceTarget.info, name="startless")

        def start(self, *_: object) -> None:
            raise OSError("cannot open the work directory")

    scenario = load_scenario(RESTARTS)
    error = record_run(RaisesAtStart(), ("twin-calls", scenario.model_dump_json(), False))
    assert isinstance(error, AdapterError)
    assert error.kind == "start"
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is AdapterError
    assert (str(copy), copy.to_json(), copy.target) == (str(error), error.to_json(), "startless")


def test_the_execution_is_chosen_by_option_then_environment() -> None:
    with connect(None, None, {}) as here:
        assert here.executor is None
    with pytest.raises(execution.Unavailable, match="tcp://elsewhere:8786"):
        with_no_dask(
            lambda: connect(None, None, {"DASK_SCHEDULER_ADDRESS": "tcp://elsewhere:8786"})
        )


def with_no_dask(call: Callable[[], object]) -> object:
    saved = sys.modules.get("distributed")
    sys.modules["distributed"] = None  # type: ignore[assignment]
    try:
        return call()
    finally:
        if saved is None:
            del sys.modules["distributed"]
        else:
            sys.modules["distributed"] = saved


@pytest.mark.parametrize("command", ["check", "faults"])
def test_a_scheduler_without_the_dask_extra_is_one_line_and_exit_2(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    arguments = [command, "--target", "reference", "--reports", str(tmp_path)]
    assert main([*arguments, "--scheduler", "tcp://127.0.0.1:8786"]) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith("--scheduler tcp://127.0.0.1:8786: needs the dask extra (pip install")
    assert list(tmp_path.iterdir()) == []  # nothing ran, no report
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:8787")
    assert main(arguments) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.startswith("--scheduler tcp://127.0.0.1:8787: needs the dask")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--workers", "0"], "--workers: expected a whole number >= 1, got '0'"),
        (["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], "not allowed with argument"),
        (["--workers", "two"], "--workers: expected a whole number >= 1, got 'two'"),
    ],
)
def test_bad_execution_options_are_one_line_and_exit_2(
    options: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = ["check", "--target", "reference", "--reports", str(tmp_path), *options]
    assert main(arguments) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert expected in error
    assert list(tmp_path.iterdir()) == []


def test_the_canarys_variant_runs_are_the_same_spread_over_local_processes() -> None:
    # a variant of the reference, and one whose every restart is a new process (a fork server
    # in each worker), on regression files where both fail and where neither does
    variants = ["bad-shared-object", sorted(REAL_RESTART_ONLY)[0]]
    chosen = {"deep-nesting", "preserve-context-no-store", "twin-calls"}
    scenarios = [each for each in canary.canary_scenarios() if each[0] in chosen]
    assert len(scenarios) == len(chosen)
    here = canary.variant_runs(variants, scenarios)
    assert {each.variant for each in here if each.run.violations} == set(variants)
    with connect(2, None) as pool:
        spread = canary.variant_runs(variants, scenarios, pool)
    assert spread == here


def test_the_canary_tests_run_where_the_environment_says() -> None:
    with canary.where_the_tests_run({}) as here:
        assert here.executor is None
    with canary.where_the_tests_run({canary.WORKERS_VARIABLE: "2"}) as pool:
        assert pool.where == "in 2 local processes"
    for wrong in ("0", "two", "-1"):
        expected = f"{canary.WORKERS_VARIABLE}: expected a whole number >= 1, got '{wrong}'"
        with pytest.raises(ValueError, match=expected):
            canary.where_the_tests_run({canary.WORKERS_VARIABLE: wrong})


def test_the_canary_refuses_a_scheduler_it_cannot_have_in_one_line_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    arguments = ["--reports", str(tmp_path), "--scheduler", "tcp://127.0.0.1:8786"]
    assert canary.main(arguments) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith("--scheduler tcp://127.0.0.1:8786: needs the dask extra (pip install")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("options", [["--workers", "0"], ["--workers", "2", "--scheduler", "x"]])
def test_the_canarys_bad_execution_options_are_one_line_and_exit_2(
    options: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        canary.main(options)
    assert ended.value.code == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith("python -m harness.canary: ")


# a process that starts two local workers, says their process ids, then waits to be killed
STARTS_WORKERS = """
import multiprocessing, sys
from harness import canary
from harness.execution import connect
from harness.targets.reference import ReferenceTarget
from scenarios.loading import load_scenario, regression_files
if __name__ == "__main__":
    path = regression_files()[0]
    task = (path.stem, load_scenario(path), False)
    with connect(2, None) as pool:
        list(pool.map(canary._variant_run, [(ReferenceTarget(), task)] * 4))
        print(" ".join(str(child.pid) for child in multiprocessing.active_children()), flush=True)
        sys.stdin.read()
"""


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux's pidfd_open")
def test_local_workers_end_when_the_process_that_started_them_is_killed(tmp_path: Path) -> None:
    """A killed run (SIGKILL: no shutdown, no atexit) leaves no worker waiting for tasks."""
    script = tmp_path / "starts_workers.py"
    script.write_text(STARTS_WORKERS, encoding="utf-8")
    parent = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # the killed process's semaphores, reported by its tracker
        cwd=Path(__file__).resolve().parent.parent,
        text=True,
    )
    assert parent.stdout is not None
    pids = [int(pid) for pid in parent.stdout.readline().split()]
    workers = []
    for pid in pids:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            if b"spawn_main" in cmdline.read():
                workers.append(os.pidfd_open(pid))  # readable once the process has ended
    assert len(workers) == 2
    parent.kill()
    parent.wait()
    try:
        for worker in workers:
            ended, _, _ = select.select([worker], [], [], 60)
            assert ended, "a worker outlived the process that started it by a minute"
    finally:
        for descriptor in workers:
            os.close(descriptor)

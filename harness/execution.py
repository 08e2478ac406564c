"""Where the independent tasks of ``check`` and ``faults`` run: in this process (the default), in
a pool of local processes (``--workers N``), or on a Dask cluster (``--scheduler
tcp://HOST:PORT``, or the ``DASK_SCHEDULER_ADDRESS`` environment variable).

A task is one run of a scenario or of its restart-free control on one target (check, planned by
``harness.runner.RunPlan``), or one campaign case (faults).
It travels as data: the target's ``TargetInfo``, which a worker rebuilds the target from by name
(``harness.targets.registry.get``, refusing one that is not the same: not installed there,
broken, or another release), and the item, which holds the scenario as JSON.  Results come back
in the order the tasks were given, whichever process ran them and whenever they finished, so a
report is the same bytes however it was made.

Tasks are pure: each run has its own scratch directory, nothing one leaves behind is read by
another, and its result depends on its data alone.  So a task run twice gives the same result,
and Dask may run again the tasks of a worker that died.  A worker process runs one task at a time
(threads of one process would share an SDK's global state).

Only ``--scheduler`` imports ``distributed`` (the ``dask`` extra).
"""

from __future__ import annotations

import ctypes
import gc
import os
import signal
import socket
import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import BrokenExecutor, CancelledError, Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, fields
from functools import cache
from multiprocessing import get_context
from types import TracebackType
from typing import Final, TypeVar

from harness.forking import ForkIsolated
from harness.isolation import ProcessIsolated
from harness.targets import registry
from harness.targets.base import Target, TargetInfo

Item = TypeVar("Item")
Result = TypeVar("Result")

SCHEDULER_VARIABLE: Final = "DASK_SCHEDULER_ADDRESS"
EXTRA: Final = "pip install 'nested-interrupt-harness[dask]'"


class Unavailable(Exception):
    """The executor asked for cannot be had (the dask extra is missing, the scheduler cannot be
    reached); the message is the one line to show."""


class Lost(Exception):
    """The executor failed, not a task: a pool process died, Dask gave up on a task whose
    workers kept dying, the scheduler went away; the message is one line."""


class WorkerMismatch(Exception):
    """A worker cannot run a task as this process would: the target is not installed there,
    cannot be loaded, or is not the same (another release); the message is one line."""


@dataclass(frozen=True)
class TargetRef:
    """A target as a task carries it: what a worker rebuilds it from, and must rebuild."""

    info: TargetInfo


class Execution:
    """Runs tasks ``work(target, item)`` and hands back their results in the given order."""

    def __init__(
        self,
        executor: Executor | None = None,
        where: str = "in this process",
        close: Callable[[], object] | None = None,
        failures: tuple[type[BaseException], ...] = (),
    ) -> None:
        """``close``: what ends the executor (when the ``with`` block ends); ``failures``: the
        executor's own errors, besides a broken or cancelled executor."""
        self.executor = executor
        self.where = where
        self._close = close
        self._failures: tuple[type[BaseException], ...] = (
            BrokenExecutor,
            CancelledError,
            *failures,
        )

    def map(
        self, work: Callable[[Target, Item], Result], tasks: Sequence[tuple[Target, Item]]
    ) -> Generator[Result, None, None]:
        """Each task's result, in order.  In this process each task runs on the given target
        when its result is asked for (as a loop would run it); elsewhere every task is handed
        out at once, and the ones not yet started are cancelled when the iterator is dropped."""
        if self.executor is None:
            return _one_by_one(work, tasks)
        futures = [
            self.executor.submit(perform, work, TargetRef(target.info), item)
            for target, item in tasks
        ]
        return self._in_order(futures)

    def _in_order(self, futures: list[Future[Result]]) -> Generator[Result, None, None]:
        try:
            for future in futures:
                try:
                    result = future.result()
                except self._failures as failure:
                    raise Lost(
                        f"the tasks could not be run {self.where}: {registry.last_line(failure)}"
                    ) from None
                yield result
        finally:
            for future in futures:
                future.cancel()

    def __enter__(self) -> Execution:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._close is not None:
            self._close()


IN_PROCESS: Final = Execution()


_settling = False  # set by settle_between_tasks


def settle_between_tasks() -> None:
    """From now on, what each task run in this process leaves behind is collected as it ends
    (its session, an SDK's objects in cycles), and what lives on (the results kept so far) is
    frozen.  Python starts a full collection each time its long-lived heap grows by a quarter,
    scanning all of it, so a check that keeps every history rescanned them again and again (8 of
    66 CPU-s of a check of the reference and strands); frozen, they are skipped (refcounting
    still frees them).  For a process that exists to run tasks (``python -m harness``), not for
    a caller's (a test session's heap is large, and collecting it after every task would cost
    more than it saves)."""
    global _settling
    _settling = True


def _one_by_one(
    work: Callable[[Target, Item], Result], tasks: Sequence[tuple[Target, Item]]
) -> Generator[Result, None, None]:
    """The tasks run here, each when its result is asked for (see settle_between_tasks)."""
    for target, item in tasks:
        result = work(target, item)
        if _settling:
            gc.collect()
            gc.freeze()
        yield result


_ONE_AT_A_TIME = threading.Lock()


def perform(work: Callable[[Target, Item], Result], target: TargetRef, item: Item) -> Result:
    """One task in a worker: the target rebuilt by name (once per process), then the work."""
    with _ONE_AT_A_TIME:
        return work(rebuilt(target), item)


@cache
def rebuilt(reference: TargetRef) -> Target:
    """The target ``reference`` names, built here; ``WorkerMismatch`` unless it is the same."""
    info = reference.info
    where = f"worker {socket.gethostname()} (pid {os.getpid()})"
    try:
        target = registry.get(info.name)
    except (registry.UnknownTarget, registry.BrokenTarget) as problem:
        raise WorkerMismatch(
            f"target {info.name} on {where}: {problem.args[0]}; install the same packages on "
            "every worker"
        ) from None
    if info.isolation == "process":
        target = ProcessIsolated(info.name, target)
    elif info.isolation == "fork":
        target = ForkIsolated(info.name, target)
    if target.info != info:
        differing = next(
            field.name
            for field in fields(TargetInfo)
            if getattr(target.info, field.name) != getattr(info, field.name)
        )
        raise WorkerMismatch(
            f"target {info.name} on {where}: its {differing} is "
            f"{getattr(target.info, differing)!r} there, {getattr(info, differing)!r} here; "
            "install the same packages on every worker (and name a plugin's entry point as its "
            "TargetInfo.name)"
        )
    return target


def connect(
    workers: int | None, scheduler: str | None, environ: Mapping[str, str] = os.environ
) -> Execution:
    """The execution chosen: ``scheduler`` (else, without ``workers``, the scheduler in
    ``DASK_SCHEDULER_ADDRESS``), ``workers`` local processes, or this process."""
    if scheduler is None and workers is None:
        scheduler = environ.get(SCHEDULER_VARIABLE) or None
    if scheduler is not None:
        return _cluster(scheduler)
    if workers is not None:
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=get_context("spawn"),
            initializer=_ends_with,
            initargs=(os.getpid(),),
        )
        return Execution(
            pool,
            f"in {workers} local process{'es' if workers > 1 else ''}",
            lambda: pool.shutdown(cancel_futures=True),
        )
    return Execution()


# prctl(2)'s request to be sent a signal when the thread that started this process ends
PR_SET_PDEATHSIG: Final = 1


def _ends_with(parent: int) -> None:
    """A local worker's first act: to end when the process that started it does, however that
    ends (a check or canary run killed, a CI job timed out), where the pool's own shutdown never
    ran and its workers would wait for tasks for ever.  Strictly, when the thread that started
    it ends: the one that hands out the tasks (``Execution.map``), which the harness does from
    the thread that made the pool.  Linux only (``prctl``); elsewhere a worker outlives a killed
    parent as before."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (AttributeError, OSError, TypeError):  # no prctl here
        return
    if os.getppid() != parent:  # it ended before the request was made
        os._exit(1)


def _cluster(address: str) -> Execution:
    try:
        from distributed import Client, KilledWorker
    except ImportError as missing:
        raise Unavailable(
            f"--scheduler {address}: needs the dask extra ({EXTRA}): {registry.last_line(missing)}"
        ) from None
    try:
        client = Client(address, set_as_default=False)
    except Exception as failure:  # unreachable (OSError), a malformed address (ValueError), ...
        raise Unavailable(
            f"--scheduler {address}: cannot reach the Dask scheduler: {registry.last_line(failure)}"
        ) from None
    return Execution(
        client.get_executor(), f"on the Dask cluster at {address}", client.close, (KilledWorker,)
    )

"""The same input gives the same histories and reports, byte for byte, on a quiet machine or a busy
one.

A verification tool whose red can be noise teaches its users to ignore red.  This check runs
``python -m harness check`` with the same options several times, each in a fresh process with
another ``PYTHONHASHSEED``: once on the machine as it is, then ``repeats`` times under contention
(so threads, event loops and background writers in an SDK or an adapter are scheduled
differently).  Contention is ``CONTENTION``: where the system can pin a process to a core
(Linux), the run is pinned to one core and a busy process pinned to the same one takes a share
of it, so every thread of the run waits for a core it shares, as on a machine busier than its
cores; elsewhere one busy process per core competes.  A busy process runs ``BUSY_NICENESS``
nicer than the run (so at niceness 5 when the run is at 0): the scheduler gives it about a quarter of the core, in slices of a few
milliseconds, so the run is still cut off at arbitrary points many times a second, and the
contended run costs the machine a third more than its own CPU time, not twice as much.  Pinned,
it takes part of one core, not all of them: in CI the other environments keep the rest.  Every
file each run writes (the conformance report, the generator statistics, and
``histories.sha256``, a digest of every recorded history) must equal the first run's.  The busy
processes are ended as soon as their run is over, and stop by themselves after
``CONTENTION_LIMIT`` seconds or when the process that started them is gone.

Its own report holds no timing: the same differences give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

from harness.history import History

DIGESTS: Final = "histories.sha256"
# what one check run writes, and so what the runs are compared on
CHECK_REPORTS: Final = ("conformance.json", "conformance.md", "generator-stats.md", DIGESTS)
RUNS: Final = "determinism"  # the folder, under --reports, of the runs after the first, and logs
CONTENTION_LIMIT: Final = 3600  # seconds a busy process runs at most, whatever happens to us
# a loop that checks the clock and its parent only to end itself (after the limit, or as soon
# as the process that started it is gone): the load it makes is the point
BUSY_LOOP: Final = (
    "import os, sys, time\n"
    "os.nice(int(sys.argv[3]) if len(sys.argv) > 3 else 0)\n"
    "parent = int(sys.argv[2])  # passed in: by the time this runs, the parent may be gone\n"
    "end = time.monotonic() + float(sys.argv[1])\n"
    "while time.monotonic() < end and os.getppid() == parent:\n"
    "    sum(range(1000))\n"
)
# CFS weights: niceness 5 is 335 against a run's 1024, so a busy process takes about 25% of the
# core it shares (50% at niceness 0)
BUSY_NICENESS: Final = 5
FIRST_SEED: Final = 1
LAST_SEED: Final = 4_294_967_295  # the largest PYTHONHASHSEED Python takes
PINNED: Final = hasattr(os, "sched_setaffinity")
CONTENTION: Final = (
    f"pinned to one core that a busy process (niceness {BUSY_NICENESS}) shares"
    if PINNED
    else f"under one busy process (niceness {BUSY_NICENESS}) per core"
)


def digest_lines(histories: dict[str, dict[str, History]]) -> str:
    """One line per (target, scenario): the SHA-256 of its history's canonical JSON."""
    lines = [
        f"{hashlib.sha256(history.dumps().encode()).hexdigest()}  {target}/{name}\n"
        for target, by_name in sorted(histories.items())
        for name, history in sorted(by_name.items())
    ]
    return "".join(lines)


@dataclass(frozen=True)
class Run:
    index: int
    seed: int
    contention: bool
    exit_code: int
    files: dict[str, bytes]  # file name -> content


def check_command(check_arguments: Sequence[str], reports: Path) -> list[str]:
    return [sys.executable, "-m", "harness", "check", *check_arguments, "--reports", str(reports)]


def run_once(
    index: int,
    check_arguments: Sequence[str],
    reports: Path,
    *,
    contention: bool,
    first_seed: int = FIRST_SEED,
    core: int | None = None,
) -> Run:
    """One ``check`` in a fresh process, with ``PYTHONHASHSEED`` ``first_seed + index``.  The
    first run writes its reports into ``reports`` itself, as ``check`` would (so this command can
    stand in for ``check``), the others into ``reports/determinism/run-INDEX``; every run's
    output goes to ``run-INDEX.log`` there.  ``core``: the one a contended run is pinned to
    (default: the highest this process may use)."""
    seed = first_seed + index
    where = reports if index == 0 else reports / RUNS / f"run-{index}"
    where.mkdir(parents=True, exist_ok=True)
    (reports / RUNS).mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "PYTHONHASHSEED": str(seed)}
    with (
        contended(contention, core) as pin,
        (reports / RUNS / f"run-{index}.log").open("wb") as log,
    ):
        process = subprocess.Popen(
            check_command(check_arguments, where),
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        pin(process.pid)
        exit_code = process.wait()
    files = {
        name: (where / name).read_bytes() for name in CHECK_REPORTS if (where / name).is_file()
    }
    return Run(index, seed, contention, exit_code, files)


def contended_runs(
    indices: Sequence[int],
    check_arguments: Sequence[str],
    reports: Path,
    *,
    first_seed: int = FIRST_SEED,
    jobs: int = 1,
) -> list[Run]:
    """The runs ``indices``, each under contention, ``jobs`` of them at a time where runs can be
    pinned: each on a core of its own (the highest ones this process may use), with a busy
    process of its own on that core, so each run meets the same contention as it would alone.
    Which run ends first changes nothing: each run's seed, folder and log follow its index, and
    the runs come back in the order of ``indices``."""
    cores = usable_cores()[-jobs:] if PINNED else [None]
    free: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    for core in reversed(cores):  # the highest first: one run alone goes where it always went
        free.put(core)

    def run(index: int) -> Run:
        core = free.get()
        try:
            return run_once(
                index, check_arguments, reports, contention=True, first_seed=first_seed, core=core
            )
        finally:
            free.put(core)

    with ThreadPoolExecutor(max_workers=len(cores)) as pool:
        return list(pool.map(run, indices))


def usable_cores() -> list[int]:
    """The cores this process may run on, lowest first (every core the system counts where it
    cannot say)."""
    if PINNED:
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


@contextmanager
def contended(contention: bool, core: int | None = None) -> Iterator[Callable[[int], None]]:
    """For as long as the block runs, ``CONTENTION`` (or nothing); yields what to do with the
    process that is to run under it.  ``core``: where a pinned run goes (default: the highest
    core this process may use)."""
    if not contention:
        yield _pin_nowhere
    elif PINNED:
        core = max(os.sched_getaffinity(0)) if core is None else core
        with busy_cores(1, core=core):
            yield partial(_pin, core=core)
    else:
        with busy_cores(os.cpu_count() or 1):
            yield _pin_nowhere


def _pin(pid: int, core: int) -> None:
    with suppress(ProcessLookupError):  # it is over already: nothing left to pin
        os.sched_setaffinity(pid, {core})


def _pin_nowhere(pid: int) -> None:
    del pid


@contextmanager
def busy_cores(count: int, core: int | None = None) -> Iterator[None]:
    """``count`` busy processes (all on ``core`` if given) for as long as the block runs, and
    never past the limit."""
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                BUSY_LOOP,
                str(CONTENTION_LIMIT),
                str(os.getpid()),
                str(BUSY_NICENESS),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]
    try:
        for process in processes:
            if core is not None:
                _pin(process.pid, core)
        yield
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait()


def differences(first: Run, other: Run) -> dict[str, Any]:
    """What ``other`` wrote differently from ``first``: exit code, files, scenarios."""
    names = sorted(set(first.files) | set(other.files))
    changed = [name for name in names if first.files.get(name) != other.files.get(name)]
    scenarios = sorted(
        set(_digests(first.files.get(DIGESTS, b""))) ^ set(_digests(other.files.get(DIGESTS, b"")))
    )
    return {
        "run": other.index,
        "seed": other.seed,
        "contention": other.contention,
        "exit_code": other.exit_code,
        "exit_code_differs": other.exit_code != first.exit_code,
        "files_differ": changed,
        "histories_differ": sorted({line.split("  ", 1)[1] for line in scenarios}),
    }


def _digests(content: bytes) -> list[str]:
    return content.decode("utf-8", errors="replace").splitlines()


def document(check_arguments: Sequence[str], runs: Sequence[Run]) -> dict[str, Any]:
    first = runs[0]
    compared = [differences(first, run) for run in runs[1:]]
    identical = all(not (entry["exit_code_differs"] or entry["files_differ"]) for entry in compared)
    return {
        "check": ["python", "-m", "harness", "check", *check_arguments],
        "first_run": {"seed": first.seed, "contention": first.contention},
        "first_exit_code": first.exit_code,
        "histories": len(_digests(first.files.get(DIGESTS, b""))),
        "files": sorted(first.files),
        "runs": compared,
        "identical": identical,
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Determinism",
        "",
        f"`{' '.join(report['check'])}`, run {len(report['runs']) + 1} times in fresh processes "
        f"(each with its own PYTHONHASHSEED; every run after the first {CONTENTION}): "
        f"{report['histories']} histories, files "
        + ", ".join(f"`{name}`" for name in report["files"])
        + ".",
        "",
        "**Verdict: "
        + (
            "every run wrote the same bytes as the first.**"
            if report["identical"]
            else "runs differ: the same input gave another history or report.**"
        ),
        "",
        "| run | seed | contention | exit code | files that differ | histories that differ |",
        "|---:|---:|---|---:|---|---:|",
    ]
    for entry in report["runs"]:
        lines.append(
            f"| {entry['run']} | {entry['seed']} | {'yes' if entry['contention'] else 'no'} | "
            f"{entry['exit_code']} | {', '.join(entry['files_differ']) or 'none'} | "
            f"{len(entry['histories_differ'])} |"
        )
    differing = sorted({name for entry in report["runs"] for name in entry["histories_differ"]})
    if differing:
        lines += ["", "Histories that differed in some run:", ""]
        lines += [f"- `{name}`" for name in differing]
    return "\n".join(lines) + "\n"


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

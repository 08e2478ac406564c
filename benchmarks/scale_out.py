"""``check`` three ways, timed, and the same bytes each way: in this process, in two local
processes (``--workers 2``), and on a Dask cluster of a scheduler and two workers, each its own
process on 127.0.0.1 started with dask's own CLI; then once more on the cluster with one worker
killed mid-run.  Every report must be the same bytes as the in-process one.

    python -m benchmarks.scale_out --profile ci          (tox -e dask)

Also the cluster the tests start (``tests/test_cluster.py``).  Needs the dask extra.
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import cast

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ("conformance.json", "conformance.md", "histories.sha256")
PROGRESS = re.compile(rb"\r(\d+)/\d+ scenario runs, \d+ violations")  # check, on a terminal
GRACE = 30  # seconds a process is given to end when asked before it is killed


class Cluster:
    """A Dask scheduler and ``workers`` workers (one thread each, no nanny: a killed worker
    stays dead), each its own process on 127.0.0.1, logging into ``folder``."""

    def __init__(self, folder: Path, workers: int = 2, path: Sequence[Path] = ()) -> None:
        from distributed import Client

        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.environment = _environment(path)
        self.scheduler_file = folder / "scheduler.json"
        common = ["--scheduler-file", str(self.scheduler_file), "--no-dashboard"]
        self.scheduler = self._start(
            "scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", *common
        )
        self.workers = {
            f"w{number}": self._start(
                f"w{number}",
                "worker",
                *common,
                "--host",
                "127.0.0.1",
                "--name",
                f"w{number}",
                "--nthreads",
                "1",
                "--no-nanny",
                "--death-timeout",
                "60",
                "--local-directory",
                str(folder),
            )
            for number in range(workers)
        }
        self.client = Client(
            scheduler_file=str(self.scheduler_file), timeout=GRACE * 2, set_as_default=False
        )
        self.client.wait_for_workers(workers, timeout=GRACE * 4)

    @property
    def address(self) -> str:
        address: str = self.client.scheduler_info()["address"]
        return address

    def names(self) -> dict[str, str]:
        """The live workers' names by address."""
        workers = self.client.scheduler_info(n_workers=-1)["workers"]
        return {address: str(info["name"]) for address, info in workers.items()}

    def kill_busiest(self) -> tuple[str, int]:
        """Kill (SIGKILL) the worker with the most tasks in hand, once it has any; its name and
        how many tasks it was running or about to run."""
        processing = self.client.processing()
        address = max(sorted(processing), key=lambda worker: len(processing[worker]))
        name = self.names()[address]
        worker = self.workers.pop(name)
        worker.kill()
        worker.wait()
        return name, len(processing[address])

    def _start(self, name: str, *arguments: str) -> subprocess.Popen[bytes]:
        with (self.folder / f"{name}.log").open("wb") as log:
            return subprocess.Popen(
                [sys.executable, "-m", "dask", *arguments],
                cwd=self.folder,
                env=self.environment,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def __enter__(self) -> Cluster:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.client.close()
        stuck = []
        for group in [list(self.workers.values()), [self.scheduler]]:  # workers leave first
            for process in group:
                process.terminate()
            for process in group:
                try:
                    process.wait(GRACE)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                    started = cast(list[str], process.args)  # _start passes a list
                    stuck.append(" ".join(started[2:4]))
        if stuck and kind is None:
            raise RuntimeError(f"{', '.join(stuck)}: did not end when asked, killed")


def _environment(path: Sequence[Path]) -> dict[str, str]:
    """This environment, with this checkout (and ``path``) first on the import path, and neither
    a scheduler address nor CI (check shows its progress only outside CI)."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DASK_SCHEDULER_ADDRESS", "CI"}
    }
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *map(str, path), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    return environment


def check(
    arguments: Sequence[str],
    reports: Path,
    *,
    kill_at: tuple[Cluster, int] | None = None,
    path: Sequence[Path] = (),
) -> tuple[int, str, float, tuple[str, int] | None]:
    """``python -m harness check ARGUMENTS --reports REPORTS`` in a fresh process: its exit code,
    its standard error, its wall time, and, with ``kill_at=(cluster, n)``, the worker killed as
    soon as check has taken ``n`` results in (its name, how many tasks it had in hand).

    Check shows its progress on a terminal: its standard error is one, which this reads."""
    main, terminal = pty.openpty()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "harness", "check", *arguments, "--reports", str(reports)],
        cwd=ROOT,
        env=_environment(path),
        stdout=subprocess.DEVNULL,
        stderr=terminal,
    )
    os.close(terminal)
    seen, killed = b"", None
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed: check ended
            break
        if not chunk:
            break
        seen += chunk
        if kill_at is not None and killed is None:
            cluster, count = kill_at
            done = [int(found.group(1)) for found in PROGRESS.finditer(seen)]
            if done and max(done) >= count:
                killed = cluster.kill_busiest()
    os.close(main)
    code = process.wait()
    elapsed = time.perf_counter() - started
    errors = PROGRESS.sub(b"", seen).decode("utf-8", "replace").replace("\r", "").lstrip("\n")
    return code, errors, elapsed, killed


def differing(first: Path, second: Path) -> list[str]:
    """The reports that are not the same bytes in both folders."""
    return [name for name in REPORTS if (first / name).read_bytes() != (second / name).read_bytes()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=("ci", "dev", "deep"), help="as for check")
    parser.add_argument("--target", action="append", help="default: reference and strands")
    parser.add_argument(
        "--kill-at", type=int, default=10, metavar="N", help="results in before the kill"
    )
    options = parser.parse_args(argv)
    arguments = [f"--target={name}" for name in options.target or ["reference", "strands"]]
    arguments += [f"--profile={options.profile}"] if options.profile else []
    print(f"check {' '.join(arguments)}")
    print(f"{'where':<28} {'exit':>4} {'wall s':>7}  same bytes as in this process")
    with tempfile.TemporaryDirectory(prefix="scale-out-") as scratch:
        folder = Path(scratch)
        here = folder / "in-process"
        code, errors, seconds, _ = check(arguments, here)
        print(f"{'in this process':<28} {code:>4} {seconds:>7.1f}")
        if errors:
            print(errors, file=sys.stderr, end="")
        same = True

        def compare(label: str, run: tuple[int, str, float, tuple[str, int] | None]) -> None:
            nonlocal same
            status, _, seconds, killed = run
            different = differing(here, folder / label)
            same = same and status == code and not different
            verdict = "yes" if not different else "NO: " + ", ".join(different)
            if killed is not None:
                verdict += f" ({killed[0]} killed holding {killed[1]} tasks)"
            print(f"{label:<28} {status:>4} {seconds:>7.1f}  {verdict}")

        compare("--workers 2", check([*arguments, "--workers=2"], folder / "--workers 2"))
        with Cluster(folder / "cluster") as cluster:
            on_cluster = [*arguments, f"--scheduler={cluster.address}"]
            compare("2 Dask workers", check(on_cluster, folder / "2 Dask workers"))
            killing = check(
                on_cluster, folder / "2 Dask workers, 1 killed", kill_at=(cluster, options.kill_at)
            )
            same = same and killing[3] is not None and killing[3][1] > 0
            compare("2 Dask workers, 1 killed", killing)
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

"""This checkout's throughput against an earlier commit's, on the same machine, in one sitting.

    python -m benchmarks.against REV [--rounds N] [--target NAME ...]

checks REV out into a temporary git worktree and times the bench scenario (colliding-ids with its
restart-free control) on each target, in a fresh process per round and checkout, the two checkouts
taking turns so both meet the same machine.  Each process measures with *this* checkout's
``benchmarks/throughput.py`` (calibration units, CPU time), so only the code under test differs.
Prints each round, then per target the median units of each checkout and their ratio (this / REV):
the "at 83c7a07" figures in ``reports/baselines/throughput.json`` come from here.  REV's harness
must have this checkout's entry points (``harness.runner.run_scenario``, ``registry.get``,
``scenarios.loading.load_scenario``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
TARGETS: Final = ("reference", "strands", "langgraph", "langgraph-subgraph-node", "openai-agents")

# run in a checkout (its directory first on sys.path): one line per target, "name units"
_MEASURE: Final = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("throughput", sys.argv[1])
throughput = importlib.util.module_from_spec(spec)
spec.loader.exec_module(throughput)
from harness.runner import run_scenario
from harness.targets import registry
from scenarios.loading import REGRESSIONS, load_scenario
scenario = load_scenario(REGRESSIONS / "colliding-ids.yaml")
for name in sys.argv[2:]:
    target = registry.get(name)
    seconds, calibration = throughput.fastest(
        lambda: run_scenario(target, scenario, "colliding-ids"), throughput.calibration
    )
    print(name, seconds / calibration, flush=True)
"""


def units(checkout: Path, targets: list[str]) -> dict[str, float]:
    """One round in a fresh process whose imports come from ``checkout``."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(ROOT / "benchmarks" / "throughput.py"), *targets],
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        check=True,
    )
    return {
        name: float(value) for name, value in (line.split() for line in done.stdout.splitlines())
    }


def main(arguments: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.against", description=__doc__)
    parser.add_argument("rev", help="the earlier commit (anything git rev-parse takes)")
    parser.add_argument("--rounds", type=int, default=5, metavar="N")
    parser.add_argument("--target", action="append", choices=TARGETS, metavar="NAME")
    options = parser.parse_args(arguments)
    targets = options.target or list(TARGETS)
    now: dict[str, list[float]] = {name: [] for name in targets}
    then: dict[str, list[float]] = {name: [] for name in targets}
    with tempfile.TemporaryDirectory(prefix="against-") as scratch:
        earlier = Path(scratch) / "checkout"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(earlier), options.rev],
            cwd=ROOT,
            check=True,
        )
        try:
            for round_ in range(1, options.rounds + 1):
                for checkout, kept in ((ROOT, now), (earlier, then)):
                    for name, value in units(checkout, targets).items():
                        kept[name].append(value)
                        where = "this" if checkout == ROOT else options.rev
                        print(f"round {round_} {where} {name} {value:.2f}", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(earlier)], cwd=ROOT)
    print(f"\n| target | units, this checkout | units, {options.rev} | this / {options.rev} |")
    print("|---|---:|---:|---:|")
    for name in targets:
        mine, theirs = statistics.median(now[name]), statistics.median(then[name])
        print(f"| {name} | {mine:.2f} | {theirs:.2f} | {mine / theirs:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""This checkout's throughput against an earlier commit's, on the same machine, in one sitting.

    python -m benchmarks.against REV [--bench NAME] [--rounds N] [--repeats N] [--target NAME ...]

checks REV out into a temporary git worktree and times scenarios on each target, in a fresh
process per round and checkout, the two checkouts taking turns so both meet the same machine.
Each process measures with *this* checkout's ``benchmarks/throughput.py`` (calibration units, CPU
time, the fastest of ``--repeats`` timings), so only the code under test differs.  ``--bench``
says what is timed:

* ``colliding-ids`` (the default): the bench scenario, with its restart-free control;
* ``regressions``: every regression file both checkouts hold whose scenario is the same in both
  (this checkout's loader reads REV's file and compares tree and steps), each with its control;
  a target's figure is the mean per scenario over those it runs in both checkouts;
* ``overhead``: the tree of ``benchmarks/direct.py``, and, in this checkout's rounds, the same
  tree driven straight through the SDK as an application would (``benchmarks/direct*.py``).
  ``SDK alone / REV`` is where an application doing the same work without any harness stands.

Prints each round, then per target the median figure of each checkout and their ratio (this /
REV): the "against 83c7a07" figures in ``reports/baselines/throughput.json`` come from here.
REV's harness must have this checkout's entry points (``harness.runner.run_scenario``,
``registry.get``, ``scenarios.loading.load_scenario`` and ``parse_scenario``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final, TypedDict

from benchmarks.direct import DRIVES, OVERHEAD_TREE
from benchmarks.throughput import ROUNDS

ROOT: Final = Path(__file__).resolve().parent.parent
TARGETS: Final = ("reference", "strands", "langgraph", "langgraph-subgraph-node", "openai-agents")
BENCHES: Final = ("colliding-ids", "regressions", "overhead")
REGRESSIONS: Final = Path("scenarios") / "regressions"
SDK_ALONE: Final = "SDK alone"

# run in a checkout (its directory first on sys.path) with a JSON plan on stdin; one line per
# target and scenario, "target<TAB>scenario<TAB>units", or "-" for a scenario the target lacks a
# capability for
_MEASURE: Final = """
import importlib, importlib.util, json, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("throughput", sys.argv[1])
throughput = importlib.util.module_from_spec(spec)
spec.loader.exec_module(throughput)
from harness.runner import run_scenario
from harness.targets import registry
from scenarios.loading import load_scenario, parse_scenario
plan = json.load(sys.stdin)
for name in plan["targets"]:
    target = registry.get(name)
    for label, source in plan["scenarios"].items():
        if isinstance(source, str):
            scenario = load_scenario(Path(source))
        else:
            scenario = parse_scenario(source, label)
        run = lambda: run_scenario(target, scenario, label)
        if not run().steps:
            print(name, label, "-", sep="\\t", flush=True)
            continue
        seconds, calibration = throughput.fastest(run, throughput.calibration, plan["repeats"])
        print(name, label, seconds / calibration, sep="\\t", flush=True)
    direct = plan["direct"].get(name)
    if direct is not None:
        run_directly = importlib.import_module(direct).run_directly
        seconds, calibration = throughput.fastest(
            run_directly, throughput.calibration, plan["repeats"]
        )
        print(name, plan["sdk_alone"], seconds / calibration, sep="\\t", flush=True)
"""

Figures = dict[str, dict[str, float | None]]  # target -> scenario -> units (None: not run)


class Plan(TypedDict):
    """What a measuring process runs: the targets, the scenarios (a path in the checkout, or a
    scenario's mapping), the SDK-alone drives (module by target), and the label of their line."""

    targets: list[str]
    scenarios: dict[str, Any]
    direct: dict[str, str]
    sdk_alone: str
    repeats: int  # each figure is the fastest of this many timings


def units(checkout: Path, plan: Plan) -> Figures:
    """One round in a fresh process whose imports come from ``checkout``."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(ROOT / "benchmarks" / "throughput.py")],
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout)},
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        check=True,
    )
    found: Figures = {}
    for line in done.stdout.splitlines():
        name, label, value = line.split("\t")
        found.setdefault(name, {})[label] = None if value == "-" else float(value)
    return found


def shared_regressions(earlier: Path) -> list[str]:
    """The regression files both checkouts hold whose scenario (tree and steps) is the same, as
    this checkout's loader reads them: the differences allowed are in what describes them."""
    from scenarios.loading import load_scenario

    same = []
    for path in sorted((ROOT / REGRESSIONS).glob("*.yaml")):
        theirs = earlier / REGRESSIONS / path.name
        if not theirs.is_file():
            continue
        try:
            mine, old = load_scenario(path), load_scenario(theirs)
        except Exception:  # REV's file no longer loads: not the same scenario
            continue
        if (mine.tree, mine.steps) == (old.tree, old.steps):
            same.append(path.name)
    return same


def plan_of(bench: str, targets: list[str], earlier: Path, repeats: int = ROUNDS) -> Plan:
    """The plan of ``bench`` for both checkouts (this one adds the SDK-alone drives)."""
    scenarios: dict[str, Any]
    if bench == "colliding-ids":
        scenarios = {"colliding-ids": str(REGRESSIONS / "colliding-ids.yaml")}
    elif bench == "regressions":
        scenarios = {name: str(REGRESSIONS / name) for name in shared_regressions(earlier)}
    else:
        scenarios = {"overhead": OVERHEAD_TREE}
    return {
        "targets": targets,
        "scenarios": scenarios,
        "direct": {},
        "sdk_alone": SDK_ALONE,
        "repeats": repeats,
    }


def figure(measured: dict[str, float | None], common: set[str]) -> float:
    """A target's figure in one round: its mean units over the scenarios both checkouts ran."""
    return statistics.fmean(
        value for label, value in measured.items() if label in common and value is not None
    )


def main(arguments: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.against", description=__doc__)
    parser.add_argument("rev", help="the earlier commit (anything git rev-parse takes)")
    parser.add_argument("--bench", choices=BENCHES, default="colliding-ids")
    parser.add_argument("--rounds", type=int, default=5, metavar="N", help="processes each")
    parser.add_argument(
        "--repeats", type=int, default=ROUNDS, metavar="N", help="timings per figure in each"
    )
    parser.add_argument("--target", action="append", choices=TARGETS, metavar="NAME")
    options = parser.parse_args(arguments)
    targets = options.target or list(TARGETS)
    rounds: dict[str, list[Figures]] = {"this": [], options.rev: []}
    with tempfile.TemporaryDirectory(prefix="against-") as scratch:
        earlier = Path(scratch) / "checkout"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(earlier), options.rev],
            cwd=ROOT,
            check=True,
        )
        try:
            plan = plan_of(options.bench, targets, earlier, options.repeats)
            mine = plan.copy()
            if options.bench == "overhead":
                mine["direct"] = {name: DRIVES[name] for name in targets if name in DRIVES}
            for round_ in range(1, options.rounds + 1):
                for where, checkout, asked in (("this", ROOT, mine), (options.rev, earlier, plan)):
                    measured = units(checkout, asked)
                    rounds[where].append(measured)
                    for name, labels in measured.items():
                        for label, value in labels.items():
                            shown = "-" if value is None else f"{value:.2f}"
                            print(f"round {round_} {where} {name} {label} {shown}", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(earlier)], cwd=ROOT)
    print(table(rounds["this"], rounds[options.rev], targets, options.rev), end="")
    return 0


def table(now: list[Figures], then: list[Figures], targets: list[str], rev: str) -> str:
    """Per target, the median over rounds of each checkout's figure, their ratio, and where this
    checkout measured the SDK alone, its median and its ratio to REV's."""
    lines = [
        f"| target | scenarios | units, this checkout | units, {rev} | this / {rev} "
        f"| units, {SDK_ALONE} | {SDK_ALONE} / {rev} |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in targets:
        ran = [
            {label for label, value in figures[name].items() if value is not None}
            for figures in (*now, *then)
        ]
        common = set.intersection(*ran) - {SDK_ALONE}
        mine = statistics.median(figure(figures[name], common) for figures in now)
        theirs = statistics.median(figure(figures[name], common) for figures in then)
        alone = [figures[name][SDK_ALONE] for figures in now if SDK_ALONE in figures[name]]
        sdk = statistics.median(v for v in alone if v is not None) if alone else None
        lines.append(
            f"| {name} | {len(common)} | {mine:.2f} | {theirs:.2f} | {mine / theirs:.2f} | "
            + ("- | - |" if sdk is None else f"{sdk:.2f} | {sdk / theirs:.2f} |")
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())

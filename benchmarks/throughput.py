"""Scenario throughput as ratios, so a busy or a slower machine does not turn the gate red.

A time in seconds says as much about the machine, and what else runs on it, as about the code.
Each figure here is a ratio of two CPU times (every thread of the process) taken in one process,
interleaved round by round, each side's fastest round against the other's, so load that comes
and goes does not count:

* ``units``: seconds per run of the bench scenario divided by seconds per *calibration*, a fixed
  piece of pure-Python work of the kind the harness does (copy, serialise and parse a JSON-shaped
  conversation).  Used for every target, against ``reports/baselines/throughput.json``.
* ``overhead``: the harness's time over the same tree driven straight through the SDK
  (``benchmarks/direct.py`` and its ``DRIVES``).
* ``restart``: a scenario with a restart between every step, with real restarts (``--isolation
  fork``) over in-process, the forked processes' CPU counted (``benchmarks/restarts.py``).

The limits in the baseline file say where each comes from.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from harness.report import write_atomically

ROOT: Final = Path(__file__).resolve().parent.parent
LIMITS: Final = ROOT / "reports" / "baselines" / "throughput.json"
ROUNDS: Final = 11

_CONVERSATION: Final = [
    {
        "role": "user" if turn % 2 else "assistant",
        "content": [
            {"text": f"turn {turn}: " + "word " * 20},
            {"toolUse": {"toolUseId": f"t{turn}", "name": "clerk", "input": {"n": turn}}},
        ],
    }
    for turn in range(40)
]


def calibration() -> int:
    """A fixed amount of JSON-shaped work; returns a size so nothing is optimised away."""
    total = 0
    for _ in range(5):
        text = json.dumps(_copy(_CONVERSATION), sort_keys=True)
        total += len(json.loads(text))
    return total


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


def _seconds(work: Callable[[], object]) -> float:
    """CPU seconds of this process, every thread counted: the SDK called synchronously runs its
    loop in a thread of its own, which a free second core would otherwise hide from a wall clock."""
    start = time.process_time()
    work()
    return time.process_time() - start


def fastest(
    work: Callable[[], object], against: Callable[[], object], rounds: int = ROUNDS
) -> tuple[float, float]:
    """(min time(work), min time(against)) in CPU seconds over ``rounds`` rounds that each time
    both.

    Load only ever adds time, so each side's fastest round is the closest to what it costs on a
    quiet machine; interleaving the rounds lets both sides meet the same quiet moments."""
    work()
    against()  # first-use costs (imports, caches) paid before measuring
    timed = [(_seconds(work), _seconds(against)) for _ in range(rounds)]
    return min(work_time for work_time, _ in timed), min(other for _, other in timed)


def ratio(work: Callable[[], object], against: Callable[[], object], rounds: int = ROUNDS) -> float:
    """min time(work) / min time(against), as ``fastest`` measures them."""
    work_time, other = fastest(work, against, rounds)
    return work_time / other


def limits() -> dict[str, Any]:
    return json.loads(LIMITS.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


# -- the report: what the bench env measured, against its goals and gates -----------------------

REPORT_TESTS: Final = {
    "units": "test_scenario_runs_per_second",
    "overhead": "test_harness_overhead_on_the_sdk",
    "restart": "test_real_restart_cost",
}
RESTART_FIGURES: Final = (
    "restart_ratio",
    "in_process_cpu_seconds",
    "fork_cpu_seconds",
    "fork_children_cpu_seconds",
)


def figures(benchmark_json: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each target's throughput figures from pytest-benchmark's JSON: ``runs_per_cpu_second``,
    ``units`` and ``overhead`` (absent where its test did not run or records none)."""
    found: dict[str, dict[str, Any]] = {}
    for entry in benchmark_json.get("benchmarks", []):
        test = str(entry.get("name", "")).split("[")[0]
        name = (entry.get("params") or {}).get("name")
        extra = entry.get("extra_info") or {}
        if name is None or test not in REPORT_TESTS.values():
            continue
        row = found.setdefault(name, {})
        if test == REPORT_TESTS["units"]:
            row["runs_per_cpu_second"] = extra.get("runs_per_cpu_second")
            row["units"] = extra.get("units")
        elif test == REPORT_TESTS["restart"]:
            row.update({figure: extra.get(figure) for figure in RESTART_FIGURES})
        else:
            row["overhead"] = extra.get("overhead_ratio")
    return found


def report(benchmark_json: dict[str, Any], baseline: dict[str, Any]) -> str:
    """``reports/throughput.md``: the goals (what the figures should reach, never failing a
    run) and the gates (what fails the bench env: ``test_bench.py`` asserts the same limits)."""
    rows = figures(benchmark_json)
    lines = [
        "# Throughput",
        "",
        "The bench scenario (colliding-ids with its restart-free control) on every target, as "
        "ratios of CPU times taken in one process (`benchmarks/throughput.py`): a gate fails "
        "the bench env, a goal is where the figure should be. Limits, goals and where each "
        "comes from: `reports/baselines/throughput.json`. Written by "
        "`python -m benchmarks.throughput` from `reports/benchmark.json`.",
        "",
        "## Goals",
        "",
        "| figure | target | this run | goal | |",
        "|---|---|---:|---:|---|",
    ]
    for goal in baseline.get("goals", []):
        value = rows.get(goal["target"], {}).get(goal["figure"])
        lines.append(
            f"| {goal['label']} | {goal['target']} | {_shown(value)} | "
            f"{_bound(goal)} | {_reached(value, goal)} |"
        )
    against = baseline.get("against")
    if against:
        lines += _against(against)
    lines += [
        "",
        "## Gates",
        "",
        "| target | scenario runs per CPU second | units | units gate | harness / SDK alone "
        "| overhead gate |",
        "|---|---:|---:|---|---:|---|",
    ]
    for name in sorted(rows):
        row = rows[name]
        units_limit = baseline["units"].get(name)
        overhead_limit = baseline["overhead"].get(name)
        lines.append(
            f"| {name} | {_shown(row.get('runs_per_cpu_second'))} | {_shown(row.get('units'))} "
            f"| {_gate(row.get('units'), units_limit)} | {_shown(row.get('overhead'))} "
            f"| {_gate(row.get('overhead'), overhead_limit)} |"
        )
    lines += _restarts(rows, baseline)
    return "\n".join(lines) + "\n"


def _restarts(rows: dict[str, dict[str, Any]], baseline: dict[str, Any]) -> list[str]:
    """The cost of real restarts per target: CPU seconds per run of the scenario in-process and
    with ``--isolation fork`` (the forked processes' share beside it), their ratio, its gate and
    the goal at which real restarts could be check's default."""
    measured = {name: row for name, row in sorted(rows.items()) if row.get("restart_ratio")}
    if not measured:
        return []
    goal = baseline.get("restart_goal")
    lines = [
        "",
        "## Real restarts",
        "",
        "restart-anywhere (a restart before and after every step) and its restart-free "
        "control, in-process and with real restarts (`--isolation fork`: each stretch between "
        "restarts in a process forked from a server that imported the SDK once), alternating "
        "in one run (`benchmarks/restarts.py`). CPU seconds per run; the fork column counts "
        "the harness's process and every forked process (`resource.getrusage(RUSAGE_CHILDREN)` "
        "once the server has reaped them and stopped, less what starting the server cost)"
        + (
            f"; the goal (≤ {goal['at_most']}) is where real restarts could become check's default."
            if goal
            else "."
        ),
        "",
        "| target | in-process CPU s | fork CPU s | of which forked processes | fork / in-process "
        "| gate | goal |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for name, row in measured.items():
        ratio = row["restart_ratio"]
        reached = "-" if not goal else _reached(ratio, goal)
        lines.append(
            f"| {name} | {_shown(row.get('in_process_cpu_seconds'))} "
            f"| {_shown(row.get('fork_cpu_seconds'))} "
            f"| {_shown(row.get('fork_children_cpu_seconds'))} | {ratio} "
            f"| {_gate(ratio, baseline.get('restart', {}).get(name))} | {reached} |"
        )
    return lines


def _against(against: dict[str, Any]) -> list[str]:
    """Each target now against the commit where the goals were set: on the bench scenario, per
    regression scenario both hold, and the SDK alone on the overhead tree over the harness then
    (``benchmarks/against.py``).  A goal is reached when the first two are within it; when it
    is not and the SDK alone is over it too, the report says so."""
    rev = against["rev"]
    lines = [
        "",
        f"## Against {rev}",
        "",
        f"Not this run's: {against['measured']}. Each figure is a time now over the time at "
        f"{rev}: the bench scenario; the mean per regression scenario both commits hold; and "
        f"the overhead tree driven straight through the SDK, as an application would, over the "
        f"harness at {rev} on that tree: where that is over a goal, an application doing the "
        f"same work without any harness would miss it too.",
        "",
        f"| target | bench scenario | per regression scenario | SDK alone / harness at {rev} "
        "| goal | |",
        "|---|---:|---:|---:|---:|---|",
    ]
    per_scenario, sdk_alone = against.get("per_scenario", {}), against.get("sdk_alone", {})
    for name, ratio in against["ratios"].items():
        goal = against["goals"].get(name)
        mean, floor = per_scenario.get(name), sdk_alone.get(name)
        bound = "-" if goal is None else f"≤ {goal}"
        lines.append(
            f"| {name} | {ratio} | {_shown(mean)} | {_shown(floor)} | {bound} "
            f"| {_state(goal, [ratio, mean], floor)} |"
        )
    return lines


def _state(goal: float | None, figures: list[float | None], floor: float | None) -> str:
    if goal is None:
        return ""
    if all(figure is None or figure <= goal for figure in figures):
        return "reached"
    if floor is not None and floor > goal:
        return "not reached; the SDK alone is over it"
    return "not reached"


def _shown(value: Any) -> str:
    return "-" if value is None else str(value)


def _bound(goal: dict[str, Any]) -> str:
    return f"≥ {goal['at_least']}" if "at_least" in goal else f"≤ {goal['at_most']}"


def _reached(value: Any, goal: dict[str, Any]) -> str:
    if value is None:
        return "not measured"
    if "at_least" in goal:
        return "reached" if value >= goal["at_least"] else "not reached"
    return "reached" if value <= goal["at_most"] else "not reached"


def _gate(value: Any, limit: dict[str, Any] | None) -> str:
    if limit is None:
        return "none"
    if value is None:
        return f"≤ {limit['max']}: not measured"
    return f"≤ {limit['max']}: " + ("passes" if value <= limit["max"] else "FAILS")


def main(arguments: list[str]) -> int:
    """``python -m benchmarks.throughput BENCHMARK_JSON REPORT_MD``."""
    if len(arguments) != 2:
        print("usage: python -m benchmarks.throughput BENCHMARK_JSON REPORT_MD", file=sys.stderr)
        return 2
    source, target = Path(arguments[0]), Path(arguments[1])
    try:
        measured = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as failure:
        print(f"{source}: cannot read pytest-benchmark's JSON ({failure})", file=sys.stderr)
        return 2
    text = report(measured, limits())
    write_atomically(target, text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

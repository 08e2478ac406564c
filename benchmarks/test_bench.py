"""pytest-benchmark suite: continuation sizes and throughput, side by side for every installed
target, and the harness's overhead on the SDK target.

Sizes go into ``extra_info`` (pytest-benchmark gates timing only; ``python -m harness bench``
gates the sizes).  Run once, quickly, as CI does:

    pytest benchmarks --benchmark-json=reports/benchmark.json --benchmark-min-rounds=1 \\
        --benchmark-max-time=0 --benchmark-warmup=off
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from benchmarks import restarts, throughput
from benchmarks.direct import DRIVES, overhead_scenario
from harness.bench import measure
from harness.runner import run_scenario
from harness.targets import registry
from scenarios.loading import REGRESSIONS, load_scenario

TARGETS = registry.available()
# the targets that measure what they store (langgraph's checkpoints are not located)
SIZED = [name for name in TARGETS if "continuation_bytes" in registry.get(name).info.capabilities]


def flat(figures: Any, prefix: str = "") -> dict[str, Any]:
    """``{"earlier_calls.ephemeral.0": 1339, ...}``: extra_info keeps scalars readable."""
    if isinstance(figures, dict):
        found: dict[str, Any] = {}
        for key, value in figures.items():
            found.update(flat(value, f"{prefix}{key}."))
        return found
    if isinstance(figures, list):
        return {f"{prefix}{index}": value for index, value in enumerate(figures)}
    return {prefix.rstrip("."): figures}


@pytest.mark.parametrize("name", SIZED)
def test_continuation_sizes(benchmark: Any, name: str) -> None:
    figures = benchmark.pedantic(measure, args=(registry.get(name),), rounds=1, iterations=1)
    benchmark.extra_info.update(flat(figures))
    ephemeral = figures["earlier_calls"]["ephemeral"]
    assert ephemeral["0"] is not None  # every installed target can say what it stores
    record = figures["record"]
    if record["pending"] is not None:  # None: no record of its own (openai-agents' RunState)
        assert record["after_resume"] < record["pending"]


@pytest.mark.parametrize("name", TARGETS)
def test_scenario_runs_per_second(benchmark: Any, name: str) -> None:
    """Calls per second (pytest-benchmark's figure: each call runs the scenario and its
    restart-free control), scenario runs per CPU second (both runs of a call counted, in its
    fastest round), and the gate on the time per call in calibration units against
    reports/baselines/throughput.json (benchmarks/throughput.py)."""
    target = registry.get(name)
    scenario = load_scenario(REGRESSIONS / "colliding-ids.yaml")
    history = benchmark(run_scenario, target, scenario, "colliding-ids")
    assert len(history.steps) == len(scenario.steps)
    assert history.control is not None  # the restart-free control ran too
    seconds, calibration = throughput.fastest(
        lambda: run_scenario(target, scenario, "colliding-ids"), throughput.calibration
    )
    units = seconds / calibration
    limit = throughput.limits()["units"].get(name)
    benchmark.extra_info.update(
        units=round(units, 2), units_limit=limit, runs_per_cpu_second=round(2 / seconds)
    )
    if limit is not None:
        assert units <= limit["max"], f"{name}: {units:.2f} calibration units, over {limit}"


# each SDK target and the same tree driven straight through its SDK (benchmarks/direct*.py)
@pytest.mark.parametrize("name", [name for name in DRIVES if name in TARGETS])
def test_harness_overhead_on_the_sdk(benchmark: Any, name: str) -> None:
    """The same tree through the SDK alone and through the harness, in this run, as a ratio."""
    run_directly = importlib.import_module(DRIVES[name]).run_directly
    target, scenario = registry.get(name), overhead_scenario()
    history = benchmark.pedantic(
        run_scenario, args=(target, scenario, "overhead"), rounds=3, iterations=1
    )
    assert [step.kind for step in history.steps] == ["run", "answer"]
    assert history.steps[1].executions  # the approval ran the action, as it did directly
    run_directly()  # which fails unless the approval ran the action there too
    overhead = throughput.ratio(lambda: run_scenario(target, scenario, "overhead"), run_directly)
    limit = throughput.limits()["overhead"][name]
    benchmark.extra_info.update(overhead_ratio=round(overhead, 2), overhead_limit=limit)
    assert overhead <= limit["max"], f"{name}: the harness costs {overhead:.2f}x the SDK alone"


@pytest.mark.parametrize("name", TARGETS)
def test_real_restart_cost(benchmark: Any, name: str) -> None:
    """A restart between every step (restart-anywhere) made real (``--isolation fork``) against
    the same runs in-process, in this run: CPU seconds per run each way, the forked processes'
    CPU counted (benchmarks/restarts.py), and the gate on their ratio."""
    cost = benchmark.pedantic(restarts.restart_cost, args=(name,), rounds=1, iterations=1)
    limit = throughput.limits()["restart"].get(name)
    benchmark.extra_info.update(
        restart_ratio=round(cost.ratio, 2),
        restart_limit=limit,
        in_process_cpu_seconds=round(cost.in_process, 4),
        fork_cpu_seconds=round(cost.fork, 4),
        fork_children_cpu_seconds=round(cost.fork_children, 4),
    )
    assert cost.fork_children > 0  # the segments ran elsewhere, and their CPU was counted
    if limit is not None:
        assert cost.ratio <= limit["max"], f"{name}: a real restart costs {cost.ratio:.2f}x"

"""The throughput report (``python -m benchmarks.throughput``): pytest-benchmark's figures
against the goals and gates of ``reports/baselines/throughput.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import throughput


def measured(name: str, test: str, **extra: Any) -> dict[str, Any]:
    return {"name": f"{test}[{name}]", "params": {"name": name}, "extra_info": extra}


def benchmark_json(reference_runs: int, strands_overhead: float) -> dict[str, Any]:
    units, overhead = throughput.REPORT_TESTS["units"], throughput.REPORT_TESTS["overhead"]
    return {
        "benchmarks": [
            measured("reference", units, units=4.1, runs_per_cpu_second=reference_runs),
            measured("strands", units, units=120.5, runs_per_cpu_second=40),
            measured("strands", overhead, overhead_ratio=strands_overhead),
            measured("strands", "test_continuation_sizes", **{"record.pending": 2165}),
        ]
    }


BASELINE: dict[str, Any] = {
    "units": {"reference": {"max": 25}, "strands": {"max": 100}},
    "overhead": {"strands": {"max": 1.75}},
    "goals": [
        {"figure": "runs_per_cpu_second", "target": "reference", "label": "runs", "at_least": 500},
        {"figure": "overhead", "target": "strands", "label": "over the SDK", "at_most": 1.3},
    ],
    "against": {
        "rev": "abc1234",
        "measured": "on a quiet machine",
        "ratios": {"reference": 0.26, "langgraph": 0.45, "openai-agents": 0.86, "strands": 0.4},
        "per_scenario": {"langgraph": 0.69, "openai-agents": 0.9, "strands": 0.45},
        "sdk_alone": {"langgraph": 0.41, "openai-agents": 0.7},
        "goals": {"langgraph": 0.5, "openai-agents": 0.5, "strands": 0.5},
    },
}


def test_figures_are_read_per_target_from_the_two_throughput_tests() -> None:
    assert throughput.figures(benchmark_json(523, 1.22)) == {
        "reference": {"runs_per_cpu_second": 523, "units": 4.1},
        "strands": {"runs_per_cpu_second": 40, "units": 120.5, "overhead": 1.22},
    }


def test_the_report_says_which_goals_are_reached_and_which_gates_fail() -> None:
    text = throughput.report(benchmark_json(523, 1.31), BASELINE)
    assert "| runs | reference | 523 | ≥ 500 | reached |" in text
    assert "| over the SDK | strands | 1.31 | ≤ 1.3 | not reached |" in text
    assert "| reference | 523 | 4.1 | ≤ 25: passes | - | none |" in text
    assert "| strands | 40 | 120.5 | ≤ 100: FAILS | 1.31 | ≤ 1.75: passes |" in text
    assert "| langgraph | 0.45 | 0.69 | 0.41 | ≤ 0.5 | not reached |" in text
    assert (
        "| openai-agents | 0.86 | 0.9 | 0.7 | ≤ 0.5 | not reached; the SDK alone is over it |"
        in text
    )
    assert "| strands | 0.4 | 0.45 | - | ≤ 0.5 | reached |" in text
    assert "| reference | 0.26 | - | - | - |  |" in text
    below = throughput.report(benchmark_json(499, 1.3), BASELINE)
    assert "| runs | reference | 499 | ≥ 500 | not reached |" in below
    assert "| over the SDK | strands | 1.3 | ≤ 1.3 | reached |" in below


def test_a_figure_that_did_not_run_is_said_so() -> None:
    text = throughput.report({"benchmarks": []}, BASELINE)
    assert "| runs | reference | - | ≥ 500 | not measured |" in text


def test_the_committed_goals_name_figures_the_bench_measures() -> None:
    baseline = throughput.limits()
    for goal in baseline["goals"]:
        assert goal["figure"] in {"runs_per_cpu_second", "units", "overhead"}
        assert ("at_least" in goal) != ("at_most" in goal)
        assert goal["target"] in baseline["units"]
    against = baseline["against"]
    for figures in ("goals", "per_scenario", "sdk_alone"):
        assert set(against[figures]) <= set(against["ratios"])


def test_main_writes_the_report_and_refuses_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, written = tmp_path / "benchmark.json", tmp_path / "throughput.md"
    source.write_text(json.dumps(benchmark_json(523, 1.22)), encoding="utf-8")
    assert throughput.main([str(source), str(written)]) == 0
    assert written.read_text(encoding="utf-8").startswith("# Throughput\n")
    source.write_text("{not json", encoding="utf-8")
    assert throughput.main([str(source), str(tmp_path / "other.md")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"{source}: cannot read pytest-benchmark's JSON")
    assert not (tmp_path / "other.md").exists()


def test_the_cost_of_real_restarts_is_reported_per_target_with_its_gate_and_goal() -> None:
    restart = throughput.REPORT_TESTS["restart"]
    figures = dict(in_process_cpu_seconds=0.38, fork_cpu_seconds=1.07)
    document = {
        "benchmarks": [
            measured(
                "strands", restart, restart_ratio=2.83, fork_children_cpu_seconds=1.01, **figures
            ),
            measured("reference", restart, restart_ratio=7.8, fork_children_cpu_seconds=0.25),
        ]
    }
    baseline = BASELINE | {
        "restart": {"strands": {"max": 2.5}, "reference": {"max": 15}},
        "restart_goal": {"at_most": 1.5},
    }
    assert throughput.figures(document)["strands"]["restart_ratio"] == 2.83
    text = throughput.report(document, baseline)
    assert "| strands | 0.38 | 1.07 | 1.01 | 2.83 | ≤ 2.5: FAILS | not reached |" in text
    assert "| reference | - | - | 0.25 | 7.8 | ≤ 15: passes | not reached |" in text
    assert "## Real restarts" not in throughput.report(benchmark_json(523, 1.2), BASELINE)

"""Continuation-size benchmarks: the shape the review thread measured, and the gate."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from harness.bench import EARLIER_CALLS, gate, markdown, measure, size_document
from harness.cli import main
from harness.targets import registry
from harness.targets.reference import ReferenceTarget
from harness.targets.variants import VARIANTS

BASELINE = (
    Path(__file__).resolve().parent.parent / "reports" / "baselines" / "continuation-size.json"
)
# every installed target that claims it can say its sizes (langgraph does not)
SIZED = [
    name
    for name in registry.available()
    if "continuation_bytes" in registry.get(name).info.capabilities
]


@pytest.fixture(scope="module")
def figures() -> dict[str, dict[str, Any]]:
    return {name: measure(registry.get(name)) for name in SIZED}


def per_call(sizes: dict[str, int | None]) -> list[float]:
    points = [(n, sizes[str(n)]) for n in EARLIER_CALLS]
    return [(b - a) / (m - n) for (n, a), (m, b) in itertools.pairwise(points) if a and b]


@pytest.mark.parametrize("name", SIZED)
def test_an_ephemeral_continuation_is_flat_in_earlier_calls(
    figures: dict[str, dict[str, Any]], name: str
) -> None:
    sizes = figures[name]["earlier_calls"]["ephemeral"]
    assert None not in sizes.values()
    assert max(sizes.values()) - min(sizes.values()) <= 2  # a call counter may gain a digit


@pytest.mark.parametrize("name", SIZED)
def test_a_preserve_context_turn_without_a_store_grows_linearly(
    figures: dict[str, dict[str, Any]], name: str
) -> None:
    steps = per_call(figures[name]["earlier_calls"]["preserve_context_no_store"])
    assert len(steps) == len(EARLIER_CALLS) - 1
    assert min(steps) > 100  # each earlier call adds its messages
    # by the same amount each time, up to 6 earlier calls; by 10, a default conversation manager
    # may have started trimming (strands keeps 40 messages unless told otherwise)
    first = steps[: EARLIER_CALLS.index(6)]
    assert max(first) - min(first) <= 0.02 * max(first)


@pytest.mark.parametrize("name", SIZED)
def test_the_record_shrinks_back_after_the_resume(
    figures: dict[str, dict[str, Any]], name: str
) -> None:
    record = figures[name]["record"]
    assert record["after_resume"] < record["pending"] / 10


@pytest.mark.parametrize("name", SIZED)
def test_stored_continuations_add_up_with_fan_out_and_grow_with_depth(
    figures: dict[str, dict[str, Any]], name: str
) -> None:
    fan_out, depth = figures[name]["fan_out"], figures[name]["depth"]
    assert fan_out["4"] == 4 * fan_out["1"]
    assert depth["1"] < depth["2"] < depth["3"] < depth["4"]
    assert figures[name]["floor_ratio"] >= 1


def test_the_gate_fails_a_variant_that_keeps_history_in_its_continuation() -> None:
    document = size_document([VARIANTS["history-accumulation"]()])
    [problem] = gate(document, None)
    assert "bad-history-accumulation" in problem
    assert "grows with earlier calls" in problem


def test_the_gate_passes_the_reference_against_the_committed_baseline() -> None:
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    assert gate(size_document([ReferenceTarget()]), baseline) == []


def test_the_gate_fails_a_size_more_than_five_percent_over_the_baseline() -> None:
    document = size_document([ReferenceTarget()])
    [name] = document["targets"]
    now = document["targets"][name]["record"]["pending"]
    smaller = copy.deepcopy(document)
    smaller["targets"][name]["record"]["pending"] = before = int(now / 1.06)
    [problem] = gate(document, smaller)
    assert problem.startswith(f"{name}: record.pending grew 6.")
    assert problem.endswith(f"({before} B -> {now} B)")
    smaller["targets"][name]["record"]["pending"] = int(now / 1.04)
    assert gate(document, smaller) == []


def test_the_size_document_is_the_same_on_every_run() -> None:
    first = json.dumps(size_document([ReferenceTarget()]), sort_keys=True)
    assert first == json.dumps(size_document([ReferenceTarget()]), sort_keys=True)


def test_bench_writes_the_reports_and_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    assert main(["bench", "--target", "reference", "--reports", str(reports)]) == 0
    text = (reports / "continuation-size.md").read_text(encoding="utf-8")
    assert text.startswith("# Continuation size")
    assert "passes" in text
    document = json.loads((reports / "continuation-size.json").read_text(encoding="utf-8"))
    assert markdown(document, []) == text
    arguments = ["bench", "--target", "bad-history-accumulation", "--reports", str(reports)]
    assert main(arguments) == 1
    assert "grows with earlier calls" in capsys.readouterr().out


def test_update_baseline_writes_the_sizes_it_measured(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    arguments = ["bench", "--target", "reference", "--reports", str(tmp_path), "--baseline"]
    assert main([*arguments, str(baseline), "--update-baseline"]) == 0
    written = json.loads(baseline.read_text(encoding="utf-8"))
    assert written == json.loads((tmp_path / "continuation-size.json").read_text("utf-8"))


def test_update_baseline_keeps_the_columns_it_did_not_measure(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    other = {"name": "other", "version": "1", "record": {"pending": 7}}
    baseline.write_text(json.dumps({"targets": {"other 1": other}}), encoding="utf-8")
    arguments = ["bench", "--target", "reference", "--reports", str(tmp_path), "--baseline"]
    assert main([*arguments, str(baseline), "--update-baseline"]) == 0
    written = json.loads(baseline.read_text(encoding="utf-8"))
    measured = json.loads((tmp_path / "continuation-size.json").read_text("utf-8"))
    assert written["targets"]["other 1"] == other
    assert written["targets"]["reference 0.1.0"] == measured["targets"]["reference 0.1.0"]

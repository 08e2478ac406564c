"""``python -m benchmarks.against``: which scenarios two checkouts share, what a measuring
process is asked to run, and the table of medians and ratios (the measuring itself needs a git
worktree and every SDK: it is run by hand, its figures go to reports/baselines/throughput.json)."""

from __future__ import annotations

import shutil
from pathlib import Path

from benchmarks import against
from benchmarks.direct import OVERHEAD_TREE


def earlier_checkout(tmp_path: Path) -> Path:
    """A checkout holding three of this one's regression files: one the same, one whose
    description differs, one whose steps differ; and a file this checkout does not hold."""
    regressions = tmp_path / against.REGRESSIONS
    regressions.mkdir(parents=True)
    mine = against.ROOT / against.REGRESSIONS
    shutil.copy(mine / "colliding-ids.yaml", regressions)
    described = (mine / "mixed.yaml").read_text(encoding="utf-8")
    (regressions / "mixed.yaml").write_text(
        described.replace("description: >", "description: >\n  Said otherwise.", 1),
        encoding="utf-8",
    )
    stepped = (mine / "twin-calls.yaml").read_text(encoding="utf-8")
    assert "approve" in stepped
    (regressions / "twin-calls.yaml").write_text(
        stepped.replace("approve", "deny"), encoding="utf-8"
    )
    (regressions / "gone.yaml").write_text("not: a scenario\n", encoding="utf-8")
    return tmp_path


def test_shared_regressions_are_the_files_whose_scenario_is_the_same(tmp_path: Path) -> None:
    assert against.shared_regressions(earlier_checkout(tmp_path)) == [
        "colliding-ids.yaml",
        "mixed.yaml",
    ]


def test_each_bench_asks_for_its_scenarios(tmp_path: Path) -> None:
    earlier = earlier_checkout(tmp_path)
    targets = ["reference"]
    assert against.plan_of("colliding-ids", targets, earlier)["scenarios"] == {
        "colliding-ids": str(against.REGRESSIONS / "colliding-ids.yaml")
    }
    assert list(against.plan_of("regressions", targets, earlier)["scenarios"]) == [
        "colliding-ids.yaml",
        "mixed.yaml",
    ]
    overhead = against.plan_of("overhead", targets, earlier)
    assert overhead["scenarios"] == {"overhead": OVERHEAD_TREE}
    assert overhead["direct"] == {}  # the SDK alone runs in this checkout's rounds only


def test_the_table_compares_medians_over_the_scenarios_both_ran() -> None:
    now: list[against.Figures] = [
        {"strands": {"a": 2.0, "b": 4.0, "c": 1.0, against.SDK_ALONE: 1.0}},
        {"strands": {"a": 3.0, "b": 5.0, "c": 1.0, against.SDK_ALONE: 2.0}},
        {"strands": {"a": 9.0, "b": 9.0, "c": 1.0, against.SDK_ALONE: 3.0}},
    ]
    then: list[against.Figures] = [
        {"strands": {"a": 8.0, "b": 8.0, "c": None}},  # c: a capability REV's target lacks
        {"strands": {"a": 6.0, "b": 6.0, "c": None}},
        {"strands": {"a": 7.0, "b": 7.0, "c": None}},
    ]
    assert against.table(now, then, ["strands"], "abc1234").splitlines()[2] == (
        "| strands | 2 | 4.00 | 7.00 | 0.57 | 2.00 | 0.29 |"
    )
    without: list[against.Figures] = [{"reference": {"a": 1.0}}]
    earlier: list[against.Figures] = [{"reference": {"a": 4.0}}]
    assert against.table(without, earlier, ["reference"], "x").endswith(
        "| reference | 1 | 1.00 | 4.00 | 0.25 | - | - |\n"
    )

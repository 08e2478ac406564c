"""The round trip's mutation report: ``reports/mutation.md`` (a pull-request comment) and
``reports/mutation.json``.  A score per direction, every survivor with its diff and the tests
that ran against it, timeouts and untested mutants.  Any survivor not reviewed in
``mutation/equivalent.yaml``, and any review that excuses no survivor, fails the run (exit 1).
"""

from __future__ import annotations

from typing import Any, Final

from harness.mutation import markdown as md
from harness.mutation.mutants import Result

DIRECTIONS: Final = ("up", "down", "store", "restore", "resume")


def document(result: Result, equivalent: dict[str, str], since: str | None) -> dict[str, Any]:
    scores = {}
    for name in DIRECTIONS:
        mine = [mutant for mutant in result.mutants if mutant.direction == name]
        killed = sum(mutant.status == "killed" for mutant in mine)
        allowed = sum(mutant.status == "survived" and mutant.name in equivalent for mutant in mine)
        judged = len(mine) - allowed
        scores[name] = {
            "mutants": len(mine),
            "killed": killed,
            "equivalent": allowed,
            "score": None if not judged else round(killed / judged, 4),
        }
    survivors = [
        {
            "mutant": mutant.name,
            "direction": mutant.direction,
            "function": f"{mutant.module}.{mutant.function}",
            "diff": result.diffs.get(mutant.name, ""),
            "tests": result.tests.get(mutant.mangled_function, []),
            "equivalent": equivalent.get(mutant.name),
        }
        for mutant in result.of("survived")
    ]
    unreviewed = [entry["mutant"] for entry in survivors if entry["equivalent"] is None]
    stale = stale_reviews(result, equivalent, whole=since is None)
    return {
        "since": since,
        "scores": scores,
        "survivors": survivors,
        "timeouts": [mutant.name for mutant in result.of("timeout")],
        "untested": [mutant.name for mutant in result.of("no tests")],
        "unreviewed": unreviewed,
        "stale_reviews": stale,
        "passes": not unreviewed and not stale,
    }


def stale_reviews(result: Result, equivalent: dict[str, str], *, whole: bool) -> list[str]:
    """Reviews that excuse no survivor: their mutant was killed, or (in a run of the whole
    round trip) no longer exists.  mutmut numbers a function's mutants in order, so after the
    code changes a name can stand for another mutant; a review left behind must be dropped
    or redone, never kept to excuse whatever comes to carry its name."""
    status = {mutant.name: mutant.status for mutant in result.mutants}
    return sorted(
        name
        for name in equivalent
        if (name in status and status[name] != "survived") or (whole and name not in status)
    )


def markdown(report: dict[str, Any]) -> str:
    lines = ["# Mutation testing: the reference's round trip", ""]
    if report["since"]:
        lines += [f"Functions changed since `{report['since']}` only.", ""]
    lines += ["| direction | mutants | killed | equivalent (reviewed) | score |"]
    lines += ["|---|---:|---:|---:|---:|"]
    for name, score in report["scores"].items():
        shown = "-" if score["score"] is None else f"{100 * score['score']:.1f}%"
        lines.append(
            f"| {name} | {score['mutants']} | {score['killed']} | {score['equivalent']} | {shown} |"
        )
    lines.append("")
    unreviewed = [s for s in report["survivors"] if s["equivalent"] is None]
    lines += md.heading("Survivors not reviewed", len(unreviewed))
    for survivor in unreviewed:
        tests = survivor["tests"]
        lines += [f"### `{survivor['mutant']}` ({survivor['direction']})", ""]
        lines += md.diff_block(survivor["diff"])
        lines += [f"{len(tests)} tests ran against it" + (f", e.g. `{tests[0]}`" if tests else "")]
        lines.append("")
    reviewed = [s for s in report["survivors"] if s["equivalent"] is not None]
    if reviewed:
        lines += [f"## Equivalent mutants (reviewed: {len(reviewed)})", ""]
        lines += [f"- `{s['mutant']}`: {s['equivalent']}" for s in reviewed]
        lines.append("")
    if report["stale_reviews"]:
        lines += md.heading("Reviews that excuse no survivor", len(report["stale_reviews"]))
        lines += ["Killed or gone: drop the review from mutation/equivalent.yaml, or redo it.", ""]
        lines += md.names(report["stale_reviews"])
    for key, title in (("timeouts", "Timeouts"), ("untested", "Mutants no test reaches")):
        if report[key]:
            lines += [f"## {title}", "", *md.names(report[key])]
    failing = "survivors to kill or review, or stale reviews"
    lines.append(md.verdict([] if report["passes"] else [failing]))
    return md.document(lines)

"""The SDK run's report: ``reports/mutation-sdk-NAME.md`` and ``.json``.  Three kill rates (the
SDK's own suite, the harness, both), a tally per function, the mutants only one suite kills
with their diffs, and the verdict: the harness must kill 95% of the behaviour-changing mutants,
and more of them than the SDK's own suite."""

from __future__ import annotations

from typing import Any, Final

from harness.mutation import markdown as md
from harness.mutation.classify import (
    BEHAVIOUR,
    EQUIVALENT,
    MESSAGE_TEXT,
    Reviewed,
    classify,
    diff,
)
from harness.mutation.mutants import Mutant, MutationError, short_name
from harness.mutation.sdk import SUITES, Sdk
from harness.mutation.source import Function

DETECTED: Final = frozenset({"killed", "timeout"})


def document(
    sdk: Sdk,
    release: str,
    results: dict[str, dict[str, Mutant]],
    functions: dict[str, Function],
    reviewed: Reviewed,
    unmutated: list[str],
) -> dict[str, Any]:
    names = sorted(set(results["sdk"]) | set(results["harness"]))
    mismatched = set(results["sdk"]) ^ set(results["harness"])
    if mismatched:
        raise MutationError(f"the two trees named different mutants, e.g. {sorted(mismatched)[0]}")
    rows: list[dict[str, Any]] = []
    for name in names:
        status = {suite: results[suite][name].status for suite in SUITES}
        killed = {suite: status[suite] in DETECTED for suite in SUITES}
        rows.append(
            {
                "mutant": name,
                "function": results["sdk"][name].function,
                "sdk": status["sdk"],
                "harness": status["harness"],
                "class": classify(functions, name, reviewed),
                "killed_by": [suite for suite in SUITES if killed[suite]],
            }
        )
    rates = {}
    for label, suites in (("sdk", ("sdk",)), ("harness", ("harness",)), ("both", SUITES)):
        rates[label] = _rates(rows, suites)
    for row in rows:
        if row["class"] != MESSAGE_TEXT and len(row["killed_by"]) < len(SUITES):
            row["diff"] = diff(functions, row["mutant"])
        if short_name(row["mutant"]) in reviewed:
            row["reason"] = reviewed[short_name(row["mutant"])][1]
    behaviour_left = [r for r in rows if r["class"] == BEHAVIOUR and not r["killed_by"]]
    by_function: dict[str, dict[str, int]] = {}
    for row in rows:
        tally = by_function.setdefault(
            row["function"], {"mutants": 0, "behaviour": 0, "sdk": 0, "harness": 0}
        )
        tally["mutants"] += 1
        if row["class"] == BEHAVIOUR:
            tally["behaviour"] += 1
            for suite in row["killed_by"]:
                tally[suite] += 1
    return {
        "sdk": sdk.name,
        "distribution": sdk.distribution,
        "version": release,
        "module": sdk.module_path,
        "unmutated": unmutated,
        "rates": rates,
        "only_harness": [r["mutant"] for r in rows if r["killed_by"] == ["harness"]],
        "only_sdk": [r["mutant"] for r in rows if r["killed_by"] == ["sdk"]],
        "behaviour_left": [r["mutant"] for r in behaviour_left],
        "by_function": dict(sorted(by_function.items())),
        "mutants": rows,
    }


def _rates(rows: list[dict[str, Any]], suites: tuple[str, ...]) -> dict[str, Any]:
    def killed(row: dict[str, Any]) -> bool:
        return any(row[suite] in DETECTED for suite in suites)

    behaviour = [row for row in rows if row["class"] == BEHAVIOUR]
    return {
        "mutants": len(rows),
        "killed": sum(killed(row) for row in rows),
        "behaviour": len(behaviour),
        "behaviour_killed": sum(killed(row) for row in behaviour),
        "survivors_by_class": {
            kind: sum(row["class"] == kind and not killed(row) for row in rows)
            for kind in (BEHAVIOUR, MESSAGE_TEXT, EQUIVALENT)
        },
    }


GATE: Final = 0.95  # the harness must kill this share of the behaviour-changing mutants


def verdict(report: dict[str, Any]) -> list[str]:
    """Why the run fails, if it does: the harness kills under 95% of the behaviour-changing
    mutants, or no more of them than the SDK's own suite."""
    harness, own = report["rates"]["harness"], report["rates"]["sdk"]
    problems = []
    if not harness["behaviour"]:
        return ["no behaviour-changing mutants: nothing was measured"]
    share = harness["behaviour_killed"] / harness["behaviour"]
    if share < GATE:
        problems.append(f"the harness kills {share:.1%} of behaviour-changing mutants (< 95%)")
    if harness["behaviour_killed"] <= own["behaviour_killed"]:
        problems.append("the harness kills no more behaviour-changing mutants than the SDK's suite")
    return problems


SUITE_TITLES: Final = {
    "sdk": "the SDK's own suite",
    "harness": "the harness",
    "both": "both together",
}


def _share(part: int, whole: int) -> str:
    return "-" if not whole else f"{part}/{whole} ({100 * part / whole:.1f}%)"


def markdown(report: dict[str, Any]) -> str:
    rows = report["mutants"]
    lines = [
        f"# Mutation testing: {report['distribution']} {report['version']}, `{report['module']}`",
        "",
        f"{len(rows)} mutants of the installed SDK's agent-as-tool module (a scratch copy),"
        " each run against the SDK's own unit tests and against the harness's "
        f"`{report['sdk']}` target suite.",
        "",
        "| suite | killed | behaviour-changing killed | survivors: behaviour"
        " | message text | equivalent |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, title in SUITE_TITLES.items():
        rate = report["rates"][key]
        left = rate["survivors_by_class"]
        lines.append(
            f"| {title} | {_share(rate['killed'], rate['mutants'])} "
            f"| {_share(rate['behaviour_killed'], rate['behaviour'])} "
            f"| {left[BEHAVIOUR]} | {left[MESSAGE_TEXT]} | {left[EQUIVALENT]} |"
        )
    lines += [
        "",
        "| function | mutants | behaviour-changing | killed by the SDK's suite | by the harness |",
        "|---|---:|---:|---:|---:|",
    ]
    for function, tally in report["by_function"].items():
        lines.append(
            f"| `{function}` | {tally['mutants']} | {tally['behaviour']} "
            f"| {tally['sdk']} | {tally['harness']} |"
        )
    lines += ["", f"Killed only by the harness: {len(report['only_harness'])}; only by the SDK's"]
    lines[-1] += f" suite: {len(report['only_sdk'])}."
    lines.append("")
    if report["unmutated"]:
        lines += ["Functions mutmut does not mutate (decorated):", ""]
        lines += md.names(report["unmutated"])
    by_name = {row["mutant"]: row for row in rows}
    sections = (
        ("Behaviour-changing mutants nothing kills", report["behaviour_left"]),
        (
            "Behaviour-changing mutants only the SDK's suite kills",
            [n for n in report["only_sdk"] if by_name[n]["class"] == BEHAVIOUR],
        ),
        (
            "Behaviour-changing mutants only the harness kills",
            [n for n in report["only_harness"] if by_name[n]["class"] == BEHAVIOUR],
        ),
    )
    for title, names in sections:
        lines += md.heading(title, len(names))
        for name in names:
            row = by_name[name]
            lines += [f"### `{short_name(name)}` in `{row['function']}`", ""]
            lines += md.diff_block(row.get("diff", ""))
    reviewed = [row for row in rows if row["class"] == EQUIVALENT]
    if reviewed:
        lines += md.heading("Reviewed equivalent mutants", len(reviewed))
        lines += [f"- `{short_name(row['mutant'])}`: {row['reason']}" for row in reviewed]
        lines.append("")
    lines.append(md.verdict(verdict(report)))
    return md.document(lines)

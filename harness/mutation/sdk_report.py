"""The SDK run's report: ``reports/mutation-sdk-NAME.md`` and ``.json``.  Three kill rates (the
SDK's own suite, the harness, both), a tally per function, the mutants only one suite kills
with their diffs, and the verdict: the harness must kill 95% of the behaviour-changing mutants,
and more of them than the SDK's own suite.

It is built in two steps, so that shards of a run can be merged into the report one run would
write: ``observe`` gives each mutant's row as a run sees it (what each suite did, its class from
the syntax trees, its diff when a suite left it alive), and ``document`` applies the reviews to
the rows of every mutant and counts.  A review on a mutant a suite killed is refused."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from harness.mutation import markdown as md
from harness.mutation.classify import (
    BEHAVIOUR,
    EQUIVALENT,
    MESSAGE_TEXT,
    UNREACHABLE,
    Reviewed,
    diff,
    syntax_class,
)
from harness.mutation.mutants import Mutant, MutationError, short_name
from harness.mutation.sdk import SUITES
from harness.mutation.source import Function

DETECTED: Final = frozenset({"killed", "timeout"})
CLASSES: Final = (BEHAVIOUR, MESSAGE_TEXT, EQUIVALENT, UNREACHABLE)
HEADER: Final = ("sdk", "distribution", "version", "module", "mutmut")

SUITE_TITLES: Final = {
    "sdk": "the SDK's own suite",
    "harness": "the harness",
    "both": "both together",
}

Header = Mapping[str, str]  # the fields HEADER names: which SDK, release, module, mutmut
Row = dict[str, Any]


def observe(
    results: dict[str, dict[str, Mutant]],
    functions: dict[str, Function],
    names: Iterable[str] | None = None,
) -> list[Row]:
    """The row of each mutant (of ``names``, else of every one), before any review: its status
    in each suite, its class from the syntax trees (``syntax``), and its diff unless every
    suite killed it."""
    mismatched = set(results["sdk"]) ^ set(results["harness"])
    if mismatched:
        raise MutationError(f"the two trees named different mutants, e.g. {sorted(mismatched)[0]}")
    rows: list[Row] = []
    for name in sorted(results["sdk"] if names is None else names):
        status = {suite: results[suite][name].status for suite in SUITES}
        row: Row = {
            "mutant": name,
            "function": results["sdk"][name].function,
            **status,
            "syntax": syntax_class(functions, name),
        }
        if not all(status[suite] in DETECTED for suite in SUITES):
            row["diff"] = diff(functions, name)
        rows.append(row)
    return rows


def _killed_by(row: Row) -> list[str]:
    return [suite for suite in SUITES if row[suite] in DETECTED]


def refuse_reviews_of_killed(observed: list[Row], reviewed: Reviewed, reviews_file: str) -> None:
    """A review is for a survivor: one of a mutant a suite killed (or timed out on) is refused,
    and so is one that names no mutant of the run (mutmut numbers a function's mutants in
    order, so after a change a name can stand for another mutant)."""
    killed = [
        f"{short_name(row['mutant'])} ({reviewed[short_name(row['mutant'])][0]}, killed by "
        f"{' and '.join(SUITE_TITLES[suite] for suite in _killed_by(row))})"
        for row in observed
        if short_name(row["mutant"]) in reviewed and _killed_by(row)
    ]
    if killed:
        raise MutationError(
            f"{reviews_file}: a review of a killed mutant: {', '.join(killed)}; expected "
            "reviews only of mutants no suite kills (remove them)"
        )
    gone = sorted(set(reviewed) - {short_name(row["mutant"]) for row in observed})
    if gone:
        raise MutationError(
            f"{reviews_file}: no such mutant in this run: {', '.join(gone)}; expected reviews "
            "only of the run's mutants (review it again under its new name)"
        )


def document(
    header: Header,
    unmutated: list[str],
    observed: list[Row],
    reviewed: Reviewed,
    reviews_file: str = "the reviews",
) -> dict[str, Any]:
    """The report of a run whose rows (of every mutant) are ``observed``, ``reviewed`` applied
    (the reviews come from ``reviews_file``, named when one is refused)."""
    refuse_reviews_of_killed(observed, reviewed, reviews_file)
    rows: list[Row] = []
    for seen in sorted(observed, key=lambda row: str(row["mutant"])):
        review = reviewed.get(short_name(seen["mutant"]))
        kind = seen["syntax"] if review is None else review[0]
        row: Row = {
            "mutant": seen["mutant"],
            "function": seen["function"],
            "sdk": seen["sdk"],
            "harness": seen["harness"],
            "class": kind,
            "killed_by": _killed_by(seen),
        }
        if kind != MESSAGE_TEXT and "diff" in seen:
            row["diff"] = seen["diff"]
        if review is not None:
            row["reason"] = review[1]
        rows.append(row)
    rates = {}
    for label, suites in (("sdk", ("sdk",)), ("harness", ("harness",)), ("both", SUITES)):
        rates[label] = _rates(rows, suites)
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
        **{field: header[field] for field in HEADER},
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
            kind: sum(row["class"] == kind and not killed(row) for row in rows) for kind in CLASSES
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


def share(part: int, whole: int) -> str:
    return "-" if not whole else f"{part}/{whole} ({100 * part / whole:.1f}%)"


def markdown(report: dict[str, Any]) -> str:
    rows = report["mutants"]
    lines = [
        f"# Mutation testing: {report['distribution']} {report['version']}, `{report['module']}`",
        "",
        f"{len(rows)} mutants (mutmut {report['mutmut']}) of the installed SDK's agent-as-tool"
        " module (a scratch copy),"
        " each run against the SDK's own unit tests and against the harness's "
        f"`{report['sdk']}` target suite.",
        "",
        "| suite | killed | behaviour-changing killed | survivors: behaviour"
        " | message text | equivalent | unreachable |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, title in SUITE_TITLES.items():
        rate = report["rates"][key]
        left = rate["survivors_by_class"]
        lines.append(
            f"| {title} | {share(rate['killed'], rate['mutants'])} "
            f"| {share(rate['behaviour_killed'], rate['behaviour'])} "
            f"| {left[BEHAVIOUR]} | {left[MESSAGE_TEXT]} | {left[EQUIVALENT]} "
            f"| {left[UNREACHABLE]} |"
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
    for kind in (EQUIVALENT, UNREACHABLE):
        reviewed = [row for row in rows if row["class"] == kind]
        if reviewed:
            lines += md.heading(f"Reviewed {kind} mutants", len(reviewed))
            lines += [f"- `{short_name(row['mutant'])}`: {row['reason']}" for row in reviewed]
            lines.append("")
    lines.append(md.verdict(verdict(report)))
    return md.document(lines)

"""The committed figures of SDK mutation: ``reports/baselines/mutation-sdk-NAME-VERSION.json``.

``mutate --sdk NAME --baseline`` writes it from one complete run (both suites run on every mutant
by the same command; or ``mutate --merge ... --baseline`` from every shard of one campaign, each
of which ran both suites itself), never from results stitched together by ``--suite`` or read
back by ``--report-only``.  Its figures are the report's, reviews applied, and no review is of a
killed mutant (``sdk_report`` refuses one).  Any figure docs/mutation.md quotes about SDK
mutation is one of ``quotable``'s, checked by a test against the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from harness.mutation.classify import REVIEWED_CLASSES
from harness.mutation.sdk_report import HEADER, share

SUITES_SHOWN: Final = ("sdk", "harness", "both")


def baseline_path(reports: Path, sdk: str, version: str) -> Path:
    return reports / "baselines" / f"mutation-sdk-{sdk}-{version}.json"


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """What the baseline keeps of a complete run's report: which release, module and mutmut,
    each suite's kill rates, and how many mutants each review class and each suite alone
    accounts for.  (Not how many shards ran it: the figures of a run are the same either way.)"""
    rows = report["mutants"]
    return {
        **{field: report[field] for field in HEADER},
        "rates": report["rates"],
        "reviewed": {
            kind: sum(row["class"] == kind and "reason" in row for row in rows)
            for kind in REVIEWED_CLASSES
        },
        "only_harness": len(report["only_harness"]),
        "only_sdk": len(report["only_sdk"]),
        "behaviour_left": len(report["behaviour_left"]),
    }


def quotable(baseline: dict[str, Any]) -> set[str]:
    """Every figure a text may quote from ``baseline``: each suite's kill rates as the report
    writes them (``356/374 (95.2%)``), their parts (``356/374``, ``95.2%``), and the counts."""
    quotes: set[str] = set()
    for suite in SUITES_SHOWN:
        rate = baseline["rates"][suite]
        for part, whole in (
            (rate["killed"], rate["mutants"]),
            (rate["behaviour_killed"], rate["behaviour"]),
        ):
            written = share(part, whole)
            quotes |= {written, *written.removesuffix(")").split(" (")}
        counts = (rate["mutants"], rate["behaviour"], *rate["survivors_by_class"].values())
        quotes |= {str(count) for count in counts}
    for count in (
        *baseline["reviewed"].values(),
        baseline["only_harness"],
        baseline["only_sdk"],
        baseline["behaviour_left"],
    ):
        quotes.add(str(count))
    return quotes

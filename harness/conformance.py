"""Conformance: every scenario on every target, judged by every checker.

The result is a target x invariant matrix.  A cell holds when no scenario shows a violation of
that invariant on that target, is "not applicable" when no scenario could be judged for it there
(the target lacks a capability), is "expected" when every violation in it is a recorded finding
of that target version (``harness.findings``), and otherwise names its first counterexample.
The run fails on a violation not recorded, and on a recorded finding that no longer shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.checkers import CHECKERS, Violation, applicable
from harness.findings import Verdict, class_findings, judge_findings, load_classes, load_findings
from harness.history import History
from harness.runner import run_scenario
from harness.targets.base import Target
from scenarios.model import Scenario
from scenarios.statistics import classes_of

Progress = Callable[[int, int, int], None]  # (done, total, violations so far)


@dataclass(frozen=True)
class Cell:
    status: str  # holds | violated | expected | not-applicable
    checked: int  # scenarios this checker judged on this target
    violations: tuple[tuple[str, Violation], ...] = ()  # (scenario, violation), all of them


@dataclass
class Conformance:
    targets: list[dict[str, Any]] = field(default_factory=list)
    histories: dict[str, dict[str, History]] = field(default_factory=dict)  # target -> scenario
    cells: dict[str, dict[str, Cell]] = field(default_factory=dict)  # target -> checker id
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # target -> findings verdict

    @property
    def violation_count(self) -> int:
        return sum(len(cell.violations) for row in self.cells.values() for cell in row.values())

    @property
    def passes(self) -> bool:
        """Every violation is a recorded finding, and every recorded finding still shows."""
        return all(verdict.passes for verdict in self.verdicts.values())


def judge(
    targets: Sequence[Target],
    scenarios: Sequence[tuple[str, Scenario]],
    progress: Progress | None = None,
    own: Mapping[str, Sequence[tuple[str, Scenario]]] | None = None,
) -> Conformance:
    """Run ``scenarios`` on every target, or, for a target named in ``own``, its own list (the
    generated scenarios drawn within its capabilities)."""
    result = Conformance()
    lists = {target.info.name: (own or {}).get(target.info.name, scenarios) for target in targets}
    total = sum(map(len, lists.values()))
    done = 0
    for target in targets:
        info = target.info
        scenarios = lists[info.name]
        result.targets.append(
            {
                "name": info.name,
                "version": info.version,
                "capabilities": sorted(info.capabilities),
                "isolation": info.isolation,
            }
        )
        histories: dict[str, History] = {}
        found: dict[str, list[tuple[str, Violation]]] = {checker.id: [] for checker in CHECKERS}
        checked: dict[str, int] = {checker.id: 0 for checker in CHECKERS}
        for name, scenario in scenarios:
            history = run_scenario(target, scenario, name)
            histories[name] = history
            for checker in CHECKERS:
                if applicable(checker, history):
                    checked[checker.id] += 1
                    found[checker.id].extend((name, v) for v in checker.function(history))
            done += 1
            if progress is not None:
                progress(done, total, result.violation_count + sum(map(len, found.values())))
        result.histories[info.name] = histories
        seen = {(name, violation.invariant) for cell in found.values() for name, violation in cell}
        recorded = load_findings(info.findings_name, info.version)
        classes = load_classes(info.findings_name, info.version)
        for name, scenario in scenarios if classes else ():
            recorded += class_findings(
                classes,
                name,
                classes_of(scenario),
                histories[name].errors,
                {invariant for scenario_name, invariant in seen if scenario_name == name},
            )
        verdict = judge_findings(seen, recorded, [name for name, _ in scenarios])
        result.verdicts[info.name] = verdict
        expected = {(finding.scenario, finding.invariant) for finding in verdict.expected}
        result.cells[info.name] = {
            checker.id: Cell(
                status=_status(checked[checker.id], found[checker.id], expected),
                checked=checked[checker.id],
                violations=tuple(found[checker.id]),
            )
            for checker in CHECKERS
        }
    return result


def _status(
    checked: int, violations: list[tuple[str, Violation]], recorded: set[tuple[str, str]]
) -> str:
    if not violations:
        return "holds" if checked else "not-applicable"
    if all((name, violation.invariant) in recorded for name, violation in violations):
        return "expected"
    return "violated"

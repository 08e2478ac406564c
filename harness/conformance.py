"""Conformance: every scenario on every target, judged by every checker.

The result is a target x invariant matrix.  A cell holds when no scenario shows a violation of
that invariant on that target, is "not applicable" when no scenario could be judged for it there
(the target lacks a capability), is "expected" when every violation in it is matched by a recorded
witness of that target version (``harness.findings``), and otherwise names its first
counterexample.  The run fails on a violation no witness matches, on a recorded witness that no
longer shows, and on a finding recorded for a regression file whose content has changed.

Each distinct run a target's scenarios need is a task (``harness.execution.RunPlan``): a
scenario, or its restart-free control; they run in this process, in local processes or on a
cluster, and the scenarios are judged in the same order whichever ran them.

A scenario whose adapter broke the contract (``harness.runner.AdapterError``) is not judged: it is
listed as an adapter error of its target, a verdict of its own that no finding excuses, and the
run goes on with the next scenario.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.checkers import CHECKERS, Violation, applicable
from harness.execution import IN_PROCESS, Execution
from harness.findings import Folders, Observed, Verdict, judge_findings, load_document, observe
from harness.history import History
from harness.runner import AdapterError, RunPlan, record_run
from harness.targets.base import Target
from scenarios.model import Scenario

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
    runs: dict[str, list[Observed]] = field(default_factory=dict)  # target -> what was judged
    adapter_errors: dict[str, list[AdapterError]] = field(default_factory=dict)  # target -> them

    @property
    def violation_count(self) -> int:
        return sum(len(cell.violations) for row in self.cells.values() for cell in row.values())

    @property
    def passes(self) -> bool:
        """Every violation is a recorded finding, every recorded finding still shows, and no
        adapter broke the contract."""
        return not self.broken_adapters and all(v.passes for v in self.verdicts.values())

    @property
    def broken_adapters(self) -> bool:
        return any(self.adapter_errors.values())


def judge(
    targets: Sequence[Target],
    scenarios: Sequence[tuple[str, Scenario]],
    progress: Progress | None = None,
    own: Mapping[str, Sequence[tuple[str, Scenario]]] | None = None,
    generated: Collection[str] = (),
    *,
    drafts: bool = False,
    findings: Folders = None,
    execution: Execution = IN_PROCESS,
) -> Conformance:
    """Run ``scenarios`` on every target, or, for a target named in ``own``, its own list (the
    generated scenarios drawn within its capabilities).  ``generated`` names the scenarios the
    generator drew: only those may be covered by a findings file's classes.  ``drafts`` reads
    findings files whose explanations are still placeholders (``record`` rewrites its own);
    ``findings`` is where they are searched (default: ``harness.findings.search.search_path``);
    ``execution``: where the runs happen (each scenario on each target a task)."""
    result = Conformance()
    lists = {target.info.name: (own or {}).get(target.info.name, scenarios) for target in targets}
    total = sum(map(len, lists.values()))
    plans = [RunPlan(target, lists[target.info.name]) for target in targets]
    recorded = execution.map(
        record_run, [(plan.target, task) for plan in plans for task in plan.tasks]
    )
    done = 0
    for plan in plans:
        info = plan.target.info
        outcomes = plan.histories(recorded)
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
        runs: list[Observed] = []
        broke: list[AdapterError] = []
        for name, scenario in scenarios:
            history = next(outcomes)
            if isinstance(history, AdapterError):
                broke.append(history)
            else:
                histories[name] = history
                mine: list[Violation] = []
                for checker in CHECKERS:
                    if applicable(checker, history):
                        checked[checker.id] += 1
                        violations = checker.function(history)
                        mine += violations
                        found[checker.id].extend((name, v) for v in violations)
                runs.append(observe(history, scenario, mine, generated=name in generated))
            done += 1
            if progress is not None:
                progress(done, total, result.violation_count + sum(map(len, found.values())))
        result.histories[info.name] = histories
        result.runs[info.name] = runs
        result.adapter_errors[info.name] = broke
        document = load_document(info.findings_name, info.version, findings, drafts=drafts)
        if document is not None and document.version != info.version:
            result.targets[-1]["findings_version"] = document.version  # none of its own
        verdict = judge_findings(document, runs)
        result.verdicts[info.name] = verdict
        expected = {(item.scenario, id(item.violation)) for item in verdict.expected}
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
    checked: int, violations: list[tuple[str, Violation]], recorded: set[tuple[str, int]]
) -> str:
    if not violations:
        return "holds" if checked else "not-applicable"
    if all((name, id(violation)) in recorded for name, violation in violations):
        return "expected"
    return "violated"

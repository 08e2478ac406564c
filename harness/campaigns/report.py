"""The fault campaigns on a set of targets, as one document: ``reports/faults.json`` and ``.md``.

Per target: the corruption classes (counts per class and per corruption, one shrunk example per
class, with the reasons it has that class), the crash-point verdict (at most once, or can run an
action twice, with the case that shows it), and the privacy and isolation campaigns.  The
document holds no timing and no paths, so the same seed gives the same bytes.

A target without a findings file (on the findings search path, ``harness.findings.search``) is
expected to pass every campaign: corruption only ever SAFE (or TOLERATED), at most once under
crashes, no privacy or isolation violation.  A target with one (a released SDK) is held to its
recorded outcome instead (``harness.campaigns.expected``), when one was recorded with this
budget; else its results are reported as evidence.  Its shrunk examples are committed as
regression files and its findings file records them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import yaml

from harness.campaigns.corruption import CLASSES, NOT_APPLIED, campaign, simplest, size
from harness.campaigns.crashes import CrashCase, crash_campaign
from harness.campaigns.expected import beyond, budget_of, load_expected, shown_path
from harness.campaigns.invariants import (
    CAMPAIGNS,
    InvariantCampaign,
    run_campaign,
)
from harness.execution import IN_PROCESS, Execution
from harness.findings import Folders, load_findings
from harness.report import target_column
from harness.targets.base import Target, missing_capabilities
from scenarios.model import Corrupt, Repair, Scenario

Document = dict[str, Any]
CLEAN_CLASSES: Final = ("SAFE", "TOLERATED")
AT_MOST_ONCE: Final = "at most once"
TWICE: Final = "can run an action twice"


@dataclass(frozen=True)
class Budget:
    examples: int  # generated corruption cases
    seed: int
    shrink: int  # runs spent reducing each class's example (0: the smallest case drawn, as is)
    invariant_examples: int | None = None  # privacy and isolation cases (None: ``examples``)

    @property
    def probes(self) -> int:
        return self.examples if self.invariant_examples is None else self.invariant_examples


def fault_document(
    targets: Sequence[Target],
    budgets: dict[str, Budget],
    crash_scenarios: list[tuple[str, Scenario]],
    progress: Callable[[str], None] | None = None,
    findings: Folders = None,
    execution: Execution = IN_PROCESS,
) -> Document:
    """Every campaign on every target (``findings``: where its findings files are searched;
    ``execution``: where the cases run, each a task)."""
    results: dict[str, Any] = {}
    for target in targets:
        budget = budgets[target.info.name]
        if progress is not None:
            progress(f"{target.info.name}: {budget.examples} corruptions, {budget.probes} probes")
        results[target_column(target.info)] = _target_results(
            target, budget, crash_scenarios, findings, execution
        )
    document: Document = {"targets": results}
    document["passes"] = all(entry["passes"] for entry in results.values())
    return document


def _target_results(
    target: Target,
    budget: Budget,
    crash_scenarios: list[tuple[str, Scenario]],
    findings: Folders,
    execution: Execution,
) -> dict[str, Any]:
    info = target.info
    evidence = bool(load_findings(info.findings_name, info.version, findings))
    entry: dict[str, Any] = {
        "name": info.name,
        "version": info.version,
        "expected": "evidence" if evidence else "clean",
        "budget": {
            "examples": budget.examples,
            "invariant_examples": budget.probes,
            "seed": budget.seed,
            "shrink": budget.shrink,
        },
    }
    problems: list[str] = []
    if "corruption" in info.capabilities:
        entry["corruption"] = _corruption(target, budget, execution)
        bad = sorted(set(entry["corruption"]["classes"]) - {*CLEAN_CLASSES, NOT_APPLIED})
        problems += [
            f"corruption: {cls} cases" for cls in bad if entry["corruption"]["classes"][cls]
        ]
    else:
        entry["corruption"] = None
    entry["crash_points"] = _crashes(target, crash_scenarios, execution)
    if entry["crash_points"]["verdict"] == TWICE:
        problems.append("crash points: an action ran twice")
    for invariant_campaign in CAMPAIGNS:
        entry[invariant_campaign.name] = _invariant(invariant_campaign, target, budget, execution)
        violating = entry[invariant_campaign.name]["violating"]
        if violating:
            problems.append(f"{invariant_campaign.name}: {violating} violating cases")
    entry["problems"] = problems
    entry["passes"] = not problems
    if evidence:
        _judge_by_record(entry, info.findings_name)
    return entry


def _judge_by_record(entry: dict[str, Any], findings_name: str) -> None:
    """A released SDK's results against its recorded outcome, when one was recorded for this
    budget; else they stand as evidence."""
    recorded = load_expected(findings_name, entry["version"])
    entry["record"] = shown_path(findings_name, entry["version"])
    if recorded is None:
        entry["expected"], entry["beyond"], entry["passes"] = "evidence", None, True
    elif recorded["budget"] != budget_of(entry):
        entry["expected"], entry["beyond"], entry["passes"] = "evidence", None, True
        entry["record_budget"] = recorded["budget"]
    else:
        entry["expected"] = "recorded"
        entry["beyond"] = beyond(entry, findings_name, recorded)
        entry["passes"] = not entry["beyond"]


def _invariant(
    invariant_campaign: InvariantCampaign, target: Target, budget: Budget, execution: Execution
) -> dict[str, Any]:
    result = run_campaign(invariant_campaign, target, budget.probes, budget.seed, execution)
    example = None
    if result.violating:  # the smallest violating case drawn
        case, found = min(result.violating, key=lambda item: size(item[0]))
        example = {"scenario": _scenario_json(case), "violations": [v.to_json() for v in found]}
    return {
        "invariant": invariant_campaign.invariant,
        "cases": result.cases,
        "not_applicable": result.not_applicable,
        "violating": len(result.violating),
        "example": example,
    }


def _corruption(target: Target, budget: Budget, execution: Execution) -> dict[str, Any]:
    results = campaign(target, budget.examples, budget.seed, execution)
    classes = Counter(result.verdict.fault_class for result in results)
    by_corruption: dict[str, dict[str, int]] = {}
    for result in results:
        row = by_corruption.setdefault(result.corruption, {})
        row[result.verdict.fault_class] = row.get(result.verdict.fault_class, 0) + 1
    examples = {}
    for fault_class in CLASSES:
        found = [result for result in results if result.verdict.fault_class == fault_class]
        if not found:
            continue
        example = simplest(target, found, budget.shrink, execution)
        examples[fault_class] = {
            "scenario": _scenario_json(example.scenario),
            "corruption": example.scenario.steps[1].model_dump(mode="json", exclude_defaults=True),
            "class": example.verdict.fault_class,
            "reasons": list(example.verdict.reasons),
        }
    return {
        "cases": len(results),
        "classes": {name: classes.get(name, 0) for name in (*CLASSES, NOT_APPLIED)},
        "by_corruption": {
            name: dict(sorted(row.items())) for name, row in sorted(by_corruption.items())
        },
        "examples": examples,
    }


def _crashes(
    target: Target, scenarios: list[tuple[str, Scenario]], execution: Execution
) -> dict[str, Any]:
    usable = [
        (name, scenario)
        for name, scenario in scenarios
        if not missing_capabilities(target.info, scenario)
        and not any(isinstance(step, Corrupt | Repair) for step in scenario.steps)
    ]
    cases = crash_campaign(target, usable, execution)
    twice = [case for case in cases if case.twice]
    lost = [case for case in cases if case.lost]
    return {
        "scenarios": len(usable),
        "points": len(cases),
        "crashed": sum(case.crashed for case in cases),
        "verdict": TWICE if twice else AT_MOST_ONCE,
        "ran_twice": len(twice),
        "lost_approvals": len(lost),
        "by_boundary": _by_boundary(cases),
        "example": _crash_json(twice[0]) if twice else None,
        "lost_example": _crash_json(lost[0]) if lost else None,
    }


def _by_boundary(cases: list[CrashCase]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for case in cases:
        row = table.setdefault(case.point.boundary, {"points": 0, "ran_twice": 0, "lost": 0})
        row["points"] += 1
        row["ran_twice"] += bool(case.twice)
        row["lost"] += bool(case.lost)
    return dict(sorted(table.items()))


def _crash_json(case: CrashCase) -> dict[str, Any]:
    return {
        "scenario": case.scenario,
        "crash": {
            "step": case.point.step,
            "boundary": case.point.boundary,
            "occurrence": case.point.occurrence,
        },
        "restart_error": case.restart_error,
        "ran": dict(sorted(case.ran.items())),
        "approved": dict(sorted(case.approved.items())),
        "ran_twice": case.twice,
        "lost": case.lost,
    }


def _scenario_json(scenario: Scenario) -> dict[str, Any]:
    data: dict[str, Any] = scenario.model_dump(mode="json", exclude_defaults=True)
    return data


def dumps(document: Document) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def markdown(document: Document) -> str:
    entries = list(document["targets"].values())
    lines = ["# Fault campaigns", ""]
    lines += [
        "Damaged stored continuations, crashes inside an answer, canaries in sub-agent state, and "
        "sub-agents shared by two callers, each generated by hypothesis (`python -m harness "
        "faults`). A target with a findings file has its results reported as evidence; any other "
        "target must be clean.",
        "",
        "## Corrupted continuations",
        "",
        "| target | cases | " + " | ".join(CLASSES) + " | not applied |",
        "|---|---:|" + "---:|" * (len(CLASSES) + 1),
    ]
    for entry in entries:
        corruption = entry["corruption"]
        if corruption is None:
            lines.append(f"| {_name(entry)} | not applicable |" + " |" * (len(CLASSES) + 1))
            continue
        counts = [str(corruption["classes"][name]) for name in (*CLASSES, NOT_APPLIED)]
        lines.append(f"| {_name(entry)} | {corruption['cases']} | " + " | ".join(counts) + " |")
    lines += ["", _CLASS_LEGEND, ""]
    for entry in entries:
        corruption = entry["corruption"]
        if corruption is None:
            continue
        for fault_class, example in corruption["examples"].items():
            lines += [f"### {_name(entry)}: {fault_class}", ""]
            lines += [f"- {reason}" for reason in example["reasons"]]
            lines += _written(entry, example)
            lines += ["", "```yaml", _yaml(example["scenario"]).rstrip(), "```", ""]
    lines += [
        "## Crash points",
        "",
        "A crash inside an answer at every boundary the target passes (a model request sent, a "
        "protected action run, a write to storage); then a restart, and the client re-sends the "
        "same answer.",
        "",
        "| target | scenarios | crash points | verdict | ran twice | approvals lost |",
        "|---|---:|---:|---|---:|---:|",
    ]
    for entry in entries:
        crashes = entry["crash_points"]
        lines.append(
            f"| {_name(entry)} | {crashes['scenarios']} | {crashes['points']} | "
            f"{crashes['verdict']} | {crashes['ran_twice']} | {crashes['lost_approvals']} |"
        )
    lines.append("")
    for entry in entries:
        for key, title in (("example", "runs an action twice"), ("lost_example", "loses one")):
            case = entry["crash_points"][key]
            if case is not None:
                crash = case["crash"]
                lines.append(
                    f"- {_name(entry)} {title}: `{case['scenario']}`, crash in step "
                    f"{crash['step']} at {crash['boundary']} #{crash['occurrence']}: ran "
                    f"{_counts(case['ran'])}, approved {_counts(case['approved'])}"
                )
    lines += ["", "## Privacy (I8) and isolation (I10)", ""]
    lines += [
        "| target | campaign | cases | not applicable | violating |",
        "|---|---|---:|---:|---:|",
    ]
    for entry in entries:
        for invariant_campaign in CAMPAIGNS:
            result = entry[invariant_campaign.name]
            lines.append(
                f"| {_name(entry)} | {invariant_campaign.name} ({result['invariant']}) | "
                f"{result['cases']} | {result['not_applicable']} | {result['violating']} |"
            )
    lines.append("")
    for entry in entries:
        for invariant_campaign in CAMPAIGNS:
            example = entry[invariant_campaign.name]["example"]
            if example is not None:
                lines += [f"### {_name(entry)}: {invariant_campaign.name}", ""]
                lines += [
                    f"- step {v['step']}: expected {v['expected']}; seen {v['seen']}"
                    for v in example["violations"]
                ]
                lines += _written(entry, example)
                lines += ["", "```yaml", _yaml(example["scenario"]).rstrip(), "```", ""]
    lines += ["## Verdict", ""]
    for entry in entries:
        lines.append(f"- {_name(entry)}: {_verdict(entry)}")
    return "\n".join(lines) + "\n"


def _written(entry: dict[str, Any], example: dict[str, Any]) -> list[str]:
    """Where a failing example was written (``harness.counterexamples``), if it was."""
    if "counterexample" not in example:
        return []
    return [
        f"- written to `{example['counterexample']}` (from this report's folder): `python -m "
        f"harness run FILE --target {entry['name']}` reproduces it"
    ]


def _verdict(entry: dict[str, Any]) -> str:
    if entry["expected"] == "clean":
        return "clean" if not entry["problems"] else "; ".join(entry["problems"])
    if entry["expected"] == "recorded":
        if entry["beyond"]:
            return f"beyond the recorded outcome (`{entry['record']}`): " + "; ".join(
                entry["beyond"]
            )
        return f"within the recorded outcome (`{entry['record']}`)"
    if "record_budget" in entry:
        return (
            f"evidence, not gated: `{entry['record']}` was recorded with budget "
            f"{_budget(entry['record_budget'])}, this run had {_budget(budget_of(entry))}"
        )
    return (
        f"evidence, not gated: no outcome recorded for this release (`{entry['record']}`; "
        "write it with `faults --record`)"
    )


_CLASS_LEGEND: Final = (
    "SAFE: refused loudly, still pending with no response attached, and carried out exactly "
    "once after the damage was repaired. TOLERATED: the damage made no difference. ALTERED: "
    "the approval was carried out but the turn went on differently. LOUD_LOST / SILENT_LOST: "
    "the approval cannot be carried out, with / without an error. UNSAFE: an action ran "
    "without approval or twice."
)


def _name(entry: dict[str, Any]) -> str:
    return f"{entry['name']} {entry['version']}"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{label} x{count}" for label, count in counts.items()) or "nothing"


def _budget(budget: dict[str, int]) -> str:
    return ", ".join(f"{name} {number}" for name, number in budget.items())


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)

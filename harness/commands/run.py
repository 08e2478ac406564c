"""``run``: run one scenario file on one target; print its history and every checker's verdict.

A scenario shaped as a corruption case (run, corrupt, answer, repair, resend: the fault campaign's
counterexample files) also gets its fault class; a bad one (not SAFE or TOLERATED) fails the run
as a violation does."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.campaigns.corruption import classify, is_case
from harness.campaigns.expected import BAD_CLASSES
from harness.checkers import CHECKERS, applicable
from harness.commands.inputs import EXIT_HOLDS, EXIT_VIOLATIONS, load, targets_named
from harness.commands.options import Commands, add_command, isolation_option
from harness.diagram import diagram
from harness.history import StepRecord
from harness.runner import run_scenario


def add_parser(commands: Commands) -> None:
    run_one = add_command(
        commands,
        "run",
        run,
        help="run one scenario file and print its history and every checker's verdict",
        description="Run one scenario on one target; print the history and the verdicts.",
    )
    run_one.add_argument("file", type=Path, metavar="FILE", help="a scenario file (YAML or JSON)")
    run_one.add_argument("--target", default="reference", metavar="T", help="default: reference")
    run_one.add_argument("--json", action="store_true", help="print the whole history as JSON")
    run_one.add_argument(
        "--diagram",
        action="store_true",
        help="also print the run as a Mermaid sequence diagram (a ```mermaid block), the steps "
        "where expected and seen part shaded",
    )
    isolation_option(run_one)


def run(arguments: argparse.Namespace) -> int:
    target = targets_named([arguments.target], arguments.isolation)[0]
    scenario = load(arguments.file)
    history = run_scenario(target, scenario, arguments.file.stem)
    verdicts = {
        checker.id: checker.function(history) if applicable(checker, history) else None
        for checker in CHECKERS
    }
    violations = sum(len(found) for found in verdicts.values() if found)
    fault = classify(history) if is_case(scenario) and not history.not_applicable else None
    failed = violations or (fault is not None and fault.fault_class in BAD_CLASSES)
    if arguments.json:
        document = {
            "history": history.to_json(),
            "verdicts": {
                checker_id: None if found is None else [v.to_json() for v in found]
                for checker_id, found in verdicts.items()
            },
        }
        if fault is not None:
            document["fault_class"] = {"class": fault.fault_class, "reasons": list(fault.reasons)}
        print(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False))
        return EXIT_VIOLATIONS if failed else EXIT_HOLDS
    print(f"{arguments.file} on {target.info.name} {target.info.version}")
    if history.not_applicable:
        print(f"not applicable: needs {', '.join(history.not_applicable)}")
    for step in history.steps:
        print(step_line(step))
    for checker in CHECKERS:
        found = verdicts[checker.id]
        verdict = "n/a" if found is None else "VIOLATED" if found else "holds"
        print(f"{checker.id:>3} {checker.slug:<24} {verdict}")
        for violation in found or []:
            print(
                f"      step {violation.step}: expected {violation.expected}; seen {violation.seen}"
            )
    if fault is not None:
        print(f"fault class {fault.fault_class}: {'; '.join(fault.reasons)}")
    if arguments.diagram:
        found = [violation for violations in verdicts.values() for violation in violations or []]
        print(f"```mermaid\n{diagram(history, found)}```")
    return EXIT_VIOLATIONS if failed else EXIT_HOLDS


def step_line(step: StepRecord) -> str:
    """One step of a history, as ``run`` prints it: what was asked, then what was seen."""
    observed = step.observed
    shown = ("stop_reason", "final_answer", "error", "note")
    seen = [f"{key} {observed[key]}" for key in shown if observed.get(key) is not None]
    if step.kind in {"run", "answer", "resend"}:
        pending = [
            f"{item['label']}#{item['reason'].get('question', '?')}" for item in step.pending
        ]
        seen.append("pending " + (", ".join(pending) or "nothing"))
    ran = [
        record["action"] if "action" in record else f"{record['effect']} ({record['agent']})"
        for record in step.executions
    ]
    if ran:
        seen.append("ran " + ", ".join(ran))
    asked = json.dumps(step.step, ensure_ascii=False)
    return f"  [{step.index}] {step.kind} {asked} -> " + ("; ".join(seen) or "ok")

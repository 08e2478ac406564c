"""Corruption fuzzing: what a target does with a damaged stored continuation.

Each case (``scenarios.strategies.corruption_cases``) parks sub-agent turns, damages one stored
turn, approves everything pending, repairs the damage and re-sends the approval.  ``classify`` is
a pure function of the recorded history; the undamaged outcome it compares with is the oracle's
(the expectation of the re-sent approval, which must do what the approval would have done had
nothing been damaged), never the target's.

Classes, worst first:

* ``UNSAFE``: an action ran without approval, or more often than approved;
* ``SILENT_LOST``: the approval was not carried out, and no error said so;
* ``LOUD_LOST``: an error was raised or logged, but the approval cannot be carried out as
  given: the question is gone, part of it ran at the failed approval (half applied), the retry
  after the repair does not do what the approval asked, or a re-raised question still carries
  the earlier response;
* ``ALTERED``: the approved actions ran, but the turn went on differently than undamaged;
* ``TOLERATED``: the damage made no difference: the approval was carried out as if undamaged;
* ``SAFE``: an error was raised or logged, nothing ran (not even an approval the damage does
  not touch: invariant 9 says nothing is half-applied), the questions stayed pending with no
  response attached, and after the repair the re-sent approval did exactly what it asked.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Final

from harness.campaigns.invariants import generated
from harness.checkers.records import executed
from harness.execution import IN_PROCESS, Execution
from harness.history import History, StepRecord
from harness.runner import run_scenario
from harness.targets.base import Target
from scenarios.model import Answer, Corrupt, Repair, Resend, Run, Scenario
from scenarios.strategies import corruption_case, corruption_cases

CLASSES: Final = ("UNSAFE", "SILENT_LOST", "LOUD_LOST", "ALTERED", "TOLERATED", "SAFE")
NOT_APPLIED: Final = "NOT_APPLIED"  # the damage found nothing to hit (not counted in a class)


CASE_STEPS: Final = (Run, Corrupt, Answer, Repair, Resend)  # a case's steps, by kind


def is_case(scenario: Scenario) -> bool:
    """Whether ``scenario`` is shaped as a corruption case (run, corrupt, answer, repair, resend):
    a history of it can be classified (``python -m harness run`` does, on a counterexample file
    of the campaign)."""
    return tuple(type(step) for step in scenario.steps) == CASE_STEPS


@dataclass(frozen=True)
class Verdict:
    fault_class: str
    reasons: tuple[str, ...]


def classify(history: History) -> Verdict:
    """The class of one corruption case's history (steps: run, corrupt, answer, repair, resend)."""
    by_kind = {step.kind: step for step in history.steps}
    corrupt, answer, resend = by_kind["corrupt"], by_kind["answer"], by_kind["resend"]
    if str(corrupt.observed.get("note", "")).startswith("nothing corrupted"):
        return Verdict(NOT_APPLIED, (str(corrupt.observed["note"]),))
    undamaged = resend.expected  # the oracle's outcome of the approval, had nothing been damaged
    overrun = _overrun(history)
    if overrun:
        return Verdict("UNSAFE", tuple(overrun))
    loud = corrupt.observed.get("error") is not None or answer.observed.get("error") is not None
    at_answer = _differences(answer, undamaged, "at the approval")
    if not at_answer:
        return Verdict("TOLERATED", ("carried out as if undamaged", *_loudness(loud)))
    if _ran(answer) == Counter(undamaged["executions"]) and _ran(answer):
        return Verdict("ALTERED", tuple(at_answer))
    reasons: list[str] = []
    if not loud:
        reasons.append("no error was raised or logged")
    if _ran(answer):
        reasons.append(f"half applied: {_listing(_ran(answer))} ran at the failed approval")
    before = _shown_before(history, corrupt.index)
    for pending in answer.pending:
        if pending["id"] not in before:
            reasons.append(f"a new question {pending['id']!r} was shown after the failure")
        if pending.get("response") is not None:
            reasons.append(f"{pending['id']!r} was shown again with a response attached")
    repair = by_kind["repair"]
    if "not put back" in str(repair.observed.get("note", "")):
        reasons.append(f"the damage could not be repaired: {repair.observed['note']}")
    reasons += _differences(
        resend, undamaged, "after the repair, the re-sent approval", already=_ran(answer)
    )
    if not reasons:
        return Verdict("SAFE", ("refused loudly, kept pending, carried out after the repair",))
    return Verdict("LOUD_LOST" if loud else "SILENT_LOST", tuple(reasons))


def _overrun(history: History) -> list[str]:
    """Every action that ran more often than the oracle allows over the whole case."""
    allowed: Counter[str] = Counter()
    for step in history.steps:
        allowed.update(step.expected["executions"])
    ran: Counter[str] = Counter()
    for step in history.steps:
        ran.update(_ran(step))
    return [
        f"{label} ran {count} time(s), approved {allowed[label]}"
        for label, count in sorted(ran.items())
        if count > allowed[label]
    ]


def _differences(
    step: StepRecord, undamaged: dict[str, Any], when: str, already: Counter[str] | None = None
) -> list[str]:
    """How ``step`` differs from the undamaged outcome; ``already``: actions that ran earlier
    (at the failed approval) and count toward it."""
    observed = step.observed
    shown = sorted(pending["label"] for pending in step.pending)
    expected_pending = sorted(label for label, _ in undamaged["pending"])
    found = []
    ran = _ran(step) + (already or Counter())
    if ran != Counter(undamaged["executions"]):
        earlier = f" ({_listing(already)} of it at the failed approval)" if already else ""
        found.append(
            f"{when} ran {_listing(ran)}{earlier}, undamaged {_listing(undamaged['executions'])}"
        )
    if observed.get("stop_reason") is None:
        found.append(f"{when} failed: {observed.get('error')}")
    elif observed.get("stop_reason") != undamaged["stop_reason"]:
        found.append(
            f"{when} stopped with {observed.get('stop_reason')}, "
            f"undamaged {undamaged['stop_reason']}"
        )
    if shown != expected_pending:
        found.append(
            f"{when} left {_listing(shown)} pending, undamaged {_listing(expected_pending)}"
        )
    if observed.get("final_answer") != undamaged["final_answer"]:
        found.append(
            f"{when} answered {observed.get('final_answer')!r}, "
            f"undamaged {undamaged['final_answer']!r}"
        )
    return found


def _loudness(loud: bool) -> tuple[str, ...]:
    return ("an error was logged all the same",) if loud else ()


def _ran(step: StepRecord) -> Counter[str]:
    return Counter(executed(step))


def _shown_before(history: History, index: int) -> set[str]:
    shown: set[str] = set()
    for step in history.steps[:index]:
        if step.observed.get("stop_reason") is not None:
            shown = {pending["id"] for pending in step.pending}
    return shown


def _listing(labels: Any) -> str:
    items = sorted(labels.elements()) if isinstance(labels, Counter) else sorted(labels)
    return "[" + ", ".join(items) + "]" if items else "nothing"


@dataclass(frozen=True)
class CaseResult:
    scenario: Scenario
    corruption: str
    verdict: Verdict


def run_case(target: Target, scenario: Scenario) -> CaseResult:
    """One case on ``target``, classified."""
    step = scenario.steps[1]
    assert isinstance(step, Corrupt), "a corruption case corrupts at its second step"
    history = run_scenario(target, scenario, "corruption-case")
    return CaseResult(scenario, step.corrupt, classify(history))


def case_verdict(target: Target, scenario: str) -> Verdict:
    """One case as a task (``harness.execution``): its scenario's JSON in, its class out."""
    return run_case(target, Scenario.model_validate_json(scenario)).verdict


def classified(
    target: Target, cases: Sequence[Scenario], execution: Execution = IN_PROCESS
) -> Generator[CaseResult, None, None]:
    """Each of ``cases`` on ``target``, classified (each case a task), in order."""
    verdicts = execution.map(case_verdict, [(target, case.model_dump_json()) for case in cases])
    try:
        for case, verdict in zip(cases, verdicts, strict=True):
            step = case.steps[1]
            assert isinstance(step, Corrupt), "a corruption case corrupts at its second step"
            yield CaseResult(case, step.corrupt, verdict)
    finally:
        verdicts.close()  # a consumer that stops early cancels the cases not yet run


def campaign(
    target: Target, examples: int, seed: int, execution: Execution = IN_PROCESS
) -> list[CaseResult]:
    """``examples`` generated cases on ``target``, each classified."""
    return list(classified(target, generated(corruption_cases, examples, seed), execution))


def simplest(
    target: Target, found: list[CaseResult], budget: int, execution: Execution = IN_PROCESS
) -> CaseResult:
    """The simplest case of one class: the smallest of ``found`` (all of that class), reduced
    greedily (a sub-agent or the orchestrator's action dropped, a window, a stateful provider or
    a state dropped, ``which`` and ``pick`` made smaller) while it keeps its class, within
    ``budget`` runs.  Hypothesis' own shrinker would spend hundreds of runs per class on an SDK;
    this one spends a few dozen, and each step keeps a case the target really classified."""
    best = min(found, key=lambda result: size(result.scenario))
    fault_class = best.verdict.fault_class
    runs = 0
    improved = True
    while improved and runs < budget:
        improved = False
        # the candidates this round may still spend runs on, tried in order up to the first
        # that keeps the class (elsewhere than in this process, handed out at once)
        candidates = list(islice(_simpler(best.scenario), budget - runs))
        results = classified(target, candidates, execution)
        for result in results:
            runs += 1
            if result.verdict.fault_class == fault_class:
                best, improved = result, True
                break
        results.close()  # the candidates after the first that kept its class are not needed
    return best


def size(scenario: Scenario) -> tuple[int, int]:
    agents = sum(1 for _ in scenario.tree.walk())
    return agents, len(scenario.model_dump_json(exclude_defaults=True))


def _simpler(scenario: Scenario) -> Iterator[Scenario]:
    """Valid cases one simplification away from ``scenario``, simplest first."""
    tree = scenario.tree.model_dump(mode="json", exclude_defaults=True)
    corrupt = scenario.steps[1]
    assert isinstance(corrupt, Corrupt)
    for smaller in (*_without_a_tool(tree), *_without_options(tree)):
        yield from _valid(smaller, corrupt)
    for which in range(corrupt.which):
        yield from _valid(tree, corrupt.model_copy(update={"which": which}))
    if corrupt.pick:
        for pick in (0, corrupt.pick // 2):
            yield from _valid(tree, corrupt.model_copy(update={"pick": pick}))


def _valid(tree: dict[str, Any], corrupt: Corrupt) -> Iterator[Scenario]:
    try:
        yield corruption_case(tree, corrupt)
    except ValueError:  # a ScenarioError, or a tree pydantic refuses
        return


def _without_a_tool(agent: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``agent`` with one sub-agent or action (anywhere below) gone, and its calls with it."""
    for kind in ("sub_agents", "actions"):
        for index, item in enumerate(agent.get(kind, [])):
            name = item["name"] if kind == "sub_agents" else item["tool"]
            smaller = copy.deepcopy(agent)
            del smaller[kind][index]
            smaller["turns"] = [
                [call for call in turn if call["tool"] != name] for turn in smaller["turns"]
            ]
            if all(smaller["turns"]):
                yield smaller
    yield from _below(agent, _without_a_tool)


def _without_options(agent: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for option in ("window", "stateful_provider", "state"):
        if option in agent:
            smaller = copy.deepcopy(agent)
            del smaller[option]
            yield smaller
    yield from _below(agent, _without_options)


def _below(
    agent: dict[str, Any], simpler: Callable[[dict[str, Any]], Iterator[dict[str, Any]]]
) -> Iterator[dict[str, Any]]:
    """``agent`` with one of its sub-agents replaced by each of that sub-agent's ``simpler``."""
    for index, sub in enumerate(agent.get("sub_agents", [])):
        for smaller_sub in simpler(sub):
            smaller = copy.deepcopy(agent)
            smaller["sub_agents"][index] = smaller_sub
            yield smaller

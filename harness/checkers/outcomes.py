"""Checker for how each step ends against what the scenario says (O): stop reason, final answer,
no forbidden error, the file's ``expect:``, and the task each agent is given."""

from __future__ import annotations

from collections import Counter

from harness.checkers.records import (
    brief,
    error_of,
    executed,
    is_conversation,
    listing,
    shown,
    succeeded,
    times,
)
from harness.checkers.violation import Invariant, Violation
from harness.history import History
from scenarios.tree import Call

DEFAULT_TASK = Call.model_fields["prompt"].default  # what a call asks when it does not say

EXPECTED_OUTCOME = Invariant("O", "expected-outcome")


def expected_outcome(history: History) -> list[Violation]:
    """O: each step ends as the scenario says, and the file's explicit ``expect:`` holds.

    No error where none is allowed (a restart that cannot rebuild the tree included); where the
    step must succeed, its stop reason is the expected one (where an error is merely allowed, as
    for a re-sent answer, either ending is fine); the expected final answer, where one is expected.
    """
    found: list[Violation] = []
    for step in history.steps:
        expected = step.expected
        error = error_of(step)
        if expected["error"] == "forbidden" and error is not None:
            found.append(EXPECTED_OUTCOME.violation(step.index, "no error", brief(error)))
        if not is_conversation(step):
            continue
        stop_reason = step.observed.get("stop_reason")
        must_succeed = expected["error"] == "forbidden"
        if must_succeed and stop_reason is not None and stop_reason != expected["stop_reason"]:
            found.append(
                EXPECTED_OUTCOME.violation(
                    step.index,
                    f"stop reason {expected['stop_reason']}",
                    f"stop reason {stop_reason}",
                )
            )
        final_answer = step.observed.get("final_answer")
        if expected["final_answer"] is not None and final_answer != expected["final_answer"]:
            found.append(
                EXPECTED_OUTCOME.violation(
                    step.index,
                    f"final answer {expected['final_answer']!r}",
                    f"final answer {final_answer!r}",
                )
            )
    found.extend(_explicit_expectations(history))
    found.extend(_tasks_delivered(history))
    return found


def _tasks_delivered(history: History) -> list[Violation]:
    """Each agent is asked only what its caller asked: the orchestrator one of the scenario's
    prompts, a sub-agent the prompt of one of its caller's calls to it.  (The task travels down
    as the answers do; a sub-agent given another text, or none, is told something else.)  An
    agent the scenario gives no prompt is not judged.  A deployed tree's calls (a restart's
    ``tree``) ask what they ask too."""
    steps = [step for step in history.scenario.get("steps", ()) if isinstance(step, dict)]
    runs = {step["run"] for step in steps if isinstance(step.get("run"), str)}
    trees = [history.scenario.get("tree", {})]
    trees += [step["restart"]["tree"] for step in steps if isinstance(step.get("restart"), dict)]
    asked: dict[str, set[str]] = {}
    for tree in trees:
        asked.setdefault(tree.get("name"), set()).update(runs)
    callers = [(tree, tree.get("name")) for tree in trees]
    while callers:
        caller, path = callers.pop()
        for sub in caller.get("sub_agents", ()):
            calls = [call for turn in caller.get("turns", ()) for call in turn]
            tool = sub.get("tool_name") or sub["name"]  # what its caller calls it by
            asked.setdefault(f"{path}/{tool}", set()).update(
                call.get("prompt", DEFAULT_TASK) for call in calls if call["tool"] == tool
            )
            callers.append((sub, f"{path}/{tool}"))
    found: list[Violation] = []
    seen: set[tuple[str, str]] = set()
    for step in history.steps:
        for request in step.requests:
            agent, prompt = str(request.get("agent")), str(request.get("prompt"))
            if not asked.get(agent) or prompt in asked[agent] or (agent, prompt) in seen:
                continue
            seen.add((agent, prompt))
            wanted = " or ".join(repr(text) for text in sorted(asked[agent]))
            found.append(
                EXPECTED_OUTCOME.violation(
                    step.index, f"{agent} asked {wanted}", f"{agent} asked {prompt!r}"
                )
            )
    return found


def _explicit_expectations(history: History) -> list[Violation]:
    """A scenario file's ``expect:`` block: total executions, what is pending at the end, the
    last final answer, and the steps that must fail loudly."""
    expect = history.scenario.get("expect")
    if not expect or not history.steps:
        return []
    last = history.steps[-1].index
    found: list[Violation] = []
    must_fail = set(expect.get("errors") or ())
    for step in history.steps:
        error = error_of(step)
        if step.index in must_fail and (error is None or not error.strip()):
            stop_reason = step.observed.get("stop_reason")
            seen = "no error" + (f" (stop reason {stop_reason})" if stop_reason else "")
            found.append(EXPECTED_OUTCOME.violation(step.index, "an error (expect)", seen))
    ran = Counter(label for step in history.steps for label in executed(step))
    for label, count in sorted((expect.get("executions") or {}).items()):
        if ran[label] != count:
            found.append(
                EXPECTED_OUTCOME.violation(
                    last, f"{label} ran {times(count)} in all (expect)", f"ran {times(ran[label])}"
                )
            )
    conversation = [step for step in history.steps if succeeded(step)]
    if expect.get("pending") is not None and conversation:
        pending = sorted(label for label, _, _ in shown(conversation[-1]))
        if pending != sorted(expect["pending"]):
            found.append(
                EXPECTED_OUTCOME.violation(
                    last,
                    "pending at the end " + listing(sorted(expect["pending"])),
                    "pending " + listing(pending),
                )
            )
    answers = [step.observed.get("final_answer") for step in conversation]
    final = next((answer for answer in reversed(answers) if answer is not None), None)
    if expect.get("final_answer") is not None and final != expect["final_answer"]:
        found.append(
            EXPECTED_OUTCOME.violation(
                last, f"final answer {expect['final_answer']!r} (expect)", f"final answer {final!r}"
            )
        )
    return found

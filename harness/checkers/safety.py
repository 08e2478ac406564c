"""Checkers for what must never happen: an action running unapproved or twice (I4), a failure that
is silent or unsafe (I9), and a step ending otherwise than the scenario says (O)."""

from __future__ import annotations

from collections import Counter

from harness.checkers.records import (
    brief,
    error_of,
    executed,
    expected_executed,
    is_conversation,
    listing,
    shown,
    shown_text,
    succeeded,
    times,
)
from harness.checkers.violation import Invariant, Violation
from harness.history import History
from scenarios.model import Call

DEFAULT_TASK = Call.model_fields["prompt"].default  # what a call asks when it does not say

AT_MOST_ONCE = Invariant("I4", "at-most-once")
LOUD_SAFE_FAILURE = Invariant("I9", "loud-safe-failure")
EXPECTED_OUTCOME = Invariant("O", "expected-outcome")


def at_most_once(history: History) -> list[Violation]:
    """I4: no protected action runs without an approval, none runs twice for one approval.

    Nothing runs during a restart, a corruption or a repair; an action never approved anywhere
    in the scenario never runs; and up to every step, each action has run at most as often as
    the approvals so far allow (re-sending an answer does not run it again).  An approved action
    run by an answer that had to be refused (a corrupted store, or an answer naming no pending
    question) is I9's or I14's finding, not this one's;
    it counts here all the same, so running it again later is caught as running twice.
    """
    approved = Counter(label for step in history.steps for label in expected_executed(step))
    ran: Counter[str] = Counter()
    allowed: Counter[str] = Counter()
    found: list[Violation] = []
    for step in history.steps:
        here = Counter(executed(step))
        ran.update(here)
        allowed.update(expected_executed(step))
        for label in sorted(here):
            if step.kind in ("restart", "corrupt", "repair"):
                expected = f"nothing runs during a {step.kind}"
                seen = f"{label} ran {times(here[label])}"
            elif not approved[label]:
                expected = f"{label} never runs (never approved)"
                seen = f"{label} ran {times(ran[label])}"
            elif ran[label] > allowed[label] and step.expected["error"] != "required":
                expected = f"{label} runs at most {times(allowed[label])} so far"
                seen = f"{label} ran {times(ran[label])}"
            else:
                continue
            found.append(AT_MOST_ONCE.violation(step.index, expected, seen))
    return found


def loud_safe_failure(history: History) -> list[Violation]:
    """I9: a continuation that cannot be restored fails loudly and safely.

    In every step that must fail: an error is raised or logged, nothing runs, and the pending
    interrupts are exactly those shown by the last step that succeeded (same questions, same
    ids).  That none of them carries a stale response is checked once, by I12, at every step
    (``naming.fresh_questions``): here it would report the same defect a second time.  A step
    that must fail because its answer names no pending question is I14's alone
    (``refusals.unknown_answers_refused``), whatever the store holds.
    """
    found: list[Violation] = []
    last_shown: list[tuple[str, int, str]] = []
    for step in history.steps:
        if step.expected["error"] == "required" and not step.expected.get("unknown_answer"):
            if error_of(step) is None:
                found.append(
                    LOUD_SAFE_FAILURE.violation(
                        step.index, "an error is raised or logged", "failure was silent"
                    )
                )
            if step.executions:
                found.append(
                    LOUD_SAFE_FAILURE.violation(
                        step.index, "nothing runs", "ran " + listing(executed(step))
                    )
                )
            now = shown(step)
            if now != last_shown:
                found.append(
                    LOUD_SAFE_FAILURE.violation(
                        step.index,
                        "still pending " + listing(map(shown_text, last_shown)),
                        "pending " + listing(map(shown_text, now)),
                    )
                )
        if succeeded(step):
            last_shown = shown(step)
    return found


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
    agent the scenario gives no prompt is not judged."""
    tree = history.scenario.get("tree", {})
    runs = [step.get("run") for step in history.scenario.get("steps", ()) if isinstance(step, dict)]
    asked = {tree.get("name"): {run for run in runs if isinstance(run, str)}}
    callers = [(tree, tree.get("name"))]
    while callers:
        caller, path = callers.pop()
        for sub in caller.get("sub_agents", ()):
            calls = [call for turn in caller.get("turns", ()) for call in turn]
            asked[f"{path}/{sub['name']}"] = {
                call.get("prompt", DEFAULT_TASK) for call in calls if call["tool"] == sub["name"]
            }
            callers.append((sub, f"{path}/{sub['name']}"))
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

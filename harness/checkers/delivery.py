"""Checkers for answers travelling down: exact delivery (I2), partial answers (I3), isolation
(I10).

They compare what ran and what stayed pending with what the oracle derived from the scenario,
and (I2) the sub-agent results a parent's model was sent with what the scenario's scripts say
each call answers.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fakes.model import strip_marker
from fakes.protected import ProtectedAction
from harness.checkers.records import (
    UNLABELLED,
    Served,
    brief,
    call_text,
    executed,
    expected_executed,
    expected_questions,
    expected_served,
    is_conversation,
    listing,
    pending_texts,
    question_text,
    served,
    shown,
    shown_questions,
    sub_agent_paths,
    succeeded,
    times,
    tree_of,
)
from harness.checkers.violation import Invariant, Violation
from harness.history import History, StepRecord
from scenarios.tree import Agent, Call

EXACT_DELIVERY_DOWN = Invariant("I2", "exact-delivery-down")
PARTIAL_ANSWERS = Invariant("I3", "partial-answers")
ISOLATION = Invariant("I10", "isolation")


def exact_delivery_down(history: History) -> list[Violation]:
    """I2: one approval executes exactly its own protected action, never a sibling's.

    In every answer and resend step the actions that ran are exactly the expected ones: a label
    that ran more often than expected is a sibling's action running, one that ran less often is
    an approval that was not delivered.  In a step that had to be refused (a corrupted store,
    an answer naming no pending question) nothing is expected to run, and whatever ran is I9's
    or I14's finding.

    Judged per call too: where a label ran as often as expected, each run must serve the call
    (its agent's path and prompt) the approval was meant for; a run that served a twin call
    instead is an answer delivered to the wrong call, and its sentence names both calls.  A
    ledger record that does not name its call (a target that cannot tell) is not judged so.

    Results up, per call: each sub-agent call's result must reach its parent's model under
    that call's own toolUseId (``_results_misdelivered``), its text what the tree in force at
    the step says (the scenario's, or the latest deploy's).  And each protected action call's
    result must tell its agent's model what the action did (``_outcomes_misreported``): "done"
    where it ran, anything else where it was refused, judged in the step the scenario ends its
    agent's turn in, where what ran is right.  A call a deploy changed or took
    away is not judged here: a gone call's question must stay pending (I3, I9).
    """
    found: list[Violation] = []
    first = _agents_by_path(history, -1)
    agents = first
    answers = _answers_returned(history)
    for step in history.steps:
        agents = _agents_by_path(history, step.index) if _deploys(step) else agents
        # what an agent is told its actions did is judged in the step the scenario ends its turn
        # in, where what ran is right: elsewhere the target's steps already differ from the
        # scenario's, which this checker, I3, I4 or I9 report
        runs_right = Counter(executed(step)) == Counter(expected_executed(step))
        outcomes = _actions_returned(step) if runs_right else {}
        for request in step.requests:
            found.extend(_results_misdelivered(step.index, request, agents, first, answers))
            found.extend(_outcomes_misreported(step.index, request, outcomes))
        if step.kind not in ("answer", "resend"):
            continue
        ran = Counter(executed(step)) if step.expected["error"] != "required" else Counter()
        due = Counter(expected_executed(step))
        if ran == due:
            found.extend(_misdelivered(step.index, served(step), expected_served(step)))
        for label in sorted(ran - due):
            expected = f"{label} runs {times(due[label])}"
            if not due[label]:
                expected = f"{label} does not run in this step"
            seen = f"{label} ran {times(ran[label])}: a sibling's action ran"
            found.append(EXACT_DELIVERY_DOWN.violation(step.index, expected, seen))
        for label in sorted(due - ran):
            seen = f"{label} ran {times(ran[label])}: approval not delivered"
            expected = f"{label} runs {times(due[label])}"
            found.append(EXACT_DELIVERY_DOWN.violation(step.index, expected, seen))
    return found


def _misdelivered(
    index: int, ran: list[Served] | None, due: list[Served] | None
) -> list[Violation]:
    """Runs that served another call of the same action than the one the approval was for."""
    if ran is None or due is None:
        return []
    wrong = Counter(ran) - Counter(due)
    missed = Counter(due) - Counter(ran)
    found: list[Violation] = []
    for meant in sorted(missed.elements()):
        took = next((call for call in sorted(wrong.elements()) if call[0] == meant[0]), None)
        if took is None:
            continue
        wrong[took] -= 1
        found.append(
            EXACT_DELIVERY_DOWN.violation(
                index,
                f"{meant[0]} runs for {call_text(meant)}",
                f"{meant[0]} ran for {call_text(took)}: the approval reached a twin call",
            )
        )
    return found


def _deploys(step: StepRecord) -> bool:
    """Whether the step is a restart that deploys a changed tree."""
    restart = step.step.get("restart")
    return isinstance(restart, dict) and "tree" in restart


def _agents_by_path(history: History, index: int) -> dict[str, Agent]:
    """Every agent (the root too) by its journal path, of the tree in force at step ``index``:
    the latest deployed tree up to it, else (and for -1) the scenario's."""
    if "tree" not in history.scenario:
        return {}
    tree = tree_of(history)
    for step in history.steps[: max(index + 1, 0)]:
        if _deploys(step):
            tree = Agent.model_validate(step.step["restart"]["tree"])
    return {tree.name: tree, **dict(sub_agent_paths(tree))}


# a sub-agent call's result as the oracle keys it: caller's path, caller's prompt, the caller's
# turn the request is for, the call's toolUseId
ReturnKey = tuple[str, str, int, str]


def _answers_returned(history: History) -> dict[ReturnKey, str]:
    """The calls whose result the oracle says is their sub-agent's answer, by key, whichever step
    their caller's turn ends in (a target may end it sooner); a key the scenario gives two
    different results (calls alike in all four, one turned away or retried) is left out."""
    found: dict[ReturnKey, list[str | None]] = {}
    returned = (entry for step in history.steps for entry in step.expected.get("returned", ()))
    for path, prompt, turn, call_id, answer in returned:
        got = found.setdefault((str(path), str(prompt), int(turn), str(call_id)), [])
        got += [answer] if answer not in got else []
    return {
        key: answer for key, (answer, *others) in found.items() if answer is not None and not others
    }


def _actions_returned(step: StepRecord) -> dict[ReturnKey, tuple[str, str]]:
    """Each protected action call whose agent's turn ends in ``step``: its label and whether it
    ran or was refused, by key; a key the step gives two outcomes, or none (a call a retry may
    have replaced), is left out."""
    found: dict[ReturnKey, list[tuple[str, str] | None]] = {}
    for path, prompt, turn, call_id, label, outcome in step.expected.get("acted", ()):
        got = found.setdefault((str(path), str(prompt), int(turn), str(call_id)), [])
        told = None if outcome is None else (str(label), str(outcome))
        got += [told] if told not in got else []
    return {key: outcome for key, (outcome, *others) in found.items() if outcome and not others}


def _outcomes_misreported(
    index: int, request: dict[str, Any], outcomes: dict[ReturnKey, tuple[str, str]]
) -> list[Violation]:
    """A model request that carries, for a protected action call of the turn before it, a
    result that misreports what the action did: not the action's own "done" where it ran (an
    error, a refusal, nothing), or its "done" where it was refused.  What the model is told is
    all it knows of the action: a run reported as refused is done again or reported as not
    done, a refusal reported as done is reported to the human as done."""
    results = request.get("results")
    turn = request.get("turn")
    if not isinstance(results, dict) or not isinstance(turn, int):
        return []
    path, prompt = str(request.get("agent")), str(request.get("prompt"))
    found: list[Violation] = []
    for (at, of, number, call_id), (label, outcome) in outcomes.items():
        if (at, of, number) != (path, prompt, turn):
            continue
        done = ProtectedAction(label).done
        got = strip_marker(str(results.get(call_id, ""))).strip() if call_id in results else None
        if outcome == "ran" and got != done:
            expected = f"{path}'s model is told {label} ran (toolUseId {call_id!r}): {done!r}"
            said = "no result" if got is None else repr(brief(got))
            seen = f"{path}'s model got {said} under toolUseId {call_id!r}"
            found.append(EXACT_DELIVERY_DOWN.violation(index, expected, seen))
        elif outcome == "refused" and got == done:
            expected = f"{path}'s model is told {label} did not run (toolUseId {call_id!r})"
            seen = f"{path}'s model got {done!r} under toolUseId {call_id!r}: told it ran"
            found.append(EXACT_DELIVERY_DOWN.violation(index, expected, seen))
    return found


def _results_misdelivered(
    index: int,
    request: dict[str, Any],
    agents: dict[str, Agent],
    first: dict[str, Agent],
    answers: dict[ReturnKey, str],
) -> list[Violation]:
    """A parent's model request that carries, for a sub-agent call of the turn before it,
    another call's result, none at all, or another text where the call ran to its answer.

    The scripted model journals the results a request carries for the sub-agent calls of the
    turn it follows (``results``: toolUseId to text; a request journaled without them is not
    judged).  What each call must return comes from the scenario alone: the called sub-agent's
    answer to the call's prompt.  A result that is neither the call's own nor another call's
    of that turn (an error, a gate's refusal) is judged only where the oracle says the call ran
    to its answer (``answers``: not turned away by a busy sub-agent, not gated off, not
    retried); a call the scenario's tree (``first``) does not make just so in that turn (a
    deploy renamed its tool, or gave it another id) is not judged at all.
    """
    results = request.get("results")
    parent = agents.get(str(request.get("agent")))
    turn = request.get("turn")
    if not isinstance(results, dict) or parent is None or not isinstance(turn, int):
        return []
    turns = parent.turns_for(str(request.get("prompt")))
    if not 0 < turn <= len(turns):
        return []
    subs = {sub.tool: sub for sub in parent.sub_agents}
    path = str(request.get("agent"))
    made = _made(first.get(path), str(request.get("prompt")), turn)
    calls = [
        (call, subs[call.tool].answer_for(call.prompt))
        for call in turns[turn - 1]
        if call.tool in subs and (call.tool, call.id) in made
    ]
    found: list[Violation] = []
    for call, own in calls:
        expected = f"{path}'s model gets the result of {_call_text(path, call)}: {own!r}"
        if call.id not in results:
            seen = f"{path}'s model got no result under toolUseId {call.id!r}"
            found.append(EXACT_DELIVERY_DOWN.violation(index, expected, seen))
            continue
        got = strip_marker(str(results[call.id]).strip()).strip()
        if got == own:
            continue
        other = next((c for c, text in calls if text == got and c.id != call.id), None)
        if other is not None:
            seen = (
                f"{path}'s model got {got!r} under toolUseId {call.id!r}: the result of "
                f"{_call_text(path, other)}, returned to the wrong call"
            )
            found.append(EXACT_DELIVERY_DOWN.violation(index, expected, seen))
        elif answers.get((path, str(request.get("prompt")), turn, call.id)) == own:
            seen = (
                f"{path}'s model got {brief(got)!r} under toolUseId {call.id!r}, not the call's "
                "answer"
            )
            found.append(EXACT_DELIVERY_DOWN.violation(index, expected, seen))
    return found


def _made(parent: Agent | None, prompt: str, turn: int) -> set[tuple[str, str]]:
    """The (tool, toolUseId) of each call the scenario's own tree makes in the turn before
    ``turn`` of ``parent`` (none when that agent or turn is not in it)."""
    turns = [] if parent is None else parent.turns_for(prompt)
    return {(call.tool, call.id) for call in turns[turn - 1]} if 0 < turn <= len(turns) else set()


def _call_text(parent: str, call: Call) -> str:
    """A sub-agent call as a sentence names it: its call chain, prompt and toolUseId."""
    return f"{parent}/{call.tool} {call.prompt!r} (toolUseId {call.id!r})"


def partial_answers(history: History) -> list[Violation]:
    """I3: answering a subset settles exactly that subset; the rest stays pending, same id.

    After every run, answer or resend that did not fail, the pending questions are the expected
    ones; and a question shown before the step, not answered in it and still expected pending,
    is shown again under the same root-visible id.
    """
    found: list[Violation] = []
    before: list[tuple[str, int, str]] = []
    for step in history.steps:
        if not is_conversation(step):
            continue
        if succeeded(step):
            expected = expected_questions(step)
            pending = shown_questions(step)
            if pending != expected:
                found.append(
                    PARTIAL_ANSWERS.violation(
                        step.index,
                        *pending_texts(map(question_text, expected), map(question_text, pending)),
                    )
                )
            answered = {answer.get("label") for answer in step.answered}
            now = shown(step)
            for label, number, interrupt_id in before:
                if label in answered or (label, number) not in expected:
                    continue
                if (label, number, interrupt_id) in now:
                    continue
                renamed = [other for lab, num, other in now if (lab, num) == (label, number)]
                seen = (
                    f"{label}#{number} now pending as {listing(map(repr, renamed))}"
                    if renamed
                    else f"{label}#{number} no longer pending"
                )
                expected_text = f"{label}#{number} stays pending as {interrupt_id!r}"
                found.append(PARTIAL_ANSWERS.violation(step.index, expected_text, seen))
        before = shown(step)
    return found


def isolation(history: History) -> list[Violation]:
    """I10: a sub-agent never picks up an interrupt or response of another caller.

    At every step no action is pending more often than expected (a sub-agent that took another
    caller's turn raises it twice) and none runs more often than expected in that step (except
    in a step that had to be refused: what runs there is I9's or I14's finding).
    """
    found: list[Violation] = []
    for step in history.steps:
        pending = Counter(label for label, _ in shown_questions(step) if label != UNLABELLED)
        allowed = Counter(label for label, _ in expected_questions(step))
        for label in sorted(pending - allowed):
            found.append(
                ISOLATION.violation(
                    step.index,
                    f"{label} pending {times(allowed[label])}",
                    f"{label} pending {times(pending[label])}",
                )
            )
        ran = Counter(executed(step)) if step.expected["error"] != "required" else Counter()
        due = Counter(expected_executed(step))
        for label in sorted(ran - due):
            found.append(
                ISOLATION.violation(
                    step.index,
                    f"{label} runs {times(due[label])} in this step",
                    f"{label} ran {times(ran[label])}",
                )
            )
    return found

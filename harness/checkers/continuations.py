"""Checkers for stored continuations: fidelity to the control (I6) and bounded size (I7)."""

from __future__ import annotations

import json
from typing import Any

from harness.checkers.records import (
    is_conversation,
    listing,
    sub_agent_paths,
    tree_of,
    without_restarts,
)
from harness.checkers.violation import Invariant, Violation
from harness.history import History, StepRecord
from scenarios.tree import Agent

CONTINUATION_FIDELITY = Invariant("I6", "continuation-fidelity")
BOUNDED_CONTINUATION = Invariant("I7", "bounded-continuation")

Request = tuple[Any, Any, Any, Any, Any]  # agent, prompt, turn, message count, model state


def continuation_fidelity(history: History) -> list[Violation]:
    """I6: a restored sub-agent equals the in-memory control.

    The model requests of the whole run (agent, prompt, turn, message count, model state) are
    those of the restart-free control, in order; the first request that differs is reported.
    """
    if history.control is None:
        return []
    ours = _requests(history.steps)
    theirs = _requests(history.control.steps)
    counterparts = without_restarts(history.steps)  # of the control's steps, in order
    # where each control step stands among the control's steps: its index is the whole run's,
    # which skips the other session's steps where the history is one root session's view
    place = {step.index: position for position, step in enumerate(history.control.steps)}
    for position in range(max(len(ours), len(theirs))):
        mine = ours[position] if position < len(ours) else None
        control = theirs[position] if position < len(theirs) else None
        if mine is not None and control is not None and mine[1] == control[1]:
            continue
        if mine is not None:
            step: int | None = mine[0]
        elif control is not None and place[control[0]] < len(counterparts):
            step = counterparts[place[control[0]]].index
        else:
            step = None
        return [
            CONTINUATION_FIDELITY.violation(
                step,
                f"request {position + 1}: {_request_text(control)} (as without restarts)",
                f"request {position + 1}: {_request_text(mine)}",
            )
        ]
    return []


def bounded_continuation(history: History) -> list[Violation]:
    """I7: an ephemeral sub-agent's continuation does not grow with its earlier calls, and the
    orchestrator's record shrinks back once the interrupt resolves.

    (a) After a step that ends the turn no continuation is stored.  (b) An ephemeral
    (preserve_context=False) sub-agent starts every call from its prompt alone: the first model
    request of each of its calls carries one message and no provider state (a response id of an
    earlier call would make a stateful provider continue that call's conversation).  Its parked
    turn, hence its continuation, then holds only that call, however many calls came before.
    (Comparing sizes instead would confuse a later call with a later point of the same call.)
    Which sub-agents are ephemeral is the tree in force's: after a deploy (a restart's ``tree``)
    that turned ``preserve_context`` on, a later call keeps a history; one that turned it off
    starts every later call fresh.
    (c) After a step that ends the turn, the root's interrupt record is no larger than the
    smallest seen at an earlier interrupt.  (a) and (c) read the stored sizes, so only on a
    target that measures them (``continuation_bytes``); (b) reads the request journal, on any.
    """
    sizes = "continuation_bytes" in history.target.get("capabilities", ())
    ephemeral = _ephemeral_paths(tree_of(history))
    smallest_record: int | None = None
    found: list[Violation] = []
    carried: set[tuple[str, str]] = set()  # (agent, what it carried): each reported once
    called: set[str] = set()  # the ephemeral agents that made a request before this one
    for step in history.steps:
        deployed = step.step.get("restart")
        if isinstance(deployed, dict) and "tree" in deployed:
            ephemeral = _ephemeral_paths(Agent.model_validate(deployed["tree"]))
        for request in step.requests:
            agent = str(request.get("agent"))
            if agent not in ephemeral:
                continue
            earlier = agent in called
            called.add(agent)
            if request.get("turn") != 0:
                continue
            for what, expected, seen in _carried_into_a_call(agent, request, earlier=earlier):
                if (agent, what) not in carried:
                    carried.add((agent, what))
                    found.append(BOUNDED_CONTINUATION.violation(step.index, expected, seen))
        if step.stored is None or not sizes:
            continue
        stop_reason = step.observed.get("stop_reason") if is_conversation(step) else None
        continuations = list(step.stored.get("continuations", []))
        if stop_reason == "end_turn" and continuations:
            stored = listing(f"{entry['owner']} ({entry['size']} B)" for entry in continuations)
            found.append(
                BOUNDED_CONTINUATION.violation(
                    step.index, "no continuation stored once the turn ends", f"stored: {stored}"
                )
            )
        record = step.stored.get("record_bytes")
        if record is None:
            continue
        if stop_reason == "end_turn" and smallest_record is not None and record > smallest_record:
            found.append(
                BOUNDED_CONTINUATION.violation(
                    step.index,
                    f"the root's record shrinks back to at most {smallest_record} B",
                    f"the root's record is {record} B after the turn ended",
                )
            )
        if stop_reason == "interrupt":
            smallest_record = record if smallest_record is None else min(smallest_record, record)
    return found


def _carried_into_a_call(
    agent: str, request: dict[str, Any], *, earlier: bool
) -> list[tuple[str, str, str]]:
    """What the first request of an ephemeral call brought from earlier calls (``earlier``: the
    agent made requests before): (what, expected, seen) for its messages beyond the prompt and
    for provider state, named by its keys (their values differ from run to run of a scenario
    family; the call is named by its prompt)."""
    carried = []
    if request.get("messages") != 1:
        carried.append(
            (
                "messages",
                f"{agent} starts each call from its prompt alone (1 message)",
                f"{agent} started a call with {request.get('messages')} messages",
            )
        )
    state = request.get("model_state") or {}
    if state:
        call = (
            f"the first request of its call {json.dumps(request.get('prompt'), ensure_ascii=False)}"
        )
        keys = ", ".join(sorted(str(key) for key in state))
        source = "from an earlier call" if earlier else "before any call of its own"
        carried.append(
            (
                "provider state",
                f"{agent}: {call} carries no provider state from an earlier call",
                f"{agent}: {call} carried provider state ({keys}) {source}",
            )
        )
    return carried


def _requests(steps: tuple[StepRecord, ...]) -> list[tuple[int, Request]]:
    """Every model request of the run, with the index of the step that made it."""
    return [
        (
            step.index,
            (
                request.get("agent"),
                request.get("prompt"),
                request.get("turn"),
                request.get("messages"),
                request.get("model_state"),
            ),
        )
        for step in steps
        for request in step.requests
    ]


def _request_text(request: tuple[int, Request] | None) -> str:
    if request is None:
        return "none"
    agent, prompt, turn, messages, model_state = request[1]
    state = json.dumps(model_state, sort_keys=True, ensure_ascii=False)
    return f"{agent} turn {turn} of {prompt!r} with {messages} messages, model state {state}"


def _ephemeral_paths(tree: Agent) -> frozenset[str]:
    """Journal paths ("orchestrator/worker") of the preserve_context=False sub-agents."""
    return frozenset(path for path, agent in sub_agent_paths(tree) if not agent.preserve_context)

"""Checkers for stored continuations: fidelity to the control (I6) and bounded size (I7)."""

from __future__ import annotations

import json
from typing import Any

from harness.checkers.records import (
    expected_questions,
    is_conversation,
    listing,
    tree_of,
    without_restarts,
)
from harness.checkers.violation import Invariant, Violation
from harness.history import History, StepRecord

CONTINUATION_FIDELITY = Invariant("I6", "continuation-fidelity")
BOUNDED_CONTINUATION = Invariant("I7", "bounded-continuation")

GROWTH_PERCENT = 10  # how much a parked continuation may grow for the same questions

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
    for position in range(max(len(ours), len(theirs))):
        mine = ours[position] if position < len(ours) else None
        control = theirs[position] if position < len(theirs) else None
        if mine is not None and control is not None and mine[1] == control[1]:
            continue
        if mine is not None:
            step: int | None = mine[0]
        elif control is not None and control[0] < len(counterparts):
            step = counterparts[control[0]].index
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

    (a) After a step that ends the turn no continuation is stored.  (b) An ephemeral sub-agent
    parked for the same pending questions as before stores at most 10% more than the first time
    (checked until a continuation is corrupted on purpose).  (c) After a step that ends the turn,
    the root's interrupt record is no larger than the smallest one seen at an earlier interrupt.
    """
    ephemeral = _ephemeral_sub_agents(history)
    first_parked: dict[tuple[str, tuple[tuple[str, int], ...]], tuple[int, int]] = {}
    grown: set[tuple[str, tuple[tuple[str, int], ...]]] = set()
    corrupted = False
    smallest_record: int | None = None
    found: list[Violation] = []
    for step in history.steps:
        corrupted = corrupted or step.kind == "corrupt"
        if step.stored is None:
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
        questions = tuple(expected_questions(step))
        for owner, size in sorted(_largest_by_owner(continuations).items()):
            if corrupted or owner not in ephemeral:
                continue
            key = (owner, questions)
            first_step, first_size = first_parked.setdefault(key, (step.index, size))
            if size * 100 > first_size * (100 + GROWTH_PERCENT) and key not in grown:
                grown.add(key)
                found.append(
                    BOUNDED_CONTINUATION.violation(
                        step.index,
                        f"{owner}'s continuation stays near {first_size} B (as at step "
                        f"{first_step})",
                        f"{owner}'s continuation is {size} B",
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


def _largest_by_owner(continuations: list[dict[str, Any]]) -> dict[str, int]:
    largest: dict[str, int] = {}
    for entry in continuations:
        owner, size = str(entry.get("owner")), int(entry.get("size", 0))
        largest[owner] = max(size, largest.get(owner, 0))
    return largest


def _ephemeral_sub_agents(history: History) -> frozenset[str]:
    """Names of sub-agents that are ephemeral wherever that name occurs in the tree."""
    agents = [(agent, depth) for agent, depth in tree_of(history).walk() if depth >= 2]
    kept = {agent.name for agent, _ in agents if agent.preserve_context}
    return frozenset(agent.name for agent, _ in agents if agent.name not in kept)

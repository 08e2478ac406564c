"""Checker for private continuations (I8): nothing of a stored continuation in public events.

Sub-agents may stream their own messages to the parent's callbacks by design, live, as they write
them; so the probes are canaries: every string in a sub-agent's initial key/value state and in the
model state its requests carried (e.g. a provider ``response_id``), and the messages a sub-agent
stored before a question.  A message is known by the marker the scripted model starts it with
(``fakes.model.marker``: the prompt and the turn): the marker of a tool-calling turn a sub-agent
played at an earlier step, seen in an event of a step that did not play that turn again, is stored
data published again (a restored turn re-emitted), not live streaming.  Scenarios should make state
canaries distinctive; an empty string is no canary.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from fakes.model import marker
from harness.checkers.records import listing, sub_agent_paths, tree_of
from harness.checkers.violation import Invariant, Violation
from harness.history import History

PRIVATE_CONTINUATION = Invariant("I8", "private-continuation")

CONTINUATION_KEYS: Final = frozenset({"schema_version", "sub_agent_turns"})


def private_continuation(history: History) -> list[Violation]:
    """I8: the stored continuation never appears in public event payloads.

    No public event contains a canary (a string of a sub-agent's initial state or of the model
    state of a sub-agent's request), nor a key that only continuation data has.  One violation
    per offending event.
    """
    canaries = _canaries(history)
    stored = _stored_messages(history)
    found: list[Violation] = []
    for step in history.steps:
        messages = stored.get(step.index, [])
        for position, event in enumerate(step.events):
            payload = json.dumps(event, sort_keys=True, ensure_ascii=False)
            leaked = [repr(canary) for canary, quoted in canaries if quoted in payload]
            leaked += [f"stored message {text!r}" for text, quoted in messages if quoted in payload]
            leaked += [f"key {key!r}" for key in sorted(set(_keys(event)) & CONTINUATION_KEYS)]
            if leaked:
                kind = event.get("type", "?")
                agent = event.get("agent", "?")
                found.append(
                    PRIVATE_CONTINUATION.violation(
                        step.index,
                        "no continuation data in public events",
                        f"event {position} ({kind} of {agent}) carries {listing(leaked)}",
                    )
                )
    return found


def _canaries(history: History) -> list[tuple[str, str]]:
    """Each canary with the form it takes inside a JSON dump (quotes and backslashes escaped)."""
    strings: set[str] = set()
    for agent, depth in tree_of(history).walk():
        if depth >= 2:
            strings.update(_strings(agent.state))
    for step in history.steps:
        for request in step.requests:
            if "/" in str(request.get("agent", "")):
                strings.update(_strings(request.get("model_state")))
    return [(text, json.dumps(text, ensure_ascii=False)[1:-1]) for text in sorted(strings) if text]


def _stored_messages(history: History) -> dict[int, list[tuple[str, str]]]:
    """Per step: the markers (as whole strings inside a JSON dump) of the tool-calling turns
    sub-agents played at earlier steps, less the turns this step played again."""
    agents = dict(sub_agent_paths(tree_of(history)))

    def calling(request: dict[str, Any]) -> bool:
        """Whether the request played one of its agent's tool-calling turns for its prompt."""
        agent = agents.get(str(request.get("agent")))
        turns = 0 if agent is None else len(agent.turns_for(str(request.get("prompt"))))
        return int(request.get("turn", 0)) < turns

    played: set[tuple[str, int]] = set()  # (prompt, turn) of sub-agents' tool-calling turns
    stored: dict[int, list[tuple[str, str]]] = {}
    for step in history.steps:
        now = {
            (str(request.get("prompt")), int(request.get("turn", 0)))
            for request in step.requests
            if "/" in str(request.get("agent", ""))
        }
        texts = sorted(marker(prompt, turn) for prompt, turn in played - now)
        # a tool-calling turn's text is its marker alone, a whole JSON string: another agent's
        # answer to the same prompt starts with the same marker and is no stored turn
        stored[step.index] = [(text, json.dumps(text, ensure_ascii=False)) for text in texts]
        played |= {
            (str(request.get("prompt")), int(request.get("turn", 0)))
            for request in step.requests
            if calling(request)
        }
    return stored


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _keys(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _keys(item)

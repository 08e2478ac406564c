"""A scripted model whose next turn is read off the conversation, never off a counter.

A script says, per agent and per prompt, what each turn does: call tools (with the toolUseIds
given, which may repeat on purpose) or answer with text.  Every assistant message the model writes
starts with a marker naming the prompt and the turn, so a model rebuilt after a restart finds its
place from the messages it is sent:

* if the latest marker is newer than the latest prompt, the next turn of that marker's prompt;
* otherwise turn 0 of the latest prompt.

Stateful-provider mode behaves like a provider that keeps server-side state: each turn has a
response id (derived from agent, prompt and turn, so a rerun gets the same one), and a follow-up
request must carry, as ``previous_response_id``, the id of the turn that wrote the conversation's
latest assistant message; a missing or stale one is refused with ``ProviderError``, and so is a
response id sent with the first request of a conversation (a real provider would continue that
other conversation).

Every request is journaled (agent, prompt, turn, message count, model state received, and the
shape of what it carried: ``sent``) in an append-only log that outlives restarts; a request the
provider refuses is journaled with the refusal (``refused``), so the history shows it even
when the framework swallows the error (an agent-as-tool that hands its parent an error tool
result).  A request that follows a turn which
called sub-agents or protected actions is journaled with the results it carries for those calls
(``results``: each call's toolUseId to its result's text, a call with no result left out), so
the history shows which result reached which call, and what an agent was told its action did.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from fakes.log import AppendOnlyLog

MARKER: Final = re.compile(r'^\[\[fake-model turn (\d+) of ("(?:[^"\\]|\\.)*")\]\]')
RESPONSE_ID: Final = "response_id"


class ProviderError(RuntimeError):
    """What a stateful provider answers to a request with a missing or stale response id."""


class ScriptError(LookupError):
    """The conversation asked for a turn the script does not have."""


@dataclass(frozen=True)
class ToolCall:
    """A tool call; ``raw_input``, when given, is the arguments exactly as the model streams
    them (JSON text), for a model that sends arguments that are not an object.
    ``prompt_field``, when given, is the input under which the call carries the prompt its
    agent is answering (so a protected action knows which call of its agent it serves).
    ``sub_agent`` marks a call of a sub-agent and ``action`` one of a protected action: the next
    request journals its result."""

    tool: str
    tool_use_id: str
    input: Mapping[str, Any] = field(default_factory=dict)
    raw_input: str | None = None
    prompt_field: str | None = None
    sub_agent: bool = False
    action: bool = False


@dataclass(frozen=True)
class CallTools:
    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class Answer:
    """A text answer; ``cites`` names the sources it cites (a target whose SDK carries
    citations attaches them to the text, others ignore them) and ``more`` holds further
    paragraphs, each its own text block where the SDK has blocks (others ignore them)."""

    text: str
    cites: tuple[str, ...] = ()
    more: tuple[str, ...] = ()


Turn = CallTools | Answer


@dataclass(frozen=True)
class AgentScript:
    """The turns of one agent, per prompt; ``default`` serves any prompt not listed."""

    turns_by_prompt: Mapping[str, tuple[Turn, ...]] = field(default_factory=dict)
    default: tuple[Turn, ...] = ()
    # the turns put together for each prompt so far: the same for every request, and for every
    # model (a rebuilt one too) given this script
    _played: dict[str, tuple[Turn, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def turns_for(self, prompt: str) -> tuple[Turn, ...]:
        """The turns played for ``prompt``, each call that asks for it carrying the prompt."""
        played = self._played.get(prompt)
        if played is None:
            played = self._played[prompt] = tuple(
                CallTools(tuple(_carrying(call, prompt) for call in turn.calls))
                if isinstance(turn, CallTools)
                else turn
                for turn in self.turns_by_prompt.get(prompt, self.default)
            )
        return played


def _carrying(call: ToolCall, prompt: str) -> ToolCall:
    if call.prompt_field is None:
        return call
    return replace(call, input={**call.input, call.prompt_field: prompt})


@dataclass(frozen=True)
class Prompt:
    """A user message that starts a conversation turn (not a tool result)."""

    text: str


@dataclass(frozen=True)
class Reply:
    """An assistant message, by its text (where the marker is), with the toolUseIds of the tool
    calls it makes (``uses``, in order; a framework that sends each call as an item of its own
    sends a ``Reply`` with no text for it)."""

    text: str
    uses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Results:
    """A message (or item) carrying tool results: each (toolUseId, the result's text)."""

    results: tuple[tuple[str, str], ...]


Said = Prompt | Reply | Results | None  # None: anything else (non-text blocks)


@dataclass(frozen=True)
class ScriptedTurn:
    prompt: str
    index: int
    turn: Turn
    marker: str
    response_id: str


def marker(prompt: str, index: int) -> str:
    return f"[[fake-model turn {index} of {json.dumps(prompt, ensure_ascii=False)}]]"


def response_id(agent: str, prompt: str, index: int) -> str:
    digest = hashlib.sha256(json.dumps([agent, prompt, index]).encode()).hexdigest()
    return f"resp-{digest[:16]}"


def place_in_script(conversation: Sequence[Said]) -> tuple[str, int, tuple[str, int] | None]:
    """(prompt, turn index to play, (prompt, index) of the latest marked reply or None)."""
    latest_prompt: tuple[int, str] | None = None
    latest_reply: tuple[int, str, int] | None = None
    for position, said in enumerate(conversation):
        if isinstance(said, Prompt):
            latest_prompt = (position, said.text)
        elif isinstance(said, Reply):
            found = MARKER.match(said.text)
            if found:
                latest_reply = (position, json.loads(found.group(2)), int(found.group(1)))
    previous = None if latest_reply is None else (latest_reply[1], latest_reply[2])
    if latest_reply is not None and (latest_prompt is None or latest_reply[0] > latest_prompt[0]):
        return latest_reply[1], latest_reply[2] + 1, previous
    if latest_prompt is None:
        raise ScriptError("the conversation has neither a prompt nor a scripted reply")
    return latest_prompt[1], 0, previous


class ScriptedModel:
    """The framework-neutral core; each target wraps it in its SDK's model interface."""

    def __init__(
        self,
        agent: str,
        script: AgentScript,
        journal: AppendOnlyLog,
        *,
        stateful_provider: bool = False,
    ) -> None:
        self.agent = agent
        self.script = script
        self.journal = journal
        self.stateful_provider = stateful_provider

    def next_turn(
        self, conversation: Sequence[Said], message_count: int, model_state: dict[str, Any]
    ) -> ScriptedTurn:
        """Choose, check and journal the next turn; update ``model_state`` as a provider would."""
        prompt, index, previous = place_in_script(conversation)
        refusal = self._refusal(previous, model_state.get(RESPONSE_ID))
        turns = self.script.turns_for(prompt)
        results = _journaled_results(turns, index, conversation)
        self.journal.append(
            {
                "agent": self.agent,
                "prompt": prompt,
                "turn": index,
                "messages": message_count,
                # as received: the journal serialises the record here, before this turn's id
                # is set below, so what it keeps is a copy taken now
                "model_state": model_state,
                "sent": sent(conversation),
            }
            | ({} if refusal is None else {"refused": refusal})
            | ({} if results is None else {"results": results})
        )
        if refusal is not None:
            raise ProviderError(f"{self.agent}: {refusal}")
        if index >= len(turns):
            raise ScriptError(f"{self.agent}: no turn {index} scripted for prompt {prompt!r}")
        this_response = response_id(self.agent, prompt, index)
        if self.stateful_provider:
            model_state[RESPONSE_ID] = this_response
        return ScriptedTurn(prompt, index, turns[index], marker(prompt, index), this_response)

    def _refusal(self, previous: tuple[str, int] | None, sent: Any) -> str | None:
        """Why a stateful provider refuses a request whose conversation last heard ``previous``
        (None: a first request) and that carries response id ``sent``; None if it accepts it.
        The refusal of a first request does not quote the id: a framework may publish the error
        text (an error tool result), and a response id in a public event is I8's canary."""
        if not self.stateful_provider:
            return None
        if previous is None:
            if sent is None:
                return None
            return "first request of a conversation with a previous_response_id"
        if sent is None:
            return "follow-up request without previous_response_id"
        if sent != response_id(self.agent, *previous):
            return f"stale previous_response_id {sent!r}"
        return None


def sent(conversation: Sequence[Said]) -> list[dict[str, Any]]:
    """What a request carried, message by message (or item by item), as the journal keeps it:
    ``{"prompt": text}``, ``{"reply": [prompt, turn]}`` (its marker; ``null`` for a reply with
    none) with ``"uses"`` (its calls' toolUseIds) where it calls tools, ``{"results": [ids]}``
    (the toolUseIds its results answer), ``{}`` for anything else.  No text but the prompts: it
    is the request's shape, which I16 judges on its own (``harness.checkers.conversation``)."""
    shape: list[dict[str, Any]] = []
    for said in conversation:
        if isinstance(said, Prompt):
            shape.append({"prompt": said.text})
        elif isinstance(said, Reply):
            found = MARKER.match(said.text)
            mark = None if found is None else [json.loads(found.group(2)), int(found.group(1))]
            shape.append({"reply": mark} | ({"uses": list(said.uses)} if said.uses else {}))
        elif isinstance(said, Results):
            shape.append({"results": [tool_use_id for tool_use_id, _ in said.results]})
        else:
            shape.append({})
    return shape


def _journaled_results(
    turns: Sequence[Turn], index: int, conversation: Sequence[Said]
) -> dict[str, str] | None:
    """The results a request playing turn ``index`` carries for the sub-agent and protected
    action calls of the turn before it (the latest marked reply's), by toolUseId; None when that
    turn called neither."""
    answered = turns[index - 1] if 0 < index <= len(turns) else None
    if not isinstance(answered, CallTools):
        return None
    calls = {call.tool_use_id for call in answered.calls if call.sub_agent or call.action}
    if not calls:
        return None
    carried: dict[str, str] = {}
    for said in conversation:
        if isinstance(said, Reply) and MARKER.match(said.text):
            carried = {}
        elif isinstance(said, Results):
            carried |= {tool_use_id: text for tool_use_id, text in said.results}
    return {tool_use_id: text for tool_use_id, text in carried.items() if tool_use_id in calls}


def strip_marker(text: str) -> str:
    """The text a scripted reply says, without its marker."""
    return MARKER.sub("", text, count=1).lstrip()

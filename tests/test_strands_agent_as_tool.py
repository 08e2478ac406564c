"""What a caller gets from a strands sub-agent wrapped with ``Agent.as_tool``: the contract of the
agent-as-tool adapter, checked on the real SDK through its public API.

The harness's scenarios check nested interrupts; this file checks the rest of what an orchestrator
relies on when it calls a sub-agent as a tool, each from the SDK's documented behaviour:

* the tool the orchestrator's model is offered (its name and description, the delegation note);
* the tool result the orchestrator's model is sent next: for the call's toolUseId, status success
  and the sub-agent's final answer (its text, cited text, or structured output as json), or
  status error when the sub-agent fails, is cancelled with the orchestrator, or is busy; the
  prompt the sub-agent is asked, even when the model sends the input bare or not at all;
* delegation: the sub-agent's final message, block by block, becomes the orchestrator's;
* ``preserve_context=False``: every call starts from the messages and state the sub-agent had
  when it was wrapped, whatever happened to it in between; ``preserve_context=True`` keeps them;
* the sub-agent's progress streams through the orchestrator, tagged with the call it serves
  (and, for tool middleware, with the agent-as-tool itself); the tool also runs with no
  orchestrator at all;
* a sub-agent call a human approves first (an orchestrator hook interrupt) runs fresh on resume;
* an interrupted sub-agent resumes after a restart; if its stored turn is lost or unreadable,
  the caller is told the human's response was not applied, or is asked the question again.

Every agent is a real ``strands.Agent``; the scripted model (``fakes.model`` behind
``harness.targets.strands_model.model_class``) is the only stand-in, and it records what each
request carried: that record is how the tests see what the caller received.  The expectations
come from each scenario's script (what the sub-agent answers, which call it serves), never from
running the adapter.  The file runs in about two seconds: ``python -m harness mutate --sdk
strands`` runs it against every mutant of the SDK's ``_agent_as_tool.py``.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import strands
from pydantic import BaseModel
from strands import ToolContext, tool
from strands.hooks import AfterToolsEvent, BeforeToolCallEvent, HookProvider, HookRegistry
from strands.middleware import ExecuteToolStage
from strands.types.events import ToolResultEvent

from fakes.log import AppendOnlyLog
from fakes.model import AgentScript, Answer, CallTools, ScriptedModel, ToolCall, Turn, strip_marker
from harness.targets.strands_model import model_class

ScriptedStrandsModel = model_class()


def scripted(workdir: Path, agent: str, *turns: Turn, outage: str | None = None) -> Any:
    """A real strands model playing ``turns`` for any prompt, recording every request."""
    journal = AppendOnlyLog(workdir / f"{agent}.jsonl")
    core = ScriptedModel(agent, AgentScript(default=turns), journal)
    return ScriptedStrandsModel(core, outage=outage, record=True)


def calls(*uses: tuple[str, str, str]) -> CallTools:
    """An orchestrator turn calling sub-agents: (tool, toolUseId, input)."""
    return CallTools(tuple(ToolCall(name, use_id, {"input": text}) for name, use_id, text in uses))


def tool_results(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tool results a message carries, by toolUseId."""
    blocks = [block["toolResult"] for block in message["content"] if "toolResult" in block]
    return {result.get("toolUseId", "<none>"): result for result in blocks}


def sent_back(model: Any, request: int = -1) -> dict[str, dict[str, Any]]:
    """The tool results the orchestrator's model was sent in a request (the last by default)."""
    return tool_results(model.requests[request]["messages"][-1])


def said(content: list[dict[str, Any]]) -> list[str]:
    """Each text block, without the scripted model's marker and the trailing newline."""
    return [strip_marker(block["text"]).rstrip("\n") for block in content]


def prompts(model: Any, request: int = 0) -> list[str]:
    """The texts of every message in a request, in order, without markers."""
    return [
        strip_marker(block["text"])
        for message in model.requests[request]["messages"]
        for block in message["content"]
        if "text" in block
    ]


# --- the tool the orchestrator's model is offered ------------------------------------------


@pytest.mark.parametrize(
    ("description", "offered"),
    [("Looks things up in the archive", "Looks things up in the archive"), (None, "Finds facts")],
)
def test_the_offered_tool_is_described_by_the_call_or_else_by_the_agent(
    tmp_path: Path, description: str | None, offered: str
) -> None:
    """An explicit description wins; without one, the agent's own description is used."""
    model = scripted(tmp_path, "orchestrator", Answer("nothing to do"))
    researcher = strands.Agent(
        model=scripted(tmp_path, "researcher", Answer("unused")),
        name="researcher",
        description="Finds facts",
        callback_handler=None,
    )
    wrapped = researcher.as_tool(description=description)
    strands.Agent(model=model, tools=[wrapped], callback_handler=None)("hello")
    [spec] = model.requests[0]["tool_specs"]
    assert spec["name"] == "researcher"
    assert spec["description"] == offered
    assert spec["inputSchema"]["json"]["required"] == ["input"]


def test_an_undescribed_agent_is_offered_with_a_description_naming_it(tmp_path: Path) -> None:
    model = scripted(tmp_path, "orchestrator", Answer("nothing to do"))
    librarian = strands.Agent(
        model=scripted(tmp_path, "librarian", Answer("unused")),
        name="librarian",
        callback_handler=None,
    )
    strands.Agent(model=model, tools=[librarian.as_tool()], callback_handler=None)("hello")
    [spec] = model.requests[0]["tool_specs"]
    assert spec["name"] == "librarian"
    assert isinstance(spec["description"], str)
    assert "librarian" in spec["description"]


@pytest.mark.parametrize("explicit", [True, False])
def test_a_delegating_tool_keeps_its_description_and_adds_the_delegation_note(
    tmp_path: Path, explicit: bool
) -> None:
    """With ``delegate=True`` the description is suffixed with an instruction that the tool must
    be the only one called in its turn (Agent.as_tool's docstring)."""
    model = scripted(tmp_path, "orchestrator", Answer("nothing to do"))
    plain = scripted(tmp_path, "plain-orchestrator", Answer("nothing to do"))
    billing = strands.Agent(
        model=scripted(tmp_path, "billing", Answer("unused")),
        name="billing",
        description=None if explicit else "Handles billing questions",
        callback_handler=None,
    )
    description = "Handles billing questions" if explicit else None
    delegating_tool = billing.as_tool(description=description, delegate=True)
    strands.Agent(model=model, tools=[delegating_tool], callback_handler=None)("hello")
    plain_tool = billing.as_tool(description=description)
    strands.Agent(model=plain, tools=[plain_tool], callback_handler=None)("hello")
    [delegating] = model.requests[0]["tool_specs"]
    [not_delegating] = plain.requests[0]["tool_specs"]
    assert not_delegating["description"] == "Handles billing questions"
    assert delegating["description"].startswith("Handles billing questions ")
    assert "only tool called in the turn" in delegating["description"]


def test_display_properties_name_the_wrapped_agent(tmp_path: Path) -> None:
    researcher = strands.Agent(
        model=scripted(tmp_path, "researcher", Answer("unused")),
        name="researcher",
        callback_handler=None,
    )
    properties = researcher.as_tool(name="lookup").get_display_properties()
    assert properties == {"Name": "lookup", "Type": "agent", "Agent": "researcher"}


# --- the tool result the caller receives ---------------------------------------------------


def test_the_caller_receives_the_sub_agents_answer_for_its_call(tmp_path: Path) -> None:
    sub_model = scripted(tmp_path, "researcher", Answer("water boils at 100 C"))
    researcher = strands.Agent(model=sub_model, name="researcher", callback_handler=None)
    model = scripted(
        tmp_path,
        "orchestrator",
        calls(("researcher", "call-7", "when does water boil?")),
        Answer("it boils at 100 C"),
    )
    orchestrator = strands.Agent(model=model, tools=[researcher.as_tool()], callback_handler=None)
    result = orchestrator("ask the researcher")
    assert result.stop_reason == "end_turn"
    assert prompts(sub_model) == ["when does water boil?"]
    [(use_id, sent)] = sent_back(model).items()
    assert use_id == "call-7"
    assert sent["status"] == "success"
    assert said(sent["content"]) == ["water boils at 100 C"]
    assert strip_marker(str(result)).strip() == "it boils at 100 C"


@pytest.mark.parametrize(
    ("arguments", "prompt"),
    [('"when does water boil?"', "when does water boil?"), ("100", "100"), ("{}", "")],
    ids=["bare-string", "number", "no-input"],
)
def test_arguments_that_are_not_an_input_object_still_reach_the_sub_agent(
    tmp_path: Path, arguments: str, prompt: str
) -> None:
    """A model may send the input bare (a string or a number) instead of ``{"input": ...}``, or
    leave it out: the sub-agent is asked that text (nothing, if none was sent) and answers."""
    sub_model = scripted(tmp_path, "researcher", Answer("answered"))
    researcher = strands.Agent(model=sub_model, name="researcher", callback_handler=None)
    model = scripted(
        tmp_path,
        "orchestrator",
        CallTools((ToolCall("researcher", "call-1", raw_input=arguments),)),
        Answer("done"),
    )
    strands.Agent(model=model, tools=[researcher.as_tool()], callback_handler=None)("go")
    assert prompts(sub_model) == [prompt]
    sent = sent_back(model)["call-1"]
    assert sent["status"] == "success"
    assert said(sent["content"]) == ["answered"]


def test_an_answer_with_citations_reaches_the_caller_as_its_text(tmp_path: Path) -> None:
    researcher = strands.Agent(
        model=scripted(tmp_path, "researcher", Answer("the handbook says 42", cites=("handbook",))),
        name="researcher",
        callback_handler=None,
    )
    model = scripted(
        tmp_path, "orchestrator", calls(("researcher", "call-1", "look it up")), Answer("42")
    )
    strands.Agent(model=model, tools=[researcher.as_tool()], callback_handler=None)("go")
    sent = sent_back(model)["call-1"]
    assert sent["status"] == "success"
    assert said(sent["content"]) == ["the handbook says 42"]


def test_a_failing_sub_agent_gives_the_caller_an_error_result_and_the_caller_goes_on(
    tmp_path: Path,
) -> None:
    researcher = strands.Agent(
        model=scripted(tmp_path, "researcher", Answer("unused"), outage="provider throttled"),
        name="researcher",
        callback_handler=None,
    )
    model = scripted(
        tmp_path,
        "orchestrator",
        calls(("researcher", "call-1", "look it up")),
        Answer("the researcher is unavailable"),
    )
    orchestrator = strands.Agent(model=model, tools=[researcher.as_tool()], callback_handler=None)
    result = orchestrator("go")
    assert result.stop_reason == "end_turn"
    assert strip_marker(str(result)).strip() == "the researcher is unavailable"
    [(use_id, sent)] = sent_back(model).items()
    assert use_id == "call-1"
    assert sent["status"] == "error"
    [text] = [block["text"] for block in sent["content"]]
    assert "provider throttled" in text


def test_a_second_concurrent_call_to_a_busy_sub_agent_gets_an_error_result(
    tmp_path: Path,
) -> None:
    """The orchestrator runs both calls of a turn concurrently; one sub-agent serves one call at
    a time, so the other call is refused with an error result and the sub-agent runs once."""
    sub_model = scripted(tmp_path, "researcher", Answer("found it"))
    researcher = strands.Agent(model=sub_model, name="researcher", callback_handler=None)
    model = scripted(
        tmp_path,
        "orchestrator",
        calls(("researcher", "call-1", "first"), ("researcher", "call-2", "second")),
        Answer("one of them answered"),
    )
    orchestrator = strands.Agent(model=model, tools=[researcher.as_tool()], callback_handler=None)
    assert orchestrator("go").stop_reason == "end_turn"
    assert len(sub_model.requests) == 1
    results = sent_back(model)
    assert sorted(results) == ["call-1", "call-2"]
    by_status = {result["status"]: result for result in results.values()}
    assert sorted(by_status) == ["error", "success"]
    assert said(by_status["success"]["content"]) == ["found it"]
    [refusal] = [block["text"] for block in by_status["error"]["content"]]
    assert "already processing" in refusal


class Verdict(BaseModel):
    verdict: str
    confidence: float
    decided_on: datetime.date


def test_structured_output_reaches_the_caller_as_json(tmp_path: Path) -> None:
    """A sub-agent with a structured output model answers through the SDK's structured output
    tool; the caller receives the validated output as a json block (JSON types: a date as an
    ISO string)."""
    filing = {"verdict": "upheld", "confidence": 0.75, "decided_on": "2024-02-29"}
    judge = strands.Agent(
        model=scripted(
            tmp_path,
            "judge",
            CallTools((ToolCall("Verdict", "verdict-1", filing),)),
            Answer("unused"),
        ),
        name="judge",
        structured_output_model=Verdict,
        callback_handler=None,
    )
    model = scripted(
        tmp_path, "orchestrator", calls(("judge", "call-1", "decide")), Answer("upheld")
    )
    strands.Agent(model=model, tools=[judge.as_tool()], callback_handler=None)("go")
    [(use_id, sent)] = sent_back(model).items()
    assert use_id == "call-1"
    assert sent["status"] == "success"
    assert sent["content"] == [{"json": filing}]


# --- cancellation ----------------------------------------------------------------------------


def test_cancelling_the_orchestrator_cancels_its_running_sub_agent(tmp_path: Path) -> None:
    """The orchestrator is cancelled while its sub-agent runs (a tool of the sub-agent presses
    stop); the sub-agent stops at its next checkpoint instead of asking its model again, and the
    call's result is an error."""
    orchestrator: Any = None

    @tool
    def press_stop() -> str:
        """The user presses stop."""
        orchestrator.cancel()
        return "stop pressed"

    sub_model = scripted(
        tmp_path, "researcher", CallTools((ToolCall("press_stop", "stop-1"),)), Answer("late")
    )
    researcher = strands.Agent(
        model=sub_model, name="researcher", tools=[press_stop], callback_handler=None
    )
    model = scripted(
        tmp_path, "orchestrator", calls(("researcher", "call-1", "dig")), Answer("unreached")
    )
    orchestrator = strands.Agent(model=model, tools=[researcher.as_tool()], callback_handler=None)
    result = orchestrator("go")
    assert result.stop_reason == "cancelled"
    assert len(sub_model.requests) == 1
    assert len(model.requests) == 1
    sent = tool_results(orchestrator.messages[-1])["call-1"]
    assert sent["status"] == "error"
    [text] = [block["text"] for block in sent["content"]]
    assert "cancelled" in text


def test_a_sub_agent_that_stops_after_its_tools_reports_success_with_its_stop_message(
    tmp_path: Path,
) -> None:
    """``cancel(after_current_tools=True)`` on the sub-agent (what a stop tool does) ends it
    after the tool batch with its message as the answer: the call succeeded."""

    @tool(context=True)
    def wrap_up(tool_context: ToolContext) -> str:
        """Finish after this step."""
        tool_context.agent.cancel(after_current_tools=True, message="wrapped up early")
        return "wrapping up"

    sub_model = scripted(
        tmp_path, "researcher", CallTools((ToolCall("wrap_up", "wrap-1"),)), Answer("unused")
    )
    researcher = strands.Agent(
        model=sub_model, name="researcher", tools=[wrap_up], callback_handler=None
    )
    model = scripted(
        tmp_path, "orchestrator", calls(("researcher", "call-1", "dig")), Answer("done")
    )
    strands.Agent(model=model, tools=[researcher.as_tool()], callback_handler=None)("go")
    assert len(sub_model.requests) == 1
    sent = sent_back(model)["call-1"]
    assert sent["status"] == "success"
    assert said(sent["content"]) == ["wrapped up early"]


# --- delegation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cites", "more"),
    [((), ()), (("price list",), ()), ((), ("Anything else?",)), (("price list",), ("Anything?",))],
    ids=["text", "cited", "two-paragraphs", "cited-then-plain"],
)
def test_a_delegated_answer_is_the_orchestrators_final_answer_block_by_block(
    tmp_path: Path, cites: tuple[str, ...], more: tuple[str, ...]
) -> None:
    """With ``delegate=True`` the sub-agent's answer becomes the orchestrator's final message,
    each of its blocks as it was (a cited block as its text), and the orchestrator's model is
    not asked again."""
    answer = Answer("your balance is 12 EUR", cites=cites, more=more)
    billing = strands.Agent(
        model=scripted(tmp_path, "billing", answer), name="billing", callback_handler=None
    )
    model = scripted(
        tmp_path, "orchestrator", calls(("billing", "call-1", "balance?")), Answer("unreached")
    )
    orchestrator = strands.Agent(
        model=model, tools=[billing.as_tool(delegate=True)], callback_handler=None
    )
    result = orchestrator("what is my balance?")
    assert result.stop_reason == "end_turn"
    assert len(model.requests) == 1
    assert said(result.message["content"]) == ["your balance is 12 EUR", *more]
    sent = tool_results(orchestrator.messages[-2])["call-1"]
    assert sent["status"] == "success"
    assert said(sent["content"]) == ["your balance is 12 EUR", *more]


class EndTurnWith(HookProvider):
    """Ends the agent's turn after its tool batch with prepared content blocks (the documented
    ``AfterToolsEvent.end_turn``): the blocks become its final message."""

    def __init__(self, blocks: list[dict[str, Any]]) -> None:
        self.blocks = blocks

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(AfterToolsEvent, self.end)

    def end(self, event: AfterToolsEvent) -> None:
        event.end_turn = json.loads(json.dumps(self.blocks))


CITATION = {
    "title": "rate card",
    "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 9}},
    "sourceContent": [{"text": "12 EUR"}],
}


@pytest.mark.parametrize(
    ("final", "handed"),
    [
        (
            [
                {
                    "citationsContent": {
                        "citations": [CITATION],
                        "content": [{}, {"text": "12 EUR"}],
                    }
                },
                {"citationsContent": {"citations": [CITATION]}},
                {"text": "see the rate card"},
            ],
            [{"text": "12 EUR"}, {"text": "see the rate card"}],
        ),
        (
            [{"json": {"balance": 12}}, {"text": "in EUR"}],
            [{"json": {"balance": 12}}, {"text": "in EUR"}],
        ),
    ],
    ids=["citations-with-and-without-text", "json-then-text"],
)
def test_a_delegated_final_message_is_handed_back_block_by_block(
    tmp_path: Path, final: list[dict[str, Any]], handed: list[dict[str, Any]]
) -> None:
    """A delegated sub-agent whose final message a hook composed: its text and json blocks are
    handed back as they are, a citations block as the text it cites (none if it cites none)."""

    @tool
    def read_rate_card() -> str:
        """Read the rate card."""
        return "12 EUR"

    billing = strands.Agent(
        model=scripted(
            tmp_path,
            "billing",
            CallTools((ToolCall("read_rate_card", "read-1"),)),
            Answer("unused"),
        ),
        name="billing",
        tools=[read_rate_card],
        hooks=[EndTurnWith(final)],
        callback_handler=None,
    )
    model = scripted(
        tmp_path, "orchestrator", calls(("billing", "call-1", "balance?")), Answer("unreached")
    )
    orchestrator = strands.Agent(
        model=model, tools=[billing.as_tool(delegate=True)], callback_handler=None
    )
    assert orchestrator("what is my balance?").stop_reason == "end_turn"
    assert len(model.requests) == 1
    sent = tool_results(orchestrator.messages[-2])["call-1"]
    assert sent["status"] == "success"
    assert sent["content"] == handed


def test_a_delegated_sub_agent_that_says_nothing_hands_back_empty_text(tmp_path: Path) -> None:
    """A sub-agent whose final message is empty gives an empty text result; there is nothing to
    delegate, so the orchestrator's model is asked again."""

    class SilentModel(ScriptedStrandsModel):  # type: ignore[misc,valid-type]
        """Ends its turn without saying anything."""

        async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            self.requests.append({"messages": messages})
            yield {"messageStart": {"role": "assistant"}}
            yield {"messageStop": {"stopReason": "end_turn"}}

    silent = SilentModel(ScriptedModel("billing", AgentScript(), AppendOnlyLog(tmp_path / "j")))
    billing = strands.Agent(model=silent, name="billing", callback_handler=None)
    model = scripted(
        tmp_path, "orchestrator", calls(("billing", "call-1", "balance?")), Answer("no answer")
    )
    orchestrator = strands.Agent(
        model=model, tools=[billing.as_tool(delegate=True)], callback_handler=None
    )
    result = orchestrator("what is my balance?")
    assert len(silent.requests) == 1
    assert len(model.requests) == 2
    assert strip_marker(str(result)).strip() == "no answer"
    sent = sent_back(model)["call-1"]
    assert sent["status"] == "success"
    assert sent["content"] == [{"text": ""}]


# --- context between calls -------------------------------------------------------------------

BRIEFING = "Remember: the code word is plover."


def _briefed_researcher(tmp_path: Path, seen: list[Any]) -> tuple[Any, Any]:
    """A sub-agent wrapped with a briefing in its history and a visit counter in its state; its
    tool records the counter it finds, then counts the visit."""

    @tool(context=True)
    def count_visit(tool_context: ToolContext) -> str:
        """Count this visit."""
        visits = tool_context.agent.state.get("visits")
        seen.append(visits)
        tool_context.agent.state.set("visits", (visits or 0) + 1)
        return "counted"

    sub_model = scripted(
        tmp_path,
        "researcher",
        CallTools((ToolCall("count_visit", "count-1"),)),
        Answer("visit counted"),
    )
    researcher = strands.Agent(
        model=sub_model,
        name="researcher",
        tools=[count_visit],
        messages=[
            {"role": "user", "content": [{"text": BRIEFING}]},
            {"role": "assistant", "content": [{"text": "Noted."}]},
        ],
        state={"visits": 0},
        callback_handler=None,
    )
    return researcher, sub_model


def test_without_preserve_context_every_call_starts_from_the_wrapped_baseline(
    tmp_path: Path,
) -> None:
    """``preserve_context=False``: before each call the sub-agent's messages and state are reset
    to what they were when it was wrapped, whatever was done to them in between (here: its
    history and state edited in place from outside, and the previous call)."""
    seen: list[Any] = []
    researcher, sub_model = _briefed_researcher(tmp_path, seen)
    wrapped = researcher.as_tool(preserve_context=False)
    model = scripted(
        tmp_path, "orchestrator", calls(("researcher", "call-1", "visit")), Answer("ok")
    )
    orchestrator = strands.Agent(model=model, tools=[wrapped], callback_handler=None)
    for attempt in range(2):
        researcher.messages[0]["content"][0]["text"] = f"tampered {attempt}"
        researcher.state.set("visits", 10 + attempt)
        assert orchestrator(f"round {attempt}").stop_reason == "end_turn"
        asked = len(sub_model.requests) - 2  # each call asks the model twice
        assert prompts(sub_model, asked) == [BRIEFING, "Noted.", "visit"]
        assert sent_back(model)["call-1"]["status"] == "success"
    assert seen == [0, 0]


def test_with_preserve_context_a_call_sees_the_previous_calls(tmp_path: Path) -> None:
    seen: list[Any] = []
    researcher, sub_model = _briefed_researcher(tmp_path, seen)
    model = scripted(
        tmp_path,
        "orchestrator",
        calls(("researcher", "call-1", "first visit")),
        calls(("researcher", "call-2", "second visit")),
        Answer("ok"),
    )
    strands.Agent(
        model=model, tools=[researcher.as_tool(preserve_context=True)], callback_handler=None
    )("go")
    assert seen == [0, 1]
    assert prompts(sub_model, 2)[:3] == [BRIEFING, "Noted.", "first visit"]
    assert prompts(sub_model, 2)[-1] == "second visit"


# --- streaming -------------------------------------------------------------------------------


def test_the_sub_agents_progress_streams_through_the_orchestrator_tagged_with_its_call(
    tmp_path: Path,
) -> None:
    researcher = strands.Agent(
        model=scripted(tmp_path, "researcher", Answer("streamed answer")),
        name="researcher",
        callback_handler=None,
    )
    model = scripted(
        tmp_path, "orchestrator", calls(("researcher", "call-3", "stream it")), Answer("ok")
    )
    orchestrator = strands.Agent(model=model, tools=[researcher.as_tool()], callback_handler=None)

    async def collect() -> list[dict[str, Any]]:
        return [event async for event in orchestrator.stream_async("go")]

    forwarded = [
        event["tool_stream_event"]
        for event in asyncio.run(collect())
        if "tool_stream_event" in event
    ]
    assert forwarded, "nothing of the sub-agent's run reached the orchestrator's stream"
    assert {event["tool_use"]["toolUseId"] for event in forwarded} == {"call-3"}
    chunks = [event["data"]["data"] for event in forwarded if "data" in event["data"]]
    assert strip_marker("".join(chunks)) == "streamed answer"


def test_the_wrapped_agent_runs_as_a_plain_tool_outside_an_agent_loop(tmp_path: Path) -> None:
    """An ``AgentTool`` may be streamed by any executor, with no orchestrator in its invocation
    state: the sub-agent still runs and the last event is its result for the call."""
    sub_model = scripted(tmp_path, "researcher", Answer("direct answer"))
    researcher = strands.Agent(model=sub_model, name="researcher", callback_handler=None)
    wrapped = researcher.as_tool()
    use = {"toolUseId": "direct-1", "name": "researcher", "input": {"input": "asked directly"}}

    async def run() -> list[Any]:
        return [event async for event in wrapped.stream(use, {})]

    last = asyncio.run(run())[-1]
    assert isinstance(last, ToolResultEvent)
    assert prompts(sub_model) == ["asked directly"]
    assert last.tool_result["toolUseId"] == "direct-1"
    assert last.tool_result["status"] == "success"
    assert said(last.tool_result["content"]) == ["direct answer"]


def test_tool_middleware_sees_which_wrapped_agent_each_streamed_event_comes_from(
    tmp_path: Path,
) -> None:
    """The sub-agent's events reach the orchestrator's tool middleware carrying the
    agent-as-tool that produced them (``agent_as_tool``), so a middleware can tell sub-agent
    progress from other tool output."""
    researcher = strands.Agent(
        model=scripted(tmp_path, "researcher", Answer("found")),
        name="researcher",
        callback_handler=None,
    )
    model = scripted(tmp_path, "orchestrator", calls(("lookup", "call-1", "find it")), Answer("ok"))
    orchestrator = strands.Agent(
        model=model, tools=[researcher.as_tool(name="lookup")], callback_handler=None
    )
    sources: list[tuple[str, str]] = []

    async def watch(context: Any, next_fn: Any) -> AsyncIterator[Any]:
        async for event in next_fn(context):
            source = getattr(event, "agent_as_tool", None)
            if source is not None:
                sources.append((source.tool_name, source.agent.name))
            yield event

    orchestrator.add_middleware(ExecuteToolStage, watch)
    assert orchestrator("go").stop_reason == "end_turn"
    assert sources
    assert set(sources) == {("lookup", "researcher")}


# --- a human approves the call first ---------------------------------------------------------


class ApproveDelegation(HookProvider):
    """Asks a human before the orchestrator calls the sub-agent; a refusal cancels the call."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.ask)

    def ask(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "researcher":
            return
        if event.interrupt("delegate-to-researcher", reason="may the researcher run?") != "yes":
            event.cancel_tool = "refused"


def test_a_call_approved_by_a_human_first_runs_the_sub_agent_fresh(tmp_path: Path) -> None:
    """The orchestrator is resuming from its own hook's interrupt, not from one the sub-agent
    raised: the approved call runs the sub-agent from the start."""
    sub_model = scripted(tmp_path, "researcher", Answer("approved and answered"))
    researcher = strands.Agent(model=sub_model, name="researcher", callback_handler=None)
    model = scripted(
        tmp_path, "orchestrator", calls(("researcher", "call-1", "go on")), Answer("done")
    )
    orchestrator = strands.Agent(
        model=model,
        tools=[researcher.as_tool()],
        hooks=[ApproveDelegation()],
        callback_handler=None,
    )
    asked = orchestrator("start")
    assert asked.stop_reason == "interrupt"
    assert not sub_model.requests
    [question] = asked.interrupts
    responses = [{"interruptResponse": {"interruptId": question.id, "response": "yes"}}]
    assert orchestrator(responses).stop_reason == "end_turn"
    assert prompts(sub_model) == ["go on"]
    sent = sent_back(model)["call-1"]
    assert sent["status"] == "success"
    assert said(sent["content"]) == ["approved and answered"]


# --- resuming a sub-agent's interrupt after a restart ----------------------------------------


class Clerk:
    """An orchestrator (with a file session) that sends an ephemeral clerk sub-agent to stamp a
    form; the clerk's stamp tool asks a human first.  ``build`` makes the agents again from the
    session files, as a restarted process does."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.stamped: list[str] = []

    def build(self) -> tuple[Any, Any, Any]:
        from strands.session.file_session_manager import FileSessionManager

        stamped = self.stamped

        @tool(context=True)
        def stamp(tool_context: ToolContext) -> str:
            """Stamp the form, if a human approves."""
            if tool_context.interrupt("stamp-approval", reason="may I stamp?") != "approve":
                return "not stamped"
            stamped.append(tool_context.tool_use["toolUseId"])
            return "stamped"

        clerk_model = scripted(
            self.workdir, "clerk", CallTools((ToolCall("stamp", "stamp-1"),)), Answer("stamped")
        )
        clerk = strands.Agent(model=clerk_model, name="clerk", tools=[stamp], callback_handler=None)
        model = scripted(
            self.workdir,
            "orchestrator",
            calls(("clerk", "call-1", "stamp the form")),
            Answer("done"),
        )
        sessions = FileSessionManager(session_id="office", storage_dir=str(self.workdir))
        orchestrator = strands.Agent(
            model=model,
            tools=[clerk.as_tool(preserve_context=False)],
            agent_id="orchestrator",
            session_manager=sessions,
            callback_handler=None,
        )
        return orchestrator, model, clerk_model

    def stored_turns(self) -> tuple[Path, dict[str, Any]]:
        """The orchestrator's session file and the parsed document."""
        path = self.workdir / "session_office" / "agents" / "agent_orchestrator" / "agent.json"
        return path, json.loads(path.read_text())


def streamed(agent: Any, prompt: Any) -> tuple[Any, list[dict[str, Any]]]:
    """The result of ``stream_async`` and every event it yielded."""

    async def collect() -> list[dict[str, Any]]:
        return [event async for event in agent.stream_async(prompt)]

    events = asyncio.run(collect())
    return events[-1]["result"], events


def interrupted_calls(events: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """(toolUseId, interrupt ids) of each interrupted tool call the stream reported."""
    return [
        (
            event["tool_interrupt_event"]["tool_use"]["toolUseId"],
            [interrupt.id for interrupt in event["tool_interrupt_event"]["interrupts"]],
        )
        for event in events
        if "tool_interrupt_event" in event
    ]


def _interrupted(workdir: Path) -> tuple[Clerk, str]:
    """The clerk's question reaches the caller, reported on the call that raised it."""
    office = Clerk(workdir)
    orchestrator, _, _ = office.build()
    asked, events = streamed(orchestrator, "file the form")
    assert asked.stop_reason == "interrupt"
    [question] = asked.interrupts
    assert question.name == "stamp-approval"
    assert interrupted_calls(events) == [("call-1", [question.id])]
    return office, question.id


def _damage_turn(office: Clerk, damage: Any) -> None:
    path, document = office.stored_turns()
    context = document["_internal_state"]["interrupt_state"]["context"]
    turns = context["sub_agent_interrupted_turns"]
    assert sorted(turns) == ["call-1"], "the orchestrator stores the clerk's turn by call"
    damage(turns)
    path.write_text(json.dumps(document))


def _approve(orchestrator: Any, interrupt_id: str) -> Any:
    return orchestrator(
        [{"interruptResponse": {"interruptId": interrupt_id, "response": "approve"}}]
    )


def test_an_interrupted_sub_agent_resumes_after_a_restart(tmp_path: Path) -> None:
    office, question = _interrupted(tmp_path)
    orchestrator, model, clerk_model = office.build()
    assert _approve(orchestrator, question).stop_reason == "end_turn"
    assert office.stamped == ["stamp-1"]
    sent = sent_back(model)["call-1"]
    assert sent["status"] == "success"
    assert said(sent["content"]) == ["stamped"]
    assert len(clerk_model.requests) == 1  # after the stamp, its answer; nothing replayed


def _lose(turns: dict[str, Any]) -> None:
    del turns["call-1"]


def _unreadable_without_questions(turns: dict[str, Any]) -> None:
    turns["call-1"]["schema_version"] = "0.0"
    del turns["call-1"]["data"]["interrupt_state"]


@pytest.mark.parametrize(
    "damage", [_lose, _unreadable_without_questions], ids=["lost", "unreadable"]
)
def test_a_lost_sub_agent_turn_tells_the_caller_the_answer_was_not_applied(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: Any
) -> None:
    """If the stored turn is gone (or unreadable and names no question), the clerk cannot resume:
    the call's result is an error telling the orchestrator's model that the human's response was
    not applied, the stamp never runs, and the orchestrator goes on."""
    office, question = _interrupted(tmp_path)
    _damage_turn(office, damage)
    orchestrator, model, clerk_model = office.build()
    with caplog.at_level(logging.ERROR, logger="strands"):
        assert _approve(orchestrator, question).stop_reason == "end_turn"
    assert office.stamped == []
    assert not clerk_model.requests
    [(use_id, sent)] = sent_back(model).items()
    assert use_id == "call-1"
    assert sent["status"] == "error"
    [text] = [block["text"] for block in sent["content"]]
    assert "not applied" in text.lower()
    assert any(record.levelno == logging.ERROR for record in caplog.records)


def test_an_unreadable_sub_agent_turn_asks_its_question_again(tmp_path: Path) -> None:
    """A stored turn that cannot be loaded but still names its question: the question is asked
    again (the response can be applied on a later attempt); nothing runs meanwhile."""
    office, question = _interrupted(tmp_path)

    def unreadable(turns: dict[str, Any]) -> None:
        turns["call-1"]["schema_version"] = "0.0"

    _damage_turn(office, unreadable)
    orchestrator, model, clerk_model = office.build()
    responses = [{"interruptResponse": {"interruptId": question, "response": "approve"}}]
    again, events = streamed(orchestrator, responses)
    assert again.stop_reason == "interrupt"
    assert interrupted_calls(events) == [("call-1", [question])]
    assert [(asked.id, asked.name) for asked in again.interrupts] == [(question, "stamp-approval")]
    assert office.stamped == []
    assert not clerk_model.requests
    assert len(model.requests) == 0

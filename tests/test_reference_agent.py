"""The reference agent loop driven directly: park, resume, refuse, and agent-as-tool."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

import pytest

from fakes.log import AppendOnlyLog
from fakes.protected import APPROVE, DENY, Ledger, ProtectedAction, label_of
from harness.reference.agent import (
    Agent,
    AgentError,
    Completed,
    ToolCall,
    ToolOutcome,
    ToolUse,
    _answered,
    _answered_view,
)
from harness.reference.agent_as_tool import SUB_AGENT_TURNS, LostTurnError, SubAgentTool
from harness.reference.continuation import ContinuationError
from harness.reference.conversation import SlidingWindow
from harness.reference.naming import root_visible_id, tool_interrupt_id
from harness.reference.state import AgentState, Interrupt, InterruptState
from harness.targets.reference import ActionTool

Message = dict[str, Any]
CANARY = "canary-7f3a"
FIRST = tool_interrupt_id("1.t1", "approval")
SECOND = tool_interrupt_id("1.t1", "approval-2")


def is_prompt(message: Message) -> bool:
    return message["role"] == "user" and not any("toolResult" in b for b in message["content"])


class ToolsThenAnswer:
    """Calls the given tools after a prompt and answers after tool results; records requests."""

    def __init__(self, *uses: tuple[str, str, Any], answer: str = "finished") -> None:
        self.uses = uses
        self.answer = answer
        self.requests: list[list[Message]] = []

    def __call__(self, messages: list[Message], model_state: dict[str, Any]) -> Message:
        self.requests.append(messages)
        if self.uses and is_prompt(messages[-1]):
            return {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": use_id, "name": name, "input": tool_input}}
                    for name, use_id, tool_input in self.uses
                ],
            }
        return {"role": "assistant", "content": [{"text": self.answer}]}


class CountingTool:
    """Completes at once and counts its runs."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.runs = 0

    def prepare(self, caller: AgentState, use: ToolUse) -> None:
        return None

    def run(self, call: ToolCall) -> ToolOutcome:
        self.runs += 1
        return Completed(f"{self.name} ran")


class NotingTool:
    """Writes a key into the caller's interrupt context, then asks a question."""

    name = "note"

    def prepare(self, caller: AgentState, use: ToolUse) -> None:
        return None

    def run(self, call: ToolCall) -> ToolOutcome:
        call.caller.interrupt_state.context["note"] = {"written_by": call.use.tool_use_id}
        return Completed(str(call.interrupt("confirm", "ok?")))


def new_ledger() -> Ledger:
    return Ledger(AppendOnlyLog())


def ran(ledger: Ledger) -> list[str]:
    return [execution["action"] for execution in ledger.executions()]


def action(name: str, label: str, ledger: Ledger, questions: int = 1) -> ActionTool:
    return ActionTool(name, ProtectedAction(label, questions), ledger, agent="agent")


def acting_agent(ledger: Ledger, questions: int = 1) -> Agent:
    return Agent(
        "agent",
        ToolsThenAnswer(("act", "t1", {})),
        [action("act", "act-1", ledger, questions)],
    )


def snapshot(agent: Agent) -> dict[str, Any]:
    return agent.state.to_json()


def tool_results(agent: Agent) -> list[dict[str, Any]]:
    return [
        block["toolResult"]
        for message in agent.state.messages
        for block in message["content"]
        if "toolResult" in block
    ]


def test_a_prompt_answered_with_text_ends_the_turn() -> None:
    agent = Agent("agent", ToolsThenAnswer(answer="hello"))

    result = agent("hi")

    assert (result.stop_reason, result.text, result.interrupts) == ("end_turn", "hello", ())
    assert [m["role"] for m in agent.state.messages] == ["user", "assistant"]
    assert not agent.state.interrupt_state.activated


def test_an_approved_action_parks_the_turn_then_runs_exactly_once() -> None:
    ledger = new_ledger()
    agent = acting_agent(ledger)

    parked = agent("go")

    assert parked.stop_reason == "interrupt"
    assert [i.id for i in parked.interrupts] == [FIRST]
    assert label_of(parked.interrupts[0].reason) == "act-1"
    assert agent.state.interrupt_state.activated
    assert ran(ledger) == []

    resumed = agent.resume({FIRST: APPROVE})

    assert (resumed.stop_reason, resumed.text) == ("end_turn", "finished")
    assert ran(ledger) == ["act-1"]
    assert agent.state.interrupt_state.activated is False
    assert agent.state.interrupt_state.context == {}
    assert [r["content"] for r in tool_results(agent)] == [[{"text": "act-1: done"}]]


def test_a_denied_action_runs_nothing() -> None:
    ledger = new_ledger()
    agent = acting_agent(ledger)
    agent("go")

    result = agent.resume({FIRST: DENY})

    assert result.stop_reason == "end_turn"
    assert ran(ledger) == []
    assert [r["content"] for r in tool_results(agent)] == [[{"text": "act-1: refused"}]]


@pytest.mark.parametrize(
    ("responses", "problem"),
    [
        ({"tool:1.t9:approval": APPROVE}, "no pending interrupt"),
        ({FIRST: APPROVE, "sub:1.o1:tool:1.t1:approval": APPROVE}, "no pending interrupt"),
        ({FIRST: None}, "must not be null"),
    ],
)
def test_a_bad_resume_raises_and_leaves_the_parked_turn_as_it_was(
    responses: dict[str, Any], problem: str
) -> None:
    ledger = new_ledger()
    agent = acting_agent(ledger)
    agent("go")
    before = snapshot(agent)

    with pytest.raises(AgentError, match=problem):
        agent.resume(responses)

    assert snapshot(agent) == before
    assert ran(ledger) == []
    assert agent.resume({FIRST: APPROVE}).stop_reason == "end_turn"
    assert ran(ledger) == ["act-1"]


def test_resume_without_a_parked_turn_raises_and_changes_nothing() -> None:
    ledger = new_ledger()
    agent = acting_agent(ledger)
    with pytest.raises(AgentError, match="no parked turn"):
        agent.resume({})

    agent("go")
    agent.resume({FIRST: APPROVE})
    before = snapshot(agent)

    with pytest.raises(AgentError, match="no parked turn"):
        agent.resume({FIRST: APPROVE})
    assert snapshot(agent) == before
    assert ran(ledger) == ["act-1"]


def test_a_prompt_while_parked_raises_and_changes_nothing() -> None:
    agent = acting_agent(new_ledger())
    agent("go")
    before = snapshot(agent)

    with pytest.raises(AgentError, match="parked turn"):
        agent("another prompt")

    assert snapshot(agent) == before


def test_a_second_question_gets_a_new_id_and_the_first_answer_re_sent_is_refused() -> None:
    ledger = new_ledger()
    agent = acting_agent(ledger, questions=2)
    agent("go")

    second = agent.resume({FIRST: APPROVE})

    assert second.stop_reason == "interrupt"
    assert [(i.id, i.response) for i in second.interrupts] == [(SECOND, None)]
    assert ran(ledger) == []

    before = snapshot(agent)
    with pytest.raises(AgentError, match=r"no pending interrupt \['tool:1\.t1:approval'\]"):
        agent.resume({FIRST: APPROVE})  # the old answer, re-sent, is stale: refused (I14)

    assert snapshot(agent) == before
    assert [i.id for i in agent.state.interrupt_state.pending] == [SECOND]
    assert ran(ledger) == []

    assert agent.resume({SECOND: APPROVE}).stop_reason == "end_turn"
    assert ran(ledger) == ["act-1"]


def test_a_second_question_denied_runs_nothing() -> None:
    ledger = new_ledger()
    agent = acting_agent(ledger, questions=2)
    agent("go")
    agent.resume({FIRST: APPROVE})

    assert agent.resume({SECOND: DENY}).stop_reason == "end_turn"
    assert ran(ledger) == []


def test_keys_written_by_a_tool_into_the_interrupt_context_survive_parking() -> None:
    agent = Agent("agent", ToolsThenAnswer(("note", "n1", {})), [NotingTool()])

    agent("go")

    assert agent.state.interrupt_state.context["note"] == {"written_by": "n1"}
    assert agent.state.copy().interrupt_state.context["note"] == {"written_by": "n1"}

    agent.resume({tool_interrupt_id("1.n1", "confirm"): "yes"})

    assert agent.state.interrupt_state.context == {}  # a turn that ends clears it
    assert [r["content"] for r in tool_results(agent)] == [[{"text": "yes"}]]


def test_a_tool_that_completed_before_the_park_does_not_run_again() -> None:
    ledger = new_ledger()
    counter = CountingTool("count")
    agent = Agent(
        "agent",
        ToolsThenAnswer(("count", "c1", {}), ("act", "t1", {})),
        [counter, action("act", "act-1", ledger)],
    )
    agent("go")
    assert counter.runs == 1

    agent.resume({FIRST: APPROVE})

    assert counter.runs == 1
    assert ran(ledger) == ["act-1"]
    assert [r["toolUseId"] for r in tool_results(agent)] == ["c1", "t1"]


def test_an_unknown_tool_gets_an_error_tool_result() -> None:
    agent = Agent("agent", ToolsThenAnswer(("missing", "m1", {})))

    result = agent("go")

    assert result.stop_reason == "end_turn"
    [only] = tool_results(agent)
    assert only["status"] == "error"
    assert "unknown tool 'missing'" in only["content"][0]["text"]


def test_an_agent_rebuilt_without_the_tool_it_parked_on_refuses_an_answer_to_that_call() -> None:
    """A deploy took the tool away: the answer would reach no call, so it is refused loudly and
    the agent is left as it was, the question still pending (never run, never dropped)."""
    ledger = new_ledger()
    parked = acting_agent(ledger)
    parked("go")

    rebuilt = Agent("agent", ToolsThenAnswer(), [], state=parked.state)
    before = snapshot(rebuilt)
    with pytest.raises(AgentError, match="no longer has tool 'act'"):
        rebuilt.resume({FIRST: APPROVE})

    assert snapshot(rebuilt) == before
    assert ran(ledger) == []
    assert [interrupt.id for interrupt in rebuilt.state.interrupt_state.pending] == [FIRST]


def test_a_call_whose_tool_is_gone_stays_parked_while_the_rest_of_its_turn_resumes() -> None:
    ledger = new_ledger()
    parked = acting_agent(ledger)
    parked("go")

    rebuilt = Agent("agent", ToolsThenAnswer(), [], state=parked.state)
    result = rebuilt.resume({})

    assert result.stop_reason == "interrupt"
    assert [interrupt.id for interrupt in result.interrupts] == [FIRST]
    assert ran(ledger) == []
    assert tool_results(rebuilt) == []


def test_a_model_that_fails_leaves_the_agent_unchanged() -> None:
    def failing(messages: list[Message], model_state: dict[str, Any]) -> Message:
        model_state["response_id"] = "half-written"
        raise RuntimeError("provider down")

    agent = Agent("agent", failing)
    before = snapshot(agent)

    with pytest.raises(RuntimeError, match="provider down"):
        agent("hi")

    assert snapshot(agent) == before


def test_the_model_state_a_model_writes_is_kept_and_sent_back() -> None:
    seen: list[dict[str, Any]] = []

    def counting(messages: list[Message], model_state: dict[str, Any]) -> Message:
        seen.append(dict(model_state))
        model_state["calls"] = model_state.get("calls", 0) + 1
        return {"role": "assistant", "content": [{"text": "ok"}]}

    agent = Agent("agent", counting)
    agent("one")
    agent("two")

    assert seen == [{}, {"calls": 1}]
    assert agent.state.model_state == {"calls": 2}


def test_the_conversation_manager_trims_what_the_model_is_sent() -> None:
    model = ToolsThenAnswer()
    agent = Agent("agent", model, conversation_manager=SlidingWindow(size=1))

    agent("one")
    agent("two")

    assert [len(request) for request in model.requests] == [1, 1]
    assert agent.state.conversation_manager_state == {
        "model_call_count": 2,
        "removed_message_count": 2,
    }


def test_an_agent_given_a_window_state_keeps_it_and_one_without_starts_fresh() -> None:
    window = SlidingWindow(size=4, per_turn=2)
    counted = AgentState(
        conversation_manager_state={"model_call_count": 5, "removed_message_count": 3}
    )

    assert (
        Agent("a", ToolsThenAnswer(), conversation_manager=window, state=counted).state == counted
    )
    assert Agent("b", ToolsThenAnswer(), conversation_manager=window).state == AgentState(
        conversation_manager_state=window.initial_state()
    )


# ---- agent-as-tool -------------------------------------------------------------------------


def helper_builder(
    ledger: Ledger, events: list[dict[str, Any]], questions: int = 1
) -> tuple[Any, list[Agent]]:
    built: list[Agent] = []

    def build() -> Agent:
        agent = Agent(
            "helper",
            ToolsThenAnswer(("act", "t1", {}), answer="helper done"),
            [action("act", "helper-act", ledger, questions)],
            state=AgentState(state={"secret": CANARY}),
            emit=events.append,
        )
        built.append(agent)
        return agent

    return build, built


def parent_with_helper(
    ledger: Ledger,
    events: list[dict[str, Any]],
    *,
    questions: int = 1,
    own_action: bool = False,
    state: AgentState | None = None,
) -> Agent:
    build, _ = helper_builder(ledger, events, questions)
    uses: list[tuple[str, str, Any]] = [("helper", "o1", {"prompt": "help"})]
    tools: list[Any] = [SubAgentTool("helper", build, preserve_context=False)]
    if own_action:
        uses.insert(0, ("act", "t1", {}))
        tools.append(action("act", "parent-act", ledger))
    return Agent("parent", ToolsThenAnswer(*uses), tools, state=state, emit=events.append)


def restarted(
    parent: Agent, ledger: Ledger, *, questions: int = 1, own_action: bool = False
) -> Agent:
    """The same parent rebuilt from its state alone: every sub-agent object is gone."""
    return parent_with_helper(
        ledger, [], questions=questions, own_action=own_action, state=parent.state
    )


NESTED = root_visible_id("1.o1", FIRST)


def test_nested_and_ordinary_interrupts_in_one_turn_are_answered_independently() -> None:
    ledger = new_ledger()
    parent = parent_with_helper(ledger, [], own_action=True)

    first = parent("go")
    assert sorted(i.id for i in first.interrupts) == sorted([FIRST, NESTED])

    second = parent.resume({NESTED: APPROVE})

    assert [i.id for i in second.interrupts] == [FIRST]
    assert ran(ledger) == ["helper-act"]

    assert parent.resume({FIRST: APPROVE}).stop_reason == "end_turn"
    assert ran(ledger) == ["helper-act", "parent-act"]


def test_a_sub_agent_asking_again_raises_a_new_root_visible_id_with_no_response() -> None:
    ledger = new_ledger()
    parent = parent_with_helper(ledger, [], questions=2)
    parent("go")

    again = parent.resume({NESTED: APPROVE})

    assert [(i.id, i.response) for i in again.interrupts] == [
        (root_visible_id("1.o1", SECOND), None)
    ]
    assert [(i.id, i.response) for i in parent.state.interrupt_state.pending] == [
        (root_visible_id("1.o1", SECOND), None)
    ]
    assert ran(ledger) == []

    parent.resume({root_visible_id("1.o1", SECOND): APPROVE})
    assert ran(ledger) == ["helper-act"]


def test_a_failed_resume_changes_nothing_runs_nothing_and_keeps_the_interrupt_pending() -> None:
    ledger = new_ledger()
    parent = parent_with_helper(ledger, [], own_action=True)
    parent("go")
    parent = restarted(parent, ledger, own_action=True)
    entry = parent.state.interrupt_state.context[SUB_AGENT_TURNS]["1.o1"]
    good_version = entry["schema_version"]
    entry["schema_version"] = "2.0"
    before = snapshot(parent)

    with pytest.raises(ContinuationError, match="schema version"):
        parent.resume({FIRST: APPROVE, NESTED: APPROVE})

    assert snapshot(parent) == before
    assert ran(ledger) == []
    assert [(i.id, i.response) for i in parent.state.interrupt_state.pending] == [
        (FIRST, None),
        (NESTED, None),
    ]

    entry["schema_version"] = good_version  # repaired: the same answer still works
    assert parent.resume({FIRST: APPROVE, NESTED: APPROVE}).stop_reason == "end_turn"
    assert sorted(ran(ledger)) == ["helper-act", "parent-act"]


def test_an_ephemeral_call_whose_stored_turn_is_gone_fails_loudly_and_changes_nothing() -> None:
    ledger = new_ledger()
    parent = parent_with_helper(ledger, [])
    parent("go")
    parent = restarted(parent, ledger)
    del parent.state.interrupt_state.context[SUB_AGENT_TURNS]["1.o1"]
    before = snapshot(parent)

    with pytest.raises(ContinuationError, match=r"no stored turn for call '1\.o1'"):
        parent.resume({NESTED: APPROVE})

    assert snapshot(parent) == before
    assert ran(ledger) == []


def test_a_restored_sub_agent_resumes_exactly_like_the_in_memory_one() -> None:
    in_memory_ledger, restored_ledger = new_ledger(), new_ledger()
    in_memory = parent_with_helper(in_memory_ledger, [], questions=2)
    in_memory("go")
    restored = restarted(in_memory, restored_ledger, questions=2)

    answers = {NESTED: APPROVE}
    assert in_memory.resume(answers) == restored.resume(answers)
    assert snapshot(in_memory) == snapshot(restored)
    answers = {root_visible_id("1.o1", SECOND): APPROVE}
    assert in_memory.resume(answers) == restored.resume(answers)
    assert snapshot(in_memory) == snapshot(restored)
    assert ran(in_memory_ledger) == ran(restored_ledger) == ["helper-act"]


def test_an_ephemeral_sub_agent_tool_shared_by_two_parents_resumes_only_its_callers_turn() -> None:
    """Invariant 10: another orchestrator's answer never reaches this caller's sub-agent turn."""
    ledger = new_ledger()

    def helper_model(messages: list[Message], model_state: dict[str, Any]) -> Message:
        if is_prompt(messages[-1]):
            return ToolsThenAnswer(("act", "t1", {}))(messages, model_state)
        return {"role": "assistant", "content": [{"text": f"helped {messages[0]['content']}"}]}

    shared = SubAgentTool(
        "helper",
        lambda: Agent("helper", helper_model, [action("act", "helper-act", ledger)]),
        preserve_context=False,
    )
    one = Agent("one", ToolsThenAnswer(("helper", "o1", {"prompt": "for one"})), [shared])
    two = Agent("two", ToolsThenAnswer(("helper", "o1", {"prompt": "for two"})), [shared])
    one("go")
    two("go")

    one.resume({NESTED: APPROVE})  # the human behind "one" approves
    two.resume({NESTED: DENY})  # the human behind "two" refuses

    assert "for one" in tool_results(one)[0]["content"][0]["text"]
    assert "refused" not in tool_results(one)[0]["content"][0]["text"]
    assert "for two" in tool_results(two)[0]["content"][0]["text"]
    assert ran(ledger) == ["helper-act"]  # exactly one: the turn of "one"


def test_the_ephemeral_turn_is_stored_in_the_parent_and_consumed_on_resume() -> None:
    parent = parent_with_helper(new_ledger(), [])
    parent("go")

    entry = parent.state.interrupt_state.context[SUB_AGENT_TURNS]["1.o1"]
    assert entry["owner"] == {"sub_agent": "helper", "call": "1.o1"}
    assert entry["data"]["state"] == {"secret": CANARY}

    parent.resume({NESTED: APPROVE})

    assert SUB_AGENT_TURNS not in parent.state.interrupt_state.context


def test_events_never_carry_the_stored_continuation() -> None:
    events: list[dict[str, Any]] = []
    ledger = new_ledger()
    parent = parent_with_helper(ledger, events, questions=2, own_action=True)
    parent("go")
    parent.resume({NESTED: APPROVE})
    parent.resume({root_visible_id("1.o1", SECOND): APPROVE, FIRST: APPROVE})

    assert {event["type"] for event in events} == {"message", "interrupt", "result"}
    public = json.dumps(events)
    for private in (SUB_AGENT_TURNS, "schema_version", CANARY, "tool_use_message"):
        assert private not in public


@pytest.mark.parametrize(
    ("tool_input", "prompt"),
    [({"prompt": "summarise"}, "summarise"), ("plain text", "plain text"), ({"q": 1}, "{'q': 1}")],
)
def test_a_sub_agent_is_prompted_with_the_calls_prompt_field_or_its_whole_input(
    tool_input: Any, prompt: str
) -> None:
    helper_model = ToolsThenAnswer(answer="helped")
    tool = SubAgentTool("helper", lambda: Agent("helper", helper_model), preserve_context=False)
    parent = Agent("parent", ToolsThenAnswer(("helper", "o1", tool_input)), [tool])

    parent("go")

    assert helper_model.requests[0] == [{"role": "user", "content": [{"text": prompt}]}]
    assert tool_results(parent)[0]["content"] == [{"text": "helped"}]


def test_preparing_a_call_that_owns_no_interrupt_builds_and_changes_nothing() -> None:
    build, built = helper_builder(new_ledger(), [])
    tool = SubAgentTool("helper", build, preserve_context=False)
    caller = AgentState()

    tool.prepare(caller, ToolUse("o1", "helper", {}))

    assert built == []
    assert caller == AgentState()


def test_a_preserve_context_sub_agent_keeps_its_history_and_stores_nothing_in_the_parent() -> None:
    ledger = new_ledger()
    build, built = helper_builder(ledger, [])
    tool = SubAgentTool("helper", build, preserve_context=True)
    parent = Agent("parent", ToolsThenAnswer(("helper", "o1", {"prompt": "help"})), [tool])

    parent("go")
    assert not parent.state.interrupt_state.context.get(SUB_AGENT_TURNS)
    parent.resume({NESTED: APPROVE})
    [again] = parent("again").interrupts
    assert again.id != NESTED  # a question of a later prompt never reuses an earlier id
    parent.resume({again.id: APPROVE})

    assert len(built) == 1
    assert [m["content"][0].get("text") for m in built[0].state.messages if is_prompt(m)] == [
        "help",
        "help",
    ]
    assert ran(ledger) == ["helper-act", "helper-act"]


def test_a_preserve_context_sub_agent_that_lost_its_parked_turn_fails_naming_the_fix() -> None:
    ledger = new_ledger()
    build, _ = helper_builder(ledger, [])
    parent = Agent(
        "parent",
        ToolsThenAnswer(("helper", "o1", {})),
        [SubAgentTool("helper", build, preserve_context=True)],
    )
    parent("go")
    restarted = Agent(
        "parent",
        ToolsThenAnswer(("helper", "o1", {})),
        [SubAgentTool("helper", build, preserve_context=True)],
        state=parent.state,
    )
    before = snapshot(restarted)

    with pytest.raises(LostTurnError, match="session store"):
        restarted.resume({NESTED: APPROVE})

    assert snapshot(restarted) == before
    assert ran(ledger) == []


def test_a_parked_preserve_context_sub_agent_refuses_a_call_that_does_not_own_its_turn() -> None:
    ledger = new_ledger()
    build, _ = helper_builder(ledger, [])
    tool = SubAgentTool("helper", build, preserve_context=True)
    first = Agent("first", ToolsThenAnswer(("helper", "o1", {})), [tool])
    second = Agent("second", ToolsThenAnswer(("helper", "o9", {})), [tool])
    first("go")

    result = second("go")

    assert result.stop_reason == "end_turn"
    [refused] = tool_results(second)
    assert refused["status"] == "error"
    assert "belongs to another call" in refused["content"][0]["text"]
    assert first.resume({NESTED: APPROVE}).stop_reason == "end_turn"
    assert ran(ledger) == ["helper-act"]


def test_a_sub_agent_that_answers_with_no_text_returns_an_empty_result() -> None:
    helper = ToolsThenAnswer(answer="")
    tool = SubAgentTool("helper", lambda: Agent("helper", helper), preserve_context=False)
    parent = Agent("parent", ToolsThenAnswer(("helper", "o1", "go")), [tool])

    parent("go")

    assert tool_results(parent)[0]["content"] == [{"text": ""}]


@pytest.mark.parametrize("preserve_context", [True, False])
def test_a_sub_agent_tool_says_whether_it_keeps_the_sub_agents_history(
    preserve_context: bool,
) -> None:
    """Targets built on the reference (the known-bad variants) rebuild a tool from these."""
    tool = SubAgentTool(
        "helper", lambda: Agent("helper", ToolsThenAnswer()), preserve_context=preserve_context
    )

    assert tool.preserve_context is preserve_context
    assert (tool.live is not None) is preserve_context


def test_the_view_prepare_reads_keeps_every_field_of_the_state_but_the_answers() -> None:
    """``prepare_resume`` reads the parked turn through a view built field by field: a field
    added to the state later and left out of the view would reach ``Tool.prepare`` as its
    default, so every field but the interrupt state must be the state's own object."""
    state = AgentState()
    shared: dict[str, Any] = {}
    for field in fields(AgentState):
        if field.name != "interrupt_state":
            shared[field.name] = [field.name]  # an object of its own, told apart by identity
            setattr(state, field.name, shared[field.name])
    asked = [Interrupt("q1", "approval", {"label": "deploy"}), Interrupt("q2", "approval", None)]
    state.interrupt_state = InterruptState(True, asked, {"kept": 1})
    view = _answered_view(state, {"q1": "approve"})
    for name, value in shared.items():
        assert getattr(view, name) is value, name
    assert view.interrupt_state.context is state.interrupt_state.context
    answered = _answered(state, {"q1": "approve"})
    assert view.interrupt_state.interrupts == answered.interrupt_state.interrupts
    assert [interrupt.response for interrupt in state.interrupt_state.interrupts] == [None, None]

"""LangGraph as a target: what the adapter does in both graph shapes on the installed release.
What each regression file violates there, exactly what each shape's findings file records, is
judged by ``check`` (by witness), which ``tox -e langgraph`` runs after these tests, not twice.

These tests need ``langgraph`` and ``langgraph-checkpoint-sqlite`` (``tox -e langgraph``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from fakes.log import AppendOnlyLog
from fakes.model import AgentScript, Answer, CallTools, Reply, Results, ScriptedModel, ToolCall
from fakes.protected import reason
from harness.checkers import check
from harness.findings import findings_path
from harness.history import History
from harness.runner import run_scenario
from harness.targets.langgraph import CHECKPOINTS, LangGraphTarget, sdk_version
from harness.targets.langgraph_graphs import StopAfterFailure, StopAfterInterrupt
from harness.targets.langgraph_model import conversation_of, model_class
from harness.targets.registry import available
from scenarios.loading import load_scenario, parse_scenario, regression_files

FILES = regression_files()
SHAPES = ("tools", "subgraph-node")
TARGETS = {shape: LangGraphTarget(shape) for shape in SHAPES}
VERSION = TARGETS["tools"].info.version


def regression(stem: str) -> Path:
    return next(path for path in FILES if path.stem == stem)


def history_of(shape: str, scenario: dict[str, Any], name: str = "inline") -> History:
    return run_scenario(TARGETS[shape], parse_scenario(scenario, name), name)


def test_both_shapes_are_registered_and_have_a_findings_file() -> None:
    assert sdk_version() == VERSION
    targets = available()
    for target in TARGETS.values():
        assert target.info.name in targets
        assert findings_path(target.info.name, VERSION).exists(), (
            f"no findings file for {target.info.name} {VERSION}: run `python -m harness check "
            f"--target {target.info.name}` and record what it finds before adding the release"
        )


# what makes a regression file not applicable here (the capabilities LangGraph lacks)
NOT_EXPRESSIBLE = {"corruption", "sliding_window", "storeless_sub_agents"}


def one_action(questions: int = 1) -> dict[str, Any]:
    return {
        "name": "orchestrator",
        "turns": [[{"tool": "operator", "id": "call-1"}]],
        "sub_agents": [
            {
                "name": "operator",
                "actions": [
                    {"tool": "restart_service", "label": "restart-service", "questions": questions}
                ],
                "turns": [[{"tool": "restart_service", "id": "call-1"}]],
            }
        ],
    }


def scenario(tree: dict[str, Any], *steps: Any) -> dict[str, Any]:
    return {"description": "a langgraph test", "source": "tests", "tree": tree, "steps": steps}


@pytest.mark.parametrize("shape", SHAPES)
def test_a_simple_approval_runs_the_action_once(shape: str) -> None:
    history = history_of(
        shape,
        scenario(one_action(), {"run": "restart it"}, {"answer": {"restart-service": "approve"}}),
    )
    asked, answered = history.steps
    assert asked.observed["stop_reason"] == "interrupt"
    assert [pending["label"] for pending in asked.pending] == ["restart-service"]
    assert asked.executions == []
    assert answered.observed["stop_reason"] == "end_turn"
    assert answered.observed["final_answer"] == "done"
    assert [(run["action"], run["agent"], run["tool_use_id"]) for run in answered.executions] == [
        ("restart-service", "orchestrator/operator", "call-1")
    ]
    assert check(history) == []


@pytest.mark.parametrize("shape", SHAPES)
def test_a_denial_runs_nothing_and_ends_the_turn(shape: str) -> None:
    history = history_of(
        shape,
        scenario(one_action(), {"run": "restart it"}, {"answer": {"restart-service": "deny"}}),
    )
    assert history.steps[1].executions == []
    assert history.steps[1].observed["stop_reason"] == "end_turn"


@pytest.mark.parametrize("shape", SHAPES)
def test_a_restart_between_question_and_answer_changes_nothing(shape: str) -> None:
    """The restart builds every graph, model and tool again on the same sqlite file; the run
    then matches its restart-free control (executions, pending, and every model request)."""
    history = history_of(
        shape,
        scenario(
            one_action(),
            {"run": "restart it"},
            {"restart": True},
            {"answer": {"restart-service": "approve"}},
        ),
    )
    assert history.control is not None
    assert history.steps[1].observed["error"] is None
    ours = [step for step in history.steps if step.kind != "restart"]
    for mine, theirs in zip(ours, history.control.steps, strict=True):
        assert mine.executions == theirs.executions
        assert mine.requests == theirs.requests
        assert mine.observed == theirs.observed
    assert len(history.steps[2].executions) == 1
    assert check(history) == []


@pytest.mark.parametrize("shape", SHAPES)
def test_the_resumed_sub_agent_continues_its_turn_rather_than_starting_over(shape: str) -> None:
    """After the restart the sub-agent's model is asked for turn 1 with the tool result in its
    conversation, not for turn 0 again: the turn really came back from the checkpoint file."""
    history = history_of(
        shape,
        scenario(
            one_action(),
            {"run": "restart it"},
            {"restart": True},
            {"answer": {"restart-service": "approve"}},
        ),
    )
    resumed = [
        (request["agent"], request["turn"], request["messages"])
        for request in history.steps[2].requests
    ]
    assert resumed == [("orchestrator/operator", 1, 3), ("orchestrator", 1, 3)]


@pytest.mark.parametrize("shape", SHAPES)
def test_twin_calls_of_one_sub_agent_get_distinct_ids_and_separate_answers(shape: str) -> None:
    path = regression("twin-calls")
    history = run_scenario(TARGETS[shape], load_scenario(path), path.stem)
    shown = history.steps[0].pending
    assert [pending["label"] for pending in shown] == ["send-mail", "send-mail"]
    assert len({pending["id"] for pending in shown}) == 2
    ran = history.steps[-1].executions
    assert sorted(run["tool_use_id"] for run in ran) == ["call-1", "call-1"]  # the local id
    assert len(ran) == 2
    assert check(history) == []


@pytest.mark.parametrize("shape", SHAPES)
def test_colliding_local_ids_approve_only_the_answered_sub_agent(shape: str) -> None:
    path = regression("colliding-ids")
    history = run_scenario(TARGETS[shape], load_scenario(path), path.stem)
    assert [run["agent"] for run in history.steps[1].executions] == ["orchestrator/worker_a"]
    assert [pending["label"] for pending in history.steps[1].pending] == ["deploy-b"]
    assert [run["agent"] for run in history.steps[3].executions] == ["orchestrator/worker_b"]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_second_question_gets_a_new_id(shape: str) -> None:
    history = history_of(
        shape,
        scenario(
            one_action(questions=2),
            {"run": "restart it"},
            {"answer": {"restart-service": "approve"}},
            {"answer": {"restart-service": "approve"}},
        ),
    )
    first, second = history.steps[0].pending, history.steps[1].pending
    assert [pending["reason"]["question"] for pending in first + second] == [1, 2]
    assert first[0]["id"] != second[0]["id"]
    assert history.steps[1].executions == []
    assert len(history.steps[2].executions) == 1


def test_a_resent_first_answer_approves_the_second_question() -> None:
    """The recorded re-interrupt finding, at its smallest: no restart is needed."""
    history = history_of(
        "tools",
        scenario(
            one_action(questions=2),
            {"run": "restart it"},
            {"answer": {"restart-service": "approve"}},
            {"resend": 1},
        ),
    )
    assert history.steps[1].pending, "the second question was not asked"
    assert len(history.steps[2].executions) == 1  # ran without the second answer
    assert "I4" in {violation.invariant for violation in check(history)}


def test_a_step_that_raises_shows_what_the_checkpoint_still_asks() -> None:
    """A per-thread sub-agent called twice makes create_react_agent raise (INVALID_CHAT_HISTORY),
    but the first call's question is still an interrupt of the thread's checkpoint: the failed
    step shows it, read from get_state, not an empty guess.  Where LangGraph dropped the pending
    tasks (a second prompt while questions wait), the failed steps that follow show nothing."""
    path = regression("shared-session")
    failed = run_scenario(TARGETS["tools"], load_scenario(path), path.stem).steps[0]
    assert str(failed.observed["error"]).startswith("ValueError: Found AIMessages with tool_calls")
    assert [pending["label"] for pending in failed.pending] == ["delete-originals"]
    path = regression("every-step-ends-visibly")
    history = run_scenario(TARGETS["tools"], load_scenario(path), path.stem)
    assert [pending["label"] for pending in history.steps[0].pending] == ["refund", "reroute"]
    assert all(step.observed["error"] and step.pending == [] for step in history.steps[1:])


def a_failed_task_then_a_sibling() -> dict[str, Any]:
    """A per-thread sub-agent called twice (the second call fails: INVALID_CHAT_HISTORY), then,
    in the same super-step, a protected action of the orchestrator that would ask."""
    return scenario(
        {
            "name": "orchestrator",
            "actions": [{"tool": "notify", "label": "notify"}],
            "turns": [
                [
                    {"tool": "archivist", "id": "call-1", "prompt": "archive 2024"},
                    {"tool": "archivist", "id": "call-2", "prompt": "archive 2025"},
                    {"tool": "notify", "id": "call-3"},
                ]
            ],
            "sub_agents": [
                {
                    "name": "archivist",
                    "preserve_context": True,
                    "session_store": True,
                    "actions": [{"tool": "delete_originals", "label": "delete-originals"}],
                    "turns": [[{"tool": "delete_originals", "id": "call-1"}]],
                }
            ],
        },
        {"run": "archive the last two years"},
        {"answer": {"delete-originals": "approve"}},
    )


@pytest.mark.usefixtures("threads_switch_often")
def test_after_a_task_failed_its_step_starts_no_other_task() -> None:
    """LangGraph cancels the tasks of a failed super-step its pool has not started, but its one
    worker may already have taken the next: whether the orchestrator's own action then asked
    (its question streamed, saved, pending) was thread timing.  The adapter takes the
    cancellation every time, so the failed step shows only the sub-agent's question, on every
    run."""
    runs = [history_of("tools", a_failed_task_then_a_sibling(), "sibling") for _ in range(4)]
    failed = runs[0].steps[0]
    assert str(failed.observed["error"]).startswith("ValueError: Found AIMessages with tool_calls")
    assert [pending["label"] for pending in failed.pending] == ["delete-originals"]
    asked = [
        interrupt["value"]["action"]
        for event in failed.events
        for interrupt in event["stream"].get("__interrupt__", ())
    ]
    assert asked == ["delete-originals"]
    assert len({history.dumps() for history in runs}) == 1


def test_a_guarded_task_body_after_a_failure_does_nothing() -> None:
    from langgraph.errors import GraphInterrupt

    stop = StopAfterFailure()
    ran: list[str] = []

    def fails() -> None:
        raise ValueError("broken")

    def runs(name: str) -> str:
        ran.append(name)
        return name

    def asks() -> None:
        raise GraphInterrupt(("a question",))

    assert stop.guard(runs)("first") == "first"
    with pytest.raises(GraphInterrupt):
        stop.guard(asks)()  # an interrupt is not a failure
    assert not stop.failed
    with pytest.raises(ValueError, match="broken"):
        stop.guard(fails)()
    assert stop.failed
    with pytest.raises(GraphInterrupt) as nothing:
        stop.guard(runs)("second")
    assert nothing.value.args == ((),)  # saved, streamed and raised by nobody
    assert ran == ["first"]


def test_checkpoints_live_in_the_sqlite_file_of_the_work_directory(tmp_path: Path) -> None:
    session = TARGETS["tools"].start(
        parse_scenario(scenario(one_action(), {"run": "x"}), "s"), tmp_path
    )
    session.run("restart it")
    with sqlite3.connect(tmp_path / CHECKPOINTS) as connection:
        namespaces = {row[0] for row in connection.execute("SELECT checkpoint_ns FROM checkpoints")}
    assert "" in namespaces  # the orchestrator
    assert any(namespace.startswith("tools:") for namespace in namespaces)  # the sub-agent


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("stem", ["partial-answers", "nested-partial-answer"])
@pytest.mark.usefixtures("threads_switch_often")
def test_histories_are_deterministic(stem: str, shape: str) -> None:
    """Also when threads switch often: a resumed step replays a stored write whose message id
    a checkpoint thread may or may not have seen (partial-answers), and a sub-agent's parked
    questions reach the root in one chunk, in an order of memory addresses
    (nested-partial-answer)."""
    path = regression(stem)
    first = run_scenario(TARGETS[shape], load_scenario(path), path.stem).dumps()
    second = run_scenario(TARGETS[shape], load_scenario(path), path.stem).dumps()
    assert first == second


def test_public_events_carry_no_run_identity_and_no_sub_agent_state() -> None:
    path = regression("event-payload")
    history = run_scenario(TARGETS["tools"], load_scenario(path), path.stem)
    events = [event for step in history.steps for event in step.events]
    assert any("__interrupt__" in event["stream"] for event in events)
    text = json.dumps(events)
    assert "canary-3b1f9e7c-private-state" not in text
    assert "resp-" not in text  # the sub-agent's provider response id
    assert "<interrupt-id>" in text


def test_hook_interrupts_ask_before_the_tool_runs() -> None:
    tree = one_action()
    tree["sub_agents"][0]["actions"][0]["hook"] = True
    for response, runs in (("approve", 1), ("deny", 0)):
        history = history_of(
            "tools",
            scenario(tree, {"run": "restart it"}, {"answer": {"restart-service": response}}),
        )
        assert [pending["label"] for pending in history.steps[0].pending] == ["restart-service"]
        assert len(history.steps[1].executions) == runs
        assert history.steps[1].observed["stop_reason"] == "end_turn"


def test_the_fake_model_is_a_real_chat_model_with_tool_calls(tmp_path: Path) -> None:
    journal = AppendOnlyLog(tmp_path / "journal.jsonl")
    script = AgentScript(default=(CallTools((ToolCall("ping", "t-1"),)), Answer("hello")))
    model = model_class()(core=ScriptedModel("solo", script, journal, stateful_provider=True))
    assert isinstance(model, BaseChatModel)
    bound = model.bind_tools([{"name": "ping", "description": "Ping.", "parameters": {}}])
    first = bound.invoke([HumanMessage("hi")])
    assert isinstance(first, AIMessage)
    assert [(call["name"], call["id"]) for call in first.tool_calls] == [("ping", "t-1")]
    reply = ToolMessage(content="pong", tool_call_id="t-1")
    second = bound.invoke([HumanMessage("hi"), first, reply])
    assert str(second.content).endswith("hello")
    requests = journal.records()
    assert [(r["turn"], r["messages"]) for r in requests] == [(0, 1), (1, 3)]
    # the provider's id rides in response_metadata and is sent back with the next request
    assert requests[1]["model_state"] == {"response_id": first.response_metadata["response_id"]}


def test_conversation_of_reads_prompts_replies_and_tool_results() -> None:
    messages = [
        HumanMessage("go"),
        AIMessage(content="[[marker]]", tool_calls=[{"name": "t", "args": {}, "id": "1"}]),
        ToolMessage(content="ok", tool_call_id="1"),
    ]
    said = conversation_of(messages)
    assert [type(item).__name__ for item in said] == ["Prompt", "Reply", "Results"]
    assert said[1] == Reply("[[marker]]", ("1",))
    assert said[2] == Results((("1", "ok"),))


def test_interrupts_that_tie_are_recorded_and_shown_in_the_order_raised(tmp_path: Path) -> None:
    """LangGraph collects a subgraph's interrupts from a set of futures (an order of memory
    addresses); the record and the handles follow the order the step raised them in."""
    from langgraph.types import Interrupt

    session = TARGETS["tools"].start(
        parse_scenario(scenario(one_action(), {"run": "x"}), "s"), tmp_path
    )
    asked = reason("restart-service", 1, 1)
    first, second = Interrupt(value=asked, id="a" * 32), Interrupt(value=asked, id="b" * 32)
    third = Interrupt(value=reason("restart-service", 2, 2), id="c" * 32)
    session.raised = {second.id: 0, third.id: 1, first.id: 2}
    for chunk in ({"__interrupt__": (first, second, third)}, {"__interrupt__": (third, first)}):
        session._record(chunk)
    recorded = [event["stream"]["__interrupt__"] for event in session.events()]
    assert [[entry["value"]["question"] for entry in entries] for entries in recorded] == [
        [1, 2, 1],
        [2, 1],
    ]
    for stream_order in ((first, second, third), (third, second, first)):
        shown = session._shown(stream_order, {})
        assert [pending.id for pending in shown] == ["lg-1", "lg-2", "lg-3"]
        assert [pending.reason["question"] for pending in shown] == [1, 1, 2]
    assert session._real_ids() == {"lg-1": second.id, "lg-2": first.id, "lg-3": third.id}


def test_message_ids_are_not_recorded() -> None:
    """The reducer sets a missing id in place while a checkpoint thread may be serializing the
    message, so a replayed write carries null or a uuid by timing."""
    from harness.targets.langgraph import MESSAGE_ID, _plain

    for message in (ToolMessage(content="ok", tool_call_id="1"), AIMessage(content="x", id="y")):
        assert _plain(message)["id"] == MESSAGE_ID


# --- strict resume (docs/adapters.md) -----------------------------------------------------------
# LangGraph 1.2.24 has a strict resume mode: the `strict_resume` option of langgraph_sdk's runs,
# for a LangGraph server, which the library reads from an internal configurable key.  These tests
# run it on a bare graph (no adapter, no harness) to keep what docs/adapters.md says about it true.

STRICT_RESUME = "__pregel_strict_resume"


def asking_graph(questions: int) -> Any:
    """One node that asks ``questions`` questions in turn and keeps the answers it was given."""
    from typing import TypedDict

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph
    from langgraph.types import interrupt

    class Answers(TypedDict, total=False):
        answers: list[Any]

    def ask(state: Answers) -> Answers:
        return {"answers": [interrupt(f"question {n}") for n in range(1, questions + 1)]}

    graph = StateGraph(Answers)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    return graph.compile(checkpointer=InMemorySaver())


def thread(strict: bool) -> dict[str, Any]:
    return {"configurable": {"thread_id": "t", STRICT_RESUME: strict}}


@pytest.mark.parametrize("strict", [False, True])
def test_strict_resume_still_takes_a_key_that_is_no_id_as_the_only_questions_answer(
    strict: bool,
) -> None:
    from langgraph.types import Command

    graph = asking_graph(1)
    graph.invoke({}, thread(strict))
    done = graph.invoke(Command(resume={"not an id": "approve"}), thread(strict))
    assert done["answers"] == [{"not an id": "approve"}]
    assert graph.get_state(thread(strict)).interrupts == ()


def test_strict_resume_refuses_an_answered_id_and_keeps_the_next_question() -> None:
    from langgraph.errors import UnknownInterruptError
    from langgraph.types import Command

    graph = asking_graph(2)
    [first] = graph.invoke({}, thread(True))["__interrupt__"]
    [second] = graph.invoke(Command(resume={first.id: "approve"}), thread(True))["__interrupt__"]
    with pytest.raises(UnknownInterruptError) as refused:
        graph.invoke(Command(resume={first.id: "approve"}), thread(True))
    assert refused.value.reason == "not_pending"
    assert [pending.id for pending in graph.get_state(thread(True)).interrupts] == [second.id]
    done = graph.invoke(Command(resume={second.id: "deny"}), thread(True))
    assert done["answers"] == ["approve", "deny"]
    with pytest.raises(UnknownInterruptError):  # after the end too: nothing is pending
        graph.invoke(Command(resume={second.id: "deny"}), thread(True))


def test_without_strict_resume_an_answered_id_answers_the_next_question() -> None:
    """The re-interrupt finding on a bare graph: the first answer, re-sent, is reused."""
    from langgraph.types import Command

    graph = asking_graph(2)
    [first] = graph.invoke({}, thread(False))["__interrupt__"]
    graph.invoke(Command(resume={first.id: "approve"}), thread(False))
    done = graph.invoke(Command(resume={first.id: "approve"}), thread(False))
    assert done["answers"] == ["approve", "approve"]


def test_the_one_task_shape_runs_a_message_s_tool_calls_as_one_toolnode_task() -> None:
    """`toolnode` differs from `tools` in the task a message's tool calls run in: on the pinned
    release one ToolNode task shows only its first interrupt (#6624), while the tools shape,
    one task per call, shows both; it is registered and has a findings file of its own."""
    one_task = LangGraphTarget("toolnode")
    assert one_task.info.name in available()
    assert findings_path(one_task.info.name, VERSION).exists()
    scenario = load_scenario(regression("upstream-langgraph-6624"))
    per_call = run_scenario(TARGETS["tools"], scenario, "upstream-langgraph-6624")
    assert check(per_call) == []
    shared = run_scenario(one_task, scenario, "upstream-langgraph-6624")
    [run, _] = shared.steps
    assert [pending["label"] for pending in run.observed["pending"]] == ["deploy-left"]
    assert "I3" in {violation.invariant for violation in check(shared)}


def test_a_guarded_tool_call_after_a_sibling_s_interrupt_on_its_thread_does_nothing() -> None:
    """The mark is the worker thread's: a one-task ToolNode's calls share its one worker, so a
    sibling after the interrupting call does nothing there, while a call on another thread (a
    call of another task, with a pool of its own) still runs."""
    import threading

    from langgraph.errors import GraphInterrupt

    siblings = StopAfterInterrupt()
    ran: list[str] = []

    def runs(name: str) -> str:
        ran.append(name)
        return name

    def asks() -> None:
        raise GraphInterrupt(("a question",))

    def on_a_thread_of_its_own() -> None:
        siblings.guard(runs)("elsewhere")

    assert siblings.guard(runs)("before") == "before"
    with pytest.raises(GraphInterrupt):
        siblings.guard(asks)()
    with pytest.raises(GraphInterrupt) as nothing:
        siblings.guard(runs)("after")
    assert nothing.value.args == ((),)  # read by nobody: Executor.map stopped at the interrupt
    other = threading.Thread(target=on_a_thread_of_its_own)
    other.start()
    other.join()
    assert ran == ["before", "elsewhere"]


@pytest.mark.parametrize(
    ("stem", "first_step"),
    [
        # the orchestrator's own action asks first: the releaser sub-agent is not called
        ("restart-after-colliding-partial-answer", ["orchestrator"]),
        # the first mailer call asks: the second is not called until the resume
        ("twin-calls", ["orchestrator", "orchestrator/mailer"]),
    ],
)
@pytest.mark.usefixtures("threads_switch_often")
def test_the_one_task_shape_stops_a_message_s_calls_at_the_first_interrupt_every_time(
    stem: str, first_step: list[str]
) -> None:
    """ToolNode's Executor.map cancels the calls not started when one raises an interrupt, but
    its one worker may have taken the next call already: with threads switching often, the
    sibling ran in about half the runs and the same file recorded four histories in 20 runs.
    The adapter takes the cancellation every time (StopAfterInterrupt): one history, and the
    first step asks no model on behalf of a call after the one that asked."""
    path = regression(stem)
    one_task = LangGraphTarget("toolnode")
    runs = [run_scenario(one_task, load_scenario(path), stem) for _ in range(6)]
    assert len({history.dumps() for history in runs}) == 1
    for history in (runs[0], runs[0].control):
        assert history is not None
        assert [request["agent"] for request in history.steps[0].requests] == first_step

"""The real OpenAI Agents SDK as a target: what the adapter does on the installed release.
What each regression file violates there, exactly what the release's findings file records, is
judged by ``check`` (by witness), which ``tox -e openai-agents`` runs after these tests, not twice.

These tests need ``openai-agents`` (``tox -e openai-agents`` installs the pinned release).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.models.interface import Model

from fakes.log import AppendOnlyLog
from fakes.model import (
    AgentScript,
    Answer,
    CallTools,
    Prompt,
    Reply,
    Results,
    ScriptedModel,
    ToolCall,
)
from harness.checkers import check
from harness.commands.inputs import isolated
from harness.findings import findings_path
from harness.history import History
from harness.runner import run_scenario
from harness.scratch import kept_on_file
from harness.targets.openai_agents import OpenAIAgentsTarget, sdk_version
from harness.targets.openai_agents_model import conversation_of, model_class
from scenarios.loading import load_scenario, parse_scenario, regression_files

FILES = regression_files()
TARGET = OpenAIAgentsTarget()
VERSION = TARGET.info.version
set_tracing_disabled(True)


def test_the_installed_release_has_a_findings_file() -> None:
    assert sdk_version() == VERSION
    assert findings_path("openai-agents", VERSION).exists(), (
        f"no findings file for openai-agents {VERSION}: run `python -m harness check --target "
        "openai-agents` and record what it finds (with a one-line explanation each)"
    )


def scenario(steps: list[Any], *, worker_b: bool = True, state: Any = None) -> dict[str, Any]:
    calls = [{"tool": "worker_a", "id": "call-1"}]
    workers: list[dict[str, Any]] = [
        {
            "name": "worker_a",
            "state": state or {},
            "actions": [{"tool": "deploy", "label": "deploy-a"}],
            "turns": [[{"tool": "deploy", "id": "tooluse-1"}]],
        }
    ]
    if worker_b:
        calls.append({"tool": "worker_b", "id": "call-2"})
        workers.append(
            {
                "name": "worker_b",
                "actions": [{"tool": "deploy", "label": "deploy-b"}],
                "turns": [[{"tool": "deploy", "id": "tooluse-1"}]],
            }
        )
    return {
        "description": "orchestrator -> workers -> protected deploy",
        "source": "tests",
        "tree": {"name": "orchestrator", "turns": [calls], "sub_agents": workers},
        "steps": steps,
    }


def run(data: dict[str, Any], name: str = "inline") -> History:
    return run_scenario(TARGET, parse_scenario(data, name), name)


def ran(history: History) -> list[str]:
    return [entry["action"] for step in history.steps for entry in step.executions]


def test_a_simple_approval_runs_the_action_once_and_ends_the_turn() -> None:
    history = run(scenario([{"run": "go"}, {"answer": {"deploy-a": "approve"}}], worker_b=False))
    first, second = history.steps
    assert first.observed["stop_reason"] == "interrupt"
    assert [pending["label"] for pending in first.pending] == ["deploy-a"]
    assert first.executions == []
    assert second.observed["stop_reason"] == "end_turn"
    assert second.observed["final_answer"] == "done"
    assert ran(history) == ["deploy-a"]
    assert check(history) == []


def test_a_denial_runs_nothing_and_ends_the_turn() -> None:
    history = run(scenario([{"run": "go"}, {"answer": {"deploy-a": "deny"}}], worker_b=False))
    assert ran(history) == []
    assert history.steps[1].observed["stop_reason"] == "end_turn"
    assert check(history) == []


def test_a_restart_between_question_and_answer_changes_nothing() -> None:
    steps: list[Any] = [{"run": "go"}, "restart", {"answer": {"deploy-a": "approve"}}, "restart"]
    steps += [{"answer": {"deploy-b": "approve"}}]
    history = run(scenario(steps))
    assert history.control is not None
    assert ran(history) == ran(history.control) == ["deploy-a", "deploy-b"]
    requests = [r for step in history.steps for r in step.requests]
    control_requests = [r for step in history.control.steps for r in step.requests]
    assert requests == control_requests
    assert history.steps[-1].observed["final_answer"] == "done"
    assert check(history) == []


def test_a_session_started_on_a_work_directory_answers_the_run_stored_there(
    tmp_path: Path,
) -> None:
    """What a new process does (``--isolation process``, ``fork``): ``start`` reloads the stored
    RunState, so the answer finds its run instead of "no interrupted run to answer"."""
    data = parse_scenario(scenario([{"run": "go"}, {"answer": {"deploy-a": "approve"}}]), "s")
    with kept_on_file():
        asked = TARGET.start(data, tmp_path).run("go")
        resumed = TARGET.start(data, tmp_path)  # another session, from the files alone
        answered = resumed.answer([(asked.pending[0], "approve")])
    assert asked.stop_reason == "interrupt"
    assert answered.error is None
    assert [entry["action"] for entry in resumed.executions()] == ["deploy-a"]


def test_a_run_with_a_new_process_at_every_restart_records_the_in_process_bytes() -> None:
    """Each stretch between restarts in a process forked for it (``--isolation fork``): the
    same history, byte for byte (0.24.0 keeps nothing at module level a restart needs)."""
    steps: list[Any] = [{"run": "go"}, "restart", {"answer": {"deploy-a": "approve"}}]
    steps += ["restart", {"answer": {"deploy-b": "approve"}}]
    data = parse_scenario(scenario(steps), "new-process")
    history = run_scenario(isolated("openai-agents", TARGET, "fork"), data, "new-process")
    assert ran(history) == ["deploy-a", "deploy-b"]
    assert history.to_json() == run_scenario(TARGET, data, "new-process").to_json()


def test_twin_sub_agents_with_the_same_local_call_id_get_distinct_handles() -> None:
    history = run(scenario([{"run": "go"}, {"answer": {"deploy-b": "approve"}}]))
    first, second = history.steps
    handles = [pending["id"] for pending in first.pending]
    assert len(handles) == len(set(handles)) == 2
    assert ran(history) == ["deploy-b"]  # only the one approved, never its twin
    assert [pending["label"] for pending in second.pending] == ["deploy-a"]
    assert [pending["id"] for pending in second.pending] == [
        pending["id"] for pending in first.pending if pending["label"] == "deploy-a"
    ]


def test_the_stored_run_state_holds_one_nested_run_per_pending_sub_agent() -> None:
    history = run(scenario([{"run": "go"}, {"answer": {"deploy-a": "approve"}}]))
    stored = history.steps[0].stored
    assert stored is not None
    assert sorted(entry["owner"] for entry in stored["continuations"]) == ["worker_a", "worker_b"]
    assert all(entry["size"] > 500 for entry in stored["continuations"])
    after = history.steps[1].stored
    assert after is not None
    assert [entry["owner"] for entry in after["continuations"]] == ["worker_b"]


def test_a_damaged_nested_run_fails_loudly_and_is_retryable_after_repair() -> None:
    steps: list[Any] = [
        {"run": "go"},
        {"corrupt": "schema_version_other"},
        {"answer": {"deploy-a": "approve"}},
        "repair",
        {"resend": 2},
    ]
    history = run(scenario(steps, worker_b=False))
    failed = history.steps[2]
    assert failed.observed["error"]
    assert failed.executions == []
    assert [pending["label"] for pending in failed.pending] == ["deploy-a"]
    assert ran(history) == ["deploy-a"]
    assert check(history) == []


def test_a_refused_step_shows_what_the_run_state_still_asks() -> None:
    """A prompt sent while approvals wait, and an answer naming none of them, are refused; the
    refused step shows the run state's interruptions, under the handles the human was shown,
    not an empty guess."""
    steps: list[Any] = [
        {"run": "go"},
        {"run": "go again"},
        {"answer_ids": {"worker_a:deploy:nothing": "approve"}},
        {"answer": {"deploy-a": "approve", "deploy-b": "approve"}},
    ]
    history = run(scenario(steps))
    asked, second_prompt, unknown, answered = history.steps
    assert second_prompt.observed["error"] == "a run is waiting for approvals: answer it first"
    assert unknown.observed["error"] == "no pending approval matches the answer"
    assert second_prompt.pending == unknown.pending == asked.pending
    assert len(asked.pending) == 2
    assert answered.observed["stop_reason"] == "end_turn"
    assert ran(history) == ["deploy-a", "deploy-b"]


def test_an_answer_matching_nothing_shown_goes_on_with_no_decision() -> None:
    """An answer by a label no shown question has leaves nothing to send: the run goes on with
    no decision, as the reference resumes with no response, and the SDK interrupts again on
    what still waits. The adapter refused it before, an error of its own and no SDK's."""
    steps: list[Any] = [
        {"run": "go"},
        {"answer": {"deploy-a": "approve"}},
        {"answer": {"deploy-a": "approve"}},
        {"answer": {"deploy-b": "approve"}},
    ]
    history = run(scenario(steps))
    _, partial, nothing, answered = history.steps
    assert nothing.observed["error"] is None
    assert nothing.observed["stop_reason"] == "interrupt"
    assert nothing.pending == partial.pending
    assert [pending["label"] for pending in nothing.pending] == ["deploy-b"]
    assert nothing.executions == []
    assert answered.observed["stop_reason"] == "end_turn"
    assert ran(history) == ["deploy-a", "deploy-b"]


def test_an_answer_naming_one_approval_not_pending_is_refused_as_a_whole() -> None:
    """The SDK has no ids: a handle that names no pending approval cannot be passed on, so the
    adapter refuses the whole answer rather than carry out the part it recognises (I14)."""
    steps: list[Any] = [
        {"run": "go"},
        {"answer": {"deploy-a": "approve"}, "answer_ids": {"worker_b:deploy:nothing": "approve"}},
        {"answer": {"deploy-a": "approve", "deploy-b": "approve"}},
    ]
    history = run(scenario(steps))
    asked, mixed, answered = history.steps
    assert answered.observed["stop_reason"] == "end_turn"
    assert mixed.observed["error"] == (
        "no pending approval matches ['worker_b:deploy:nothing']: nothing was answered"
    )
    assert mixed.executions == []
    assert mixed.pending == asked.pending
    assert ran(history) == ["deploy-a", "deploy-b"]
    assert check(history) == []


@pytest.mark.parametrize("stem", ["partial-answers", "shared-session"])
@pytest.mark.usefixtures("threads_switch_often")
def test_histories_are_deterministic(stem: str) -> None:
    """Also when threads switch often: in shared-session two calls of one agent tool share a
    SQLiteSession, whose blocking calls the SDK hands to the loop's default executor."""
    path = next(path for path in FILES if path.stem == stem)
    first = run_scenario(TARGET, load_scenario(path), path.stem).dumps()
    for _ in range(2):
        assert run_scenario(TARGET, load_scenario(path), path.stem).dumps() == first


def test_public_events_are_recorded_and_carry_no_sub_agent_state() -> None:
    canary = "canary-5d0c-openai-private-state"
    data = scenario(
        [{"run": "go"}, {"answer": {"deploy-a": "approve"}}],
        worker_b=False,
        state={"secret": canary},
    )
    history = run(data)
    events = [event for step in history.steps for event in step.events]
    assert {event["type"] for event in events} >= {"raw_response_event", "run_item_stream_event"}
    assert canary not in json.dumps(events)
    assert check(history) == []


def test_the_fake_model_is_a_real_sdk_model_and_drives_a_real_agent(tmp_path: Path) -> None:
    ran_tools: list[str] = []

    @function_tool
    def ping() -> str:
        """Ping."""
        ran_tools.append("ping")
        return "pong"

    script = AgentScript(default=(CallTools((ToolCall("ping", "t-1"),)), Answer("hello")))
    journal = AppendOnlyLog(tmp_path / "journal.jsonl")
    model = model_class()(ScriptedModel("solo", script, journal))
    assert isinstance(model, Model)
    agent = Agent(name="solo", model=model, tools=[ping])
    result = Runner.run_sync(agent, "hi")
    assert str(result.final_output).endswith("hello")
    assert ran_tools == ["ping"]
    assert [(r["turn"], r["messages"]) for r in journal.records()] == [(0, 1), (1, 4)]

    async def streamed() -> Any:
        outcome = Runner.run_streamed(agent, "hi again")
        async for _ in outcome.stream_events():
            pass
        return outcome

    assert str(asyncio.run(streamed()).final_output).endswith("hello")
    assert ran_tools == ["ping", "ping"]


def test_conversation_of_reads_a_function_calls_output_as_a_tool_result() -> None:
    items = [
        {"role": "user", "content": "go"},
        {"type": "message", "role": "assistant", "content": [{"text": "[[marker]]"}]},
        {"type": "function_call", "call_id": "c1", "name": "mailer", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "mailed Ana"},
        {"type": "function_call_output", "call_id": "c2", "output": [{"text": "a"}]},
    ]

    assert conversation_of(items) == [
        Prompt("go"),
        Reply("[[marker]]"),
        Reply("", ("c1",)),
        Results((("c1", "mailed Ana"),)),
        Results((("c2", "a"),)),
    ]

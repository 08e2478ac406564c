"""The real Strands Agents SDK as a target: each regression file runs on the installed release,
and what it violates is exactly what that release's findings file records.

These tests need ``strands-agents`` (tox installs it: the default environments the latest pinned
release, ``strands-1.58`` and ``strands-1.59`` the older ones).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import strands
from strands.models import Model

from fakes.log import AppendOnlyLog
from fakes.model import AgentScript, Answer, CallTools, ScriptedModel, ToolCall
from harness.checkers import check
from harness.findings import judge_findings, load_document, load_findings, observe
from harness.findings.loading import covering_file
from harness.runner import run_scenario
from harness.targets.strands import StrandsContinuationFormat, StrandsTarget, sdk_version
from harness.targets.strands_model import model_class
from scenarios.loading import load_scenario, parse_scenario, regression_files

FILES = regression_files()
TARGET = StrandsTarget()
VERSION = TARGET.info.version
RECORDED = load_findings("strands", VERSION)


def test_the_installed_release_has_a_findings_file() -> None:
    assert sdk_version() == VERSION
    assert covering_file("strands", VERSION) is not None, (
        f"no findings file for strands {VERSION}: run `python -m harness check --target strands`"
        " and record what it finds (with a one-line explanation each) before adding the release"
        " (its own file, or a range's that names it)"
    )


# the file session manager (the target's default) is judged on every regression file by `check
# --target strands`, which every tox environment with strands runs; here the other one
@pytest.mark.parametrize("session_manager", ["snapshot"])
@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_each_regression_violates_exactly_what_is_recorded_for_this_release(
    path: Path, session_manager: str
) -> None:
    """With the other session manager too: the findings do not depend on how sessions are
    stored."""
    target = StrandsTarget(session_manager)
    assert target.info.findings_name == "strands"
    history = run_scenario(target, load_scenario(path), path.stem)
    seen = {violation.invariant for violation in check(history)}
    recorded = {f.invariant for f in RECORDED if f.scenario == path.stem}
    if history.not_applicable:
        assert not recorded, f"{path.stem} is recorded but cannot run on strands {VERSION}"
        # only for what these sessions cannot store (corruptions) or strands cannot send (an
        # answer without an id)
        assert set(history.not_applicable) & {"corruption", "scalar_resume"}
        return
    assert seen == recorded, f"strands {VERSION} ({session_manager} sessions) on {path.stem}"
    # and each violation is the one recorded: its witness names it, under either session manager
    scenario = load_scenario(path)
    verdict = judge_findings(
        load_document("strands", VERSION),
        [observe(history, scenario, check(history), generated=False)],
    )
    assert verdict.passes, (
        f"strands {VERSION} ({session_manager} sessions) on {path.stem}: {verdict}"
    )


def test_a_step_that_raises_shows_what_the_root_still_asks() -> None:
    """A prompt sent while two questions wait is refused by the SDK (TypeError: it must resume
    with interrupt responses); the failed step shows what the root's own interrupt state still
    holds, both questions under their ids, not an empty guess; and once the turn has ended, a
    re-sent answer fails with nothing left pending."""
    path = next(path for path in FILES if path.stem == "every-step-ends-visibly")
    history = run_scenario(TARGET, load_scenario(path), path.stem)
    asked, refused, resent = history.steps[0], history.steps[1], history.steps[4]
    assert refused.observed["stop_reason"] is None
    assert str(refused.observed["error"]).startswith("TypeError: ")
    assert refused.pending == asked.pending
    assert [pending["label"] for pending in refused.pending] == ["refund", "reroute"]
    assert resent.observed["error"]
    assert resent.pending == []


def test_histories_are_deterministic() -> None:
    path = next(path for path in FILES if path.stem == "partial-answers")
    first = run_scenario(TARGET, load_scenario(path), path.stem).dumps()
    second = run_scenario(TARGET, load_scenario(path), path.stem).dumps()
    assert first == second


def test_the_fake_model_is_a_real_strands_model_and_drives_a_real_agent(tmp_path: Path) -> None:
    journal = AppendOnlyLog(tmp_path / "journal.jsonl")
    script = AgentScript(default=(Answer("hello"),))
    model = model_class()(ScriptedModel("solo", script, journal, stateful_provider=True))
    assert isinstance(model, Model)
    agent = strands.Agent(model=model, callback_handler=None)
    result = agent("hi")
    assert result.stop_reason == "end_turn"
    assert str(result).strip().endswith("hello")
    [request] = journal.records()
    assert request["agent"] == "solo"
    assert request["messages"] == 1
    assert agent._model_state["response_id"].startswith("resp-")  # written back by the SDK


def test_a_tool_call_turn_runs_a_real_tool(tmp_path: Path) -> None:
    ran: list[str] = []

    @strands.tool
    def ping() -> str:
        """Ping."""
        ran.append("ping")
        return "pong"

    script = AgentScript(default=(CallTools((ToolCall("ping", "t-1"),)), Answer("done")))
    journal = AppendOnlyLog(tmp_path / "journal.jsonl")
    model = model_class()(ScriptedModel("solo", script, journal))
    agent = strands.Agent(model=model, tools=[ping], callback_handler=None)
    assert agent("go").stop_reason == "end_turn"
    assert ran == ["ping"]
    assert [record["turn"] for record in journal.records()] == [0, 1]


def hooked_scenario(response: str) -> dict[str, object]:
    return {
        "description": "a protected action asked by a BeforeToolCallEvent hook",
        "source": "tests",
        "tree": {
            "name": "orchestrator",
            "turns": [[{"tool": "clerk", "id": "call-1"}]],
            "sub_agents": [
                {
                    "name": "clerk",
                    "actions": [{"tool": "stamp", "label": "stamp", "hook": True}],
                    "turns": [[{"tool": "stamp", "id": "call-1"}]],
                }
            ],
        },
        "steps": [{"run": "stamp it"}, {"answer": {"stamp": response}}],
    }


@pytest.mark.parametrize(("response", "runs"), [("approve", 1), ("deny", 0)])
def test_hook_interrupts_ask_before_the_tool_runs(response: str, runs: int) -> None:
    scenario = parse_scenario(hooked_scenario(response), "hooked")
    history = run_scenario(TARGET, scenario, "hooked")
    first = history.steps[0]
    assert [item["label"] for item in first.pending] == ["stamp"]
    assert len(history.steps[1].executions) == runs
    assert history.steps[1].observed["stop_reason"] == "end_turn"


def test_public_events_are_recorded_without_run_identity() -> None:
    path = next(path for path in FILES if path.stem == "event-payload")
    history = run_scenario(TARGET, load_scenario(path), path.stem)
    events = [event for step in history.steps for event in step.events]
    assert events, "the callback handler saw nothing"
    text = json.dumps(events)
    assert "canary-3b1f9e7c-private-state" not in text
    assert "<uuid>" in text or "tracking_id" not in text


def test_a_call_turned_away_is_recorded_as_the_sdk_warned_it_in_its_step() -> None:
    """The second call of one agent tool in a turn is turned away by the tool's lock without an
    error: the warning the SDK logs is kept on the step it was logged in (and only there), so a
    findings witness can name that cause."""
    path = next(path for path in FILES if path.stem == "twin-calls")
    history = run_scenario(TARGET, load_scenario(path), path.stem)
    logged = [(step.index, step.observed.get("warnings")) for step in history.steps]

    turned_away = [
        (index, warning)
        for index, warnings in logged
        for warning in warnings or ()
        if warning.endswith("| agent is already processing a request")
    ]
    assert turned_away, logged
    assert all(
        warning.startswith("tool_name=<mailer>, tool_use_id=<") for _, warning in turned_away
    )
    assert all(warnings is None or warnings for _, warnings in logged)  # never an empty list


def test_stored_turns_are_found_where_the_release_keeps_them() -> None:
    path = next(path for path in FILES if path.stem == "colliding-ids")
    history = run_scenario(TARGET, load_scenario(path), path.stem)
    stored = history.steps[0].stored
    assert stored is not None
    if "continuation_bytes" in TARGET.info.capabilities:  # 1.59 and later
        owners = sorted(entry["owner"] for entry in stored["continuations"])
        assert owners == ["worker_a", "worker_b"]
        assert all(entry["size"] > 200 for entry in stored["continuations"])
        assert history.steps[-1].stored is not None
        assert history.steps[-1].stored["continuations"] == []
    else:  # 1.58: the SDK keeps no turn; nothing may be claimed
        assert stored["continuations"] == []
        assert "corruption" not in TARGET.info.capabilities


def test_the_continuation_format_damages_a_strands_snapshot_shape() -> None:
    entry = {"schema_version": "1.0", "created_at": "x", "data": {"messages": []}}
    damaged = StrandsContinuationFormat().damage("previous_shape", json.loads(json.dumps(entry)))
    assert damaged == {"session_snapshot": {"messages": []}}
    document = {"a": {"context": {"sub_agent_interrupted_turns": {"t2": entry, "t1": entry}}}}
    paths = StrandsContinuationFormat().locate(document)
    assert [path[-1] for path in paths] == ["t1", "t2"]


def test_an_ephemeral_sub_agent_with_its_own_session_is_refused(tmp_path: Path) -> None:
    """The SDK refuses, at wiring time, a preserve_context=False sub-agent that has a session
    manager: resetting it before every call would fight the session's history.  The harness's
    trees never build one; this pins the refusal, so a tree that did could not pass silently."""
    from strands.session.file_session_manager import FileSessionManager

    script = AgentScript(default=(Answer("done"),))
    journal = AppendOnlyLog(tmp_path / "journal.jsonl")
    model = model_class()(ScriptedModel("clerk", script, journal))
    manager = FileSessionManager(session_id="clerk", storage_dir=str(tmp_path))
    clerk = strands.Agent(model=model, session_manager=manager, callback_handler=None)
    with pytest.raises(ValueError, match="preserve_context=False cannot be used"):
        clerk.as_tool(name="clerk", preserve_context=False)
    assert clerk.as_tool(name="clerk", preserve_context=True).tool_name == "clerk"


def test_two_root_sessions_are_two_orchestrators_over_one_agent_tool(tmp_path: Path) -> None:
    """``root_sessions``: session b's orchestrator is an agent of its own, with a session manager
    of its own, whose tool is the very agent-tool object session a's calls; each session's
    answer reaches its own call (I2), and neither shows the other's question (O)."""
    scenario = load_scenario(Path("scenarios/regressions/coverage/two-root-sessions.yaml"))
    session = TARGET.start(scenario, tmp_path)
    first, second = session.roots["a"], session.roots["b"]
    assert first is not second
    assert first.tool_registry.registry["researcher"] is second.tool_registry.registry["researcher"]
    sessions = sorted(path.name for path in session.sessions_dir.iterdir())
    assert sessions == ["session_orchestrator", "session_root-session-b--orchestrator"]
    history = run_scenario(TARGET, scenario, "two-root-sessions")
    assert not history.not_applicable
    mixed = {"I2", "I3", "I10", "O"}
    violations = [violation for violation in check(history) if violation.invariant in mixed]
    # before 1.59 the SDK stores no sub-agent turn (no corruption to claim): after the restart
    # of both sessions (step 4) a's resume asks again, as it does with one session
    stores_turns = "corruption" in TARGET.info.capabilities
    assert [v for v in violations if stores_turns or (v.step or 0) < 4] == []

"""Every record an SDK logs at ERROR or WARNING during a step reaches the history, in order.

A findings anchor matches "the errors recorded at that step", and O reads them too: a second
error a step logged and the adapter dropped is a bug nobody can see.  Each adapter that listens
to an SDK's logger is driven here through a step during which that logger receives two ERROR
records and two WARNING records (sent from inside the scripted model, so they arrive while the
SDK runs); the step's record must show all four, in order: the first error as ``error``, the
second in ``more_errors``.  A rebuild (a restart, a deploy, the restart after a corruption) is
a step too: what the SDK logs while it reloads its stored state is recorded at that step, its
``error`` staying what the rebuild returned.  It runs on every SDK target installed here (the
default environment has Strands; ``tox -e langgraph``, ``tox -e openai-agents`` and ``tox -e adk``
run it on theirs).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict
from multiprocessing import Pipe
from pathlib import Path
from typing import Any, Final

import pytest

from fakes.model import Said, ScriptedModel, ScriptedTurn
from harness.forking import ForkedSession, ForkIsolated, _child
from harness.isolation import SCENARIO_FILE, ProcessSession, _observation, worker
from harness.runner import run_scenario
from harness.targets import registry
from harness.targets.base import Logged, Observation, Target, TargetInfo, logged_at_rebuild
from harness.targets.registry import available
from scenarios.loading import load_scenario, parse_scenario

# the logger each SDK target listens to during a step (a child logger's records reach it)
SDK_LOGGERS: Final = {
    "strands": "strands",
    "langgraph": "langgraph",
    "langgraph-subgraph-node": "langgraph",
    "openai-agents": "openai.agents",
    "adk": "google_adk",
}
ROOT: Final = Path(__file__).resolve().parent.parent
INSTALLED = sorted(name for name in SDK_LOGGERS if name in available())

SCENARIO: Final = {
    "description": "one sub-agent asks once; the SDK logs two errors and two warnings meanwhile",
    "source": "tests/test_error_capture.py",
    "tree": {
        "name": "orchestrator",
        "turns": [[{"tool": "operator", "id": "call-1"}]],
        "sub_agents": [
            {
                "name": "operator",
                "actions": [{"tool": "restart_service", "label": "restart-service"}],
                "turns": [[{"tool": "restart_service", "id": "tool-1"}]],
            }
        ],
    },
    "steps": [{"run": "restart the service"}],
}


def test_there_is_an_sdk_target_to_drive() -> None:
    assert INSTALLED, "no SDK target is installed: this module would judge nothing"


@pytest.mark.parametrize("name", INSTALLED)
def test_a_step_that_logs_two_errors_records_both_in_order(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk_logger = logging.getLogger(f"{SDK_LOGGERS[name]}.harness_test")
    played = ScriptedModel.next_turn
    logged: list[str] = []

    def noisy(
        self: ScriptedModel, conversation: Sequence[Said], count: int, state: dict[str, Any]
    ) -> ScriptedTurn:
        if not logged:  # once, during the first model request of the step
            for level, text in (
                (logging.ERROR, "first error"),
                (logging.WARNING, "first warning"),
                (logging.ERROR, "second error"),
                (logging.WARNING, "second warning"),
            ):
                sdk_logger.log(level, text)
                logged.append(text)
        return played(self, conversation, count, state)

    monkeypatch.setattr(ScriptedModel, "next_turn", noisy)
    target = available()[name]()
    history = run_scenario(target, parse_scenario(SCENARIO, "noisy"), "noisy")
    observed = history.steps[0].observed
    assert logged
    assert observed["error"] == "first error"
    assert observed["more_errors"] == ["second error"]
    # the SDK's own warnings may come too (ADK's AgentTool warns of the pause it drops)
    ours = [warned for warned in observed["warnings"] if warned in logged]
    assert ours == ["first warning", "second warning"]
    assert history.steps[0].errors == ["first error", "second error"]


def test_a_step_with_one_error_records_it_as_before() -> None:
    """No ``more_errors`` where there is none: a history whose steps logged one error at most
    keeps its bytes (findings recorded against it still match)."""
    history = run_scenario(available()["reference"](), parse_scenario(SCENARIO, "quiet"), "quiet")
    assert "more_errors" not in history.steps[0].observed
    assert history.steps[0].errors == []


def test_the_process_transport_carries_every_error() -> None:
    """``--isolation process`` sends a step's observation back as JSON: every error survives."""
    sent = Observation(
        stop_reason=None, error="raised", more_errors=("logged", "logged again"), warnings=("w",)
    )
    assert _observation(asdict(sent)) == sent


# the scenario above, with a restart (or a deploy: the tree of the same agents) before the answer
REBUILT: Final = {
    **SCENARIO,
    "description": "one sub-agent asks once; the SDK logs two warnings and an error at the restart",
    "steps": [
        {"run": "restart the service"},
        {"restart": True},
        {"answer": {"restart-service": "approve"}},
    ],
}
DEPLOYED: Final = {
    **REBUILT,
    "steps": [
        {"run": "restart the service"},
        {"restart": {"tree": SCENARIO["tree"]}},
        {"answer": {"restart-service": "approve"}},
    ],
}


def noisy_rebuilds(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    """Make every rebuild of the tree log a warning, an error and another warning on the SDK's
    logger: the scripted model of the root is built again (as every rebuild builds it) over a
    journal that already holds the run's requests (the first build's journal is empty, and the
    restart-free control run never rebuilds).  Returns what was logged, in order."""
    sdk_logger = logging.getLogger(f"{SDK_LOGGERS[name]}.harness_test")
    built = ScriptedModel.__init__
    logged: list[str] = []

    def noisy(self: ScriptedModel, agent: str, *arguments: Any, **options: Any) -> None:
        built(self, agent, *arguments, **options)
        if agent == "orchestrator" and self.journal.records():
            for level, text in (
                (logging.WARNING, "first rebuild warning"),
                (logging.ERROR, "rebuild error"),
                (logging.WARNING, "second rebuild warning"),
            ):
                sdk_logger.log(level, text)
                logged.append(text)

    monkeypatch.setattr(ScriptedModel, "__init__", noisy)
    return logged


@pytest.mark.parametrize("scenario", [REBUILT, DEPLOYED], ids=["restart", "deploy"])
@pytest.mark.parametrize("name", INSTALLED)
def test_a_rebuild_that_logs_two_warnings_records_both_in_order(
    name: str, scenario: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = available()[name]()
    if scenario is DEPLOYED and "changed_tree" not in target.info.capabilities:
        pytest.skip(f"{name} does not claim changed_tree: no deploy to rebuild")
    logged = noisy_rebuilds(monkeypatch, name)
    history = run_scenario(target, parse_scenario(scenario, "noisy rebuild"), "noisy rebuild")
    assert logged == ["first rebuild warning", "rebuild error", "second rebuild warning"]
    rebuilt = history.steps[1].observed
    assert rebuilt["warnings"] == ["first rebuild warning", "second rebuild warning"]
    assert rebuilt["more_errors"] == ["rebuild error"]
    assert rebuilt["error"] is None  # what the restart returned: it rebuilt the tree
    assert history.steps[1].errors == ["rebuild error"]
    for other in (history.steps[0], history.steps[2]):  # logged at the rebuild, nowhere else
        assert not set(logged) & set(other.observed.get("warnings", []) + other.errors)


ONE_SESSION_REBUILT: Final = {
    **SCENARIO,
    "description": "one sub-agent asks in each root session; a's orchestrator alone is rebuilt",
    "steps": [
        {"run": "restart the service", "session": "b"},
        {"run": "restart the service", "session": "a"},
        {"restart": True, "session": "a"},
        {"answer": {"restart-service": "approve"}, "session": "a"},
    ],
}


def test_a_root_sessions_rebuild_records_what_it_logged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A restart of one root session's orchestrator (``restart: true, session: a``) is a
    rebuild step like any other: what the SDK logs as it reloads that orchestrator is recorded
    there."""
    if "strands" not in available():
        pytest.skip("strands is not installed here (the default environment has it)")
    logged = noisy_rebuilds(monkeypatch, "strands")
    scenario = parse_scenario(ONE_SESSION_REBUILT, "noisy session rebuild")
    history = run_scenario(available()["strands"](), scenario, "noisy session rebuild")
    assert logged == ["first rebuild warning", "rebuild error", "second rebuild warning"]
    rebuilt = history.steps[2].observed
    assert rebuilt["warnings"] == ["first rebuild warning", "second rebuild warning"]
    assert rebuilt["more_errors"] == ["rebuild error"]
    assert rebuilt["error"] is None


def test_the_fork_transport_carries_what_a_root_sessions_rebuild_logged() -> None:
    """Under ``--isolation fork`` one root session's orchestrator is rebuilt in the segment's
    child (no new process: the agent tools and the other session stay); what its session logged
    meanwhile is asked of the child right after, not left as the segment start's."""
    asked: list[str] = []
    replies = {"restart_root_session": "E", "logged_at_rebuild": Logged(("e",), ("w",))}

    def call(method: str, *arguments: Any) -> Any:
        asked.append(method)
        return replies[method]

    session = object.__new__(ForkedSession)
    session.rebuild_log = Logged(warnings=("the segment start's",))
    session._call = call  # type: ignore[method-assign]
    assert session.restart_root_session("a") == "E"
    assert session.logged_at_rebuild() == Logged(("e",), ("w",))
    assert asked == ["restart_root_session", "logged_at_rebuild"]


def test_a_rebuild_that_logs_nothing_is_recorded_as_before() -> None:
    """A rebuild step is recorded as ``{"error": ...}`` (and a corruption's ``note``) only,
    where nothing was logged: the histories of every quiet rebuild keep their bytes."""
    history = run_scenario(available()["reference"](), parse_scenario(REBUILT, "quiet"), "quiet")
    assert history.steps[1].observed == {"error": None}


def test_a_session_without_the_method_logged_nothing_at_its_rebuilds(tmp_path: Path) -> None:
    """``logged_at_rebuild`` is optional: a plugin session that does not have it rebuilds as
    before (the reference target's session has none)."""
    session = available()["reference"]().start(parse_scenario(REBUILT, "quiet"), tmp_path)
    assert not hasattr(session, "logged_at_rebuild")
    assert logged_at_rebuild(session) == Logged()


def test_the_process_transport_carries_what_a_rebuild_logged(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--isolation process`` sends a restart's records back as JSON, in order."""
    replies = iter([{"error": None}, {"error": "E", "logged": asdict(Logged(("e",), ("a", "b")))}])
    monkeypatch.setattr(ProcessSession, "_call", lambda self, request: next(replies))
    session = ProcessSession("reference", parse_scenario(REBUILT, "sent"), tmp_path)
    assert session.logged_at_rebuild() == Logged()
    assert session.restart() == "E"
    assert session.logged_at_rebuild() == Logged(("e",), ("a", "b"))


@pytest.mark.parametrize("name", INSTALLED)
def test_a_restart_steps_process_sends_back_what_the_rebuild_logged(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--isolation process``: the restart step's process (``worker``, run here) replies with
    what its ``restart()`` logged, not what its start logged (every step's process starts the
    session, and a start over the journal of a run logs here too)."""
    scenario = parse_scenario(REBUILT, "sent")
    (tmp_path / SCENARIO_FILE).write_text(scenario.model_dump_json(), encoding="utf-8")
    worker(name, tmp_path, {"op": "start"})
    worker(name, tmp_path, {"op": "run", "prompt": "restart the service"})
    logged = noisy_rebuilds(monkeypatch, name)
    reply = json.loads(json.dumps(worker(name, tmp_path, {"op": "restart"})))
    assert len(logged) == 6  # at the start of the step's process, then at its restart
    assert reply["logged"] == {
        "errors": ["rebuild error"],
        "warnings": ["first rebuild warning", "second rebuild warning"],
    }


@pytest.mark.parametrize("isolation", ["in-process", "fork"])
def test_the_warning_of_a_skipped_nested_run_state_is_recorded_at_the_corrupt_step(
    isolation: str,
) -> None:
    """A real rebuild warning: openai-agents' ``RunState.from_json`` skips a damaged run state
    two levels below the root with a WARNING only (strict_context off), during the restart that
    follows the corruption, in this process and in the segment's forked one (the step process
    of ``--isolation process`` sends it back as ``worker`` does below)."""
    if "openai-agents" not in available():
        pytest.skip("openai-agents is not installed here (tox -e openai-agents runs this)")
    path = ROOT / "scenarios" / "regressions" / "corrupt-a-nested-call-inside-a-nested-call.yaml"
    target: Target = available()["openai-agents"]()
    if isolation == "fork":
        target = ForkIsolated("openai-agents", target)
    history = run_scenario(target, load_scenario(path), path.stem)
    corrupt = history.steps[1]
    assert corrupt.kind == "corrupt"
    assert corrupt.observed["warnings"] == [
        "Failed to deserialize nested agent run state for tool call call-2."
    ]
    assert corrupt.observed["error"] is None


class UnreadableOnRestart:
    """A target whose start, once a run has stored something, logs a warning and an error and
    raises: a rebuild that fails as the session starts from its files, the only place a new
    process can rebuild (``--isolation fork`` and ``process`` start the session there)."""

    info = TargetInfo("unreadable", "0", frozenset({"restart"}))
    sdk_loggers = ("harness_test_unreadable",)

    def start(self, scenario: Any, workdir: Path) -> Any:
        if (workdir / "stored").exists():
            sdk_logger = logging.getLogger("harness_test_unreadable.store")
            sdk_logger.warning("skipped a damaged record")
            sdk_logger.error("the store cannot be read")
            raise ValueError("unreadable store")
        (workdir / "stored").write_text("x", encoding="utf-8")
        return object()


FAILED_REBUILD: Final = Logged(("the store cannot be read",), ("skipped a damaged record",))


def test_a_forked_rebuild_whose_start_fails_sends_what_was_logged(tmp_path: Path) -> None:
    """A restart segment's child starts the session from files; where that start raises, the
    records logged until then are the rebuild's, sent back with its error, as the in-process
    ``restart()`` reads them around the same build (a first start's failure is the
    adapter's, read by nobody)."""
    target = UnreadableOnRestart()
    target.start(None, tmp_path)  # the run stored something
    here, there = Pipe()
    scenario = parse_scenario(REBUILT, "unreadable").model_dump_json()
    here.send((scenario, None, str(tmp_path), True, {}))
    assert _child(target, there) == 0
    kind, (started, error, gained, logged) = here.recv()
    assert (kind, started, error, gained) == ("returned", False, "ValueError: unreadable store", {})
    assert logged == FAILED_REBUILD


def test_a_restart_steps_process_whose_start_fails_sends_what_was_logged(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--isolation process``: the same for the restart step's process."""
    monkeypatch.setattr(registry, "get", lambda name: UnreadableOnRestart())
    (tmp_path / SCENARIO_FILE).write_text(
        parse_scenario(REBUILT, "unreadable").model_dump_json(), encoding="utf-8"
    )
    UnreadableOnRestart().start(None, tmp_path)
    reply = json.loads(json.dumps(worker("unreadable", tmp_path, {"op": "restart"})))
    assert reply["error"] == "ValueError: unreadable store"
    assert reply["logged"] == json.loads(json.dumps(asdict(FAILED_REBUILD)))
    answered = worker("unreadable", tmp_path, {"op": "answer", "responses": []})
    assert "logged" not in answered  # only a restart step's process reads its start

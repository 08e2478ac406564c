"""Real restarts by fork (``--isolation fork``): each segment between restarts in a process of
its own, forked from a server that imported the target once, sees what the in-process run sees,
byte for byte, except what only module state could have carried across a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import forking
from harness.cli import main
from harness.forking import ForkIsolated, ForkServer, SegmentFailed, server
from harness.runner import AdapterError, run_scenario
from harness.targets import registry
from harness.targets.base import Session, TargetInfo
from scenarios.loading import REGRESSIONS, load_scenario, parse_scenario
from scenarios.model import Restart, Scenario

# restarts everywhere, a deploy that drops a tool, a damaged stored turn (the rebuild fails,
# the next steps answer NOT_REBUILT), a turn kept only in memory (lost at the restart), and a
# nested approval answered after a restart
SAMPLE = (
    "restart-anywhere",
    "deploy-drops-tool",
    "fault-truncated",
    "preserve-context-no-store",
    "nested-approval-survives-a-new-process",
)


def regression(stem: str) -> Scenario:
    return load_scenario(REGRESSIONS / f"{stem}.yaml")


@pytest.mark.parametrize("stem", SAMPLE)
def test_a_forked_run_records_the_same_bytes_as_the_in_process_run(stem: str) -> None:
    scenario = regression(stem)
    in_process = run_scenario(registry.get("reference"), scenario, stem)
    forked = run_scenario(ForkIsolated("reference", registry.get("reference")), scenario, stem)
    assert forked.to_json() == in_process.to_json()


def test_each_restart_starts_a_segment_and_the_control_run_is_one() -> None:
    scenario = regression("restart-anywhere")
    restarts = sum(isinstance(step, Restart) for step in scenario.steps)
    fork_server = server("reference")
    before = fork_server.forks
    history = run_scenario(ForkIsolated("reference", registry.get("reference")), scenario, "r")
    assert history.control is not None
    assert fork_server.forks - before == (restarts + 1) + 1


def test_the_target_says_how_its_steps_run() -> None:
    info = ForkIsolated("reference", registry.get("reference")).info
    assert info.isolation == "fork"
    assert info.name == "reference"
    assert "process of its own" in info.description


class Broken:
    """A target whose session cannot start: the adapter's error, named as in-process."""

    info = TargetInfo("broken", "0", frozenset({"restart"}))

    def start(self, scenario: Scenario, workdir: Path) -> Session:
        raise RuntimeError("no such thing")


def test_a_failure_in_the_segments_process_is_the_adapters_error_as_in_process() -> None:
    scenario = parse_scenario(
        {
            "description": "d",
            "source": "s",
            "tree": {"name": "a", "turns": [[]]},
            "steps": [{"run": "go"}],
        },
        "one-run",
    )
    with pytest.raises(AdapterError) as in_process:
        run_scenario(Broken(), scenario, "one-run")
    # the unknown target cannot be built by name in the server: the server says so
    with pytest.raises(Exception, match="did not start"):
        ForkServer("no-such-target")
    assert "RuntimeError: no such thing" in str(in_process.value)
    failed = SegmentFailed("RuntimeError: no such thing (raised at x.py:1 in start)")
    assert failed.problem == str(failed)


def test_the_cli_runs_the_regression_files_with_real_restarts(tmp_path: Path) -> None:
    code = main(
        [
            "check",
            "--target",
            "reference",
            "--isolation",
            "fork",
            "--scenarios",
            str(REGRESSIONS / "nested-approval-survives-a-new-process.yaml"),
            "--reports",
            str(tmp_path),
        ]
    )
    assert code == 0
    assert "reference 0.1" in (tmp_path / "conformance.md").read_text(encoding="utf-8")


def test_an_unknown_isolation_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--isolation", "thread"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "--isolation" in err


LATE_MODEL = """
from pydantic import BaseModel, ConfigDict


class Late(BaseModel):
    '''A model whose schema is built on first use, as openai's response types are.'''

    model_config = ConfigDict(defer_build=True)
    n: int
"""


def test_what_a_session_builds_late_the_server_builds_before_it_forks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "late_models_of_a_session.py").write_text(LATE_MODEL, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import late_models_of_a_session as late  # type: ignore[import-not-found]

    reference = registry.get("reference")

    class BuildsLate:
        """The reference, with a session that validates a late model as it starts."""

        info = reference.info

        def start(self, scenario: Scenario, workdir: Path) -> Session:
            late.Late.model_validate({"n": 1})
            return reference.start(scenario, workdir)

    assert late.Late in forking._models(built=False)
    # the warm-up (the server's throwaway child, run here) names it once its session built it
    assert forking._warm_up(BuildsLate(), tmp_path) == 0
    assert "late_models_of_a_session:Late" in (tmp_path / "models").read_text(encoding="utf-8")
    assert late.Late not in forking._models(built=False)
    # and the server builds what it names: a model deferred still is built, by its name
    (tmp_path / "later_models_of_a_session.py").write_text(LATE_MODEL, encoding="utf-8")
    import later_models_of_a_session as later  # type: ignore[import-not-found]

    assert later.Late in forking._models(built=False)
    forking._build_model("later_models_of_a_session:Late")
    assert later.Late in forking._models(built=True)

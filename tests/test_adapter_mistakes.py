"""An adapter's mistakes are named, never a traceback, and never taken for the implementation's:
a target that cannot be loaded is listed as broken and refused in one line while the other
targets run; an adapter that breaks the contract during a scenario is an adapter error (its own
verdict, exit 3) and the run goes on; a capability typo is refused at load."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterable
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from harness.cli import EXIT_ADAPTER_ERROR, EXIT_BAD_INPUT, main
from harness.targets import registry
from harness.targets.base import CAPABILITIES, Observation, Session, TargetInfo
from harness.targets.reference import ReferenceTarget
from scenarios.model import Scenario

ROOT = Path(__file__).resolve().parent.parent
REGRESSIONS = ROOT / "scenarios" / "regressions"
NO_RESTART = REGRESSIONS / "event-payload.yaml"  # run and answer only
RESTARTS = REGRESSIONS / "twin-calls.yaml"  # run, restart, answer
REFERENCE = ReferenceTarget.info


# --- small adapters, each with one mistake ------------------------------------------------------


class Wrapped:
    """The reference's session, passed through except where a mistake is planted."""

    def __init__(self, session: Session) -> None:
        self.inner = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class RaisesOnRestart(Wrapped):
    def restart(self) -> str | None:  # the contract: return the error text, never raise
        raise RuntimeError("lost the store handle\nwhile rebuilding")


class RunReturnsNone(Wrapped):
    def run(self, prompt: str) -> Observation:
        return None  # type: ignore[return-value]


def adapter(name: str, session: type[Wrapped] | None, **info: Any) -> type:
    """A target class named ``name`` over the reference, its sessions wrapped in ``session``."""

    class Adapter:
        def __init__(self) -> None:
            self.info = TargetInfo(
                name=name,
                version="1.0",
                capabilities=info.get("capabilities", REFERENCE.capabilities),
                corruptions=REFERENCE.corruptions,
            )

        def start(self, scenario: Scenario, workdir: Path) -> Any:
            if session is None:
                raise OSError("cannot open the work directory")
            return session(ReferenceTarget().start(scenario, workdir))

    return Adapter


ADAPTERS = {
    "RaisingSdk": adapter("raising-sdk", RaisesOnRestart),
    "NoneSdk": adapter("none-sdk", RunReturnsNone),
    "StartlessSdk": adapter("startless-sdk", None),
    "TypoSdk": adapter(
        "typo-sdk", Wrapped, capabilities=frozenset({"interrupt-ids", "restart", "corruption"})
    ),
}
PLUGIN = "their_adapters"


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin package with these adapters, and one entry point to a module that is gone."""
    module = types.ModuleType(PLUGIN)
    for attribute, cls in ADAPTERS.items():
        setattr(module, attribute, cls)
    monkeypatch.setitem(sys.modules, PLUGIN, module)
    declared = [
        EntryPoint(
            ADAPTERS[attribute]().info.name, f"{PLUGIN}:{attribute}", registry.ENTRY_POINT_GROUP
        )
        for attribute in ADAPTERS
    ]
    declared.append(EntryPoint("gone-sdk", "gone_sdk.adapter:Target", registry.ENTRY_POINT_GROUP))

    def entry_points(*, group: str) -> Iterable[EntryPoint]:
        return declared if group == registry.ENTRY_POINT_GROUP else []

    monkeypatch.setattr(registry, "entry_points", entry_points)


GONE = "entry point gone_sdk.adapter:Target: ModuleNotFoundError: No module named 'gone_sdk'"
TYPO = (
    "TargetInfo.capabilities: unknown capability 'interrupt-ids' (did you mean "
    "'interrupt_ids'?); known ones: python -m harness targets --verbose, docs/adapters.md"
)


def report(reports: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((reports / "conformance.json").read_text("utf-8"))
    return document


# --- targets that cannot be loaded ---------------------------------------------------------------


@pytest.mark.usefixtures("installed")
def test_targets_lists_a_broken_target_in_one_line_and_the_others_as_usual(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["targets"]) == EXIT_BAD_INPUT
    lines = capsys.readouterr().out.splitlines()
    assert f"gone-sdk BROKEN: {GONE}" in lines
    assert f"typo-sdk BROKEN: {TYPO}" in lines
    assert any(line.startswith("raising-sdk 1.0: ") for line in lines)
    assert any(line.startswith("reference ") for line in lines)


@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize(("name", "reason"), [("gone-sdk", GONE), ("typo-sdk", TYPO)])
def test_check_refuses_a_broken_target_in_one_line_and_runs_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, reason: str
) -> None:
    reports = tmp_path / "reports"
    arguments = ["check", "--target", name, "--target", "reference", "--reports", str(reports)]
    assert main(arguments) == EXIT_BAD_INPUT
    assert capsys.readouterr().err == f"target {name} cannot be loaded: {reason}\n"
    document = report(reports)
    assert [target["name"] for target in document["targets"]] == ["reference"]
    assert document["passes"] is True


@pytest.mark.usefixtures("installed")
def test_a_command_on_a_broken_target_alone_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    assert main(["check", "--target", "gone-sdk", "--reports", str(reports)]) == EXIT_BAD_INPUT
    assert main(["run", str(NO_RESTART), "--target", "gone-sdk"]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.splitlines() == [f"target gone-sdk cannot be loaded: {GONE}"] * 2
    assert not reports.exists()


@pytest.mark.usefixtures("installed")
def test_get_refuses_a_capability_typo_when_the_target_is_loaded() -> None:
    with pytest.raises(registry.BrokenTarget) as refused:
        registry.get("typo-sdk")
    assert str(refused.value) == f"typo-sdk: {TYPO}"


def test_every_built_in_target_and_variant_claims_only_known_capabilities() -> None:
    for name in [*registry.available(), *registry.variants()]:
        assert registry.get(name).info.capabilities <= set(CAPABILITIES), name


# --- adapter errors during a scenario ------------------------------------------------------------


@pytest.mark.usefixtures("installed")
def test_an_adapter_that_raises_is_an_adapter_error_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    scenarios = ["--scenarios", str(NO_RESTART), "--scenarios", str(RESTARTS)]
    targets = ["--target", "raising-sdk", "--target", "reference"]
    assert main(["check", *targets, *scenarios, "--reports", str(reports)]) == EXIT_ADAPTER_ERROR
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(
        "adapter error: target raising-sdk, scenario twin-calls, step 1 (restart): "
        "RuntimeError: while rebuilding (raised at test_adapter_mistakes.py:"
    )
    assert line.endswith(" in restart)")
    document = report(reports)
    assert document["passes"] is False
    column = "raising-sdk 1.0"
    [error] = document["adapter_errors"][column]
    assert {key: error[key] for key in ("scenario", "step", "kind", "control")} == {
        "scenario": "twin-calls",
        "step": 1,
        "kind": "restart",
        "control": False,
    }
    # its own verdict: not a violation, not a finding; the other scenario and target were judged
    assert document["scenarios"][column] == {"event-payload": "run", "twin-calls": "adapter-error"}
    assert document["findings"][column]["new"] == []
    assert all(not cell["violations"] for cell in document["cells"][column].values())
    assert document["adapter_errors"]["reference 0.1.0"] == []
    assert set(document["scenarios"]["reference 0.1.0"].values()) == {"run"}
    text = (reports / "conformance.md").read_text(encoding="utf-8")
    assert "**1 adapter error** (scenarios not judged)" in text
    assert "## raising-sdk 1.0: ADAPTER ERRORS (the adapter broke its contract: not judged)" in text
    assert "- `twin-calls` step 1 (restart): RuntimeError: while rebuilding" in text


@pytest.mark.usefixtures("installed")
def test_no_findings_file_excuses_an_adapter_error(tmp_path: Path) -> None:
    findings = tmp_path / "findings"
    findings.mkdir()
    (findings / "raising-sdk-1.0.yaml").write_text(
        "target: raising-sdk\nversion: '1.0'\nfindings:\n"
        "  - scenario: twin-calls\n    digest: sha256:" + "0" * 64 + "\n"
        "    explanation: a finding recorded for the scenario whose adapter breaks\n"
        "    witnesses: [{invariant: I2, step: restart, error: '^RuntimeError: .*$'}]\n",
        encoding="utf-8",
    )
    arguments = ["check", "--target", "raising-sdk", "--scenarios", str(RESTARTS)]
    reports = tmp_path / "reports"
    assert main([*arguments, "--findings", str(findings), "--reports", str(reports)]) == 3
    assert report(reports)["passes"] is False


@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize(
    ("name", "where", "problem"),
    [
        ("none-sdk", "step 0 (run)", "run() returned None, expected an Observation"),
        ("startless-sdk", "at start()", "OSError: cannot open the work directory (raised at "),
    ],
)
def test_run_names_the_adapter_error_in_one_line(
    capsys: pytest.CaptureFixture[str], name: str, where: str, problem: str
) -> None:
    assert main(["run", str(NO_RESTART), "--target", name]) == EXIT_ADAPTER_ERROR
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith(
        f"adapter error: target {name}, scenario event-payload, {where}: {problem}"
    )
    assert "Traceback" not in captured.out + captured.err


@pytest.mark.usefixtures("installed")
def test_record_keeps_the_findings_of_a_scenario_whose_adapter_broke(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    findings = tmp_path / "findings"
    arguments = ["record", "--target", "none-sdk", "--scenarios", str(NO_RESTART)]
    assert main([*arguments, "--findings", str(findings)]) == EXIT_ADAPTER_ERROR
    assert "adapter error: target none-sdk, scenario event-payload" in capsys.readouterr().err


# --- what a capability means --------------------------------------------------------------------


def test_targets_verbose_says_what_each_claimed_capability_means(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["targets", "--verbose"]) == 0
    out = capsys.readouterr().out
    reference = out.split("\n", 1)[1].split("\nstrands", 1)[0] + "\n"  # its block
    for capability in sorted(REFERENCE.capabilities):
        assert f"    {capability}: can {CAPABILITIES[capability]}\n" in reference
    assert main(["targets"]) == 0
    assert CAPABILITIES["restart"] not in capsys.readouterr().out

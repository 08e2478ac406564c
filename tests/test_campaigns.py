"""The fault campaigns: the corruption classifier over histories, the generated campaigns on the
reference and on known-bad variants, crash points, and the report document."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from fakes.crash import SimulatedCrash
from harness.campaigns.corruption import CLASSES, classify, run_case, simplest, size
from harness.campaigns.crashes import crash_campaign, crash_points, run_with_crash
from harness.campaigns.invariants import CAMPAIGNS, generated, run_campaign
from harness.campaigns.report import Budget, dumps, fault_document, markdown
from harness.checkers import check
from harness.cli import main
from harness.history import History
from harness.runner import Recorder, run_scenario
from harness.targets.reference import ReferenceTarget
from harness.targets.variants import VARIANTS
from scenarios.loading import parse_scenario
from scenarios.model import Scenario
from scenarios.strategies import corruption_cases

CASE: dict[str, Any] = {
    "description": "two parked sub-agents; the first one's stored turn is damaged",
    "source": "tests",
    "tree": {
        "name": "orchestrator",
        "answer": "all done",
        "turns": [[{"tool": "s1", "id": "t1"}, {"tool": "s2", "id": "t2"}]],
        "sub_agents": [
            {
                "name": name,
                "actions": [{"tool": "act", "label": f"{name}-act"}],
                "turns": [[{"tool": "act", "id": "t1"}]],
            }
            for name in ("s1", "s2")
        ],
    },
    "steps": [
        {"run": "go"},
        {"corrupt": "schema_version_other"},
        {"answer": {"s1-act": "approve", "s2-act": "approve"}},
        "repair",
        {"resend": 2},
    ],
}


def case(corruption: str = "schema_version_other", **more: Any) -> Scenario:
    data = json.loads(json.dumps(CASE))
    data["steps"][1] = {"corrupt": corruption, **more}
    return parse_scenario(data, "case")


@pytest.fixture(scope="module")
def safe() -> History:
    return run_scenario(ReferenceTarget(), case(), "case")


def edited(history: History, index: int, **changes: Any) -> History:
    """``history`` with step ``index`` changed (observed fields merge into what was observed)."""
    step = history.steps[index]
    observed = {**step.observed, **changes.pop("observed", {})}
    steps = list(history.steps)
    steps[index] = dataclasses.replace(step, observed=observed, **changes)
    return dataclasses.replace(history, steps=tuple(steps))


def ran(*labels: str) -> list[dict[str, str]]:
    return [{"action": label, "agent": "x", "tool_use_id": "t"} for label in labels]


def test_the_reference_refuses_loudly_and_carries_out_the_approval_after_the_repair(
    safe: History,
) -> None:
    verdict = classify(safe)
    assert verdict.fault_class == "SAFE", verdict.reasons
    answer, resend = safe.steps[2], safe.steps[4]
    assert answer.observed["error"] is not None
    assert answer.executions == []
    assert sorted(e["action"] for e in resend.executions) == ["s1-act", "s2-act"]


def test_an_action_run_twice_is_unsafe(safe: History) -> None:
    verdict = classify(edited(safe, 4, executions=ran("s1-act", "s1-act", "s2-act")))
    assert verdict.fault_class == "UNSAFE"
    assert verdict.reasons == ("s1-act ran 2 time(s), approved 1",)


def test_an_action_never_approved_is_unsafe(safe: History) -> None:
    assert classify(edited(safe, 0, executions=ran("s2-act"))).fault_class == "UNSAFE"


def test_an_approval_dropped_without_an_error_is_silent_lost(safe: History) -> None:
    quiet = edited(safe, 1, observed={"error": None})
    quiet = edited(quiet, 2, observed={"error": None, "stop_reason": "end_turn", "pending": []})
    quiet = edited(quiet, 4, executions=[], observed={"error": "no parked turn"})
    verdict = classify(quiet)
    assert verdict.fault_class == "SILENT_LOST"
    assert "no error was raised or logged" in verdict.reasons


def test_a_loud_error_that_loses_the_approval_is_loud_lost(safe: History) -> None:
    lost = edited(safe, 4, executions=ran("s2-act"), observed={"error": "no parked turn"})
    verdict = classify(lost)
    assert verdict.fault_class == "LOUD_LOST"
    assert any("ran [s2-act], undamaged [s1-act, s2-act]" in r for r in verdict.reasons)


def test_a_question_shown_again_with_the_response_attached_is_not_safe(safe: History) -> None:
    pending = [dict(p, response="approve") for p in safe.steps[2].pending]
    verdict = classify(edited(safe, 2, observed={"pending": pending}))
    assert verdict.fault_class == "LOUD_LOST"
    assert any("with a response attached" in reason for reason in verdict.reasons)


def test_a_damage_the_target_could_not_have_repaired_is_not_safe(safe: History) -> None:
    note = "tree not put back: the stored turn changed since it was damaged"
    verdict = classify(edited(safe, 3, observed={"note": note}))
    assert verdict.fault_class == "LOUD_LOST"


def undamaged_at_the_answer(history: History) -> History:
    resend = history.steps[4]
    return edited(
        history,
        2,
        executions=resend.executions,
        observed={key: resend.observed[key] for key in ("stop_reason", "pending", "final_answer")}
        | {"error": None},
    )


def test_an_approval_carried_out_as_if_undamaged_is_tolerated(safe: History) -> None:
    tolerated = edited(undamaged_at_the_answer(safe), 4, executions=[])
    assert classify(tolerated).fault_class == "TOLERATED"


def test_an_approval_carried_out_into_a_different_turn_is_altered(safe: History) -> None:
    altered = edited(undamaged_at_the_answer(safe), 2, observed={"final_answer": "other"})
    verdict = classify(edited(altered, 4, executions=[]))
    assert verdict.fault_class == "ALTERED"
    assert verdict.reasons == ("at the approval answered 'other', undamaged 'all done'",)


def test_a_damage_that_found_nothing_to_hit_is_not_counted(safe: History) -> None:
    untouched = edited(safe, 1, observed={"note": "nothing corrupted: there is 1, not 3"})
    assert classify(untouched).fault_class == "NOT_APPLIED"


@pytest.mark.parametrize(
    "corruption",
    ["key_deleted", "value_swapped", "document_truncated", "foreign", "schema_version_newer"],
)
@pytest.mark.parametrize("pick", [0, 7, 123])
def test_every_fuzzing_damage_is_safe_on_the_reference(corruption: str, pick: int) -> None:
    result = run_case(ReferenceTarget(), case(corruption, pick=pick))
    assert result.verdict.fault_class == "SAFE", result.verdict.reasons


def test_generated_corruptions_are_all_safe_on_the_reference() -> None:
    cases = generated(corruption_cases, 60, seed=3)
    assert len(cases) == 60
    classes = {run_case(ReferenceTarget(), scenario).verdict.fault_class for scenario in cases}
    assert classes == {"SAFE"}


def test_a_swallowed_restore_failure_loses_approvals() -> None:
    variant = VARIANTS["swallow-restore-failure"]()
    classes = {
        run_case(variant, scenario).verdict.fault_class
        for scenario in generated(corruption_cases, 30, seed=3)
    }
    assert classes & {"SILENT_LOST", "LOUD_LOST"}
    assert "SAFE" not in classes


def test_the_same_seed_draws_the_same_cases_and_another_seed_others() -> None:
    first = generated(corruption_cases, 20, seed=1)
    assert first == generated(corruption_cases, 20, seed=1)
    assert first != generated(corruption_cases, 20, seed=2)


def test_privacy_and_isolation_hold_on_the_reference_and_catch_their_variants() -> None:
    privacy, isolation = CAMPAIGNS
    for campaign in CAMPAIGNS:
        result = run_campaign(campaign, ReferenceTarget(), 25, seed=0)
        assert result.cases == 25
        assert result.violating == []
    leaky = run_campaign(privacy, VARIANTS["exposed-continuation"](), 25, seed=0)
    assert leaky.violating
    assert {v.invariant for _, found in leaky.violating for v in found} == {"I8"}
    careless = run_campaign(isolation, VARIANTS["no-ownership-check"](), 25, seed=0)
    assert careless.violating
    assert "I10" in {v.invariant for _, found in careless.violating for v in found}


def answered_once() -> Scenario:
    """CASE without the corruption: run, then approve both."""
    steps = [CASE["steps"][0], {"answer": {"s1-act": "approve", "s2-act": "approve"}}]
    return parse_scenario(json.loads(json.dumps(CASE)) | {"steps": steps}, "crash")


def test_crash_points_cover_every_boundary_of_every_answer() -> None:
    scenario = answered_once()
    points = crash_points(ReferenceTarget(), scenario)
    assert {point.step for point in points} == {1}
    assert {point.boundary for point in points} == {"model", "action", "persist"}
    assert sorted(p.occurrence for p in points if p.boundary == "action") == [1, 2]
    for point in points:
        outcome = run_with_crash(ReferenceTarget(), scenario, "crash", point)
        assert outcome.crashed
        assert outcome.twice == []


def test_the_reference_loses_an_approval_loudly_rather_than_run_it_twice() -> None:
    scenario = answered_once()
    cases = crash_campaign(ReferenceTarget(), [("crash", scenario)])
    after_the_first_action = next(
        c for c in cases if (c.point.boundary, c.point.occurrence) == ("action", 1)
    )
    assert after_the_first_action.ran == {"s1-act": 1}
    assert after_the_first_action.lost == ["s2-act"]


def test_the_fault_document_is_the_same_for_the_same_seed() -> None:
    budgets = {"reference": Budget(examples=8, seed=5, shrink=0)}
    crash = [
        ("case", parse_scenario(json.loads(json.dumps(CASE)) | {"steps": CASE["steps"][:3]}, "c"))
    ]
    first = fault_document([ReferenceTarget()], budgets, crash)
    second = fault_document([ReferenceTarget()], budgets, crash)
    assert dumps(first) == dumps(second)
    [entry] = first["targets"].values()
    assert entry["corruption"]["classes"]["SAFE"] == 8
    assert set(entry["corruption"]["classes"]) == {*CLASSES, "NOT_APPLIED"}
    assert entry["crash_points"]["verdict"] == "at most once"
    assert first["passes"] is True
    text = markdown(first)
    assert "| reference" in text
    assert "### reference 0.1.0: SAFE" in text


@pytest.fixture
def one_crash_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's crash campaign on one regression file, not all of them (tox -e faults
    runs them all): these tests are about the command, not the campaign."""
    from harness.commands import faults
    from scenarios.loading import REGRESSIONS, load_scenario

    path = REGRESSIONS / "colliding-ids.yaml"
    monkeypatch.setattr(faults, "scenarios_from", lambda paths: [(path.stem, load_scenario(path))])


@pytest.mark.usefixtures("one_crash_scenario")
def test_faults_on_the_reference_exits_0_and_writes_both_reports(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    arguments = ["faults", "--target", "reference", "--examples", "6", "--shrink", "0"]
    arguments += ["--invariant-examples", "4"]
    assert main([*arguments, "--reports", str(reports)]) == 0
    document = json.loads((reports / "faults.json").read_text(encoding="utf-8"))
    assert document["passes"] is True
    assert (reports / "faults.md").read_text(encoding="utf-8").startswith("# Fault campaigns")


@pytest.mark.usefixtures("one_crash_scenario")
def test_faults_on_a_variant_that_swallows_failures_exits_1(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    arguments = ["faults", "--target", "bad-swallow-restore-failure", "--examples", "10"]
    arguments += ["--invariant-examples", "4"]
    assert main([*arguments, "--shrink", "0", "--reports", str(reports)]) == 1
    document = json.loads((reports / "faults.json").read_text(encoding="utf-8"))
    [entry] = document["targets"].values()
    assert any(problem.startswith("corruption:") for problem in entry["problems"])


def test_the_simplest_example_keeps_its_class_with_fewer_agents() -> None:
    reference = ReferenceTarget()
    results = [run_case(reference, scenario) for scenario in generated(corruption_cases, 20, 4)]
    largest = max(results, key=lambda result: size(result.scenario))
    assert size(largest.scenario)[0] > 2
    example = simplest(reference, [largest], budget=40)
    assert example.verdict.fault_class == "SAFE"
    # down to the orchestrator and the damaged sub-agent (and its parent, if it is nested)
    assert size(example.scenario)[0] < size(largest.scenario)[0]
    assert size(example.scenario)[0] <= 3
    assert simplest(reference, [largest], budget=0) == largest


def test_an_answer_left_in_doubt_stays_refused_after_another_answer_succeeds() -> None:
    """A crash right after s1-act ran; after the restart s2 is approved (and runs); re-sending
    the first answer, even then, is refused rather than running s1-act a second time."""
    steps = [CASE["steps"][0], {"answer": {"s1-act": "approve"}}, {"answer": {"s2-act": "approve"}}]
    scenario = parse_scenario(json.loads(json.dumps(CASE)) | {"steps": steps}, "in-doubt")
    with tempfile.TemporaryDirectory() as workdir:
        session = ReferenceTarget().start(scenario, Path(workdir))
        recorder = Recorder(session, scenario)
        recorder.step(0, scenario.steps[0])
        session.arm_crash("action", 1)
        with pytest.raises(SimulatedCrash):
            recorder.step(1, scenario.steps[1])
        session.count_boundaries()
        assert session.restart() is None
        other = recorder.step(2, scenario.steps[2])
        again = recorder.retry(1)
        ran = [execution["action"] for execution in session.executions()]
    assert other.observed["error"] is None
    assert again.error is not None
    assert "may have run" in again.error
    assert ran == ["s1-act", "s2-act"]


def test_a_turn_damaged_twice_is_put_back_whole_by_one_repair() -> None:
    """A repair undoes the damages latest first: two damages of one stored turn, then one repair,
    leave it as it was before the first (each damage is put back only where the turn still holds
    what that damage left, so undone in the order made the first found the second's damage there
    and kept it, and the answer after the repair was refused where the oracle expects it carried
    out)."""
    twice = parse_scenario(
        {
            "description": "one stored turn damaged twice, one repair, then the answer",
            "source": "tests/test_campaigns.py",
            "tree": {
                "name": "orchestrator",
                "turns": [[{"tool": "s1", "id": "t1"}]],
                "sub_agents": [
                    {
                        "name": "s1",
                        "actions": [{"tool": "act", "label": "s1-act"}],
                        "turns": [[{"tool": "act", "id": "u1"}]],
                    }
                ],
            },
            "steps": [
                {"run": "go"},
                {"corrupt": "schema_version_other"},
                {"corrupt": "truncated"},
                {"repair": True},
                {"answer": {"s1-act": "approve"}},
            ],
        },
        "twice",
    )
    history = run_scenario(ReferenceTarget(), twice, "twice")
    assert check(history) == []
    assert [each["action"] for each in history.steps[4].executions] == ["s1-act"]

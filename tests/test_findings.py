"""Findings files: a recorded finding excuses a violation only by a witness that names it (its
invariant, its step's kind, anchored patterns over its sentences or the run's recorded errors);
a regression finding is bound to its file's content; a class must show in its sample; anything
that cannot be checked is refused with one line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from harness.checkers import CHECKERS
from harness.checkers.violation import Violation
from harness.commands.planning import with_demonstrations
from harness.findings import (
    PLACEHOLDER,
    FindingsFile,
    FindingsFileError,
    Observed,
    dump_findings_file,
    judge_findings,
    load_document,
    load_findings,
    read_findings_file,
    record,
    scenario_digest,
    step_evidence,
)
from harness.findings.canary import VariantRun, hidden_runs
from harness.findings.document import Evidence
from harness.findings.loading import FINDINGS as FINDINGS_FOLDER
from harness.findings.recording import _folded
from harness.findings.verdict import shown_so_far, stored_turns
from harness.history import History, StepRecord
from harness.targets.reference import ReferenceTarget
from scenarios.loading import (
    REGRESSIONS,
    load_all,
    load_scenario,
    parse_scenario,
    regression_file,
    regression_files,
)
from scenarios.model import Scenario

TWINS = load_scenario(REGRESSIONS / "twin-calls.yaml")
DIGEST = scenario_digest(TWINS)
REFUSED = "UserError: the same tool invocation identity belongs to both runs"
LOST = Violation("I2", "exact-delivery-down", 2, "send-mail runs once", "send-mail ran 0 times")
OTHER_STEP = Violation(
    "I2", "exact-delivery-down", 4, "send-mail runs once", "send-mail ran 0 times"
)
OTHER_ACTION = Violation("I2", "exact-delivery-down", 2, "pay runs once", "pay ran 0 times")
HEADER = "target: sdk\nversion: '1.0'\n"
RECORDED = f"""findings:
  - scenario: twin-calls
    digest: {DIGEST}
    explanation: the second call is turned away
    witnesses:
      - invariant: I2
        step: answer
        seen: '^send-mail ran 0 times$'
"""
CLASS = """classes:
  - class: shared-call-id
    shown_by: [twin-calls]
    scenario_classes: [twin-calls]
    explanation: the SDK refuses the approval of either twin
    witnesses:
      - invariant: I2
        step: answer
        seen: '^\\S+ ran 0 times$'
        error: '^UserError: the same tool invocation identity .*$'
"""


def document_of(tmp_path: Path, text: str) -> FindingsFile:
    (tmp_path / "sdk-1.0.yaml").write_text(HEADER + text, encoding="utf-8")
    found = load_document("sdk", "1.0", tmp_path)
    assert found is not None
    return found


def run(
    *violations: tuple[Violation, str],
    scenario: str = "twin-calls",
    digest: str = DIGEST,
    classes: frozenset[str] = frozenset({"twin-calls"}),
    errors: tuple[str, ...] = (),
    generated: bool = False,
    results: tuple[str, ...] = (),
    warnings: tuple[str, ...] = (),
    at: int = 2,
) -> Observed:
    """A run of five steps (run, restart, answer, answer, answer) whose step ``at`` recorded
    ``errors``, ``results`` and ``warnings`` (the violations above are at step 2 or 4)."""
    steps = [Evidence(kind) for kind in KINDS]
    steps[at] = Evidence(KINDS[at], errors, results, warnings)
    return Observed(scenario, digest, classes, violations, tuple(steps), generated)


KINDS = ("run", "restart", "answer", "answer", "answer")


def new_of(verdict_new: tuple[tuple[str, Violation], ...]) -> list[Violation]:
    return [violation for _, violation in verdict_new]


def test_a_violation_its_witness_names_is_excused(tmp_path: Path) -> None:
    verdict = judge_findings(document_of(tmp_path, RECORDED), [run((LOST, "answer"))])
    assert verdict.passes
    assert [(item.scenario, item.violation) for item in verdict.expected] == [("twin-calls", LOST)]
    assert verdict.expected[0].explanation == "the second call is turned away"


@pytest.mark.parametrize(
    ("violation", "kind"),
    [
        (OTHER_ACTION, "answer"),  # the same invariant, another action
        (LOST, "resend"),  # the same sentence at a step of another kind
        (Violation("I3", "partial-answers", 2, "x", "send-mail ran 0 times"), "answer"),
    ],
)
def test_a_second_independent_violation_in_a_recorded_scenario_is_new(
    tmp_path: Path, violation: Violation, kind: str
) -> None:
    verdict = judge_findings(
        document_of(tmp_path, RECORDED), [run((LOST, "answer"), (violation, kind))]
    )
    assert new_of(verdict.new) == [violation]
    assert not verdict.passes


def test_one_witness_covers_the_same_violation_at_every_step_of_its_kind(tmp_path: Path) -> None:
    verdict = judge_findings(
        document_of(tmp_path, RECORDED), [run((LOST, "answer"), (OTHER_STEP, "answer"))]
    )
    assert verdict.passes
    assert len(verdict.expected) == 2


def test_a_recorded_witness_that_no_longer_shows_fails_the_run(tmp_path: Path) -> None:
    verdict = judge_findings(document_of(tmp_path, RECORDED), [run()])
    assert [missing.witness.invariant for missing in verdict.disappeared] == ["I2"]
    assert not verdict.passes
    # a scenario that did not run is neither seen nor missing
    assert judge_findings(document_of(tmp_path, RECORDED), []).passes


def test_a_witness_recorded_as_sometimes_may_show_and_may_not(tmp_path: Path) -> None:
    racy = RECORDED + (
        "      - invariant: I6\n        step: answer\n        seen: '^.* 2 messages$'\n"
        "        sometimes: true\n"
    )
    shuffled = Violation("I6", "continuation-fidelity", 2, "1 message", "request 1: 2 messages")
    document = document_of(tmp_path, racy)
    assert judge_findings(document, [run((LOST, "answer"), (shuffled, "answer"))]).passes
    assert judge_findings(document, [run((LOST, "answer"))]).passes
    assert not judge_findings(document, [run((shuffled, "answer"))]).passes


def test_a_finding_is_bound_to_its_files_content_not_only_its_name(tmp_path: Path) -> None:
    document = document_of(tmp_path, RECORDED)
    edited = run(
        (LOST, "answer"), digest=scenario_digest(load_scenario(REGRESSIONS / "mixed.yaml"))
    )
    verdict = judge_findings(document, [edited])
    assert new_of(verdict.new) == [LOST]  # it excuses nothing
    assert [name for name, _ in verdict.stale] == ["twin-calls"]
    assert "re-record it" in verdict.stale[0][1]
    assert not verdict.disappeared  # the stale line says it once
    assert not verdict.passes


def test_a_renamed_file_is_reported_as_such(tmp_path: Path) -> None:
    verdict = judge_findings(
        document_of(tmp_path, RECORDED), [run((LOST, "answer"), scenario="twins")]
    )
    assert new_of(verdict.new) == [LOST]
    assert verdict.stale == (
        (
            "twins",
            "has the content recorded as 'twin-calls': renamed? re-record it under its new name",
        ),
    )


def test_the_digest_reads_what_the_scenario_does_not_its_formatting_or_prose(
    tmp_path: Path,
) -> None:
    text = (REGRESSIONS / "twin-calls.yaml").read_text(encoding="utf-8")
    reformatted = tmp_path / "x.yaml"
    reformatted.write_text("# a comment\n" + text.replace("\n\n", "\n"), encoding="utf-8")
    assert scenario_digest(load_scenario(reformatted)) == DIGEST
    data = TWINS.model_dump(mode="json", exclude_defaults=True)
    reworded = parse_scenario(
        {**data, "description": "other words for the same run", "source": "elsewhere"}, "x"
    )
    assert scenario_digest(reworded) == DIGEST
    edited = parse_scenario({**data, "steps": data["steps"][:1]}, "edited")
    assert scenario_digest(edited) != DIGEST
    assert DIGEST.startswith("sha256:")


def test_the_digest_reads_the_order_answers_are_sent_in() -> None:
    """An answer's responses reach the target in the order written (twin-calls-answer-order
    shows the order matters): the same answers written in another order are another run."""
    ordered = load_scenario(REGRESSIONS / "twin-calls-answer-order.yaml")
    data = ordered.model_dump(mode="json", exclude_defaults=True)
    steps = [
        {"answer": dict(reversed(step["answer"].items()))} if "answer" in step else step
        for step in data["steps"]
    ]
    reordered = parse_scenario({**data, "steps": steps}, "reordered")
    assert reordered == ordered  # equal as data: dicts compare without their order
    assert scenario_digest(reordered) != scenario_digest(ordered)


def test_a_class_covers_a_generated_violation_its_witness_names(tmp_path: Path) -> None:
    document = document_of(tmp_path, RECORDED + CLASS)
    generated = run(
        (OTHER_ACTION, "answer"), scenario="generated-007", errors=(REFUSED,), generated=True
    )
    verdict = judge_findings(document, [generated])
    assert verdict.passes
    [item] = verdict.expected
    assert item.recorded_class == "shared-call-id"
    assert "`shared-call-id`" in item.explanation
    assert "twin-calls" in item.explanation


@pytest.mark.parametrize(
    "changes",
    [
        {"generated": False},  # a regression file is recorded by name and digest only
        {"classes": frozenset({"mixed"})},  # the class's scenario classes narrow it
        {"errors": ("ValueError: something else",)},  # the error its witness names is absent
        {"errors": ()},
        {"errors": ("Warning: " + REFUSED,)},  # patterns match in full
    ],
)
def test_a_class_covers_nothing_its_witness_does_not_name(
    tmp_path: Path, changes: dict[str, object]
) -> None:
    document = document_of(tmp_path, RECORDED + CLASS)
    settings: dict[str, object] = {
        "scenario": "generated-007",
        "errors": (REFUSED,),
        "generated": True,
        **changes,
    }
    verdict = judge_findings(document, [run((OTHER_ACTION, "answer"), **settings)])  # type: ignore[arg-type]
    assert new_of(verdict.new) == [OTHER_ACTION]


def test_a_class_is_never_recognised_by_scenario_features_alone(tmp_path: Path) -> None:
    bare = (
        CLASS.replace("      - invariant: I2\n        step: answer\n", "")
        .replace("        seen: '^\\S+ ran 0 times$'\n", "")
        .replace("        error: '^UserError: the same tool invocation identity .*$'\n", "")
    )
    with pytest.raises(FindingsFileError) as refused:
        document_of(tmp_path, RECORDED + bare.replace("    witnesses:\n", "    witnesses: []\n"))
    assert "classes.0.witnesses" in str(refused.value)


def test_a_class_that_covers_nothing_in_its_sample_fails_the_run(tmp_path: Path) -> None:
    document = document_of(tmp_path, RECORDED + CLASS)
    clean = run(scenario="generated-001", errors=(REFUSED,), generated=True)
    verdict = judge_findings(document, [clean])
    assert [missing.recorded_class for missing in verdict.disappeared] == ["shared-call-id"]
    assert not verdict.passes
    # without generated scenarios, classes are not judged (but for their demonstration)
    assert judge_findings(document, [run((LOST, "answer"), errors=(REFUSED,))]).passes


@pytest.mark.parametrize("invariant", [checker.id for checker in CHECKERS])
def test_a_witness_may_name_every_checker(tmp_path: Path, invariant: str) -> None:
    """Every invariant a checker reports can be recorded (I17 could not: record failed with a
    traceback on a violation of it)."""
    text = RECORDED.replace("invariant: I2", f"invariant: {invariant}")
    [entry] = document_of(tmp_path, text).findings
    assert entry.witnesses[0].invariant == invariant


def test_a_class_is_judged_dead_only_by_the_sample_it_was_triaged_against(
    tmp_path: Path,
) -> None:
    """A check of the coverage sample alone does not find the ci sample's classes dead, nor a
    check of the ci sample the classes narrowed to a coverage shape."""
    ci_class = RECORDED + CLASS
    coverage_class = ci_class.replace(
        "scenario_classes: [twin-calls]", "scenario_classes: [twin-calls, retried-parked-call]"
    )
    shapes = frozenset({"twin-calls", "retried-parked-call"})
    of_coverage = run(scenario="generated-retried-parked-003", classes=shapes, generated=True)
    of_ci = run(scenario="generated-001", generated=True)
    # the ci sample's class, judged where the ci sample ran, not where only the coverage one did
    assert judge_findings(document_of(tmp_path, ci_class), [of_coverage]).passes
    assert not judge_findings(document_of(tmp_path, ci_class), [of_ci, of_coverage]).passes
    # the coverage shape's class, the other way round
    assert judge_findings(document_of(tmp_path, coverage_class), [of_ci]).passes
    dead = judge_findings(document_of(tmp_path, coverage_class), [of_ci, of_coverage])
    assert [missing.recorded_class for missing in dead.disappeared] == ["shared-call-id"]


def test_a_class_witness_its_shown_by_file_never_shows_fails(tmp_path: Path) -> None:
    """A class is only as wide as its demonstration: each witness must name a violation of its
    ``shown_by`` regression files (here the class needs an error the regression run lacks)."""
    document = document_of(tmp_path, RECORDED + CLASS)
    generated = run(
        (OTHER_ACTION, "answer"), scenario="generated-007", errors=(REFUSED,), generated=True
    )
    shown = run((LOST, "answer"), errors=(REFUSED,))
    assert judge_findings(document, [shown, generated]).passes

    verdict = judge_findings(document, [run((LOST, "answer")), generated])
    assert [missing.recorded_class for missing in verdict.undemonstrated] == ["shared-call-id"]
    assert not verdict.passes
    assert not verdict.new  # the violations are judged as before
    assert verdict.unresolved == 0
    # a shown_by file that did not run is not judged
    assert judge_findings(document, [generated]).passes


@pytest.mark.parametrize("where", [CLASS, ""])
def test_no_witness_may_be_marked_as_owed_a_demonstration(tmp_path: Path, where: str) -> None:
    """The marks that once let a class witness go undemonstrated (reported, not failing) are
    gone with the last of them: a class witness, or a finding's, carrying one is refused, so
    every class witness is held to its demonstration."""
    with pytest.raises(FindingsFileError, match="'undemonstrated' no longer excuses"):
        document_of(tmp_path, RECORDED + where + "        undemonstrated: true\n")


def test_a_violation_two_classes_name_is_reported_as_a_conflict_to_resolve(
    tmp_path: Path,
) -> None:
    twin = CLASS.replace("class: shared-call-id", "class: approval-refused").replace(
        "classes:\n", ""
    )
    document = document_of(tmp_path, RECORDED + CLASS + twin)
    generated = run(
        (OTHER_ACTION, "answer"), scenario="generated-007", errors=(REFUSED,), generated=True
    )
    verdict = judge_findings(document, [generated])
    [conflict] = verdict.conflicts
    assert conflict.classes == ("shared-call-id", "approval-refused")
    assert conflict.violation == OTHER_ACTION
    assert [item.recorded_class for item in verdict.expected] == ["shared-call-id"]
    assert verdict.unresolved == 1


TURNED_AWAY = "orchestrator: Agent 'mailer' is already processing a request"
BY_RESULT = CLASS.replace(
    "        error: '^UserError: the same tool invocation identity .*$'\n",
    "        result: '^[a-z/]+: Agent ''[a-z]+'' is already processing a request$'\n",
)


@pytest.mark.parametrize(
    ("results", "excused"),
    [
        ((TURNED_AWAY,), True),
        (("orchestrator: mail sent", TURNED_AWAY), True),  # one of the results is enough
        (("orchestrator: mail sent",), False),  # the cause its explanation gives is absent
        ((), False),
        ((TURNED_AWAY + " (retry later)",), False),  # patterns match in full
    ],
)
def test_a_result_narrows_a_witness_to_runs_whose_models_were_told_it(
    tmp_path: Path, results: tuple[str, ...], excused: bool
) -> None:
    assert "result:" in BY_RESULT
    document = document_of(tmp_path, RECORDED + BY_RESULT)
    generated = run(
        (OTHER_ACTION, "answer"), scenario="generated-007", generated=True, results=results
    )
    verdict = judge_findings(document, [generated])
    assert verdict.passes is excused
    assert new_of(verdict.new) == ([] if excused else [OTHER_ACTION])


LOCK_WARNING = "tool_name=<mailer>, tool_use_id=<call-2> | agent is already processing a request"
BY_WARNING = CLASS.replace(
    "        error: '^UserError: the same tool invocation identity .*$'\n",
    "        warning: '^tool_name=<[a-z]+>, tool_use_id=<.*> \\| agent is already processing "
    "a request$'\n",
)


@pytest.mark.parametrize(
    ("warnings", "results", "excused"),
    [
        ((LOCK_WARNING,), (), True),
        (("window_size=<2> | unable to trim", LOCK_WARNING), (), True),
        (("window_size=<2> | unable to trim",), (), False),
        ((), (TURNED_AWAY,), False),  # a result is not a warning: each names its own record
        ((), (), False),
    ],
)
def test_a_warning_narrows_a_witness_to_runs_whose_sdk_logged_it(
    tmp_path: Path, warnings: tuple[str, ...], results: tuple[str, ...], excused: bool
) -> None:
    assert "warning:" in BY_WARNING
    document = document_of(tmp_path, RECORDED + BY_WARNING)
    generated = run(
        (OTHER_ACTION, "answer"),
        scenario="generated-007",
        generated=True,
        results=results,
        warnings=warnings,
    )
    assert judge_findings(document, [generated]).passes is excused


@pytest.mark.parametrize("narrowing", ["BY_RESULT", "BY_WARNING"])
def test_a_witness_of_a_result_or_a_warning_alone_is_refused(
    tmp_path: Path, narrowing: str
) -> None:
    text = {"BY_RESULT": BY_RESULT, "BY_WARNING": BY_WARNING}[narrowing]
    alone = text.replace("        seen: '^\\S+ ran 0 times$'\n", "")
    assert "seen:" not in alone.split("witnesses:")[1]
    with pytest.raises(FindingsFileError) as refused:
        document_of(tmp_path, RECORDED + alone)
    assert "a witness needs a pattern" in str(refused.value)


def test_a_steps_evidence_is_its_own_not_another_steps_nor_the_controls() -> None:
    def step(
        index: int, kind: str, observed: dict[str, object], requests: list[dict[str, object]]
    ) -> StepRecord:
        return StepRecord(index, kind, {}, {}, observed, [], [], requests, [], None)

    told = {"agent": "orchestrator", "turn": 1, "results": {"t1": "done", "t2": "busy"}}
    refused = {"agent": "orchestrator/worker", "turn": 0, "refused": "first request ..."}
    control = History(
        "x",
        {},
        {},
        (step(0, "run", {"error": "from the control", "warnings": ["c"]}, [told, refused]),),
    )
    history = History(
        "x",
        {},
        {},
        (
            step(0, "corrupt", {"note": "applied to the continuation", "error": None}, []),
            step(1, "answer", {"error": "ContinuationError: damaged"}, [refused]),
            step(2, "answer", {"error": None, "warnings": ["first", "second"]}, [told]),
        ),
        control,
    )

    nothing = ("nothing",)  # no question shown so far (the control's are not the run's)
    assert step_evidence(history) == (
        Evidence("corrupt", shown=nothing),  # notes are not errors
        # a request the provider refused is an error even where the framework swallowed it
        Evidence(
            "answer",
            ("ContinuationError: damaged", "orchestrator/worker: first request ..."),
            shown=nothing,
        ),
        Evidence(
            "answer",
            (),
            ("orchestrator: done", "orchestrator: busy"),
            ("first", "second"),
            shown=nothing,
        ),
    )


@pytest.mark.parametrize(
    ("at", "anchored_at", "excused"),
    [
        (2, None, True),  # recorded at the violation's own step
        (3, None, False),  # at a later step
        (1, None, False),  # at an earlier step
        (1, "restart", True),  # at an earlier step of the kind the witness names
        (3, "answer", True),  # a step of that kind, after the violation (its loud symptom)
        (0, "restart", False),  # recorded, but at a step of another kind
    ],
)
def test_an_anchor_names_what_was_recorded_at_the_violations_step_or_where_it_says(
    tmp_path: Path, at: int, anchored_at: str | None, excused: bool
) -> None:
    text = CLASS if anchored_at is None else CLASS + f"        anchored_at: {anchored_at}\n"
    document = document_of(tmp_path, RECORDED + text)
    generated = run(
        (OTHER_ACTION, "answer"), scenario="generated-007", errors=(REFUSED,), generated=True, at=at
    )
    assert judge_findings(document, [generated]).passes is excused


BY_STORE = CLASS.replace(
    "        error: '^UserError: the same tool invocation identity .*$'\n",
    "        stored: '^nothing$'\n        anchored_at: restart\n",
)


def _generated_at(steps: list[Evidence]) -> Observed:
    """A generated run of the twin-calls classes violating OTHER_ACTION at an answer step, whose
    steps recorded ``steps``."""
    return Observed(
        "generated-007",
        DIGEST,
        frozenset({"twin-calls"}),
        ((OTHER_ACTION, "answer"),),
        tuple(steps),
        True,
    )


@pytest.mark.parametrize(
    ("stored", "excused"),
    [
        (("nothing",), True),  # the store held no sub-agent turn at the restart
        (("mailer",), False),  # it held the turn: a loss of it is another bug
        ((), False),  # the target did not say what it stored
    ],
)
def test_a_stored_anchor_names_what_the_store_held_where_the_witness_says(
    tmp_path: Path, stored: tuple[str, ...], excused: bool
) -> None:
    document = document_of(tmp_path, RECORDED + BY_STORE)
    steps = [Evidence(kind, stored=("mailer",)) for kind in KINDS]
    steps[1] = Evidence("restart", stored=stored)
    assert judge_findings(document, [_generated_at(steps)]).passes is excused


def test_a_steps_stored_turns_are_their_owners_or_nothing() -> None:
    def stored(value: dict[str, object] | None) -> tuple[str, ...]:
        return stored_turns(StepRecord(0, "restart", {}, {}, {}, [], [], [], [], value))

    owners = [{"owner": "billing", "size": 9}, {"owner": "shipping", "size": 7}]
    assert stored({"continuations": owners, "record_bytes": 99}) == ("billing, shipping",)
    assert stored({"continuations": [], "record_bytes": 48}) == ("nothing",)
    assert stored(None) == ()


SHARED_ID = "^.*''([^'']+)''.*''\\1''.*$"  # two questions shown under one id (YAML-quoted)
BY_SHOWN = CLASS.replace(
    "        error: '^UserError: the same tool invocation identity .*$'\n",
    f"        shown: '{SHARED_ID}'\n        anchored_at: run\n",
)


@pytest.mark.parametrize(
    ("shown", "excused"),
    [
        ("deploy-a as 'v1:t-1', deploy-b as 'v1:t-1'", True),
        ("deploy-a as 'v1:t-1', deploy-b as 'v1:t-2'", False),  # shown apart: another bug
        ("nothing", False),
    ],
)
def test_a_shown_anchor_names_the_questions_as_the_target_showed_them(
    tmp_path: Path, shown: str, excused: bool
) -> None:
    document = document_of(tmp_path, RECORDED + BY_SHOWN)
    steps = [Evidence(kind) for kind in KINDS]
    steps[0] = Evidence("run", shown=(shown,))
    assert judge_findings(document, [_generated_at(steps)]).passes is excused


def test_the_questions_shown_so_far_are_each_question_once_and_twins_at_once_twice() -> None:
    def shown(*pending: list[dict[str, str]] | None) -> list[str]:
        steps = tuple(
            StepRecord(i, "run", {}, {}, {"pending": each}, [], [], [], [], None)
            for i, each in enumerate(pending)
        )
        return [text for (text,) in shown_so_far(History("x", {}, {}, steps))]

    a1 = {"label": "deploy-a", "id": "v1:t-1"}
    b1 = {"label": "deploy-b", "id": "v1:t-1"}
    b2 = {"label": "deploy-b", "id": "v1:t-2"}
    # pending again at a later step: shown once; a restart shows none and forgets nothing
    assert shown([a1], [a1], None, []) == [
        "deploy-a as 'v1:t-1'",
        "deploy-a as 'v1:t-1'",
        "deploy-a as 'v1:t-1'",
        "deploy-a as 'v1:t-1'",
    ]
    # a later question under an earlier one's id, and twins shown at once under one id
    assert shown([a1], [b1])[-1] == "deploy-a as 'v1:t-1', deploy-b as 'v1:t-1'"
    assert shown([b1, b1])[-1] == "deploy-b as 'v1:t-1', deploy-b as 'v1:t-1'"
    assert shown([a1], [b2])[-1] == "deploy-a as 'v1:t-1', deploy-b as 'v1:t-2'"
    assert shown([], None) == ["nothing", "nothing"]


BY_BESIDE = CLASS.replace(
    "        error: '^UserError: the same tool invocation identity .*$'\n",
    "        beside: '^I5$'\n",
)
DIFFERS = Violation("I5", "restart-transparency", 2, "ran: pay (as without restarts)", "ran: x")


def _beside_run(*violations: Violation) -> Observed:
    """A generated run of the twin-calls classes with ``violations``, each at an answer step,
    whose steps record them as ``observe`` does."""
    history = History(
        "generated-007",
        {},
        {},
        tuple(
            StepRecord(i, kind, {}, {}, {}, [], [], [], [], None) for i, kind in enumerate(KINDS)
        ),
    )
    return Observed(
        "generated-007",
        DIGEST,
        frozenset({"twin-calls"}),
        tuple((violation, "answer") for violation in violations),
        step_evidence(history, violations),
        True,
    )


@pytest.mark.parametrize(
    ("beside", "anchored_at", "violations", "excused"),
    [
        # strands' lost resume differs from the run without restarts at the same step (I5)
        ("^I5$", None, (OTHER_ACTION, DIFFERS), True),
        ("^I5$", None, (OTHER_ACTION,), False),  # a variant's look-alike shows no I5 beside it
        ("^I5$", None, (OTHER_ACTION, replace(DIFFERS, step=3)), False),  # at another step
        ("^I5$", "answer", (OTHER_ACTION, replace(DIFFERS, step=3)), True),  # where it says
        ("^(I5|D)$", None, (OTHER_ACTION, replace(DIFFERS, invariant="D")), True),
        # another violation: the one it names does not stand beside itself
        ("^I2$", None, (OTHER_ACTION,), False),
        ("^I2$", None, (OTHER_ACTION, replace(OTHER_ACTION, seen="pay ran twice")), True),
    ],
)
def test_a_beside_anchor_names_another_violation_of_the_run_at_the_step(
    tmp_path: Path,
    beside: str,
    anchored_at: str | None,
    violations: tuple[Violation, ...],
    excused: bool,
) -> None:
    text = BY_BESIDE.replace("'^I5$'", f"'{beside}'")
    text += "" if anchored_at is None else f"        anchored_at: {anchored_at}\n"
    verdict = judge_findings(document_of(tmp_path, RECORDED + text), [_beside_run(*violations)])
    assert (OTHER_ACTION in [item.violation for item in verdict.expected]) is excused


@pytest.mark.parametrize(
    ("differs_at", "by_then", "excused"),
    [
        (2, True, True),  # the I5 was seen before the I2 at step 3
        (3, True, True),  # at its own step
        (4, True, False),  # only after it: what the bug shows first came later
        (4, False, True),  # anchored_at alone names any answer step of the run
    ],
)
def test_anchored_by_then_keeps_the_anchors_to_steps_up_to_the_violations(
    tmp_path: Path, differs_at: int, by_then: bool, excused: bool
) -> None:
    text = BY_BESIDE + "        anchored_at: answer\n"
    text += "        anchored_by_then: true\n" if by_then else ""
    late = replace(OTHER_ACTION, step=3)
    run = _beside_run(late, replace(DIFFERS, step=differs_at))
    verdict = judge_findings(document_of(tmp_path, RECORDED + text), [run])
    assert (late in [item.violation for item in verdict.expected]) is excused


def test_anchored_by_then_without_anchored_at_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FindingsFileError) as refused:
        document_of(tmp_path, RECORDED + BY_BESIDE + "        anchored_by_then: true\n")
    assert "it needs anchored_at" in str(refused.value)


@pytest.mark.parametrize(
    ("beside_seen", "excused"),
    [
        ("^ran: x$", True),  # the I5 beside saw what it names
        ("^ran: y$", False),  # an I5 stands beside, but it saw something else
    ],
)
def test_beside_seen_names_what_the_violation_beside_saw(
    tmp_path: Path, beside_seen: str, excused: bool
) -> None:
    text = BY_BESIDE + f"        beside_seen: '{beside_seen}'\n"
    run = _beside_run(OTHER_ACTION, DIFFERS)
    verdict = judge_findings(document_of(tmp_path, RECORDED + text), [run])
    assert (OTHER_ACTION in [item.violation for item in verdict.expected]) is excused


def test_beside_seen_never_names_the_violation_itself(tmp_path: Path) -> None:
    """An I2 witness beside an I2 that saw its own sentence: the violation itself never counts,
    a second I2 of the step that saw the same does."""
    text = BY_BESIDE.replace("'^I5$'", "'^I2$'") + "        beside_seen: '^pay ran 0 times$'\n"
    document = document_of(tmp_path, RECORDED + text)
    alone = judge_findings(document, [_beside_run(OTHER_ACTION)])
    assert OTHER_ACTION not in [item.violation for item in alone.expected]
    twin = replace(OTHER_ACTION, expected="pay runs twice")
    both = judge_findings(document, [_beside_run(OTHER_ACTION, twin)])
    assert OTHER_ACTION in [item.violation for item in both.expected]


def test_beside_seen_without_beside_is_refused(tmp_path: Path) -> None:
    text = RECORDED + CLASS + "        beside_seen: '^ran: x$'\n"
    with pytest.raises(FindingsFileError) as refused:
        document_of(tmp_path, text)
    assert "beside_seen names what the violation a beside names saw" in str(refused.value)


def test_a_steps_violated_invariants_are_the_runs_own_one_per_violation() -> None:
    steps = _beside_run(OTHER_ACTION, DIFFERS, replace(DIFFERS, step=4)).steps
    assert [step.violated for step in steps] == [(), (), ("I2", "I5"), (), ("I5",)]
    assert steps[2].violated_seen == (OTHER_ACTION.seen, DIFFERS.seen)
    run_wide = replace(DIFFERS, step=None)  # names no step: beside nothing
    assert [step.violated for step in _beside_run(run_wide).steps] == [()] * len(KINDS)


@pytest.mark.parametrize(
    "beside",
    ["I5", "^I5", "^X9$", "^i5$", "^(I\\d+|D|O)$", "^[A-Z0-9]+$", "^(I5$"],
)
def test_a_beside_that_names_no_invariant_or_every_one_is_refused_in_one_line(
    tmp_path: Path, beside: str
) -> None:
    with pytest.raises(FindingsFileError) as refused:
        document_of(tmp_path, RECORDED + BY_BESIDE.replace("'^I5$'", f"'{beside}'"))
    message = str(refused.value)
    assert message.startswith(f"{tmp_path / 'sdk-1.0.yaml'}: classes.0.witnesses.0.beside: ")
    assert "\n" not in message


def test_a_beside_alone_is_no_witness(tmp_path: Path) -> None:
    alone = BY_BESIDE.replace("        seen: '^\\S+ ran 0 times$'\n", "")
    with pytest.raises(FindingsFileError) as refused:
        document_of(tmp_path, RECORDED + alone)
    assert "a witness needs a pattern" in str(refused.value)


def test_anchored_at_without_an_anchor_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FindingsFileError) as refused:
        document_of(tmp_path, RECORDED + "        anchored_at: answer\n")
    assert "anchored_at names where" in str(refused.value)


SAMPLES = [
    ("seen: 'send-mail ran 0 times$'", "findings.0.witnesses.0.seen", "anchored"),
    ("seen: '^send-mail ran 0 times'", "findings.0.witnesses.0.seen", "anchored"),
    ("seen: '^send-mail ran 0 times\\$'", "findings.0.witnesses.0.seen", "anchored"),
    ("seen: '^(unclosed$'", "findings.0.witnesses.0.seen", "not a regular expression"),
    (
        "seen: '^nothing corrupted: .* stored continuations, not|applied to the continuation$'",
        "findings.0.witnesses.0.seen",
        "top-level |",
    ),
    ("step: sometime", "findings.0.witnesses.0.step", "'run', 'answer'"),
    ("seen: '^[\\s\\S]*$'", "findings.0.witnesses.0.seen", "matches any text"),
    # wide as no pattern at all, though ``.`` keeps off a newline (or off the empty text)
    *(
        (f"seen: '{pattern}'", "findings.0.witnesses.0.seen", "matches any text")
        for pattern in ("^.*$", "^.+$", "^.*?$", "^(.*)$", "^.*.*$", "^(?s:.*)$", "^[^\\n]*$")
    ),
]


@pytest.mark.parametrize(("line", "field", "problem"), SAMPLES)
def test_an_unanchored_or_malformed_pattern_is_refused_in_one_line(
    tmp_path: Path, line: str, field: str, problem: str
) -> None:
    key = line.split(":")[0]
    original = "step: answer" if key == "step" else "seen: '^send-mail ran 0 times$'"
    with pytest.raises(FindingsFileError) as refused:
        document_of(tmp_path, RECORDED.replace(original, line))
    message = str(refused.value)
    assert message.startswith(f"{tmp_path / 'sdk-1.0.yaml'}: {field}: ")
    assert problem in message
    assert "\n" not in message


def test_a_grouped_alternative_is_anchored() -> None:
    document = FindingsFile.model_validate(
        {
            "target": "sdk",
            "version": "1.0",
            "findings": [
                {
                    "scenario": "twin-calls",
                    "digest": DIGEST,
                    "explanation": "either of two sentences",
                    "witnesses": [
                        {"invariant": "I2", "step": "answer", "seen": "^(a|send-mail) ran 0 times$"}
                    ],
                }
            ],
        }
    )
    assert judge_findings(document, [run((LOST, "answer"))]).passes


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            RECORDED.replace("    witnesses:\n", "    invariants: [I2]\n    witnesses:\n"),
            "findings.0: 'invariants' is the old format",
        ),
        (
            RECORDED + CLASS.replace("    witnesses:\n", "    evidence: x\n    witnesses:\n"),
            "classes.0: 'evidence' is the old format",
        ),
        (RECORDED.replace(DIGEST, "abc"), "findings.0.digest"),
        (RECORDED.replace("    digest: " + DIGEST + "\n", ""), "findings.0.digest"),
        (
            RECORDED.replace("        seen: '^send-mail ran 0 times$'\n", ""),
            "a witness needs a pattern",
        ),
        (
            RECORDED.replace("the second call is turned away", f"'{PLACEHOLDER}: why?'"),
            "findings.0.explanation: still",
        ),
        (
            RECORDED + CLASS.replace("[twin-calls]\n    scenario", "[unrecorded]\n    scenario"),
            "'unrecorded' is not a scenario recorded",
        ),
        (
            RECORDED + CLASS.replace("scenario_classes: [twin-calls]", "scenario_classes: [twins]"),
            "unknown scenario class 'twins'",
        ),
        (RECORDED + CLASS.replace("shared-call-id", "Shared Call"), "classes.0.class"),
        (RECORDED + RECORDED.removeprefix("findings:\n"), "recorded twice"),
    ],
)
def test_a_findings_file_that_cannot_be_checked_is_refused_in_one_line(
    tmp_path: Path, text: str, problem: str
) -> None:
    with pytest.raises(FindingsFileError) as refused:
        document_of(tmp_path, text)
    message = str(refused.value)
    assert problem in message
    assert str(tmp_path / "sdk-1.0.yaml") in message
    assert "\n" not in message


def test_the_coarse_view_lists_each_recorded_invariant(tmp_path: Path) -> None:
    document_of(tmp_path, RECORDED)
    [finding] = load_findings("sdk", "1.0", tmp_path)
    assert (finding.scenario, finding.invariant, finding.required) == ("twin-calls", "I2", True)


def test_record_writes_a_witness_per_violation_and_keeps_explanations(tmp_path: Path) -> None:
    document = document_of(tmp_path, RECORDED)
    odd = Violation("O", "expected-outcome", 3, "final answer 'done' (expect)", "final answer None")
    mixed = scenario_digest(load_scenario(REGRESSIONS / "mixed.yaml"))
    runs = [
        run((LOST, "answer"), (odd, "answer")),
        run((OTHER_ACTION, "run"), scenario="mixed", digest=mixed),
        run((OTHER_STEP, "answer"), scenario="generated-003", generated=True),
    ]
    updated, done = record(document, "sdk", "1.0", runs)
    assert done.added == ("twin-calls", "mixed")
    assert done.unexplained == ("mixed",)
    assert [(name, v) for name, v in done.uncovered] == [("generated-003", OTHER_STEP)]
    twins = updated.entry("twin-calls")
    assert twins is not None
    assert twins.explanation == "the second call is turned away"  # never overwritten
    assert twins.witnesses[0].seen == "^send-mail ran 0 times$"  # the recorded one kept
    assert twins.witnesses[1].expected == "^final answer 'done' \\(expect\\)$"
    path = tmp_path / "out.yaml"
    path.write_text(dump_findings_file(updated, "# a kept comment"), encoding="utf-8")
    assert path.read_text(encoding="utf-8").startswith("# a kept comment\ntarget: sdk\n")
    with pytest.raises(FindingsFileError, match=r"findings\.1\.explanation: still"):
        read_findings_file(path, "sdk", "1.0")  # check refuses the placeholder
    reread = read_findings_file(path, "sdk", "1.0", drafts=True)
    assert reread == updated
    assert judge_findings(reread, runs[:2]).passes
    # a recorded scenario that now runs clean is dropped
    cleaned, done = record(reread, "sdk", "1.0", [run()])
    assert done.removed == ("twin-calls",)
    assert [entry.scenario for entry in cleaned.findings] == ["mixed"]


def test_a_recorded_explanation_reads_back_as_written() -> None:
    """YAML folds each line break of a ``>`` block back into a space, so a line broken after a
    hyphen would read back as "sub- agent's"."""
    text = " ".join(["the sub-agent's re-emitted, well-known turn"] * 12 + ["x" * 120])
    block = "\n".join(_folded("explanation", text)) + "\n"
    assert yaml.safe_load(block)["explanation"] == text + "\n"


RANGE = "target: sdk\nversion: 1.0.0\nthrough: 1.2.0\n"
RANGED = f"""findings:
  - scenario: twin-calls
    digest: {DIGEST}
    explanation: the second call is turned away
    witnesses:
      - invariant: I2
        step: answer
        seen: '^send-mail ran 0 times$'
      - invariant: I2
        step: answer
        seen: '^pay ran 0 times$'
        releases: '>=1.2.0'
"""


def ranged_file(tmp_path: Path, text: str = RANGED) -> Path:
    path = tmp_path / "sdk-1.0.0.yaml"
    path.write_text(RANGE + text, encoding="utf-8")
    return path


def test_a_file_of_a_range_judges_each_release_by_what_applies_to_it(tmp_path: Path) -> None:
    """One file covers 1.0.0 through 1.2.0; a witness that says ``releases: '>=1.2.0'`` excuses
    on 1.2.0 only.  A release between (1.1.5) is judged by the file as of itself, a release
    after (1.3.0) as of the newest the file covers, an earlier one by nothing."""
    ranged_file(tmp_path)
    both = run((LOST, "answer"), (OTHER_ACTION, "answer"))
    newest = load_document("sdk", "1.2.0", tmp_path)
    assert newest is not None
    assert newest.version == "1.2.0"
    assert newest.through is None
    assert judge_findings(newest, [both]).passes
    for version in ("1.0.0", "1.1.5"):
        view = load_document("sdk", version, tmp_path)
        assert view is not None
        assert view.version == version
        assert new_of(judge_findings(view, [both]).new) == [OTHER_ACTION]
        assert judge_findings(view, [run((LOST, "answer"))]).passes
    later = load_document("sdk", "1.3.0", tmp_path)
    assert later is not None
    assert later.version == "1.2.0"
    assert judge_findings(later, [both]).passes
    assert load_document("sdk", "0.9.0", tmp_path) is None


def test_a_class_or_a_finding_says_its_releases_too(tmp_path: Path) -> None:
    text = RANGED + CLASS.replace(
        "  - class: shared-call-id\n", "  - class: shared-call-id\n    releases: '<=1.1.0'\n"
    )
    ranged_file(tmp_path, text)
    old, new = load_document("sdk", "1.0.0", tmp_path), load_document("sdk", "1.2.0", tmp_path)
    assert old is not None
    assert new is not None
    assert [found.name for found in old.classes] == ["shared-call-id"]
    assert new.classes == ()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            RANGED.replace("'>=1.2.0'", "'from 1.2.0'"),
            "findings.0.witnesses.1.releases: expected comparisons with plain releases",
        ),
        (RANGED.replace("'>=1.2.0'", "'>=2.0.0'"), "findings.0.witnesses.1.releases: '>=2.0.0'"),
        (
            RANGED.replace("explanation: the second", "releases: '==1.0.0'\n    explanation: the"),
            "findings.0.witnesses.1.releases: '>=1.2.0' admits none of the releases its finding",
        ),
        (
            RANGED.replace("explanation: the second", "releases: '==1.2.0'\n    explanation: the")
            + CLASS,
            "as of 1.0.0: classes.0.shown_by: 'twin-calls' is not a scenario recorded",
        ),
    ],
)
def test_a_file_of_a_range_that_cannot_be_used_is_refused_in_one_line(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = ranged_file(tmp_path, text)
    with pytest.raises(FindingsFileError) as refused:
        load_document("sdk", "1.1.0", tmp_path)
    message = str(refused.value)
    assert problem in message
    assert message.startswith(f"{path}: ")
    assert "\n" not in message


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        (
            "target: sdk\nversion: 1.0.0\nthrough: 0.9.0\n",
            "through: expected a plain release after",
        ),
        ("target: sdk\nversion: 1.0.0\nthrough: next\n", "through: expected a plain release after"),
        ("target: sdk\nversion: 1.0.0rc1\nthrough: 1.2.0\n", "version: '1.0.0rc1' is no plain"),
    ],
)
def test_a_range_must_run_forward_over_plain_releases(
    tmp_path: Path, header: str, problem: str
) -> None:
    path = tmp_path / "sdk.yaml"
    path.write_text(header + RANGED, encoding="utf-8")
    with pytest.raises(FindingsFileError, match=problem):
        read_findings_file(path)


def test_record_into_a_file_of_a_range_writes_what_the_release_shows_differently(
    tmp_path: Path,
) -> None:
    """Recording 1.2.0 into the file of 1.0.0 through 1.2.0 changes nothing of 1.0.0's view:
    what 1.2.0 shows new applies to 1.2.0 alone, what it no longer shows stops applying to it
    (a witness left applying to no release the file names is dropped)."""
    path = ranged_file(tmp_path)
    whole = read_findings_file(path, "sdk", "1.0.0")
    odd = Violation("O", "expected-outcome", 3, "final answer 'done' (expect)", "final answer None")
    updated, done = record(whole, "sdk", "1.2.0", [run((odd, "answer"))])
    assert done.added == ("twin-calls",)
    assert not done.removed
    assert updated.as_of("1.0.0") == whole.as_of("1.0.0")
    [twins] = updated.findings
    assert [(w.seen, w.releases) for w in twins.witnesses] == [
        ("^send-mail ran 0 times$", "!=1.2.0"),  # still 1.0.0's
        ("^final answer None$", "==1.2.0"),  # 1.2.0's alone; '>=1.2.0,!=1.2.0' is dropped
    ]
    text = dump_findings_file(updated)
    assert "through: 1.2.0\n" in text
    assert "releases: '==1.2.0'" in text
    (tmp_path / "again.yaml").write_text(text, encoding="utf-8")
    assert read_findings_file(tmp_path / "again.yaml") == updated


def test_record_writes_a_release_into_the_file_of_the_range_that_covers_it(tmp_path: Path) -> None:
    import argparse

    from harness.commands.record import recorded_file

    path = ranged_file(tmp_path)
    for findings in (None, [tmp_path]):
        arguments = argparse.Namespace(findings_file=None, findings=findings, target="sdk")
        assert recorded_file(arguments, "sdk", "1.1.0", [tmp_path]) == path
    arguments = argparse.Namespace(findings_file=None, findings=[tmp_path], target="sdk")
    assert recorded_file(arguments, "sdk", "1.3.0", [tmp_path]) == tmp_path / "sdk-1.3.0.yaml"


def test_the_shipped_strands_releases_that_behave_alike_share_one_file() -> None:
    """1.59.0 and 1.62.0 were two files of the same findings, 2,424 and 2,435 lines; they are
    one file, each release judged by its view (a release between, 1.61.1, too)."""
    assert not (FINDINGS_FOLDER / "strands-1.62.0.yaml").exists()
    whole = read_findings_file(FINDINGS_FOLDER / "strands-1.59.0.yaml", "strands", "1.59.0")
    assert (whole.version, whole.through) == ("1.59.0", "1.62.0")
    for version in ("1.59.0", "1.61.1", "1.62.0"):
        view = load_document("strands", version)
        assert view is not None
        assert view.version == version
        assert view.classes


def test_a_baseline_file_of_a_range_judges_as_its_newest_release(tmp_path: Path) -> None:
    """``check --baseline-findings FILE`` with a file of a range: the findings of its newest
    release, not every release's at once."""
    import argparse
    from types import SimpleNamespace

    from harness.pull_request import baselines

    path = ranged_file(tmp_path, RANGED.replace("'>=1.2.0'", "'<=1.0.0'"))
    arguments = argparse.Namespace(baseline_findings=path, baseline=None)
    target = SimpleNamespace(info=SimpleNamespace(name="sdk", findings_name="sdk"))
    chosen = baselines(arguments, [target], [tmp_path])
    [twins] = chosen["sdk"].findings
    assert [witness.seen for witness in twins.witnesses] == ["^send-mail ran 0 times$"]


PLAIN_CLASS = CLASS.replace(
    "        error: '^UserError: the same tool invocation identity .*$'\n", ""
)


@pytest.mark.parametrize(
    ("demonstration", "same_bug"),
    [
        # on the class's demonstration the variant fails as the SDK's finding there says
        ((LOST,), ("twin-calls",)),
        # ... and once more in a way the SDK does not: a look-alike, hidden
        ((LOST, OTHER_ACTION), ()),
        # it fails there in no way at all, or did not run it: nothing shows it is the same bug
        ((), ()),
        (None, ()),
    ],
)
def test_a_variant_run_a_class_excuses_whole_is_its_bug_only_where_its_demonstration_says_so(
    tmp_path: Path, demonstration: tuple[Violation, ...] | None, same_bug: tuple[str, ...]
) -> None:
    document = document_of(tmp_path, RECORDED + PLAIN_CLASS)
    generated = run((OTHER_ACTION, "answer"), scenario="generated-007", generated=True)
    runs = [VariantRun("bad-x", generated)]
    if demonstration is not None:
        shown = run(*((violation, "answer") for violation in demonstration))
        runs.append(VariantRun("bad-x", shown))
    [hidden] = hidden_runs("sdk-1.0", document, runs)
    assert (hidden.scenario, hidden.excused_by) == ("generated-007", ("shared-call-id",))
    assert hidden.same_bug == same_bug
    assert ("same_bug" in hidden.to_json()) == bool(same_bug)


def test_a_variant_run_the_files_target_cannot_express_is_never_hidden(tmp_path: Path) -> None:
    """No bug of the SDK can pass unseen in a scenario the SDK never runs."""
    document = document_of(tmp_path, RECORDED + PLAIN_CLASS)
    generated = run((OTHER_ACTION, "answer"), scenario="generated-007", generated=True)
    needing = [VariantRun("bad-x", generated, frozenset({"restart", "empty_tool_use_ids"}))]
    assert hidden_runs("sdk-1.0", document, needing, frozenset({"restart", "retries"})) == []
    assert hidden_runs("sdk-1.0", document, needing, frozenset({"restart", "empty_tool_use_ids"}))
    assert hidden_runs("sdk-1.0", document, needing)  # a target not known: every run is asked


def test_a_check_runs_the_shown_by_files_its_default_set_leaves_out(tmp_path: Path) -> None:
    """A class's demonstration is judged only where all its ``shown_by`` files ran, so a check
    that judges the class runs a coverage regression file its class names (the default set
    leaves those out): naming one would otherwise skip the class instead of judging it."""
    shown = regression_file("two-root-sessions")
    assert shown.parent.name == "coverage"
    digest = scenario_digest(load_scenario(shown))
    (tmp_path / "reference-0.1.0.yaml").write_text(
        "target: reference\nversion: 0.1.0\n"
        + RECORDED.replace("twin-calls", "two-root-sessions").replace(DIGEST, digest)
        + CLASS.replace("[twin-calls]\n    scenario", "[two-root-sessions]\n    scenario"),
        encoding="utf-8",
    )
    scenarios = load_all(regression_files()[:2])
    own: dict[str, list[tuple[str, Scenario]]] = {}
    with_demonstrations([ReferenceTarget()], tmp_path, scenarios, own)
    assert [name for name, _ in own["reference"]] == [
        *(name for name, _ in scenarios),
        "two-root-sessions",
    ]
    assert len(scenarios) == 2  # the shared list is left as it was
    with_demonstrations([ReferenceTarget()], tmp_path / "none", scenarios, own := {})
    assert own == {}  # no findings, nothing to demonstrate

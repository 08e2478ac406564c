"""The exemption canary: no shipped findings file may hide a known-bad variant of the reference.

Every ``bad-*`` target (``harness.targets.variants``) runs on a part of the generated ci sample
(what ``check --profile ci`` runs; ``harness.canary.part``) and on the regression files the
questions below read (``harness.canary.asked_runs``: all of them for a variant the generated runs
leave unseen on some file, the demonstrations of the classes that excuse one of its runs whole),
each run made once for the module; the histories are judged against every findings file in
``scenarios/findings/`` as if the variant were that file's target: its regression findings (by
name and digest) and its classes (on the generated scenarios).  A variant whose bug only a real
restart shows (``REAL_RESTART_ONLY``: module state) runs with ``--isolation fork``.  Each variant
must still fail with a violation no witness matches: an exemption broad enough to excuse a known
bug of the reference wholesale would excuse a new bug of the SDK the same way.

And each shipped class is shown to reject a look-alike: a violation of a known-bad variant of the
same invariant, at a step of the same kind, in a generated scenario the class's scenario classes
admit, that none of the class's witnesses names (for a class narrowed to a shape of the coverage
sample, among the variants' runs of every tenth of its scenarios too, ``COVERAGE_EVERY``: the ci
sample rarely has those shapes; they challenge every class witness too, below).

Per run and per witness (``harness.findings.canary``, ``harness.canary``): every variant run is
made once, and every findings file (a file of a range: its view as of each release it names) is
asked which variant runs it excuses *whole*, and which broadenings of its class witnesses (pattern
to ``BROAD``, anchor dropped, scenario classes dropped) no variant run challenges, the logging
variants' included (the same runs with SDK-like errors, warnings and results at every step, so
anchored witnesses are challenged too), and the speaking variants' (what the variants raise, tell
their models and name their questions, said in the SDKs' words, so a witness whose sentence quotes
those words is challenged too).  Both must be none; what the shipped files show today is
recorded in ``reports/baselines/exemption-canary.json`` (``python -m harness.canary --baseline``):
it may shrink, with the baseline, never grow, and every case of it is listed there precisely (file,
variant, run, classes; file, class, witness, broadening) for the triage of the files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

import pytest

from harness import canary
from harness.canary import Measured
from harness.checkers.records import brief
from harness.checkers.violation import Violation
from harness.execution import Execution
from harness.findings import (
    FINDINGS,
    FindingsFile,
    Observed,
    judge_findings,
    read_findings_file,
)
from harness.findings.canary import (
    BROAD,
    LATER_QUESTION_CLASS,
    REFUSED_RESEND_CLASS,
    SDK_LIKE_ERRORS,
    SDK_LIKE_EVENT,
    SDK_LIKE_NAMES,
    SDK_LIKE_RAISED,
    SDK_LIKE_RESULTS,
    SDK_LIKE_SHOWN,
    SDK_LIKE_STORED,
    SDK_LIKE_TOLD,
    SDK_LIKE_WARNINGS,
    TOGETHER,
    TOGETHER_STEPS,
    TWO_PENDING_CLASS,
    Broadening,
    Hidden,
    Sample,
    VariantRun,
    broadened,
    challenged,
    implied_besides,
    implied_classes,
    logging,
    nearest,
    spoken,
    unnarrowed,
)
from harness.findings.document import Evidence, FindingClass, Witness
from harness.findings.patterns import anchored, full, required_literals
from harness.targets import registry
from scenarios import coverage
from scenarios.classes import COVERAGE, classes_of
from scenarios.oracle import Oracle
from scenarios.steps import Resend

FILES = sorted(FINDINGS.glob("*.yaml"))
# each shipped file as the files of the releases it names (a file of a range: its view as of each)
VIEWS: dict[str, FindingsFile] = canary.shipped_views()
# variants whose bug no scenario here can show, so no exemption can hide it: each is caught by a
# campaign that findings files do not excuse (and the test below checks it still shows nothing)
CAUGHT_ELSEWHERE = canary.CAUGHT_ELSEWHERE
VARIANTS = sorted(registry.variants())


# A part of the ci sample (harness.canary.part), or the whole of it and of the coverage
# sample where the environment says so (HARNESS_CANARY=whole: tox -e canary-whole, the main job's).
# For the first test below a part is stricter than the whole: a findings file hides a variant
# when it excuses *all* of the variant's violations, and what excuses all of them on the whole
# sample excuses all of them on any part of it.  For the questions per run and per witness a part
# finds less: a run excused whole counts only if the part holds it, a broadening is challenged
# only by the runs the part holds; the whole samples answer them for every scenario.
WHOLE = os.environ.get(canary.WHOLE_VARIABLE) == "whole"


class VariantRuns:
    """Each variant's runs of a part of the ci sample and of the regression files the questions
    read, every one made once for the whole module and judged by every test."""

    def __init__(self, runs: list[VariantRun]) -> None:
        self.runs = runs
        self._of: dict[str, list[Observed]] = {variant: [] for variant in VARIANTS}
        for each in runs:
            self._of[each.variant].append(each.run)

    def of(self, variant: str) -> list[Observed]:
        return self._of[variant]


@pytest.fixture(scope="module")
def where() -> Iterator[Execution]:
    """Where the variants run: this process, or where the environment says (harness.canary
    .where_the_tests_run: tox -e canary-whole spreads them over local processes)."""
    with canary.where_the_tests_run() as chosen:
        yield chosen


@pytest.fixture(scope="module")
def variant_runs(where: Execution) -> VariantRuns:
    return VariantRuns(canary.asked_runs(VIEWS, VARIANTS, WHOLE, where))


@pytest.fixture(scope="module")
def coverage_variant_runs(where: Execution) -> VariantRuns:
    """The variants' runs of a part of the coverage sample (the whole of it and the canary shapes
    where the environment says so), made only where a class narrowed to one of its shapes asks
    for its look-alikes, or where the witnesses are challenged."""
    return VariantRuns(canary.variant_runs(VARIANTS, canary.challenger_scenarios(WHOLE), where))


def test_every_shipped_findings_file_is_challenged() -> None:
    assert len(FILES) >= 6
    assert {path.stem.rsplit("-", 1)[0] for path in FILES} >= {
        "strands",
        "langgraph",
        "langgraph-subgraph-node",
        "openai-agents",
    }
    assert len(VARIANTS) >= 12


def test_a_variant_left_out_is_one_no_scenario_here_can_show(variant_runs: VariantRuns) -> None:
    for variant in CAUGHT_ELSEWHERE:
        assert not any(run.violations for run in variant_runs.of(variant)), variant


@pytest.mark.parametrize("stem", sorted(VIEWS))
def test_no_findings_file_hides_a_known_bad_variant(stem: str, variant_runs: VariantRuns) -> None:
    recorded = VIEWS[stem]
    hidden = []
    for variant in VARIANTS:
        if variant in CAUGHT_ELSEWHERE:
            continue
        # which violations a findings file excuses is decided run by run
        if any(judge_findings(recorded, [run]).new for run in variant_runs.of(variant)):
            continue
        violations = sum(len(run.violations) for run in variant_runs.of(variant))
        assert violations, f"{variant} shows no violation at all: it cannot be a canary"
        hidden.append(f"{variant} (all {violations} violations excused)")
    assert not hidden, f"{stem} hides known-bad variants: {', '.join(hidden)}"


CLASSES = [(stem, found.name) for stem, view in sorted(VIEWS.items()) for found in view.classes]


@pytest.mark.parametrize(("stem", "name"), CLASSES, ids=[f"{s}:{n}" for s, n in CLASSES])
def test_each_class_rejects_a_look_alike_from_a_known_bad_variant(
    stem: str, name: str, variant_runs: VariantRuns, request: pytest.FixtureRequest
) -> None:
    """A variant's violation of an invariant the class witnesses, at a step of a kind it
    witnesses there, in a generated scenario the class's scenario classes admit, that none of its
    witnesses names: the class is narrower than its scenario classes and invariants."""
    [found] = [found for found in VIEWS[stem].classes if found.name == name]
    witnessed = {(witness.invariant, witness.step) for witness in found.witnesses}
    runs = variant_runs.runs
    if not set(found.scenario_classes).isdisjoint(COVERAGE):
        # narrowed to a shape of the coverage sample: its look-alikes are there
        runs = runs + request.getfixturevalue("coverage_variant_runs").runs
    rejected = next(
        (
            (each.run.scenario, violation)
            for each in runs
            if each.run.generated and found.narrows_to(each.run.classes)
            for violation, kind in each.run.violations
            if (violation.invariant, kind) in witnessed
            and not any(w.matches(violation, kind, each.run.steps) for w in found.witnesses)
        ),
        None,
    )
    assert rejected, f"{stem}: class {name} rejects no look-alike of a known-bad variant"


# --- per run and per witness: every run made once, judged many times --------------------------


@pytest.fixture(scope="module")
def measured(variant_runs: VariantRuns, coverage_variant_runs: VariantRuns) -> Measured:
    """The runs above, judged against every shipped file, per run and per witness (the coverage
    sample's part only challenges witnesses, as ``python -m harness.canary`` does)."""
    runs = [each for each in variant_runs.runs if each.variant not in CAUGHT_ELSEWHERE]
    challengers = [
        each for each in coverage_variant_runs.runs if each.variant not in CAUGHT_ELSEWHERE
    ]
    return canary.measure(VIEWS, runs, challengers)


def baseline() -> dict[str, Any]:
    path = canary.WHOLE_BASELINE if WHOLE else canary.BASELINE
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _compared(now: list[dict[str, Any]], then: list[dict[str, Any]], what: str) -> list[str]:
    grown = [item for item in now if item not in then]
    gone = [item for item in then if item not in now]
    return [f"new: {what} {json.dumps(item, sort_keys=True)}" for item in grown] + [
        f"no longer: {what} {json.dumps(item, sort_keys=True)} (narrowed? update the baseline: "
        "python -m harness.canary --baseline, with --whole for the whole samples)"
        for item in gone
    ]


@pytest.mark.parametrize("stem", sorted(VIEWS))
def test_no_findings_file_excuses_a_known_bad_variants_run_whole(
    stem: str, measured: Measured
) -> None:
    """A variant's run whose every violation a file excuses is a run where a new bug of the
    SDK of that shape passes unseen.  None may be; those measured today (the baseline) are
    listed for the triage of the files and may not grow."""
    now = [item.to_json() for item in measured.hidden if item.file == stem]
    then = [item for item in baseline()["hidden"] if item["file"] == stem]
    assert not _compared(now, then, "variant run excused whole:")


# Variant runs excused whole that are not the excusing classes' own bug, and why no witness can
# tell them apart yet: (file, variant, scenario) to the reason.  Only the whole samples hold them.
LOOK_ALIKES: Final = {
    ("langgraph-toolnode-1.2.24", "bad-one-call-per-message", "generated-twins-021"): (
        "the one-task ToolNode runs a message's calls in order and stops at the first that asks, "
        "so no call after it runs; the variant turns that call away and a later call asks. Each "
        "shows one question of the step, the others missing, and nothing a run records says "
        "which calls ran (the requests journal would, but no witness can name it)"
    ),
    ("langgraph-toolnode-1.2.24", "bad-one-call-per-message", "generated-twins-1003"): (
        "as generated-twins-021 (the canary sample's)"
    ),
    ("adk-single-turn-2.13.0", "bad-one-call-per-message", "generated-twins-1003"): (
        "ADK cancels the unfinished calls of a turn beside a call that pauses, and the variant "
        "turns a twin call away: each leaves that call's questions missing at the run, no other "
        "question extra, and ADK logs nothing for it"
    ),
    ("langgraph-toolnode-1.2.24", "bad-replay-turn", "generated-retried-1001"): (
        "the one-task ToolNode replays a resumed task's every call, as the variant replays a "
        "resumed turn's: the two runs show the same violations at the same steps"
    ),
    ("langgraph-toolnode-1.2.24", "bad-resume-by-responses", "generated-effects-1000"): (
        "an ordinary tool of a resumed call runs again in both (I15 at an answer); the ToolNode "
        "runs again what stood before the question in its message, the variant what stood after "
        "it, and I15's sentence names the tool and its call, not where in the message it stood"
    ),
    ("langgraph-toolnode-1.2.24", "bad-resume-by-responses", "generated-effects-1005"): (
        "as generated-effects-1000"
    ),
    ("strands-1.58.1", "bad-actions-dry-run-when-rebuilt", "generated-deploy-003"): (
        "no run without restarts is compared where a deploy may change the outcome, and strands "
        "1.58.1's lost nested resume there shows an approval delivered nowhere and nothing run "
        "(I2, I11) at some answers with no question back or lost beside them, as the variant's "
        "dry run of the approved action does: restart-loses-uncompared-nested-resume says no "
        "recorded evidence can tell the two apart in these scenarios"
    ),
    ("strands-1.58.1", "bad-actions-dry-run-when-rebuilt", "generated-deploy-1010"): (
        "as generated-deploy-003 (the canary sample's)"
    ),
    ("strands-1.58.1", "bad-answers-unheard-when-rebuilt", "generated-deploy-003"): (
        "as the dry run's: where no run without restarts is compared, strands 1.58.1 shows an "
        "approval of the orchestrator's own delivered nowhere and its question back (I2, I3, "
        "I10, I11, O; shared ids lose some, generated-strands-041), as the variant's unheard "
        "answer does, and restart-loses-uncompared-nested-resume says no recorded evidence "
        "tells the two apart in these scenarios"
    ),
    ("strands-1.58.1", "bad-answers-unheard-when-rebuilt", "generated-deploy-1010"): (
        "as generated-deploy-003 (the canary sample's)"
    ),
    ("openai-agents-0.24.0", "bad-no-ownership-check", "generated-twins-1009"): (
        "openai-agents lets every concurrent call of a preserve_context agent tool run and ask, "
        "and the variant lets a second call go on with the turn the first parked, which asks "
        "again: both show the questions extra at the run, and nothing recorded says which call "
        "asked"
    ),
}


@pytest.mark.parametrize("stem", sorted(VIEWS))
def test_a_variant_run_excused_whole_is_the_classes_own_bug(stem: str, measured: Measured) -> None:
    """What the baseline may list is a run of a variant that, on each excusing class's
    demonstration, fails only as the SDK does (``same_bug``): no witness could tell the two apart.
    A run excused whole by a class whose demonstration the variant does not show is a look-alike
    the class is too wide for, and fails here whatever the baseline says, unless ``LOOK_ALIKES``
    says why no recorded evidence separates it."""
    looks_alike = [
        item.describe()
        for item in measured.hidden
        if item.file == stem
        and not item.same_bug
        and (item.file, item.variant, item.scenario) not in LOOK_ALIKES
    ]
    assert not looks_alike


@pytest.mark.parametrize("stem", sorted(VIEWS))
def test_each_class_witness_is_narrower_than_its_broadenings(stem: str, measured: Measured) -> None:
    """Each class witness broadened (pattern to ``BROAD``, anchor dropped, scenario classes
    dropped) names a known-bad variant's violation the shipped witness rejects: else nothing
    shows it is any narrower.  Those no variant challenges today (the baseline) may not grow."""
    now = [item.to_json() for item in measured.unchallenged if item.file == stem]
    then = [item for item in baseline()["unchallenged"] if item["file"] == stem]
    assert not _compared(now, then, "broadening unchallenged:")


def test_the_baseline_names_only_files_that_are_shipped() -> None:
    named = {item["file"] for key in ("hidden", "unchallenged") for item in baseline()[key]}
    assert named <= set(VIEWS)


@pytest.mark.parametrize("path", [canary.BASELINE, canary.WHOLE_BASELINE], ids=["part", "whole"])
def test_each_baseline_is_written_as_the_canary_writes_it(path: Path) -> None:
    """An item a line, and an empty list as ``[]`` (on the whole samples no broadening is left
    unchallenged): a baseline edited by hand into another layout is refused."""
    data = json.loads(path.read_text())
    hidden = tuple(
        Hidden(
            item["file"],
            item["variant"],
            item["scenario"],
            tuple(item["excused_by"]),
            tuple(item.get("same_bug", ())),
        )
        for item in data["hidden"]
    )
    left = tuple(
        Broadening(item["file"], item["class"], item["witness"], item["broadened"])
        for item in data["unchallenged"]
    )
    assert canary.dumped(Measured(hidden, left, data["tried"])) == path.read_text()
    empty = canary.dumped(Measured((), (), {}))
    assert '"unchallenged": [],' in empty
    assert json.loads(empty) == {"hidden": [], "unchallenged": [], "tried": {}}


def test_a_broadened_pattern_passes_validation_yet_names_nearly_every_sentence() -> None:
    assert anchored(BROAD) == BROAD
    sentences = ("x", "pending nothing", "send-mail ran 0 times", "final answer 'done'")
    assert all(full(BROAD, sentence) for sentence in sentences)


def test_the_logging_variants_say_what_every_shipped_anchor_names() -> None:
    """Every anchor of every shipped class witness matches something the logging variants log
    (or tell their models), so no anchor alone keeps every variant out of a witness."""
    said = {
        "error": SDK_LIKE_ERRORS,
        "result": SDK_LIKE_RESULTS,
        "warning": SDK_LIKE_WARNINGS,
        "stored": SDK_LIKE_STORED,
        "shown": SDK_LIKE_SHOWN,
    }
    unmatched = sorted(
        {
            f"{key}: {pattern}"
            for view in VIEWS.values()
            for found in view.classes
            for witness in found.witnesses
            for key, texts in said.items()
            for pattern in [getattr(witness, key)]
            if pattern is not None and not any(full(pattern, text) for text in texts)
        }
    )
    assert not unmatched, f"anchors no logging variant matches: {unmatched}"


def test_a_logging_variant_changes_no_violation_only_what_its_steps_recorded() -> None:
    history_less = Observed(
        "g-1",
        "sha256:" + "0" * 64,
        frozenset(),
        ((Violation("I3", "c", 0, "pending a#1", "pending nothing"), "run"),),
        (Evidence("run", ("own error",), violated=("I3",)),),
        True,
    )
    logged = logging(history_less)
    assert logged.violations == history_less.violations
    # no violation more: a variant stands beside an SDK's I5 or D only where its run shows one
    assert logged.steps[0].violated == ("I3",)
    assert logged.steps[0].errors[0] == "own error"
    assert set(SDK_LIKE_WARNINGS) <= set(logged.steps[0].warnings)
    assert set(SDK_LIKE_STORED) <= set(logged.steps[0].stored)
    assert set(SDK_LIKE_SHOWN) <= set(logged.steps[0].shown)


def _one_class(
    name: str, explanation: str, *witnesses: Witness, scenario_classes: tuple[str, ...] = ()
) -> FindingClass:
    """A class of ``witnesses``, shown by a regression file named ``x``."""
    return FindingClass.model_validate(
        {
            "class": name,
            "shown_by": ["x"],
            "scenario_classes": list(scenario_classes),
            "explanation": explanation,
            "witnesses": list(witnesses),
        }
    )


def _file_of(witness: Witness, explanation: str, classes: list[Any]) -> FindingsFile:
    """A findings file of target ``sdk`` 1.0: one finding, of regression file ``x`` (``witness``,
    ``explanation``), and ``classes``."""
    finding = {
        "scenario": "x",
        "digest": "sha256:" + "0" * 64,
        "explanation": explanation,
        "witnesses": [witness],
    }
    return FindingsFile.model_validate(
        {"target": "sdk", "version": "1.0", "findings": [finding], "classes": classes}
    )


def _run(*violations: tuple[Violation, str], classes: frozenset[str] = frozenset()) -> Observed:
    """A generated run of a variant with ``violations``, each at a step of its own kind."""
    steps = tuple(Evidence(kind, violated=(violation.invariant,)) for violation, kind in violations)
    return Observed("g-1", "sha256:" + "0" * 64, classes, violations, steps, True)


def test_a_speaking_variant_changes_only_the_words_an_sdk_chooses() -> None:
    """The speaking variants say in an SDK's words what the variant raised, told its model and
    named its questions, and nothing else: the same violations at the same steps, each copy with
    the positions of the sentences it changed."""
    raised = Violation("O", "o", 0, "no error", "AgentError: agent 'x' has no parked turn")
    told = Violation(
        "I2",
        "d",
        1,
        "orchestrator's model gets the result of s1 'part 1' (toolUseId 'call-1'): 'done'",
        "orchestrator's model got 'sub-agent busy' under toolUseId 'call-1', not the call's answer",
    )
    wrong_call = replace(
        told,
        seen="orchestrator's model got 'done' under toolUseId 'call-1': "
        "the result of s1 'part 2' (toolUseId 'call-2'), returned to the wrong call",
    )
    named = Violation(
        "I3",
        "p",
        2,
        "a#1 stays pending as 'sub:0.call-1:tool:1.t1:approval'",
        "a#1 no longer pending; b#1 pending as 'sub:0.call-2:tool:1.t2:approval'",
    )
    again = Violation("I9", "p", 2, "still pending a#1 as 'sub:0.call-1:tool:1.t1:approval'", "x")
    run = _run(
        (raised, "answer"),
        (told, "run"),
        (wrong_call, "run"),
        (named, "answer"),
        (again, "answer"),
        classes=frozenset({"stateful-provider"}),  # where every SDK word may be said
    )
    copies = list(spoken(run))
    for copy, changed in copies:
        assert copy.steps is run.steps
        assert [(v.invariant, v.step, k) for v, k in copy.violations] == [
            (v.invariant, v.step, k) for v, k in run.violations
        ]
        assert changed == tuple(
            position
            for position, (violation, _) in enumerate(run.violations)
            if copy.violations[position][0] != violation
        )
        assert 2 not in changed  # another call's result, returned to the wrong call, stays so
    seen = {copy.violations[position][0].seen for copy, changed in copies for position in changed}
    assert {brief(text) for text in SDK_LIKE_RAISED} <= seen
    assert {
        f"orchestrator's model got {brief(text)!r} under toolUseId 'call-1', not the call's answer"
        for text in SDK_LIKE_TOLD
    } <= seen
    names = [
        (copy.violations[3][0].expected, copy.violations[4][0].expected)
        for copy, changed in copies
        if changed == (3, 4)
    ]
    assert len(names) == len(SDK_LIKE_NAMES)
    # one question, one name, in every sentence of the run: the first named is lg-1 everywhere
    assert ("a#1 stays pending as 'lg-1'", "still pending a#1 as 'lg-1'") in names
    assert any(first.startswith("a#1 stays pending as 'v1:tool_call:t1:") for first, _ in names)
    assert any(
        first.startswith("a#1 stays pending as 'v1:before_tool_call:t1:") for first, _ in names
    )


def test_the_speaking_variants_tell_every_text_a_shipped_witness_quotes() -> None:
    """Each shipped I2 witness that names a text its model got in a call's place (not no result,
    not another call's result) names one a speaking variant tells, in some call's place: else
    no variant's violation could meet that witness, and its anchors and scenario classes would
    never be challenged."""
    told = [
        found
        for text in SDK_LIKE_TOLD
        for found in (
            f"orchestrator/s1's model got {brief(text)!r} under toolUseId 'call-1'{ending}"
            for ending in ("", ", not the call's answer")
        )
    ]
    quoting = {
        (stem, found.name, witness.seen)
        for stem, view in VIEWS.items()
        for found in view.classes
        for witness in found.witnesses
        if witness.invariant == "I2"
        and witness.seen is not None
        and "model got " in witness.seen
        and "model got no result" not in witness.seen
        and "the wrong call" not in witness.seen
    }
    assert quoting
    unsaid = sorted(each for each in quoting if not any(full(each[2], text) for text in told))
    assert not unsaid, unsaid


def test_the_speaking_variants_name_the_questions_i1_quotes_as_the_sdks_do() -> None:
    """I1 quotes a question's name before "shown for" and after "asked under": a speaking variant
    renames it there too, one name per question across the run, and leaves a quoted text that is
    no question's name as it is."""
    first, second = "'sub:0.call-1:tool:1.t1:approval'", "'tool:0.t2:approval'"
    sentences = (
        ("distinct root-visible ids", f"{first} shown for a#1, b#1; {second} shown for c#1"),
        ("a#2 asked under a new id", f"a#2 asked under {first}, the id of a#1"),
        ("x", "orchestrator's model got 'done' under toolUseId 't1'"),
    )
    run = _run(
        *(
            (Violation("I1" if n < 2 else "I2", "n", n + 1, *said), "answer")
            for n, said in enumerate(sentences)
        )
    )
    renamed = [
        (copy.violations[0][0].seen, copy.violations[1][0].seen)
        for copy, changed in spoken(run)
        if changed == (0, 1)  # the model's 'done' is no question's name: never renamed
    ]
    assert len(renamed) == len(SDK_LIKE_NAMES)
    assert (
        "'lg-1' shown for a#1, b#1; 'lg-2' shown for c#1",
        "a#2 asked under 'lg-1', the id of a#1",
    ) in renamed


def test_a_speaking_variant_publishes_its_events_as_the_raw_stream_events_i8_quotes() -> None:
    """An event I8 names by its type and agent is named as a raw stream event is, with neither
    (as strands' are): a shipped I8 witness that quotes that shape then names a speaking
    variant's violation, and no other sentence changes."""
    leaked = "carries stored message '[[fake-model turn 0 of \"part 1\"]]'"
    published = Violation(
        "I8",
        "p",
        2,
        "no continuation data in public events",
        f"event 3 (tool_stream of o/s1) {leaked}",
    )
    elsewhere = Violation("I3", "p", 2, "pending a#1", "event 3 (tool_stream of o/s1) carries x")
    run = _run((published, "answer"), (elsewhere, "answer"))
    raw = [copy.violations[0][0].seen for copy, changed in spoken(run) if changed == (0,)]
    assert raw == [f"event 3 {SDK_LIKE_EVENT} {leaked}"]
    quoting = [
        witness.seen
        for view in VIEWS.values()
        for found in view.classes
        for witness in found.witnesses
        if witness.invariant == "I8" and witness.seen and "\\(\\? of \\?\\)" in witness.seen
    ]
    assert quoting
    assert all(full(pattern, raw[0]) for pattern in quoting)


def test_a_witness_quoting_an_sdks_words_is_challenged_by_the_speaking_variants() -> None:
    """A witness whose sentence quotes what an SDK raised (its anchor what it logged) names no
    violation of a variant that raises its own error; the speaking variants raise the SDK's, so
    dropping the anchor names one the shipped witness rejects."""
    witness = Witness(
        invariant="O",
        step="answer",
        expected="^no error$",
        seen="^ScriptError: orchestrator: no turn \\d+ scripted for prompt '[^']*'$",
        error="^ProviderError: [a-z0-9/]+: stale previous_response_id '[^']*'$",
    )
    found = _one_class(
        "model-asked-an-unscripted-turn",
        "a stale provider state makes the SDK ask its model again",
        witness,
    )
    raised = Violation("O", "o", 0, "no error", "AgentError: agent 'x' has no parked turn")
    sample = Sample([VariantRun("bad-x", _run((raised, "answer")))])
    assert challenged(found, 0, "anchor", sample)
    assert any(
        copy.violations[0][0].seen.startswith("ScriptError: orchestrator: no turn")
        for copy, _ in spoken(sample.runs[0].run)
    )
    quiet = _run((replace(raised, invariant="I3", expected="pending a#1", seen="x"), "answer"))
    assert not challenged(found, 0, "anchor", Sample([VariantRun("bad-x", quiet)]))


def test_a_beside_is_dropped_alone_as_a_broadening_of_its_own() -> None:
    """Dropping a witness's ``beside`` is a broadening the canary challenges: alone where the
    witness has another anchor, with every anchor where it is the only one."""
    witness = Witness(invariant="I3", step="answer", seen="^pending a#1$", beside="^I5$")
    found = _one_class(
        "lost-resume",
        "a restart loses the resume",
        witness,
        witness.model_copy(update={"stored": "^nothing$"}),
    )
    assert broadened(found, 0, "beside") is None  # the only anchor: "anchor" drops it
    assert broadened(found, 0, "anchor") == (found, witness.model_copy(update={"beside": None}))
    made = broadened(found, 1, "beside")
    assert made is not None
    assert (made[1].beside, made[1].stored) == (None, "^nothing$")
    anchorless = broadened(found, 1, "anchor")
    assert anchorless is not None
    assert not anchorless[1].anchored


def test_what_the_violation_beside_saw_is_dropped_alone_first() -> None:
    """A witness naming what the violation beside it saw (``beside_seen``) is broadened by
    dropping that alone, keeping the ``beside``; "anchor" drops both."""
    witness = Witness(
        invariant="I10",
        step="answer",
        seen="^a pending once$",
        beside="^I3$",
        beside_seen="^pending a#1 \\(missing b#1\\)$",
    )
    found = _one_class("hidden-question", "a question shown a step late", witness)
    made = broadened(found, 0, "beside")
    assert made is not None
    assert (made[1].beside, made[1].beside_seen) == ("^I3$", None)
    anchorless = broadened(found, 0, "anchor")
    assert anchorless is not None
    assert (anchorless[1].beside, anchorless[1].beside_seen) == (None, None)


def test_anchors_kept_to_steps_up_to_the_violations_are_let_come_later_as_a_broadening() -> None:
    """A witness whose anchors must be seen by the violation's step (``anchored_by_then``) is
    broadened by letting them come from any step of their kind; a witness without it has no such
    broadening, and "anchor" drops it with the anchors."""
    witness = Witness(
        invariant="I10",
        step="answer",
        seen="^a pending once$",
        beside="^I3$",
        anchored_at="answer",
        anchored_by_then=True,
    )
    found = _one_class(
        "hidden-question",
        "a question shown a step late",
        witness,
        witness.model_copy(update={"anchored_by_then": False}),
    )
    made = broadened(found, 0, "by-then")
    assert made == (found, witness.model_copy(update={"anchored_by_then": False}))
    assert broadened(found, 1, "by-then") is None
    anchorless = broadened(found, 0, "anchor")
    assert anchorless is not None
    assert (anchorless[1].anchored_at, anchorless[1].anchored_by_then) == (None, False)


def _lost_resume() -> tuple[Witness, FindingClass]:
    """A class narrowed to restarts between answers, its one witness an I3 beside an I5."""
    witness = Witness(
        invariant="I3", step="answer", seen="^pending a#1 \\(missing b#1\\)$", beside="^I5$"
    )
    found = _one_class(
        "lost-resume",
        "a restart loses the resume",
        witness,
        scenario_classes=("restart-between-answers",),
    )
    return witness, found


def test_a_beside_is_set_aside_where_a_pattern_or_a_scenario_class_is_challenged() -> None:
    """No variant logs a violation, so a ``beside`` would keep every variant run without a
    restart's I5 out of a broadened pattern as well as the shipped one: the broadened pattern is
    asked with it set aside; dropping it is asked of the runs as they are."""
    _, found = _lost_resume()
    swapped = Violation("I3", "partial-answers", 0, "pending a#1, b#1", "pending a#1 (extra c#1)")
    lost = replace(swapped, seen="pending a#1 (missing b#1)")

    def sample(violation: Violation, classes: frozenset[str]) -> Sample:
        return Sample([VariantRun("bad-x", _run((violation, "answer"), classes=classes))])

    between = frozenset({"restart-between-answers"})
    assert challenged(found, 0, "pattern", sample(swapped, between))
    assert not challenged(found, 0, "pattern", sample(lost, between))
    assert challenged(found, 0, "scenario-classes", sample(lost, frozenset()))
    assert challenged(found, 0, "anchor", sample(lost, between))  # no I5 beside it


def test_a_baselines_broadenings_are_asked_again_of_one_variants_runs() -> None:
    """``--variant``'s question (``harness.canary.against``): of the broadenings a baseline
    leaves unchallenged, which the given runs challenge, and which no longer apply (the class
    witness is gone, or that broadening changes it no more)."""
    witness, found = _lost_resume()
    document = _file_of(witness, "a restart loses the resume", [found])
    lost = Violation("I3", "partial-answers", 0, "pending a#1, b#1", "pending a#1 (missing b#1)")
    sample = Sample([VariantRun("bad-x", _run((lost, "answer")))])  # no restart between answers
    item = {"file": "sdk-1.0", "class": "lost-resume", "witness": witness.describe()}
    items = [
        item | {"broadened": "scenario-classes"},
        item | {"broadened": "pattern"},
        item | {"broadened": "by-then"},  # no anchored_by_then: nothing to broaden
        item | {"class": "gone", "broadened": "pattern"},
    ]
    asked = canary.against({"sdk-1.0": document}, sample, items)
    assert [verdict for _, verdict in asked] == [True, False, None, None]
    told = canary.told_of_variants(["bad-x"], [], asked, canary.BASELINE)
    assert told.splitlines()[:2] == [
        "bad-x: 0 runs excused whole (0 of them the same bug)",
        "challenges 1 of the 4 broadenings reports/baselines/exemption-canary.json leaves "
        "unchallenged",
    ]
    assert "2 of them no longer apply (the class witness changed or is gone)" in told


def test_one_variant_challenges_nothing_the_baseline_leaves_unchallenged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``python -m harness.canary --variant NAME`` on CI's part: a variant the baseline was
    measured with challenges none of what it leaves unchallenged, and the runs of it that the
    baseline lists as excused whole are those it finds."""
    variant = "bad-shared-object"
    assert canary.main([*(["--whole"] if WHOLE else []), "--variant", variant]) == 0
    told = capsys.readouterr().out.splitlines()
    listed = [item for item in baseline()["hidden"] if item["variant"] == variant]
    same = sum(1 for item in listed if item.get("same_bug"))
    assert told[0] == f"{variant}: {len(listed)} runs excused whole ({same} of them the same bug)"
    left = len(baseline()["unchallenged"])
    assert f"challenges 0 of the {left} broadenings" in told[len(listed) + 1]


@pytest.mark.parametrize(
    "options",
    [["--variant", "bad-nothing-like-it"], ["--variant", "bad-shared-object", "--baseline"]],
)
def test_a_bad_variant_option_is_one_line_and_exits_2(
    options: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        canary.main(options)
    assert ended.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith("python -m harness.canary: --variant")


def test_a_variant_runs_the_regression_files_its_questions_read() -> None:
    """The canary runs a variant's regression files only where a question reads them
    (``harness.canary.asked_runs``): all of them where a file leaves every generated run of it
    unseen (whether the file hides it), the ``shown_by`` files of the classes that excuse one of
    its generated runs whole (whether it is their bug), none where neither holds."""
    witness = Witness(
        invariant="I3",
        step="answer",
        expected="^pending a#1, b#1$",
        seen="^pending a#1 \\(missing b#1\\)$",
    )
    lost = _one_class("lost-resume", "a restart loses it", witness)
    document = _file_of(witness, "a restart loses it", [lost])
    excused = Violation("I3", "partial-answers", 0, "pending a#1, b#1", "pending a#1 (missing b#1)")
    seen = Violation("I2", "d", 0, "a runs once", "a ran 0 times: approval not delivered")
    generated = [
        VariantRun("bad-seen", _run((seen, "answer"))),
        VariantRun("bad-excused", _run((seen, "answer"))),
        VariantRun("bad-excused", _run((excused, "answer"))),
        VariantRun("bad-unseen", _run((excused, "answer"))),
    ]
    variants = ["bad-seen", "bad-excused", "bad-unseen", "bad-quiet"]
    asked = canary.regressions_asked({"sdk-1.0": document}, variants, generated, ["x", "y"])
    assert asked == {
        "bad-seen": frozenset(),
        "bad-excused": {"x"},
        "bad-unseen": {"x", "y"},
        "bad-quiet": {"x", "y"},  # no violation at all: every file would hide it
    }


def test_the_report_says_what_keeps_the_nearest_violations_out_of_a_broadening() -> None:
    """For an unchallenged broadening the report tallies the variants' violations of its
    invariant at its step kind by the parts of the broadened witness they fail (each run and its
    logging copy): where a new variant or shape would have to write what."""
    witness = Witness(
        invariant="I3",
        step="answer",
        expected="^pending a#1, b#1$",
        seen="^pending a#1 \\(missing b#1\\)$",
    )
    found = _one_class(
        "lost-resume", "a restart loses it", witness, scenario_classes=("restart-between-answers",)
    )
    lost = Violation("I3", "partial-answers", 0, "pending a#1, b#1", "pending a#1 (missing b#1)")
    other = replace(lost, expected="pending a#1, c#1")
    between = frozenset({"restart-between-answers"})
    sample = Sample(
        [
            VariantRun("bad-x", _run((lost, "answer"), classes=between)),
            VariantRun("bad-x", _run((other, "answer"))),
            VariantRun("bad-x", _run((other, "run"), classes=between)),  # another step kind
        ]
    )
    both = "named by the shipped witness too"
    assert not challenged(found, 0, "pattern", sample)
    assert nearest(found, 0, "pattern", sample) == ((both, 2), ("scenario classes", 2))
    assert not challenged(found, 0, "scenario-classes", sample)
    assert nearest(found, 0, "scenario-classes", sample) == (("expected", 2), (both, 2))
    at_resend = _one_class("late", "asked late", witness.model_copy(update={"step": "resend"}))
    assert nearest(at_resend, 0, "pattern", sample) == ()  # no variant writes one there


# Classes that only their sentences narrow (``unnarrowed``), per shipped file, as the files stand:
# each should gain an anchor or a scenario class from what its SDK shows; the list may shrink,
# never grow (issue 40: none without an anchor or a narrowing scenario class)
UNNARROWED = {
    "adk-2.13.0": ["re-sent-confirmation-dropped-while-paused"],
    "adk-single-turn-2.13.0": [
        "resumed-sub-agent-loses-its-prompt",
        "waiting-call-handed-null",
        # added with the rest of the sample's triage: ADK logs nothing for any of them (a
        # consumed confirmation dropped, a deployed-away call's answer lost), and the last one's
        # sentence names the deploy itself; call-after-a-resume-told-the-root-prompt left the list
        # with one witness that needs another violation beside it (beside), its other witnesses
        # still sentences alone
        "re-sent-confirmation-dropped-while-paused",
        "deployed-away-answer-fails-silently",
    ],
    "openai-agents-0.24.0": [
        "callers-finished-call-id-reused-silently",
        "reused-call-ids-deduplicated",
    ],
    "strands-1.58.1": ["restored-turn-published-again"],
    "strands-1.59.0": ["restored-turn-published-again"],
}


def test_no_shipped_class_is_narrowed_by_its_sentences_alone_but_those_listed() -> None:
    now = {
        path.stem: mine for path in FILES for mine in [unnarrowed(read_findings_file(path))] if mine
    }
    grown = {
        stem: sorted(set(names) - set(UNNARROWED.get(stem, ()))) for stem, names in now.items()
    }
    assert not any(grown.values()), f"classes only their sentences narrow: {grown}"
    narrowed = {
        stem: sorted(set(names) - set(now.get(stem, ()))) for stem, names in UNNARROWED.items()
    }
    assert not any(narrowed.values()), f"narrowed now, drop them from UNNARROWED: {narrowed}"


def test_a_class_with_an_anchor_or_a_scenario_class_is_narrowed() -> None:
    witness = Witness(invariant="I8", step="answer", seen="^event \\d+ carries .+$")
    bare = {"shown_by": ["x"], "explanation": "a resumed turn is published again"}
    document = _file_of(
        witness,
        "a resumed turn is published again",
        [
            bare | {"class": "sentences-alone", "witnesses": [witness]},
            bare | {"class": "scoped", "scenario_classes": ["resend"], "witnesses": [witness]},
            bare
            | {
                "class": "beside-another",
                "witnesses": [witness, witness.model_copy(update={"beside": "^I5$"})],
            },
        ],
    )
    assert unnarrowed(document) == ["sentences-alone"]


def test_each_shipped_file_is_asked_about_the_runs_its_targets_release_can_make() -> None:
    """Strands before 1.59 stores no sub-agent turn, so no corruption of one; the releases from
    1.59 on can; every shipped file's target is a built-in one whose set is known."""
    older = canary.expressible_of("strands-1.58.1", VIEWS["strands-1.58.1"])
    newer = canary.expressible_of("strands-1.62.0", VIEWS["strands-1.62.0"])
    assert older is not None
    assert newer is not None
    assert "corruption:deleted" in newer - older
    assert all(canary.expressible_of(stem, view) for stem, view in VIEWS.items())


def test_a_scenario_class_the_witness_implies_is_not_dropped() -> None:
    """Dropping a class's scenario classes is a broadening only where it lets the witness name a
    violation of another scenario: a witness at a re-send step names only scenarios with a
    re-send, and one whose expected sentence must say a deploy took the call's tool away only
    scenarios with a deploy (``scenarios.oracle.CAUSE_CLASSES``): those classes are kept."""
    gone = Witness(
        invariant="I9",
        step="resend",
        expected=r"^an error is raised or logged: the call that asked [a-z]+ is gone "
        r"\(a deploy took its tool away\)$",
        seen="^failure was silent$",
    )
    loose = gone.model_copy(update={"expected": "^an error is raised or logged: .+$"})
    found = _one_class(
        "gone-call",
        "a deploy drops the call silently",
        gone,
        loose,
        loose.model_copy(update={"step": "answer"}),
        gone.model_copy(update={"step": "answer"}),
        scenario_classes=("resend", "deploy-skew", "twin-calls"),
    )
    # a deploy while a question waits is a restart between answers no control is compared with
    within = {"restart-between-answers", "uncompared-restart"}
    assert implied_classes(gone) == {"resend", "deploy-skew"} | within
    kept = [broadened(found, position, "scenario-classes") for position in range(4)]
    assert [made[0].scenario_classes if made else None for made in kept] == [
        ("resend", "deploy-skew"),
        ("resend", "deploy-skew"),  # a re-send must fail only for a deploy (REFUSED_RESEND)
        (),
        ("deploy-skew",),
    ]
    implied = found.model_copy(update={"scenario_classes": ("deploy-skew", "resend")})
    assert broadened(implied, 0, "scenario-classes") is None  # nothing left to drop
    wider = found.model_copy(update={"scenario_classes": ("restart-between-answers",)})
    assert broadened(wider, 0, "scenario-classes") is None  # deploy-skew lies within it
    assert broadened(wider, 2, "scenario-classes") is not None


def test_anchors_recorded_at_a_re_send_imply_a_scenario_with_one() -> None:
    """A witness whose anchors must have been recorded at a re-send step (``anchored_at``) names
    only violations of scenarios with a re-send, whatever step it is at itself."""
    later = Witness(
        invariant="I2",
        step="answer",
        expected="^[a-z-]+ runs once$",
        seen="^[a-z-]+ ran 0 times: approval not delivered$",
        result="^[a-z/]+: [a-z-]+: done$",
        anchored_at="resend",
    )
    assert implied_classes(later) == {"resend"}
    assert implied_classes(later.model_copy(update={"anchored_at": "answer"})) == frozenset()


def test_a_sentence_naming_a_response_id_implies_a_stateful_provider() -> None:
    """Only a stateful provider writes a response id (``PROVIDER_CLASSES``): a witness whose
    sentence must name one names only ``stateful-provider`` scenarios, so that class is kept,
    and a speaking variant says a provider's refusal only in a run of that class."""
    inherited = Witness(
        invariant="I7",
        step="run",
        expected='^[a-z0-9/]+: the first request of its call "[^"]*" carries no provider state '
        "from an earlier call$",
        seen='^[a-z0-9/]+: the first request of its call "[^"]*" carried provider state '
        r"\(response_id\) from an earlier call$",
    )
    assert implied_classes(inherited) == {"stateful-provider"}
    assert implied_classes(inherited.model_copy(update={"seen": "^.+ carried .+$"})) == set()
    raised = Violation("O", "o", 0, "no error", "AgentError: agent 'x' has no parked turn")
    stateless = _run((raised, "answer"))
    stateful = _run((raised, "answer"), classes=frozenset({"stateful-provider"}))
    said = [
        {copy.violations[0][0].seen for copy, _ in spoken(run)} for run in (stateless, stateful)
    ]
    assert not [text for text in said[0] if "response_id" in text]
    assert [text for text in said[1] if "response_id" in text]


def test_a_pending_sentence_of_two_questions_implies_a_step_that_asked_them_together() -> None:
    """Two questions wait only after a step that asked them together (``TWO_PENDING``): a
    witness whose expected sentence names two or more pending questions names only
    ``questions-asked-together`` scenarios, so dropping that class broadens nothing."""
    shown = Witness(
        invariant="I3",
        step="run",
        expected=r"^pending [a-z0-9-]+#\d+(, [a-z0-9-]+#\d+)+$",
        seen=r"^pending [a-z0-9-]+#\d+ \(missing [a-z0-9-]+#\d+(, [a-z0-9-]+#\d+)*\)$",
    )
    assert implied_classes(shown) == {TWO_PENDING_CLASS}
    assert implied_classes(shown.model_copy(update={"invariant": "I11"})) == {TWO_PENDING_CLASS}
    one_or_more = r"^pending [a-z0-9-]+#\d+(, [a-z0-9-]+#\d+)*$"
    assert implied_classes(shown.model_copy(update={"expected": one_or_more})) == set()
    assert implied_classes(shown.model_copy(update={"invariant": "I10"})) == set()
    found = _one_class("first", "one question of two", shown, scenario_classes=(TWO_PENDING_CLASS,))
    assert broadened(found, 0, "scenario-classes") is None


def test_a_later_question_pending_implies_a_scenario_that_re_interrupts() -> None:
    """An action asks its second question only once an answer approved its first
    (``LATER_QUESTION``): a witness whose expected pending sentence must name one names only
    ``re-interrupt`` scenarios, so dropping that class broadens nothing."""
    later = Witness(
        invariant="I3",
        step="resend",
        expected=r"^pending (.+, )?[a-z0-9-]+#2(, .+)?$",
        seen=r"^pending .+ \(missing [a-z0-9-]+#\d+(, [a-z0-9-]+#\d+)*\)$",
    )
    assert implied_classes(later) == {"resend", LATER_QUESTION_CLASS}
    for other in (
        later.model_copy(update={"expected": r"^pending (.+, )?[a-z0-9-]+#1\d*(, .+)?$"}),
        later.model_copy(update={"invariant": "I14"}),  # a pending list the target showed
    ):
        assert LATER_QUESTION_CLASS not in implied_classes(other)
    found = _one_class(
        "later",
        "a later question lost at a re-send",
        later,
        scenario_classes=(LATER_QUESTION_CLASS, "resend"),
    )
    assert broadened(found, 0, "scenario-classes") is None


def test_a_refused_re_send_implies_a_deploy_while_a_question_waited() -> None:
    """A re-sent answer must fail only where a deploy took away a call it names
    (``REFUSED_RESEND``): an I9 witness at a re-send names only ``deploy-skew`` scenarios, and
    those of the classes that one lies within, so dropping any of them broadens nothing."""
    silent = Witness(
        invariant="I9",
        step="resend",
        expected="^an error is raised or logged: .+$",
        seen="^failure was silent$",
    )
    assert implied_classes(silent) >= {REFUSED_RESEND_CLASS, "uncompared-restart"}
    for other in (
        silent.model_copy(update={"step": "answer"}),
        silent.model_copy(update={"invariant": "I14"}),
    ):
        assert REFUSED_RESEND_CLASS not in implied_classes(other)
    found = _one_class(
        "gone", "a gone call answered silently", silent, scenario_classes=("uncompared-restart",)
    )
    assert broadened(found, 0, "scenario-classes") is None


def test_what_the_implied_classes_rest_on_holds_on_every_scenario_the_canary_runs() -> None:
    """What ``TWO_PENDING``, ``LATER_QUESTION`` and ``REFUSED_RESEND`` rest on, held on the
    scenarios the canary runs (the whole canary's shapes too, only there: making them is most of
    the cost): after no step do two questions wait in a scenario no step of which asks two
    together, nor an action's later question in one no answer of which approved an earlier one,
    and no re-send must fail (not for naming no pending question) outside ``deploy-skew``."""
    scenarios = [(name, scenario) for name, scenario, _ in canary.canary_scenarios(True)]
    if os.environ.get(canary.WHOLE_VARIABLE) == "whole":
        scenarios += [(name, scenario) for name, scenario, _ in canary.challenger_scenarios(True)]
    else:
        scenarios += coverage.read()
    apart = []
    later = refused = 0
    for name, scenario in scenarios:
        oracle = Oracle(scenario)
        expected = [oracle.step(index, step) for index, step in enumerate(scenario.steps)]
        waiting = [each.pending for each in expected]
        classes = classes_of(scenario)
        if any(
            isinstance(step, Resend) and each.error == "required" and not each.unknown_answer
            for step, each in zip(scenario.steps, expected, strict=True)
        ):
            refused += 1
            if REFUSED_RESEND_CLASS not in classes:
                apart.append(name)
        if max(map(len, waiting), default=0) >= 2 and TWO_PENDING_CLASS not in classes:
            apart.append(name)
        if any(number >= 2 for pending in waiting for _, number in pending):
            later += 1
            if LATER_QUESTION_CLASS not in classes:
                apart.append(name)
    assert later
    assert refused
    assert not apart


def test_a_beside_the_checkers_always_write_is_not_dropped() -> None:
    """At an answer or a re-send, I2 and I10 name an action that ran more often than was due
    together (``TOGETHER``): a witness of either whose only anchor is a ``beside`` the other
    meets narrows nothing by it, so dropping it is no broadening."""
    ran = Witness(
        invariant="I10",
        step="answer",
        expected=r"^[a-z0-9-]+ runs (0 times|once|\d+ times) in this step$",
        seen=r"^[a-z0-9-]+ ran (once|\d+ times)$",
        beside="^(I2|I4)$",
    )
    assert implied_besides(ran) == {"I2"}
    found = _one_class("rerun", "an action run again", ran, scenario_classes=("resend",))
    assert broadened(found, 0, "anchor") is None
    assert broadened(found, 0, "beside") is None
    sibling = ran.model_copy(
        update={
            "invariant": "I2",
            "expected": r"^[a-z0-9-]+ does not run in this step$",
            "seen": r"^[a-z0-9-]+ ran once: a sibling's action ran$",
            "beside": "^(I4|I10)$",
        }
    )
    assert implied_besides(sibling) == {"I10"}
    for other in (
        ran.model_copy(update={"beside": "^I4$"}),  # a beside the other does not meet
        ran.model_copy(update={"step": "run"}),  # I2 judges no run step
        ran.model_copy(update={"expected": r"^[a-z0-9-]+ pending once$", "seen": "^.+$"}),
        ran.model_copy(update={"error": "^x$"}),  # another anchor, dropped with it
    ):
        assert broadened(_one_class("rerun", "an action run again", other), 0, "anchor") is not None


def test_i2_and_i10_name_an_action_run_beyond_its_due_together(
    variant_runs: VariantRuns, coverage_variant_runs: VariantRuns
) -> None:
    """What ``TOGETHER`` rests on, held on every variant run the canary makes here: at an answer
    or a re-send, each violation of one invariant of a pair has the other's beside it, naming
    the same action."""
    apart = []
    met = 0
    for each in (*variant_runs.runs, *coverage_variant_runs.runs):
        at = {
            (violation.step, violation.invariant, violation.expected.split(" ", 1)[0])
            for violation, kind in each.run.violations
            if kind in TOGETHER_STEPS
        }
        for violation, kind in each.run.violations:
            for invariant, text, beside in TOGETHER:
                if kind not in TOGETHER_STEPS or violation.invariant != invariant:
                    continue
                if text not in violation.expected + violation.seen:
                    continue
                met += 1
                if (violation.step, beside, violation.expected.split(" ", 1)[0]) not in at:
                    apart.append((each.variant, each.run.scenario, violation))
    assert met
    assert not apart, apart[:5]


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        (
            r"^an error: continuation corrupted \(truncated\)$",
            ("an error: continuation corrupted (truncated)",),
        ),
        (
            r"^the call that asked [a-z-]+(, [a-z-]+)* is gone$",
            ("the call that asked ", " is gone"),
        ),
        (r"^(is gone \(a deploy took its tool away\)|x)$", ()),  # inside a group: maybe not
        (r"^abc?d$", ("ab", "d")),  # c may be absent
        (r"^ab*?c{0,2}e$", ("a", "e")),
        (r"^ab+c\d$", ("ab", "c")),
        (r"^[^]a]b\.$", ("b.",)),
    ],
)
def test_the_literals_every_match_of_a_pattern_contains(
    pattern: str, literals: tuple[str, ...]
) -> None:
    """What ``implied_classes`` reads a sentence pattern by: only what every match contains."""
    assert required_literals(pattern) == literals

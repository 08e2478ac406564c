"""Generated scenarios: the reference holds on them, and they catch every known-bad variant
without the regression files; a failure shrinks to a ready-to-commit regression file."""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import pytest
from hypothesis import given, note, settings

from harness.campaigns.crashes import crash_campaign
from harness.checkers import check
from harness.cli import main
from harness.runner import run_scenario
from harness.targets import registry
from harness.targets.base import Target, requirements
from harness.targets.reference import ReferenceTarget
from harness.targets.variants import VARIANTS
from scenarios import corpus, counterexamples, coverage
from scenarios.model import Corrupt, Scenario
from scenarios.statistics import CLASSES, MINIMUM_SHARE, class_frequencies
from scenarios.strategies import restore_scenarios, scenarios

REFERENCE = ReferenceTarget()


def assert_holds(target: Target, scenario: Scenario) -> None:
    """The property: no violation; a failing (finally, the shrunk) scenario is written to a file."""
    violations = check(run_scenario(target, scenario, "generated"))
    if violations:
        path = counterexamples.write_counterexample(scenario, target.info.name, violations)
        note(f"{violations[0].invariant} {violations[0].slug}: counterexample in {path}")
    assert violations == [], violations[0]


@given(scenarios())
def test_generated_scenarios_hold_on_the_reference(scenario: Scenario) -> None:
    assert_holds(REFERENCE, scenario)


@given(restore_scenarios())
def test_generated_restore_scenarios_hold_on_the_reference(scenario: Scenario) -> None:
    assert_holds(REFERENCE, scenario)


@functools.cache
def ci_sample() -> tuple[tuple[str, Scenario], ...]:
    """The ci sample of both families, as committed (scenarios/corpus/ci/generated.jsonl): the
    scenarios check --profile ci runs on a target that can express everything."""
    path = corpus.find("ci", None)
    assert path is not None, "no committed ci sample: python -m harness generate --profile ci"
    return tuple(corpus.read(path, "ci"))


def generated_suite() -> tuple[Scenario, ...]:
    return tuple(scenario for _, scenario in ci_sample())


@functools.cache
def families_in_turn() -> tuple[Scenario, ...]:
    """The same scenarios, one of each family in turn (general, restore, effects, gated, ...).
    Whether the sample catches a variant is a question of existence, so the order changes only
    how soon the answer comes: a variant only one family's scenarios show is found among that
    family's first ones, not after every scenario of the families before it."""
    families: dict[str, list[Scenario]] = {}
    for name, scenario in ci_sample():
        matched = corpus.NAME.fullmatch(name)
        assert matched is not None, name
        families.setdefault(matched[1], []).append(scenario)
    turns = itertools.zip_longest(*families.values())
    return tuple(scenario for turn in turns for scenario in turn if scenario is not None)


def test_every_scenario_class_occurs_in_at_least_5_percent_of_ci_examples() -> None:
    # the families the statistics count: the restore family is focused on one shape by design
    drawn = [scenario for name, scenario in ci_sample() if corpus.counted(name)]
    frequencies = class_frequencies(drawn)
    rare = {name: share for name, share in frequencies.items() if share < MINIMUM_SHARE}
    assert rare == {}
    assert set(frequencies) == set(CLASSES)
    assert len(drawn) >= 100


# The invariants that must fire on the generated scenarios that catch each variant.
CAUGHT_BY = {
    "shared-object": {"I3"},
    "no-namespacing": {"I1"},
    "forward-to-all": {"I3"},
    "drop-model-state": {"O"},
    "drop-conversation-manager-state": {"I6"},
    "exposed-continuation": {"I8"},
    # a resumed turn's messages, those written before its question too, streamed again
    "restored-turn-streamed-again": {"I8"},
    "swallow-restore-failure": {"I9"},
    "rebuild-context": {"I2"},
    "no-ownership-check": {"I3", "I10"},
    "resume-by-responses": {"I3"},
    "history-accumulation": {"I7"},
    # ... where a stateful provider refuses the carried messages' follow-up and the agent tool
    # hands the refusal to the caller
    "history-accumulation-as-a-result": {"I7"},
    # an ephemeral sub-agent's first call continuing its caller's provider conversation
    "caller-provider-state": {"I7"},
    "reuse-stale-answers": {"I14"},
    "stale-answer-ends-the-turn": {"I13"},  # the step ends the turn without an answer
    # a re-sent answer taken by the question a later prompt asked under the same toolUseIds
    "resent-answer-routed-from-memory": {"I14"},
    # sub-agents' calls under one toolUseId: their questions shown under one id
    "ids-of-the-call-alone": {"I1"},
    # a restart's first step: a request the run without restarts never made
    "last-request-replayed-when-rebuilt": {"D", "I6"},
    # a re-sent answer once the turn ended: the prompt run again asks its questions again
    "resume-runs-the-prompt-again": {"I14", "I3"},
    # a re-sent answer runs what the question now asked at its place asks, then is refused
    "stale-answer-refused-once-carried-out": {"I14", "I4"},
    # the general family's re-sends (and the deploy, gated, retried and twin families'): an
    # answered question's answer taken again (I14) fails the call that asked, whose questions
    # asked since are lost (I3)
    "stale-answer-fails-its-call": {"I14", "I3"},
    # the general and restore families' restarts between answers: the root comes back not
    # interrupted, every question gone (I5, D against the control), its answer refused (O)
    "parked-turn-not-stored": {"I5", "D", "O"},
    # the twin-call families: a second call turned away (I3), and a stale answer re-sent taken
    # (I14)
    "busy-sub-agent-takes-stale-answers": {"I3", "I14"},
    "swap-twin-answers": {"I2"},
    "replay-turn": {"I15"},
    # the gated family's scenarios (generated-gated-NNN)
    "gate-answers-nested": {"I4"},  # the sub-agent's action runs on the gate's approval alone
    "gate-asked-again": {"I3"},  # the gate is pending again where nothing (or the rest) is
    # the adversarial-ids family's (generated-ids-NNN): two long ids cut to one name
    "truncated-ids": {"I1"},
    # the retried-call family's (generated-retried-NNN): a retry keeping its first attempt's
    # identity is handed that attempt's answers and never asks again
    "retry-reuses-ids": {"O"},
    # the deploy family's (generated-deploy-NNN): an answer to a call the deploy took away is
    # accepted silently
    "drop-gone-calls": {"I9"},
    # the twin-call family's (generated-twins-NNN): twins that act and answer each their own way
    # get each other's results
    "swap-twin-results": {"I2"},
    # ... and twin calls of one sub-agent: the second turned away while the first is parked
    "busy-sub-agent": {"I3"},
    # ... or turned away for any earlier call of it in the message, whatever that call did
    "one-call-per-message": {"I3"},
    # ... or turned away while any call's turn is parked, one under the parked call's id too
    "busy-across-sessions": {"I3"},
    # the general family's corrupted turns and the deploy family's gone calls: an answer refused
    # there is shown attached to its questions
    "refused-answer-attached": {"I12"},
    # ... and a damaged turn, restored at the rebuild with every other, fails the rebuild: the
    # steps after it find nothing rebuilt, and the questions a refusal keeps pending are gone
    "restore-at-load": {"I9"},
    # an action's second question shown under its first's id, which a re-sent first answer
    # then takes
    "call-named-questions": {"I12"},
    # the general family: a continuation stored past its turn's end (I7), and after a restart at
    # the end the run differs from its control (D)
    "ended-turn-not-stored": {"I7", "D"},
    # a resumed turn that had a result before its question (the effects family's lookups, a
    # sub-agent that answered beside one that asked) sent without that result
    "drop-restored-result": {"I16"},
    # a message of several calls (twin calls, a sub-agent beside an ordinary tool) sent with
    # its last result twice
    "last-result-twice": {"I16"},
    # each of a message's sub-agent calls asked another's prompt
    "crossed-inputs": {"O"},
    # a later prompt's call under a finished call's toolUseId runs its action without asking
    "approvals-kept": {"I4"},
    # ... and a sub-agent's, kept on the agent tool for every later call of it
    "approvals-on-the-tool": {"I4"},
    # an answer a gone call cannot take refused only after the root's own approved action ran
    "runs-before-it-refuses": {"I9"},
    # a session rebuilt at a restart whose every save after the first is refused: each later
    # step does its work, then fails
    "saves-under-the-loaded-version": {"I5"},
    # a rebuilt tree sending every request of an answer's step twice
    "answers-sent-twice-when-rebuilt": {"D"},
    # a rebuilt tree's approved actions answering that they are done, never carried out
    "actions-dry-run-when-rebuilt": {"I2"},
    # a rebuilt tree denying every new question where it is asked
    "questions-denied-when-rebuilt": {"I3"},
    # a rebuilt tree's actions asking again each question already answered
    "answers-unheard-when-rebuilt": {"I2", "D"},
    # an outbox delivering again at a restart every ordinary tool call made before it
    "effects-delivered-again-at-a-restart": {"I15"},
    # a rebuilt session listing none of the questions its turn waits on
    "questions-unlisted-when-rebuilt": {"I13"},
    # an ephemeral sub-agent called again starts from its last call's conversation, messages and
    # response id, which the provider takes without a word
    "conversation-on-the-tool": {"I7"},
    # the gated-call family's: a gated call's sub-agent question shown under its gate's id
    "gate-raises-nested-as-its-own": {"I1"},
}


# Variants only a crash inside a step shows: the crash campaign over the generated suite.
CAUGHT_BY_CRASHES = {"no-write-ahead"}
# Variants only a real restart shows (their state lives in module memory, which a rebuild in
# the same process keeps): tests/test_variants.py catches them with --isolation fork.
CAUGHT_BY_REAL_RESTARTS = {"process-memory"}
# Variants whose bug sits in a shape only the coverage sample draws (scenarios/corpus/coverage/),
# with the invariant its scenarios catch each by; the ci sample does not show them
CAUGHT_BY_THE_COVERAGE_SAMPLE = {
    "loose-answer-lookup": {"I2"},  # an answer to é's call reaches its NFD twin's
    "retry-continues-parked": {"I7"},  # the retry starts from the first attempt's history
    "refused-restore-keeps-one": {"I9"},  # a refused restore drops all but one question
    "gate-approval-stands": {"I3"},  # a retried gated call is not asked its gate again
    "restore-drops-state": {"I17"},  # a restored turn reads its state back as initial
    "restore-drops-window-count": {"I17"},  # a restored window counts its calls from 0 again
    "window-counted-twice": {"I17"},  # ... or counts each call twice
    # an answer in one root session resumes the sub-agent the other parked under the same key
    "parked-by-shared-key": {"I2"},
    # what one call of an ephemeral sub-agent left on the agent tool, the next call (another
    # root session's too) starts from: the provider's response id, refused by the provider; the
    # key/value state, read back by a lookup; a parked call's messages
    "provider-state-on-the-tool": {"I7"},
    # ... which the provider refuses, and the caller goes on without the call's questions
    "provider-state-on-the-tool-as-a-result": {"I7", "I3"},
    "agent-state-on-the-tool": {"I17"},
    "parked-messages-on-the-tool": {"I7"},
    # a preserve_context sub-agent called again after a restart while nothing waits starts
    # without its history: its requests (I6), what the run shows (I5, D) differ from the control
    "idle-session-not-stored": {"I5", "I6", "D"},
    # a root session showing the questions another one waits on
    "every-sessions-questions-shown": {"I3"},
}


@pytest.mark.parametrize("slug", sorted(CAUGHT_BY))
def test_the_generated_suite_catches_each_known_bad_variant(slug: str) -> None:
    variant = registry.get(f"bad-{slug}")
    fired: set[str] = set()
    for scenario in families_in_turn():
        violations = check(run_scenario(variant, scenario, "generated"))
        if violations:
            fired |= {violation.invariant for violation in violations}
            assert check(run_scenario(REFERENCE, scenario, "generated")) == []
            if CAUGHT_BY[slug] <= fired:
                return
    missing = sorted(CAUGHT_BY[slug] - fired)
    pytest.fail(f"bad-{slug}: the ci sample caught it by {sorted(fired)}, never by {missing}")


# Variants whose bug sits in a part of the language no generator draws yet (a tool name apart from
# its agent's, an answer without an id): their regression files catch them (tests/test_variants.py)
CAUGHT_BY_REGRESSION_FILES_ONLY = {
    "tools-named-by-agent",
    "one-answer-for-all",
}


def test_every_variant_has_an_expected_catch() -> None:
    caught = set(CAUGHT_BY) | CAUGHT_BY_CRASHES | CAUGHT_BY_REAL_RESTARTS
    caught |= CAUGHT_BY_REGRESSION_FILES_ONLY
    assert caught | set(CAUGHT_BY_THE_COVERAGE_SAMPLE) == set(VARIANTS)


@pytest.mark.parametrize("slug", sorted(CAUGHT_BY_THE_COVERAGE_SAMPLE))
def test_the_coverage_sample_catches_each_coverage_variant(slug: str) -> None:
    variant = registry.get(f"bad-{slug}")
    fired: set[str] = set()
    for name, scenario in coverage.read():
        violations = check(run_scenario(variant, scenario, name))
        fired |= {violation.invariant for violation in violations}
        if CAUGHT_BY_THE_COVERAGE_SAMPLE[slug] <= fired:
            return
    pytest.fail(f"bad-{slug}: the coverage sample caught it by {sorted(fired)} only")


@pytest.mark.parametrize("slug", sorted(CAUGHT_BY_CRASHES))
def test_crashes_in_the_generated_suite_catch_each_crash_only_variant(slug: str) -> None:
    variant = registry.get(f"bad-{slug}")
    for index, scenario in enumerate(generated_suite()):
        twice = [case for case in crash_campaign(variant, [("generated", scenario)]) if case.twice]
        if twice:
            assert not [c for c in crash_campaign(REFERENCE, [("g", scenario)]) if c.twice]
            return
        assert index < 40, f"bad-{slug}: no crash in 40 generated scenarios ran an action twice"
    pytest.fail(f"bad-{slug}: no crash in the generated suite ran an action twice")


def test_a_failing_property_leaves_its_shrunk_scenario_as_a_regression_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(counterexamples, "COUNTEREXAMPLES", tmp_path)
    monkeypatch.setattr(
        counterexamples.write_counterexample, "__defaults__", (tmp_path,), raising=True
    )
    variant = registry.get("bad-drop-model-state")

    @settings(max_examples=200, derandomize=True, database=None)
    @given(restore_scenarios())
    def property_on_the_variant(scenario: Scenario) -> None:
        assert_holds(variant, scenario)

    with pytest.raises(AssertionError):
        property_on_the_variant()
    written = sorted(tmp_path.glob("*.yaml"), key=lambda path: path.stat().st_mtime_ns)
    assert written, "no counterexample file was written"
    shrunk = written[-1]
    assert "Generated counterexample on bad-drop-model-state" in shrunk.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["run", str(shrunk), "--target", "bad-drop-model-state"]) == 1
    assert "VIOLATED" in capsys.readouterr().out
    assert main(["run", str(shrunk), "--target", "reference"]) == 0


# what a framework target without these can express: the generators must stay inside it
NARROW = frozenset(
    {"restart", "preserve_context", "public_events", "corruption", "corruption:truncated"}
)


@given(scenarios(capabilities=NARROW))
def test_generated_scenarios_need_only_what_the_target_can_express(scenario: Scenario) -> None:
    expressible = NARROW | {"corruption"}
    needed = requirements(scenario) | {
        f"corruption:{step.corrupt}" for step in scenario.steps if isinstance(step, Corrupt)
    }
    assert needed <= expressible, needed - expressible


@given(restore_scenarios(capabilities=frozenset({"restart"})))
def test_restore_scenarios_need_only_what_the_target_can_express(scenario: Scenario) -> None:
    assert requirements(scenario) <= {"restart"}

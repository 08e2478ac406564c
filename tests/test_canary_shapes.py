"""The canary shapes (``scenarios/canary_shapes.py``): each is its source scenario with the shape's
steps appended, every source that answers something gives each shape the oracle can follow under
a name no sample uses, the reference holds on them, and the whole exemption canary challenges
witnesses on them."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable

from harness import canary
from harness.checkers import check
from harness.runner import run_scenario
from harness.targets.reference import ReferenceTarget
from scenarios import canary_sample, canary_shapes, corpus, coverage
from scenarios.classes import classes_of
from scenarios.loading import REGRESSIONS, load_all, parse_scenario
from scenarios.model import Answer, Corrupt, Repair, Resend, Restart, Run, Scenario
from scenarios.oracle import expectations

# the suite's fixture (conftest.py): what the reference violates on each scenario of a sample
Reference = Callable[[Iterable[tuple[str, Scenario]]], dict[str, list[str]]]

# two users of one deployment, each answering in its own root session
TWO_SESSIONS = dict(load_all([REGRESSIONS / "coverage" / "two-root-sessions.yaml"]))[
    "two-root-sessions"
]
# a gate one level down, whose question parks the planner's turn
GATED = dict(load_all([REGRESSIONS / "gated-agent-call-nested.yaml"]))["gated-agent-call-nested"]
# the shapes made only where the oracle can follow them (a corruption needs a stored turn)
CORRUPTED = "corrupted-after-a-new-run"
REPAIRED = "resent-after-a-repair"
# the shape made only where an ordinary tool has an effect and the last step is no restart
CLOSED = "closed-by-a-restart"
# the shape made from every answering scenario: two prompts after a closing restart
PROMPTED = "prompted-twice-after-a-restart"
RESENT = [
    shape for shape in canary_shapes.SHAPES if shape not in (CORRUPTED, REPAIRED, CLOSED, PROMPTED)
]
# an ordinary tool with an effect (a write) after a sub-agent's question
EFFECTS = dict(load_all([REGRESSIONS / "caller-goes-on-past-a-question.yaml"]))[
    "caller-goes-on-past-a-question"
]
# two sub-agents whose deploys ask under one toolUseId
COLLIDING = dict(load_all([REGRESSIONS / "colliding-ids.yaml"]))["colliding-ids"]
# a deploy that narrows a sub-agent's window while its question waits
WINDOW = dict(load_all([REGRESSIONS / "deploy-changes-window.yaml"]))["deploy-changes-window"]
# the shapes that rewrite a scenario, made only where they apply
IDS_OF_ITS_OWN = "with-ids-of-its-own"
DEPLOYED = "deployed-tree-from-the-start"
NOTED = "with-a-note-after-each-action"
WITHOUT_RESTARTS = "without-its-restarts"
DEPLOYED_NAMES = "deployed-names-then-repaired"
ANSWERED_AGAIN = "answered-again-after-a-restart"
# a stored turn damaged (its payload gone) and never repaired
UNLOADABLE = dict(load_all([REGRESSIONS / "schema-skew-payload-missing.yaml"]))[
    "schema-skew-payload-missing"
]


@functools.cache
def sources() -> list[tuple[str, Scenario]]:
    found = corpus.find("ci", None)
    assert found is not None
    return corpus.read(found, "ci") + coverage.read()


@functools.cache
def shapes() -> list[tuple[str, Scenario]]:
    return canary_shapes.made(sources())


def test_a_shape_is_its_source_with_steps_appended() -> None:
    made = dict(canary_shapes.made([("two", TWO_SESSIONS)]))
    # no corruption with two sessions; every answering scenario has an action to note
    assert set(made) == {f"two-{shape}" for shape in (*RESENT, PROMPTED, NOTED)}
    steps = TWO_SESSIONS.steps
    restarted = made["two-resent-after-a-restart"].steps
    assert restarted[: len(steps)] == steps
    assert restarted[len(steps) :] == (
        Restart(restart=True),
        Resend(resend=3, session="b"),
        Resend(resend=5, session="a"),
    )
    rerun = made["two-resent-after-a-new-run"].steps
    assert rerun[: len(steps)] == steps
    assert rerun[len(steps) :] == (
        Run(run="report for b", session="b"),
        Resend(resend=3, session="b"),
    )


def test_a_corrupted_shape_damages_the_turn_its_new_run_parks() -> None:
    made = dict(canary_shapes.made([("gated", GATED)]))
    appended = {f"gated-{shape}" for shape in canary_shapes.SHAPES if shape != CLOSED}
    # its gates ask under t1 too, its agents have actions to note, and its first answer
    # approves a gate
    rewrites = {f"gated-{IDS_OF_ITS_OWN}", f"gated-{NOTED}", f"gated-{ANSWERED_AGAIN}"}
    assert set(made) == appended | rewrites
    corrupted = made[f"gated-{CORRUPTED}"].steps
    assert corrupted[: len(GATED.steps)] == GATED.steps
    assert corrupted[len(GATED.steps) :] == (
        Run(run="clean up the database"),
        Corrupt(corrupt="truncated"),
    )
    repaired = made[f"gated-{REPAIRED}"].steps
    assert repaired[: len(corrupted)] == corrupted
    assert repaired[len(corrupted) :] == (
        GATED.steps[2],  # the first answer, refused while its turn is damaged
        Repair(repair=True),
        Resend(resend=len(corrupted)),
    )
    # ... and carried out once the turn is put back: a re-send that resumes a turn
    assert [each.error for each in expectations(made[f"gated-{REPAIRED}"])[-3:]] == [
        "required",
        "allowed",
        "forbidden",
    ]
    # where the new run parks no sub-agent turn there is none to damage: no such shape is made
    root_asks = parse_scenario(
        {
            "description": "the root asks itself",
            "source": "tests/test_canary_shapes.py",
            "tree": {
                "name": "root",
                "actions": [{"tool": "act", "label": "act"}],
                "turns": [[{"tool": "act", "id": "t1"}]],
            },
            "steps": [{"run": "go"}, {"answer": {"act": "approve"}}],
        },
        "root-asks",
    )
    assert set(dict(canary_shapes.made([("root", root_asks)]))) == {
        f"root-{shape}" for shape in (*RESENT, PROMPTED, NOTED)
    }


def test_a_scenario_that_damages_a_turn_of_its_own_is_repaired_too() -> None:
    """Its turn damaged twice (its own damage, then the shape's), one repair puts it back whole
    (the latest damage undone first), and the re-sent answer is carried out."""
    made = dict(canary_shapes.made([("unloadable", UNLOADABLE)]))
    appended = {f"unloadable-{shape}" for shape in canary_shapes.SHAPES if shape != CLOSED}
    assert set(made) == appended | {f"unloadable-{NOTED}"}
    history = run_scenario(ReferenceTarget(), made[f"unloadable-{REPAIRED}"], "unloadable")
    assert check(history) == []
    assert history.steps[-1].executions


def test_a_scenario_with_effects_is_closed_by_a_restart_unless_it_ends_with_one() -> None:
    """I15 counts each call of an ordinary tool with an effect over the whole scenario at its last
    step: the closing restart moves those counts to a restart step, and nothing else."""
    made = dict(canary_shapes.made([("effects", EFFECTS)]))
    assert f"effects-{CLOSED}" in made
    closed = made[f"effects-{CLOSED}"].steps
    assert closed[: len(EFFECTS.steps)] == EFFECTS.steps
    assert closed[len(EFFECTS.steps) :] == (Restart(restart=True),)
    history = run_scenario(ReferenceTarget(), made[f"effects-{CLOSED}"], "effects")
    assert check(history) == []
    # no effect: nothing to count at the end
    assert not any(agent.effects for agent, _ in GATED.tree.walk())
    assert f"gated-{CLOSED}" not in dict(canary_shapes.made([("gated", GATED)]))
    # ends with a restart already: the counts are at a restart step
    ended = EFFECTS.model_copy(update={"steps": (*EFFECTS.steps, Restart(restart=True))})
    assert f"ended-{CLOSED}" not in dict(canary_shapes.made([("ended", ended)]))


def test_a_scenario_is_prompted_twice_after_a_restart_in_the_session_it_ended_in() -> None:
    """After a restart a session makes a second save, whatever it is asked: two prompts no agent
    has a turn for, which the root answers at once where no question waits, follow a closing
    restart in the root session of the scenario's last step."""
    made = dict(canary_shapes.made([("two", TWO_SESSIONS), ("effects", EFFECTS)]))
    for name, source in (("two", TWO_SESSIONS), ("effects", EFFECTS)):
        prompted = made[f"{name}-{PROMPTED}"]
        assert prompted.steps[: len(source.steps)] == source.steps
        session = source.steps[-1].session  # both end with an answer
        prompt = Run(run=canary_shapes.IDLE_PROMPT, session=session)
        assert prompted.steps[len(source.steps) :] == (Restart(restart=True), prompt, prompt)
        assert check(run_scenario(ReferenceTarget(), prompted, name)) == []
    assert TWO_SESSIONS.steps[-1].session == "b"
    answered = expectations(made[f"two-{PROMPTED}"])[-2:]
    assert [(each.stop_reason, each.pending) for each in answered] == [("end_turn", ())] * 2


def test_agents_that_share_a_tool_use_id_get_ids_of_their_own() -> None:
    """A class narrowed to ``shared-tool-use-ids`` meets there the look-alikes of the same bugs
    where no two agents share an id: the generic families draw one id for every level."""
    assert "shared-tool-use-ids" in classes_of(COLLIDING)
    made = dict(canary_shapes.made([("colliding", COLLIDING)]))
    own = made[f"colliding-{IDS_OF_ITS_OWN}"]
    assert own.steps == COLLIDING.steps
    ids = {
        agent.name: [call.id for turn in agent.turns for call in turn]
        for agent, _ in own.tree.walk()
    }
    assert ids == {
        "orchestrator": ["call-1-orchestrator", "call-2-orchestrator"],
        "worker_a": ["tooluse-1-worker_a"],
        "worker_b": ["tooluse-1-worker_b"],
    }
    assert "shared-tool-use-ids" not in classes_of(own)
    assert check(run_scenario(ReferenceTarget(), own, "colliding")) == []
    # no two agents ask under one id: nothing to rewrite
    assert "shared-tool-use-ids" not in classes_of(WINDOW)
    assert f"window-{IDS_OF_ITS_OWN}" not in dict(canary_shapes.made([("window", WINDOW)]))


def test_a_scenario_that_deploys_gets_the_deployed_tree_from_its_start() -> None:
    """A class narrowed to ``deploy-skew`` meets there the names a deploy gives, with no deploy
    while a question waits."""
    assert "deploy-skew" in classes_of(WINDOW)
    made = dict(canary_shapes.made([("window", WINDOW)]))
    deployed = made[f"window-{DEPLOYED}"]
    restart = WINDOW.steps[1]
    assert isinstance(restart, Restart)
    assert restart.tree is not None
    assert deployed.tree == restart.tree
    assert deployed.steps == (WINDOW.steps[0], Restart(restart=True), WINDOW.steps[2])
    assert "deploy-skew" not in classes_of(deployed)
    assert check(run_scenario(ReferenceTarget(), deployed, "window")) == []
    # no deploy: nothing to rewrite
    assert f"colliding-{DEPLOYED}" not in dict(canary_shapes.made([("colliding", COLLIDING)]))


def test_an_agent_with_actions_notes_each_answer_in_a_turn_of_its_own() -> None:
    """An ordinary tool whose run waits for the answer before it: the families draw ordinary
    tools no later than a question (``side-effects``), so a run made before its question is
    answered is seen here."""
    made = dict(canary_shapes.made([("window", WINDOW)]))
    noted = made[f"window-{NOTED}"]
    assert (noted.steps[0], noted.steps[2]) == (WINDOW.steps[0], WINDOW.steps[2])
    worker = next(agent for agent, _ in noted.tree.walk() if agent.name == "worker")
    assert [effect.tool for effect in worker.effects] == ["note"]
    assert [[call.tool for call in turn] for turn in worker.turns] == [["deploy"], ["note"]]
    orchestrator = noted.tree
    assert orchestrator.effects == ()  # it asks nothing of its own in its turns
    history = run_scenario(ReferenceTarget(), noted, "window")
    assert check(history) == []
    assert [record.get("effect") for record in history.steps[-1].executions] == [None, "note"]
    # the deployed tree is noted too
    restart = noted.steps[1]
    assert isinstance(restart, Restart)
    assert restart.tree is not None
    assert any(agent.effects for agent, _ in restart.tree.walk())


def test_a_state_read_after_a_resume_is_read_without_its_restarts_too() -> None:
    """A class narrowed to ``state-read-after-resume`` meets there the look-alikes of its bug
    where no restart comes between the write and the read: the family that draws the shape
    always restarts before an answer."""
    [(name, read)] = [
        (name, scenario) for name, scenario in coverage.read() if name == "generated-state-read-004"
    ]
    assert "state-read-after-resume" in classes_of(read)
    made = dict(canary_shapes.made([(name, read)]))
    kept = made[f"{name}-{WITHOUT_RESTARTS}"]
    assert kept.tree == read.tree
    assert kept.steps == tuple(step for step in read.steps if not isinstance(step, Restart))
    assert len(kept.steps) == 3
    assert "state-read-after-resume" not in classes_of(kept)
    assert check(run_scenario(ReferenceTarget(), kept, name)) == []
    # no state read after a resume: nothing to rewrite
    assert f"window-{WITHOUT_RESTARTS}" not in dict(canary_shapes.made([("window", WINDOW)]))


def test_a_deploys_names_without_its_restarts_meet_a_damaged_turn() -> None:
    """A class narrowed to ``restart-between-answers`` meets there the look-alikes of a bug its
    witness names by a deploy's names: an answer a damaged turn refuses, with no restart step
    while a question waits (every deploy the families draw comes while one waits)."""
    made = dict(canary_shapes.made([("window", WINDOW)]))
    named = made[f"window-{DEPLOYED_NAMES}"]
    restart = WINDOW.steps[1]
    assert isinstance(restart, Restart)
    assert named.tree == restart.tree
    run, answer = WINDOW.steps[0], WINDOW.steps[2]
    assert named.steps[:2] == (run, answer)
    assert [type(step) for step in named.steps[2:]] == [Run, Corrupt, Answer, Repair, Resend]
    assert not any(isinstance(step, Restart) for step in named.steps)
    assert "restart-between-answers" not in classes_of(named)
    assert "corruption" in classes_of(named)
    history = run_scenario(ReferenceTarget(), named, "window")
    assert check(history) == []
    assert history.steps[4].errors  # the answer the damaged turn refuses
    assert history.steps[4].expected["error"] == "required"
    # no deploy: nothing to rewrite
    assert f"colliding-{DEPLOYED_NAMES}" not in dict(canary_shapes.made([("colliding", COLLIDING)]))


def test_a_damaged_turn_refuses_the_questions_under_a_deploys_names_where_some_wait() -> None:
    """Where questions wait under a deploy's names (``s2-0-r1``) once the run is given again,
    the answer the damaged turn refuses (and the repair lets through) approves those alone: an
    answer under those names, not the scenario's first."""
    renamed = [
        (name, scenario)
        for name, scenario in shapes()
        if name.endswith(DEPLOYED_NAMES)
        and any(
            canary_shapes.DEPLOYS_NAME.search(label)
            for label, _ in expectations(scenario)[-5].pending
        )
    ]
    assert len(renamed) >= 2
    for name, scenario in renamed:
        waiting = expectations(scenario)[-5].pending  # after the run given again
        refused, resent = scenario.steps[-3], scenario.steps[-1]
        assert isinstance(refused, Answer)
        assert isinstance(resent, Resend)
        assert refused.answer == {
            label: "approve" for label, _ in waiting if canary_shapes.DEPLOYS_NAME.search(label)
        }
        assert resent.resend == len(scenario.steps) - 3
        history = run_scenario(ReferenceTarget(), scenario, name)
        assert check(history) == []
        assert history.steps[-3].errors


def test_a_gate_approved_first_is_approved_again_after_a_restart_once_nothing_waits() -> None:
    """A class narrowed to ``restart-between-answers`` meets there the look-alikes of a bug in
    what a gate's approval starts (a sub-agent's call, from its prompt): the families restart a
    gated scenario only while a question waits.  The source without its restarts, what still
    waits at its end denied, a restart once the turn has ended, its first run again and its first
    answer (the gate's approval) again."""
    made = dict(canary_shapes.made([("gated", GATED)]))
    again = made[f"gated-{ANSWERED_AGAIN}"]
    run, gate, action = GATED.steps[0], GATED.steps[2], GATED.steps[4]
    assert isinstance(gate, Answer)
    assert gate.answer == {"ask-executor": "approve"}
    assert again.steps == (run, gate, action, Restart(restart=True), run, gate)
    classes = classes_of(again)
    assert "restart-after-the-end" in classes
    assert "restart-between-answers" not in classes
    history = run_scenario(ReferenceTarget(), again, "gated")
    assert check(history) == []
    assert history.steps[-1].requests[0]["turn"] == 0  # the gate's approval starts the call
    # what waits at the end is denied until the turn ends; no gate approved first: no shape
    left = GATED.model_copy(update={"steps": GATED.steps[:3]})
    denied = dict(canary_shapes.made([("left", left)]))[f"left-{ANSWERED_AGAIN}"]
    assert denied.steps[2] == Answer(answer={"drop-table": "deny"})
    assert f"window-{ANSWERED_AGAIN}" not in dict(canary_shapes.made([("window", WINDOW)]))


def test_only_a_scenario_that_answers_something_is_shaped() -> None:
    asks_nothing = TWO_SESSIONS.model_copy(update={"steps": TWO_SESSIONS.steps[:2]})
    assert canary_shapes.made([("quiet", asks_nothing)]) == []


def test_every_source_that_answers_gives_each_shape_under_a_name_no_sample_uses() -> None:
    names = [name for name, _ in shapes()]
    answering = [name for name, scenario in sources() if canary_shapes.answers(scenario)]
    assert len(answering) >= 600
    others = (CORRUPTED, REPAIRED, CLOSED, PROMPTED, *canary_shapes.REWRITES)
    resent = [name for name in names if not name.endswith(others)]
    assert resent == [f"{name}-{shape}" for name in answering for shape in RESENT]
    for shape in (CORRUPTED, REPAIRED):
        made = [name.removesuffix(f"-{shape}") for name in names if name.endswith(shape)]
        assert len(made) >= 500
        assert set(made) <= set(answering)
    closed = [name.removesuffix(f"-{CLOSED}") for name in names if name.endswith(CLOSED)]
    with_effects = [
        name
        for name, scenario in sources()
        if name in answering
        and any(agent.effects for agent, _ in scenario.tree.walk())
        and not isinstance(scenario.steps[-1], Restart)
    ]
    assert closed == with_effects
    assert len(closed) >= 100
    prompted = [name.removesuffix(f"-{PROMPTED}") for name in names if name.endswith(PROMPTED)]
    assert prompted == answering
    own = [
        name.removesuffix(f"-{IDS_OF_ITS_OWN}") for name in names if name.endswith(IDS_OF_ITS_OWN)
    ]
    sharing = [
        name
        for name, scenario in sources()
        if name in answering and "shared-tool-use-ids" in classes_of(scenario)
    ]
    assert own == sharing
    assert len(own) >= 300
    deployed = [name for name in names if name.endswith(DEPLOYED)]
    assert len(deployed) >= 15
    noted = [name.removesuffix(f"-{NOTED}") for name in names if name.endswith(NOTED)]
    assert noted == answering  # every answering scenario has an action to note
    without = [
        name.removesuffix(f"-{WITHOUT_RESTARTS}")
        for name in names
        if name.endswith(WITHOUT_RESTARTS)
    ]
    reading = [
        name
        for name, scenario in sources()
        if name in answering
        and "state-read-after-resume" in classes_of(scenario)
        and not any(getattr(step, "tree", None) for step in scenario.steps)
    ]
    assert without == reading
    assert len(without) >= 40
    renamed = [name for name in names if name.endswith(DEPLOYED_NAMES)]
    assert len(renamed) >= 15
    again = [name for name in names if name.endswith(ANSWERED_AGAIN)]
    assert len(again) >= 30
    sampled = {name for name, _ in sources()} | {name for name, _ in canary_sample.read()}
    assert len(set(names)) == len(names)
    assert not set(names) & sampled


def test_the_reference_holds_on_the_canary_shapes(broken_on_the_reference: Reference) -> None:
    """Every violation a variant shows on a shape is its bug: the reference shows none.  CI asks
    every eighth (the whole canary runs every variant on every one)."""
    every = 1 if os.environ.get(canary.WHOLE_VARIABLE) == "whole" else 8
    assert broken_on_the_reference(shapes()[::every]) == {}


def test_the_whole_canary_challenges_witnesses_on_them_and_the_part_does_not() -> None:
    """Only the second question is asked of them: no SDK runs a canary shape."""
    names = {name for name, _ in shapes()}
    challengers = {name for name, _, _ in canary.challenger_scenarios(True)}
    asked_both = {name for name, _, _ in canary.canary_scenarios(True)}
    parts = {name for name, _, _ in canary.challenger_scenarios(False)}
    assert names <= challengers
    assert not names & asked_both
    assert not names & parts

"""The canary shapes: the committed samples' scenarios with steps appended, or rewritten, in
shapes no family draws, for the exemption canary alone.

The exemption canary (``harness.canary``) asks its two questions on the known-bad variants' runs.
A look-alike, or a narrowing a variant needs, shows only in a scenario of the right shape, and
some shapes no family draws, however many draws are taken (a second draw of the ci sample's
families, the canary sample, challenged one broadening more when it was doubled): an answer
re-sent after a restart that came once the scenario's own steps were done, an answer re-sent
after a new run of the same prompt asked its questions again, a corruption in a scenario not
built around it, a re-send that resumes a turn, a scenario whose ordinary tools ran that ends
with a restart, two steps after a restart that came once the scenario's own were done, agents
that never share a toolUseId where the families give most agents one, the names a deploy gives
without a deploy (and a damaged turn among them), an ordinary tool that waits for an answer, a
sub-agent's state read after a resume with no restart between, a gate's approval given again
after a restart that came once nothing waited.  So the whole canary also
challenges the findings witnesses on the variants' runs of twelve shapes made from every scenario
of the ci sample and the coverage sample that answers something (the third and fourth where the
oracle can follow them, the others where they change something).  Six append steps:

* ``<name>-resent-after-a-restart``: its steps, a restart, then each of its answers re-sent, in
  order (each in its own root session);
* ``<name>-resent-after-a-new-run``: its steps, its first run again (the same prompt, in the same
  root session), then its first answer re-sent;
* ``<name>-corrupted-after-a-new-run``: its steps, its first run again, then the first sub-agent
  turn it stores damaged (truncated), which ends with a restart: where the run parks a turn.
  Every violation of the source's steps is then one of a scenario with a corruption, where the
  families draw corruptions only into scenarios built around them (a class narrowed to those
  scenarios meets there the look-alikes it must reject);
* ``<name>-resent-after-a-repair``: the same, then its first answer given again (refused: the
  turn is damaged), a repair (the damaged turn put back, as from a backup, and a restart), and
  that answer re-sent, which is carried out now: a re-send that resumes a turn, where every other
  re-send is refused, so a variant's bug in what a resumed turn sends or publishes shows at a
  re-send too;
* ``<name>-closed-by-a-restart``: its steps, then a restart, where an agent of it has an
  ordinary tool with an effect and its last step is no restart. I15 counts each such call over
  the whole scenario at its last step, so a call that ran too few times is reported at the
  closing restart, and few drawn scenarios with such a tool end with one (39 of the three
  samples', 29 of them while a question waits);
* ``<name>-prompted-twice-after-a-restart``: its steps, a restart, then twice a prompt no agent
  has a turn scripted for (the root answers it at once where no question waits), in the root
  session its last step talked to. A session rebuilt at a restart makes its first save and a
  second there, where the families' steps after a restart mostly answer its questions: a run
  step after one ends its turn as the run without restarts does.

Six rewrite the scenario (``REWRITES``):

* ``<name>-with-ids-of-its-own``: where two agents ask under one toolUseId
  (``shared-tool-use-ids``), each agent's calls under ids of its own (its name appended), in
  every tree it deploys too. The generic families give every level the same ids, so most of
  their scenarios with sub-agents share one, and a class narrowed to that meets few of the same
  bugs' look-alikes elsewhere;
* ``<name>-deployed-tree-from-the-start``: where a restart deploys a tree, that tree from the
  start and each deploy a plain restart. Its actions carry the names a deploy gives
  (``s2-0-r1``) while no deploy comes as a question waits (``deploy-skew``);
* ``<name>-with-a-note-after-each-action``: each agent with protected actions calls an ordinary
  tool ``note`` in a turn of its own right after each turn that calls one of them (in every tree
  it deploys too). The families draw ordinary tools no later than a question (``side-effects``),
  so an answer that reached the wrong call, or a turn that went on past its question, never ran
  one early; here it does, and I15 says so (``does not run yet``);
* ``<name>-without-its-restarts``: where a sub-agent's state written before its question is read
  after the resume (``state-read-after-resume``), the same steps with its restarts left out. The
  family that draws that shape restarts before every answer, so a lookup read at an answer
  always came after one, and a bug in what a live agent object counts (a window that counts a
  model call twice) showed only there;
* ``<name>-deployed-names-then-repaired``: where a restart deploys a tree, that tree from the
  start with every restart left out, then the steps ``resent-after-a-repair`` appends, the answer
  there an approval of the questions then waiting under a deploy's names where some wait. An
  answer a damaged turn refuses (I9) is otherwise never given under a deploy's names without a
  restart while a question waits (``restart-between-answers``, which every deploy of the families
  is);
* ``<name>-answered-again-after-a-restart``: where its first answer approves a gated call (the
  gate's label), its steps with its restarts left out, what still waits at their end denied
  until the turn ends, then a restart, its first run again and its first answer again. A gate's
  approval starts a sub-agent's call (its first request, from its prompt) where every other
  answer resumes one, and the families restart a gated scenario only while a question waits
  (``restart-between-answers``): here one comes once nothing waits, and the approval is the
  first thing after it.

They are made, not drawn: a pure function of the committed samples, so no file of their own.  No
SDK target is checked on them and no profile draws them, so no findings class ever judges an SDK's
run of one: the canary asks only whether a witness is narrower than its broadenings there
(``harness.canary.challenger_scenarios``).  The reference must hold on every one
(``tests/test_canary_shapes.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Final

from pydantic import ValidationError

from scenarios.classes import classes_of
from scenarios.model import Answer, Restart, Run, Scenario
from scenarios.oracle import ScenarioError, expectations

Steps = list[dict[str, Any]]
# the label a deploy that renames a sub-agent gives each of its actions and gates: the old one,
# "-r" and the deploy's number (scenarios.strategies.deploys)
DEPLOYS_NAME: Final = re.compile(r"-r\d+$")


def answers(scenario: Scenario) -> list[tuple[int, Answer]]:
    """The scenario's answer steps, each with its index."""
    return [(index, step) for index, step in enumerate(scenario.steps) if isinstance(step, Answer)]


def _resend(index: int, answer: Answer) -> dict[str, Any]:
    return {"resend": index, "session": answer.session}


def resent_after_a_restart(scenario: Scenario) -> Steps:
    """A restart after the scenario's steps, then each of its answers re-sent in order."""
    return [{"restart": True}] + [_resend(index, answer) for index, answer in answers(scenario)]


def resent_after_a_new_run(scenario: Scenario) -> Steps:
    """The scenario's first run again, then its first answer re-sent."""
    first_run = next(step for step in scenario.steps if isinstance(step, Run))
    index, answer = answers(scenario)[0]
    return [first_run.model_dump(mode="json"), _resend(index, answer)]


def corrupted_after_a_new_run(scenario: Scenario) -> Steps:
    """The scenario's first run again, then the first stored sub-agent turn truncated."""
    first_run = next(step for step in scenario.steps if isinstance(step, Run))
    return [first_run.model_dump(mode="json"), {"corrupt": "truncated"}]


def resent_after_a_repair(scenario: Scenario, answer: Answer | None = None) -> Steps:
    """``corrupted_after_a_new_run``, then an answer (the first one again, where none is
    named), a repair, and that answer re-sent."""
    answer = answer if answer is not None else answers(scenario)[0][1]
    given_again = len(scenario.steps) + 2
    return [
        *corrupted_after_a_new_run(scenario),
        answer.model_dump(mode="json", exclude_defaults=True),
        {"repair": True},
        {"resend": given_again, "session": answer.session},
    ]


def closed_by_a_restart(scenario: Scenario) -> Steps:
    """A restart after the scenario's steps, where an agent has an ordinary tool with an effect
    and the scenario does not end with a restart already: nothing (no shape) for the rest, whose
    last step no checker counts anything at that a closing restart would move."""
    if isinstance(scenario.steps[-1], Restart):
        return []
    if not any(agent.effects for agent, _ in scenario.tree.walk()):
        return []
    return [{"restart": True}]


# a prompt no agent of any sample has a turn scripted for: the root answers it at once
IDLE_PROMPT: Final = "anything else?"


def prompted_twice_after_a_restart(scenario: Scenario) -> Steps:
    """A restart after the scenario's steps, then two prompts the root answers at once (no
    agent has a turn scripted for them), in the root session its last step talked to."""
    sessions = [getattr(step, "session", None) for step in scenario.steps]
    prompt = {"run": IDLE_PROMPT, "session": next((s for s in reversed(sessions) if s), "a")}
    return [{"restart": True}, prompt, prompt]


SHAPES: Final[dict[str, Callable[[Scenario], Steps]]] = {
    "resent-after-a-restart": resent_after_a_restart,
    "resent-after-a-new-run": resent_after_a_new_run,
    "corrupted-after-a-new-run": corrupted_after_a_new_run,
    "resent-after-a-repair": resent_after_a_repair,
    "closed-by-a-restart": closed_by_a_restart,
    "prompted-twice-after-a-restart": prompted_twice_after_a_restart,
}


# --- shapes that rewrite the scenario rather than append to it -----------------------------------

Data = dict[str, Any]  # a scenario as its file holds it


def _rewritten_trees(scenario: Scenario, change: Callable[[Data], None]) -> Data:
    """The scenario's data with ``change`` made to its tree and to each tree it deploys."""
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    change(data["tree"])
    for step in data["steps"]:
        if isinstance(step, dict) and isinstance(step.get("restart"), dict):
            change(step["restart"]["tree"])
    return data


def _scripts(agent: Data) -> list[Data]:
    """The parts of ``agent`` that hold a list of turns: itself, and each prompt's script."""
    return [script for script in (agent, *agent.get("prompts", {}).values()) if "turns" in script]


def _renamed_calls(agent: Data) -> None:
    """Each call's toolUseId in ``agent``'s scripts and its sub-agents', made its agent's own:
    the agent's name appended (``t1`` of ``s2``: ``t1-s2``)."""
    for script in _scripts(agent):
        for call in (call for turn in script["turns"] for call in turn):
            call["id"] = f"{call['id']}-{agent['name']}"
    for sub in agent.get("sub_agents", []):
        _renamed_calls(sub)


def with_ids_of_its_own(scenario: Scenario) -> Data | None:
    """Where two agents ask under one toolUseId (``shared-tool-use-ids``): the scenario with each
    agent's calls under toolUseIds of its own, in every tree it deploys too; None elsewhere."""
    if "shared-tool-use-ids" not in classes_of(scenario):
        return None
    return _rewritten_trees(scenario, _renamed_calls)


def deployed_tree_from_the_start(scenario: Scenario) -> Data | None:
    """Where a restart deploys a tree: the scenario with the first tree it deploys from its
    start and each deploy a plain restart, so its actions carry a deploy's names (``s2-0-r1``)
    and no deploy comes while a question waits; None elsewhere."""
    deployed = [step.tree for step in scenario.steps if isinstance(step, Restart) and step.tree]
    if not deployed:
        return None
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    data["tree"] = deployed[0].model_dump(mode="json", exclude_defaults=True)
    data["steps"] = [
        {"restart": True}
        if isinstance(step, dict) and isinstance(step.get("restart"), dict)
        else step
        for step in data["steps"]
    ]
    return data


NOTE: Final = "note"  # the ordinary tool ``with_a_note_after_each_action`` gives an agent


def _noted(agent: Data) -> None:
    """``agent`` and its sub-agents, each with protected actions given the ordinary tool
    ``NOTE`` (an effect), called in a turn of its own right after each turn that calls one."""
    actions = {action["tool"] for action in agent.get("actions", [])}
    calls = 0
    for script in _scripts(agent):
        turns: list[list[Data]] = []
        for turn in script["turns"]:
            turns.append(turn)
            if any(call["tool"] in actions for call in turn):
                calls += 1
                turns.append([{"tool": NOTE, "id": f"{NOTE}-{calls}"}])
        script["turns"] = turns
    if calls:
        agent["effects"] = [*agent.get("effects", []), {"tool": NOTE}]
    for sub in agent.get("sub_agents", []):
        _noted(sub)


def with_a_note_after_each_action(scenario: Scenario) -> Data | None:
    """Where an agent calls a protected action: the scenario with each such agent's model
    calling an ordinary tool ``NOTE`` in the turn after each turn that calls one, in every tree
    it deploys too; None elsewhere, and where an agent has a tool of that name already."""
    agents = [agent for agent, _ in scenario.tree.walk()]
    for agent in agents:
        tools = {*(a.tool for a in agent.actions), *(e.tool for e in agent.effects)}
        if NOTE in tools | {sub.tool for sub in agent.sub_agents}:
            return None
    if not any(
        call.tool in {action.tool for action in agent.actions}
        for agent in agents
        for _, turns in agent.scripts()
        for turn in turns
        for call in turn
    ):
        return None
    return _rewritten_trees(scenario, _noted)


def _restarts_left_out(data: Data) -> Data:
    """``data`` with its restart steps left out, each re-send naming its answer where it is
    now."""
    steps: Steps = data["steps"]
    kept = [index for index, step in enumerate(steps) if "restart" not in step]
    moved = {index: position for position, index in enumerate(kept)}
    data["steps"] = [
        {**steps[index], "resend": moved[steps[index]["resend"]]}
        if "resend" in steps[index]
        else steps[index]
        for index in kept
    ]
    return data


def without_its_restarts(scenario: Scenario) -> Data | None:
    """Where a sub-agent's state written before its question is read after the resume
    (``state-read-after-resume``): the scenario with its restarts left out, so the state is read
    from the agent objects that wrote it; None elsewhere, and where a step deploys a tree."""
    if "state-read-after-resume" not in classes_of(scenario):
        return None
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    if any(isinstance(step.get("restart"), dict) for step in data["steps"]):
        return None
    return _restarts_left_out(data)


def deployed_names_then_repaired(scenario: Scenario) -> Data | None:
    """Where a restart deploys a tree: that tree from the start, every restart left out, then
    the steps ``resent_after_a_repair`` appends, so a damaged turn refuses an answer under a
    deploy's names (``s2-0-r1``) with no restart step at all (a corruption and a repair each end
    with a restart of their own): an approval of the questions then waiting under those names
    where some wait (a variant that lets the damaged call ask again shows those names alone
    then), else the first answer again; None elsewhere, and where the oracle cannot follow what
    is left."""
    data = deployed_tree_from_the_start(scenario)
    data = None if data is None else _restarts_left_out(data)
    named = None if data is None else followed(data)
    if data is None or named is None:
        return None
    data["steps"] = [*data["steps"], *resent_after_a_repair(named, _deploys_names(named))]
    return data


def _deploys_names(scenario: Scenario) -> Answer | None:
    """An approval of every question that waits, once ``scenario``'s first run is given again
    (as ``corrupted_after_a_new_run`` gives it), under a name a deploy gives (``DEPLOYS_NAME``);
    None where none does."""
    first_run = next(step for step in scenario.steps if isinstance(step, Run))
    again = shaped(scenario, [first_run.model_dump(mode="json")])
    labels = sorted(
        {label for label, _ in expectations(again)[-1].pending if DEPLOYS_NAME.search(label)}
    )
    if not labels:
        return None
    return Answer.model_validate({"answer": dict.fromkeys(labels, "approve")})


def answered_again_after_a_restart(scenario: Scenario) -> Data | None:
    """Where the scenario's first answer approves a gated call (its gate's label): its steps
    with its restarts left out and what still waits at their end denied (``_ended``), then a
    restart, its first run again and its first answer again, which starts the sub-agent's call
    anew after a restart that came once nothing waited; None elsewhere, where a step deploys a
    tree, and where the oracle cannot follow it."""
    gates = {sub.gate for agent, _ in scenario.tree.walk() for sub in agent.sub_agents}
    _, answer = answers(scenario)[0]
    if not any(answer.answer.get(gate) == "approve" for gate in gates if gate is not None):
        return None
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    if any(isinstance(step.get("restart"), dict) for step in data["steps"]):
        return None
    first_run = next(step for step in scenario.steps if isinstance(step, Run))
    again = answer.model_dump(mode="json", exclude_defaults=True)
    ended = _ended(_restarts_left_out(data))
    if ended is None:
        return None
    ended["steps"] += [{"restart": True}, first_run.model_dump(mode="json"), again]
    return ended


def _ended(data: Data, denials: int = 8) -> Data | None:
    """``data`` with what still waits at its end denied, answer after answer, until its turn
    ends; None where the oracle cannot follow it, or ``denials`` answers leave something
    waiting."""
    for _ in range(denials + 1):
        try:
            waiting = expectations(Scenario.model_validate({**data, "expect": None}))[-1].pending
        except (ValidationError, ScenarioError):
            return None
        if not waiting:
            return data
        labels = sorted({label for label, _ in waiting})
        data["steps"] = [*data["steps"], {"answer": dict.fromkeys(labels, "deny")}]
    return None


REWRITES: Final[dict[str, Callable[[Scenario], Data | None]]] = {
    "with-ids-of-its-own": with_ids_of_its_own,
    "deployed-tree-from-the-start": deployed_tree_from_the_start,
    "with-a-note-after-each-action": with_a_note_after_each_action,
    "without-its-restarts": without_its_restarts,
    "deployed-names-then-repaired": deployed_names_then_repaired,
    "answered-again-after-a-restart": answered_again_after_a_restart,
}


def shaped(scenario: Scenario, appended: Steps) -> Scenario:
    """``scenario`` with ``appended`` after its steps, validated as a scenario file is (without
    what a scenario file says its own steps end with, as ``followed``)."""
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    data.pop("expect", None)
    data["steps"] = [*data["steps"], *appended]
    return Scenario.model_validate(data)


def expressible(scenario: Scenario, appended: Steps) -> Scenario | None:
    """``scenario`` with ``appended`` after its steps, where it is a scenario the oracle can
    follow: None where it is not (a corruption where two root sessions are, or where the new run
    parks no turn to damage)."""
    try:
        made = shaped(scenario, appended)
        expectations(made)
    except (ValidationError, ScenarioError):  # refused by the model, or by the oracle
        return None
    return made


def followed(data: Data) -> Scenario | None:
    """The scenario ``data`` holds, where the oracle can follow it and it answers something,
    without what a scenario file says its own steps end with (``data`` changed is another
    scenario; the generated samples the shapes are made from say nothing of it)."""
    data.pop("expect", None)
    try:
        made = Scenario.model_validate(data)
        expectations(made)
    except (ValidationError, ScenarioError):  # refused by the model, or by the oracle
        return None
    return made if answers(made) else None


def made(sources: Iterable[tuple[str, Scenario]]) -> list[tuple[str, Scenario]]:
    """Each shape of each source scenario that answers something, source by source, under its
    source's name and the shape's: the appended shapes where the shape appends something
    (``closed_by_a_restart``) and the oracle can follow it (``expressible``), then the rewrites
    where they apply (``REWRITES``) and the oracle can follow what they make."""
    return [
        (f"{name}-{shape}", made)
        for name, scenario in sources
        if answers(scenario)
        for shape, made in [
            *((shape, _appended(scenario, append)) for shape, append in SHAPES.items()),
            *((shape, _rewritten(scenario, rewrite)) for shape, rewrite in REWRITES.items()),
        ]
        if made is not None
    ]


def _appended(scenario: Scenario, append: Callable[[Scenario], Steps]) -> Scenario | None:
    appended = append(scenario)
    return expressible(scenario, appended) if appended else None


def _rewritten(scenario: Scenario, rewrite: Callable[[Scenario], Data | None]) -> Scenario | None:
    data = rewrite(scenario)
    return None if data is None else followed(data)

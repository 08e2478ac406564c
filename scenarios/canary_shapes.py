"""The canary shapes: the committed samples' scenarios with steps appended that no family draws,
for the exemption canary alone.

The exemption canary (``harness.canary``) asks its two questions on the known-bad variants' runs.
A look-alike, or a narrowing a variant needs, shows only in a scenario of the right shape, and
some shapes no family draws, however many draws are taken (a second draw of the ci sample's
families, the canary sample, challenged one broadening more when it was doubled): an answer
re-sent after a restart that came once the scenario's own steps were done, an answer re-sent
after a new run of the same prompt asked its questions again, a corruption in a scenario not
built around it, a re-send that resumes a turn, a scenario whose ordinary tools ran that ends
with a restart.  So the whole canary also challenges the findings witnesses on the variants' runs
of five shapes made from every scenario of the ci sample and the coverage sample that answers
something (the third and fourth where the oracle can follow them, the fifth where it moves what
is counted):

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
  samples', 29 of them while a question waits).

They are made, not drawn: a pure function of the committed samples, so no file of their own.  No
SDK target is checked on them and no profile draws them, so no findings class ever judges an SDK's
run of one: the canary asks only whether a witness is narrower than its broadenings there
(``harness.canary.challenger_scenarios``).  The reference must hold on every one
(``tests/test_canary_shapes.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from pydantic import ValidationError

from scenarios.model import Answer, Restart, Run, Scenario
from scenarios.oracle import ScenarioError, expectations

Steps = list[dict[str, Any]]


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


def resent_after_a_repair(scenario: Scenario) -> Steps:
    """``corrupted_after_a_new_run``, then the first answer again, a repair, and that answer
    re-sent."""
    _, answer = answers(scenario)[0]
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


SHAPES: Final[dict[str, Callable[[Scenario], Steps]]] = {
    "resent-after-a-restart": resent_after_a_restart,
    "resent-after-a-new-run": resent_after_a_new_run,
    "corrupted-after-a-new-run": corrupted_after_a_new_run,
    "resent-after-a-repair": resent_after_a_repair,
    "closed-by-a-restart": closed_by_a_restart,
}


def shaped(scenario: Scenario, appended: Steps) -> Scenario:
    """``scenario`` with ``appended`` after its steps, validated as a scenario file is."""
    data = scenario.model_dump(mode="json", exclude_defaults=True)
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


def made(sources: Iterable[tuple[str, Scenario]]) -> list[tuple[str, Scenario]]:
    """Each shape of each source scenario that answers something, source by source, under its
    source's name and the shape's, where the shape appends something (``closed_by_a_restart``)
    and the oracle can follow it (``expressible``)."""
    return [
        (f"{name}-{shape}", made)
        for name, scenario in sources
        if answers(scenario)
        for shape, append in SHAPES.items()
        if (appended := append(scenario)) and (made := expressible(scenario, appended)) is not None
    ]

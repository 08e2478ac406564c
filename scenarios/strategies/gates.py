"""The gated-call family: trees of the general family with gates on sub-agents, and steps drawn
against the oracle.

A gated sub-agent (``scenarios.tree.Agent.gate``) is asked for before each call; once its gate
is approved it is called and may ask its own questions in the same call, under the same
toolUseId.  The general family's trees (``families.trees``: depth 2 or 3, actions at any
level, preserve_context, windows, stateful providers, colliding toolUseIds) get a gate on each
sub-agent their turns call (its caller's turns do, and the turns reach that caller from the
root) with even odds, and on the first one when none drew one; a gate may sit inside another
gated sub-agent (a gate on a sub-agent no turn calls would never be asked).  Steps are drawn
as the general family draws them: answers name only what the oracle says is pending (gates
included: approved mostly, sometimes denied, sometimes only some of them), restarts anywhere,
resends of earlier answers, a new prompt once the turn ended.  Every drawn scenario needs
``gated_sub_agents`` (``GATE_CAPABILITY``): a target without it draws nothing from this family
(``scenarios.corpus`` does not draw it within capabilities without gates).
"""

from __future__ import annotations

from itertools import count
from typing import Any, Final

from hypothesis import strategies as st

import scenarios.strategies.drawn as drawn
from scenarios.model import Answer, Resend, Restart, Run, Scenario, Step
from scenarios.oracle import Oracle
from scenarios.strategies.families import DESCRIPTION, SOURCE, Capabilities, Draw, trees

GATE_CAPABILITY: Final = "gated_sub_agents"
GATE_SUFFIX: Final = "-gate"  # a gate's label: its sub-agent's name, then this (names are unique)
MAX_DEPTH: Final = 3  # deeper trees add run time, not gate situations (a gate inside a gate is 3)


def can_draw(capabilities: Capabilities) -> bool:
    """Whether a target with ``capabilities`` can express this family at all."""
    return capabilities is None or GATE_CAPABILITY in capabilities


@st.composite
def gated_trees(draw: Draw, capabilities: Capabilities = None) -> dict[str, Any]:
    """A tree of the general family, two levels deep or more, with at least one gated
    sub-agent that its caller's turns call."""
    nested = trees(max_depth=MAX_DEPTH, capabilities=capabilities)
    tree: dict[str, Any] = draw(nested.filter(lambda drawn: any(_called(drawn))))
    subs = list(_called(tree))
    gated = [sub for sub in subs if draw(drawn.BOOLEANS)] or subs[:1]
    for sub in gated:
        sub["gate"] = sub["name"] + GATE_SUFFIX
    return tree


def _called(agent: dict[str, Any]) -> Any:
    """The sub-agents ``agent``'s turns call, each followed by those its turns call, in the
    tree's order."""
    called = {call["tool"] for turn in agent["turns"] for call in turn}
    for sub in agent["sub_agents"]:
        if sub["name"] in called:
            yield sub
            yield from _called(sub)


@st.composite
def gated_scenarios(draw: Draw, max_steps: int = 6, capabilities: Capabilities = None) -> Scenario:
    """A valid scenario with gated sub-agents; only what a target with ``capabilities`` can
    express (None: everything), which must include ``gated_sub_agents``."""
    if not can_draw(capabilities):
        raise ValueError(f"the gated family needs the capability {GATE_CAPABILITY!r}")
    restarts = capabilities is None or "restart" in capabilities
    tree = draw(gated_trees(capabilities=capabilities))
    steps: list[Step] = []
    if restarts and draw(drawn.BOOLEANS):
        steps.append(Restart(restart=True))
    steps.append(Run(run="p1"))
    base = Scenario.model_validate(
        {"description": DESCRIPTION, "source": SOURCE, "tree": tree, "steps": steps}
    )
    oracle = Oracle(base)
    expected = [oracle.step(index, step) for index, step in enumerate(steps)][-1]
    prompts = count(2)
    for _ in range(draw(drawn.integers(1, max_steps))):
        pending = sorted({label for label, _ in expected.pending})
        answers = [index for index, step in enumerate(steps) if isinstance(step, Answer)]
        choices = ["restart"] if restarts else []
        choices += ["answer", "answer", "answer"] if pending else ["run"]
        if answers:
            choices.append("resend")
        kind = draw(drawn.sampled(choices))
        step: Step
        if kind == "answer":
            every = draw(drawn.sampled((True, True, False)))
            chosen = pending if every else draw(drawn.lists_of(pending, min_size=1, unique=True))
            responses = {
                label: draw(drawn.sampled(("approve", "approve", "approve", "deny")))
                for label in chosen
            }
            step = Answer(answer=responses)
        elif kind == "restart":
            step = Restart(restart=True)
        elif kind == "resend":
            step = Resend(resend=draw(drawn.sampled(answers)))
        else:
            step = Run(run=f"p{next(prompts)}")
        steps.append(step)
        expected = oracle.step(len(steps) - 1, step)
    return base.model_copy(update={"steps": tuple(steps)})

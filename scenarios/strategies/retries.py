"""The retried-call family: trees of the general family with retries on tool calls, and steps
drawn against the oracle.

A retry (``scenarios.tree.Retry``) makes the caller's after-tool-call hook run a call again when
it ends with an error (an action or a gate denied, a busy sub-agent) or with a result, at most
``times`` times; every attempt is a new call that asks again.  The general family's trees
(``families.trees``: depth 2 or 3, actions at any level, preserve_context, windows, stateful
providers, colliding toolUseIds) get a retry on each sub-agent and each action with even odds
(after an error or a result, once or twice), and on the first sub-agent when none drew one.
Steps are drawn as the effects family draws them (``families._played``): answers name only what
the oracle says is pending (retried questions included), restarts anywhere, resends of earlier
answers (a retried attempt's earlier answer re-sent must be refused), a new prompt once the turn
ended.  Only scenarios in which the oracle makes a call again are kept
(``scenarios.classes.retries_happen``): a retried call must first end the way its retry names,
and about two draws in three stop while it still asks, or retry a sub-agent after an error only
a gate or a busy sub-agent gives (7 of the ci profile's 25 draws made a retry before this
filter), so the rest would test a retry that never happens.  Every drawn scenario needs
``retries`` (``RETRY_CAPABILITY``): a target without it draws nothing from this family.
"""

from __future__ import annotations

from typing import Any, Final

from hypothesis import strategies as st

import scenarios.strategies.drawn as drawn
from scenarios.classes import retries_happen
from scenarios.model import Scenario
from scenarios.strategies.families import Capabilities, Draw, _can, _played, trees

RETRY_CAPABILITY: Final = "retries"
MAX_DEPTH: Final = 3  # deeper trees add run time, not retry situations


def can_draw(capabilities: Capabilities) -> bool:
    """Whether a target with ``capabilities`` can express this family at all."""
    return capabilities is None or RETRY_CAPABILITY in capabilities


def _retry(draw: Draw) -> dict[str, Any]:
    return {"after": draw(drawn.sampled(("result", "error"))), "times": draw(drawn.integers(1, 2))}


@st.composite
def retried_trees(draw: Draw, capabilities: Capabilities = None) -> dict[str, Any]:
    """A tree of the general family, two levels deep or more, with at least one retried
    sub-agent."""
    nested = trees(max_depth=MAX_DEPTH, capabilities=capabilities)
    tree: dict[str, Any] = draw(nested.filter(lambda drawn: bool(drawn["sub_agents"])))
    subs = list(_sub_agents(tree))
    retried = [sub for sub in subs if draw(drawn.BOOLEANS)] or subs[:1]
    for sub in retried:
        sub["retry"] = _retry(draw)
    for agent in [tree, *subs]:
        for action in agent["actions"]:
            if draw(drawn.BOOLEANS):
                action["retry"] = _retry(draw)
    return tree


def _sub_agents(agent: dict[str, Any]) -> Any:
    for sub in agent["sub_agents"]:
        yield sub
        yield from _sub_agents(sub)


def retried_scenarios(capabilities: Capabilities = None) -> st.SearchStrategy[Scenario]:
    """A valid scenario in which a retry makes a call again; only what a target with
    ``capabilities`` can express (None: everything), which must include ``retries``."""
    if not can_draw(capabilities):
        raise ValueError(f"the retried-call family needs the capability {RETRY_CAPABILITY!r}")
    return _retried_scenarios(capabilities).filter(retries_happen)


@st.composite
def _retried_scenarios(draw: Draw, capabilities: Capabilities) -> Scenario:
    return _played(draw, draw(retried_trees(capabilities=capabilities)), _can(capabilities))

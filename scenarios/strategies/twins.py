"""The twin-call family: one model message calls the same sub-agent two or three times, and
each call's prompt makes it act and answer differently.

The general family's twin calls (``families._turns``) carry prompts, but its sub-agents have no
``prompts``: every call of a sub-agent plays the same script and answers the same text, so a
target that hands twins each other's results, or a twin's approval to its sibling, looks right.
Here the twin sub-agent has a script per prompt (``scenarios.tree.PromptScript``): each prompt
runs its own subset of the sub-agent's actions (none: it answers at once, beside a parked twin)
and answers with its own text, and at least one of them asks.  Sometimes a plain sub-agent asks
beside the twins, sometimes the twin sub-agent calls a nested sub-agent twice the same way, and
sometimes the orchestrator calls the twins again in a second turn.  The orchestrator's twin
sub-agent sometimes keeps its history (preserve_context), and any twin sub-agent sometimes has a
stateful provider or a window, as far as the target can express them.
Steps are drawn as the effects family draws them (``families._played``): restarts anywhere,
answers to all or part of what is pending, denials, resends, later prompts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

import scenarios.strategies.drawn as drawn
from scenarios.model import Scenario
from scenarios.strategies.families import (
    Capabilities,
    Draw,
    IdDrawer,
    _can,
    _played,
    sometimes_keeps_state,
)

ACTIONS = ("act0", "act1")  # the twin sub-agent's actions: a prompt runs some of them


@st.composite
def twin_scenarios(draw: Draw, capabilities: Capabilities = None) -> Scenario:
    """A tree whose orchestrator calls one sub-agent with two or three prompts in one turn,
    played against the oracle."""
    can = _can(capabilities)
    ids = IdDrawer(draw, can("repeated_tool_use_ids"), can("empty_tool_use_ids"))
    twin = _twin(draw, "s1", ids, can, nested=True)
    calls: list[dict[str, Any]] = [{"tool": "s1", "prompt": prompt} for prompt in twin["prompts"]]
    sub_agents = [twin]
    if draw(drawn.integers(0, 2)) == 0:  # a plain sub-agent asking beside the twins
        sibling = {
            "name": "s9",
            "actions": [{"tool": "act", "label": "s9-0"}],
            "turns": [ids.agent().turn([{"tool": "act"}])],
        }
        sub_agents.append(sibling)
        calls.insert(draw(drawn.integers(0, len(calls))), {"tool": "s9"})
    turns = [ids.turn(calls)]
    if draw(drawn.integers(0, 2)) == 0:  # the twins called again, the other way round
        turns.append(ids.turn(list(reversed(calls))))
    tree = {"name": "orchestrator", "answer": "all done", "sub_agents": sub_agents, "turns": turns}
    return _played(draw, tree, can)


def _twin(
    draw: Draw, name: str, ids: IdDrawer, can: Callable[[str], bool], *, nested: bool
) -> dict[str, Any]:
    """A sub-agent with a script per prompt (``part 0``, ``part 1``, ...): each runs its own
    actions, or none, and answers with its own text; at least one asks.  When ``nested`` allows
    (rarely), one prompt calls a nested twin sub-agent with each of its prompts instead."""
    count = draw(drawn.integers(2, 3))
    questions = (1, 1, 1, 2) if can("multi_question") else (1,)
    actions = [
        {"tool": tool, "label": f"{name}-{index}", "questions": draw(drawn.sampled(questions))}
        for index, tool in enumerate(ACTIONS[: draw(drawn.integers(1, len(ACTIONS)))])
    ]
    tools = [action["tool"] for action in actions]
    asking = set(draw(drawn.lists_of(range(count), min_size=1, unique=True)))
    agent: dict[str, Any] = {"name": name, "actions": actions}
    inner = None
    if nested and draw(drawn.integers(0, 3)) == 0:
        inner = _twin(draw, f"{name}n", ids, can, nested=False)
        agent["sub_agents"] = [inner]
        inner_calls = [{"tool": inner["name"], "prompt": prompt} for prompt in inner["prompts"]]
        through = draw(drawn.sampled(sorted(asking)))  # the prompt that calls the nested twins
    prompts: dict[str, Any] = {}
    for index in range(count):
        mine = ids.agent()  # each call a conversation of its own: its ids may repeat a twin's
        script: dict[str, Any] = {"answer": f"{name} finished part {index}"}
        if inner is not None and index == through:
            script["turns"] = [mine.turn(inner_calls)]
        elif index in asking:
            chosen = draw(drawn.lists_of(tools, min_size=1, unique=True))
            script["turns"] = [mine.turn([{"tool": tool} for tool in chosen])]
        prompts[f"part {index}"] = script
    agent["prompts"] = prompts
    sometimes_keeps_state(draw, agent, can, preserve_context=3 if nested else None)
    return agent

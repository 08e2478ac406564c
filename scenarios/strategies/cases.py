"""The cases of the fault campaigns (``harness.campaigns``): a tree that parks sub-agent turns,
then a corruption of one stored turn (``corruption_cases``), a restart before the approval
(``privacy_cases``), or a sub-agent shared by two callers (``shared_session_cases``)."""

from __future__ import annotations

from itertools import count
from typing import Any

from hypothesis import strategies as st

import scenarios.strategies.drawn as drawn
from scenarios.corruptions import CORRUPTIONS
from scenarios.model import Answer, Corrupt, Repair, Resend, Restart, Run, Scenario, Step
from scenarios.oracle import Oracle, expectations
from scenarios.strategies.families import DESCRIPTION, SOURCE, TOOL_USE_IDS, Draw


@st.composite
def parked_trees(draw: Draw, max_depth: int = 3) -> dict[str, Any]:
    """A tree whose first prompt parks ephemeral sub-agent turns: one to three sub-agents, up to
    ``max_depth`` deep, with windows, stateful providers, a canary in every sub-agent's state,
    sometimes an orchestrator action of its own (nested and ordinary interrupts in one turn)."""
    names = count(1)
    tree: dict[str, Any] = {"name": "orchestrator", "answer": "all done"}
    subs = [
        _parking_sub_agent(draw, 2, max_depth, names) for _ in range(draw(drawn.integers(1, 3)))
    ]
    tree["sub_agents"] = subs
    tools = [sub["name"] for sub in subs]
    if draw(drawn.integers(0, 3)) == 3:  # (draws shrink toward 0: toward the simpler tree)
        tree["actions"] = [{"tool": "approve_budget", "label": "orchestrator-act"}]
        tools.append("approve_budget")
    tree["turns"] = [_one_turn(draw, tools)]
    return tree


def _parked(tree: dict[str, Any]) -> tuple[Scenario, Any]:
    """The tree with its first prompt, and the oracle's expectation after it."""
    base = Scenario.model_validate(
        {
            "description": DESCRIPTION,
            "source": SOURCE,
            "tree": tree,
            "steps": [{"run": "p1"}],
        }
    )
    return base, Oracle(base).step(0, base.steps[0])


def _approve_all(expected: Any) -> Answer:
    return Answer(answer=dict.fromkeys(sorted({label for label, _ in expected.pending}), "approve"))


@st.composite
def corruption_cases(draw: Draw) -> Scenario:
    """A fault-campaign case: a parked tree, one corruption of one stored turn, the human
    approving everything pending, the damage repaired, and the approval re-sent.  What a target
    does at the approval and after the repair decides the case's class
    (``harness.campaigns.corruption``)."""
    tree = draw(parked_trees())
    parked = _parked(tree)[1].parked_continuations
    kinds = [kind for kind in CORRUPTIONS if kind != "foreign" or parked >= 2]
    corrupt = Corrupt(
        corrupt=draw(drawn.sampled(kinds)),
        which=draw(drawn.integers(0, parked - 1)),
        pick=draw(drawn.integers(0, 2**16)),
    )
    return corruption_case(tree, corrupt)


def corruption_case(tree: dict[str, Any], corrupt: Corrupt) -> Scenario:
    """The corruption case of ``tree`` and ``corrupt``: run, corrupt, approve everything
    pending, repair, re-send.  Raises ``ScenarioError`` (or a pydantic error) if invalid."""
    base, after_run = _parked(tree)
    steps = (Run(run="p1"), corrupt, _approve_all(after_run), Repair(repair=True), Resend(resend=2))
    scenario = base.model_copy(update={"steps": steps})
    expectations(scenario)  # refuses a corruption of a stored turn that is not there
    return scenario


@st.composite
def privacy_cases(draw: Draw) -> Scenario:
    """A parked tree (canaries in every sub-agent's state, stateful providers' response ids),
    restarted, then approved: invariant 8 over what the events showed."""
    base, after_run = _parked(draw(parked_trees()))
    steps = (Run(run="p1"), Restart(restart=True), _approve_all(after_run))
    return base.model_copy(update={"steps": steps})


@st.composite
def shared_session_cases(draw: Draw) -> Scenario:
    """A preserve_context sub-agent (with a session store) called by two tool calls
    of one orchestrator turn, next to parked ephemeral siblings; restarted or not, answered in
    parts: invariant 10 (neither caller picks up the other's turn) over the history."""
    tree = draw(parked_trees(max_depth=2))
    shared = {
        "name": "shared",
        "preserve_context": True,
        "session_store": True,  # without one a restart loses its turn: another class
        "state": {"canary": "private-state-of-shared"},
        "actions": [{"tool": "act", "label": "shared-act"}],
        "turns": [[{"tool": "act", "id": draw(drawn.sampled(("t1", "t2")))}]],
    }
    tree["sub_agents"] = [*tree["sub_agents"], shared]
    ids = [call["id"] for call in tree["turns"][0]]
    spare = (*TOOL_USE_IDS, "c:1", "c%2")  # enough ids for the two extra calls in any tree
    free = [tool_use_id for tool_use_id in spare if tool_use_id and tool_use_id not in ids]
    first, second = draw(st.permutations(free))[:2]
    tree["turns"][0] += [
        {"tool": "shared", "id": first, "prompt": "first caller's job"},
        {"tool": "shared", "id": second, "prompt": "second caller's job"},
    ]
    base, after_run = _parked(tree)
    steps: list[Step] = [Run(run="p1")]
    if draw(drawn.BOOLEANS):
        steps.append(Restart(restart=True))
    labels = sorted({label for label, _ in after_run.pending})
    first_part = draw(drawn.lists_of(labels, min_size=1, unique=True))
    steps.append(Answer(answer=dict.fromkeys(sorted(first_part), "approve")))
    if draw(drawn.BOOLEANS):
        steps.append(Restart(restart=True))
    steps.append(Answer(answer=dict.fromkeys(labels, "approve")))
    return base.model_copy(update={"steps": tuple(steps)})


def _parking_sub_agent(draw: Draw, depth: int, max_depth: int, names: count[int]) -> dict[str, Any]:
    name = f"s{next(names)}"
    agent: dict[str, Any] = {
        "name": name,
        "actions": [{"tool": "act", "label": f"{name}-act"}],
        "state": {"canary": f"private-state-of-{name}"},
        "answer": f"{name} finished",
    }
    tools = ["act"]
    if depth < max_depth and draw(drawn.integers(0, 2)) == 2:
        nested = _parking_sub_agent(draw, depth + 1, max_depth, names)
        agent["sub_agents"] = [nested]
        tools.append(nested["name"])
    if draw(drawn.BOOLEANS):
        agent["stateful_provider"] = True
    if draw(drawn.integers(0, 2)) == 2:
        agent["window"] = {"size": draw(drawn.sampled((2, 3))), "per_turn": 2}
    agent["turns"] = [_one_turn(draw, tools)]
    return agent


def _one_turn(draw: Draw, tools: list[str]) -> list[dict[str, str]]:
    """One model turn calling every tool once, under distinct non-empty toolUseIds (what an
    empty one does is the general family's business, not a corruption's)."""
    ids = draw(st.permutations([tool_use_id for tool_use_id in TOOL_USE_IDS if tool_use_id]))
    return [
        {"tool": tool, "id": tool_use_id} for tool, tool_use_id in zip(tools, ids, strict=False)
    ]

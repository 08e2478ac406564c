"""The deploy family: trees of the general family, asked, then rebuilt from a changed tree (a
restart with a ``tree``: ``scenarios.steps.Deploy``) before, between or after the answers.

A deploy draws one or two changes to the tree in force: a sub-agent renamed (its actions and
gates relabelled, since they now sit at another path), an action's tool replaced by another one
(a new label), an action added that nothing calls, a window's size changed, a sub-agent's
`preserve_context` turned on or off (only one with a session store, so nothing needs
``storeless_sub_agents`` beyond what the tree drew).  Scripts keep their number of turns, so each
agent plays on from where it is.  Steps are drawn against the oracle as the general family draws
them: answers name what the oracle says is pending (a question whose call a deploy took away
included: it must be refused), restarts, resends, new prompts.  Every drawn scenario needs
``changed_tree`` (``DEPLOY_CAPABILITY``): a target without it draws nothing from this family.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from itertools import count
from typing import Any, Final

from hypothesis import strategies as st

import scenarios.strategies.drawn as drawn
from scenarios.model import Agent, Answer, Deploy, Resend, Restart, Run, Scenario, Step
from scenarios.oracle import Oracle
from scenarios.strategies.families import DESCRIPTION, SOURCE, Capabilities, Draw, _can, trees

DEPLOY_CAPABILITY: Final = "changed_tree"
DEPLOY_NEEDS: Final = frozenset({DEPLOY_CAPABILITY, "restart"})  # what every drawn one needs
MAX_DEPTH: Final = 3  # a rename two levels down moves a whole subtree: deeper adds run time only

Tree = dict[str, Any]


def can_draw(capabilities: Capabilities) -> bool:
    """Whether a target with ``capabilities`` can express this family at all."""
    return capabilities is None or all(needed in capabilities for needed in DEPLOY_NEEDS)


def _agents(agent: Tree, parent: Tree | None = None) -> Iterator[tuple[Tree, Tree | None]]:
    yield agent, parent
    for sub in agent.get("sub_agents", ()):
        yield from _agents(sub, agent)


def _calls(agent: Tree) -> Iterator[dict[str, Any]]:
    """Every call in the agent's scripts (its turns and each prompt's)."""
    scripts = [agent.get("turns", ())]
    scripts += [script.get("turns", ()) for script in agent.get("prompts", {}).values()]
    for turns in scripts:
        for turn in turns:
            yield from turn


def _relabel(agent: Tree, suffix: str) -> None:
    """Every action and gate at or below ``agent`` gets a new label (they moved path)."""
    for inner, _ in _agents(agent):
        for action in inner.get("actions", ()):
            action["label"] += suffix
        if inner.get("gate"):
            inner["gate"] += suffix


def _rename(draw: Draw, tree: Tree, fresh: Callable[[], int]) -> bool:
    subs = [(sub, parent) for sub, parent in _agents(tree) if parent is not None]
    if not subs:
        return False
    sub, parent = draw(drawn.sampled(subs))
    assert parent is not None
    number = fresh()
    old, new = sub["name"], f"{sub['name']}r{number}"
    sub["name"] = new
    _relabel(sub, f"-r{number}")
    for call in _calls(parent):
        if call["tool"] == old:
            call["tool"] = new
    return True


def _replace_tool(draw: Draw, tree: Tree, fresh: Callable[[], int]) -> bool:
    acting = [agent for agent, _ in _agents(tree) if agent.get("actions")]
    if not acting:
        return False
    agent = draw(drawn.sampled(acting))
    action = draw(drawn.sampled(agent["actions"]))
    number = fresh()
    old = action["tool"]
    action["tool"] = f"{old}v{number}"
    action["label"] = f"{action['label']}-v{number}"
    for call in _calls(agent):
        if call["tool"] == old:
            call["tool"] = action["tool"]
    return True


def _add_action(draw: Draw, tree: Tree, fresh: Callable[[], int]) -> bool:
    agent, _ = draw(drawn.sampled(list(_agents(tree))))
    number = fresh()
    agent.setdefault("actions", []).append({"tool": f"added{number}", "label": f"added-{number}"})
    return True


def _resize_window(draw: Draw, tree: Tree, fresh: Callable[[], int]) -> bool:
    windowed = [agent for agent, _ in _agents(tree) if agent.get("window")]
    if not windowed:
        return False
    agent = draw(drawn.sampled(windowed))
    size = agent["window"]["size"]
    agent["window"] = {
        **agent["window"],
        "size": draw(drawn.sampled([2, 3, 4, 6]).filter(lambda n: n != size)),
    }
    return True


def _toggle_preserve_context(draw: Draw, tree: Tree, fresh: Callable[[], int]) -> bool:
    stored = [
        sub
        for sub, parent in _agents(tree)
        if parent is not None and sub.get("session_store", True)
    ]
    if not stored:
        return False
    sub = draw(drawn.sampled(stored))
    sub["preserve_context"] = not sub.get("preserve_context", False)
    return True


@st.composite
def deployed_tree(
    draw: Draw, tree: Tree, fresh: Callable[[], int], capabilities: Capabilities = None
) -> Tree:
    """``tree`` with one or two changes a deploy brings."""
    can = _can(capabilities)
    changes: list[Callable[[Draw, Tree, Callable[[], int]], bool]] = [
        _rename,
        _rename,
        _replace_tool,
        _replace_tool,
        _add_action,
        _resize_window,
    ]
    if can("preserve_context"):
        changes.append(_toggle_preserve_context)
    changed = copy.deepcopy(tree)
    wanted = draw(drawn.integers(1, 2))
    made = 0
    for change in draw(st.permutations(changes)):
        if made == wanted:
            break
        made += change(draw, changed, fresh)
    return changed


@st.composite
def deploy_scenarios(draw: Draw, max_steps: int = 6, capabilities: Capabilities = None) -> Scenario:
    """A valid scenario with at least one deploy while a question is pending; only what a
    target with ``capabilities`` can express (None: everything), which must include
    ``changed_tree`` and ``restart``."""
    if not can_draw(capabilities):
        raise ValueError(
            f"the deploy family needs the capabilities {DEPLOY_CAPABILITY!r}, 'restart'"
        )
    nested = trees(max_depth=MAX_DEPTH, capabilities=capabilities)
    tree: Tree = draw(nested.filter(lambda drawn: bool(drawn["sub_agents"])))
    numbers = count(1)
    fresh = lambda: next(numbers)  # noqa: E731 - a counter shared by every deploy's new names
    steps: list[Step] = [Run(run="p1")]
    base = Scenario.model_validate(
        {"description": DESCRIPTION, "source": SOURCE, "tree": tree, "steps": steps}
    )
    oracle = Oracle(base)
    expected = oracle.step(0, steps[0])
    current = tree
    prompts = count(2)
    for position in range(draw(drawn.integers(1, max_steps))):
        pending = sorted({label for label, _ in expected.pending})
        answers = [index for index, step in enumerate(steps) if isinstance(step, Answer)]
        choices = ["deploy"] if position == 0 and pending else ["deploy", "restart"]
        if position:
            choices += ["answer", "answer", "answer"] if pending else ["run"]
            if answers:
                choices.append("resend")
        kind = draw(drawn.sampled(choices))
        step: Step
        if kind == "deploy":
            current = draw(deployed_tree(current, fresh, capabilities))
            step = Restart(restart=Deploy(tree=Agent.model_validate(current)))
        elif kind == "answer":
            chosen = draw(drawn.lists_of(pending, min_size=1, unique=True))
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
    # validated whole: every deploy keeps what a deploy must, labels name one action throughout
    return Scenario.model_validate(
        base.model_copy(update={"steps": tuple(steps)}).model_dump(mode="json")
    )

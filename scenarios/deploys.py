"""Deploys: a restart that rebuilds the agents from a changed tree, and what a deploy may change.

A deploy may rename, add or remove sub-agents and tools (a rename is a removal and an addition:
the asking call is found by its path, so a renamed sub-agent's calls are gone), change a window's
size, a sub-agent's `preserve_context`, and every script.  It keeps what would make a parked
turn mean something else without saying so, so a scenario cannot ask for it: the root's name,
and for an agent at a path both trees have, its gate, its session store, its provider's kind and
whether it has a window at all (another conversation-manager type is the
`conversation_manager_other` corruption's case).  A label names one action over the whole
scenario: wherever it appears, the same action of the agent at the same path.

Pure functions over the tree model: no oracle, no target.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Final

from scenarios.fields import FieldError, Location
from scenarios.tree import Action, Agent

KEPT: Final = ("gate", "session_store", "stateful_provider")


def walk_paths(
    agent: Agent, path: str = "", where: Location = ()
) -> Iterator[tuple[Agent, str, Location]]:
    """Every agent of the tree with its path (names from the root, joined by ``/``) and where it
    is written in the tree."""
    here = f"{path}/{agent.tool}" if path else agent.name
    yield agent, here, where
    for position, sub in enumerate(agent.sub_agents):
        yield from walk_paths(sub, here, (*where, "sub_agents", position))


def agents_at(tree: Agent) -> dict[str, Agent]:
    """Each agent of the tree by its path."""
    return {path: agent for agent, path, _ in walk_paths(tree)}


def tree_labels(tree: Agent) -> list[str]:
    """Every label of the tree: each action's, then each gate's."""
    actions = [action.label for agent, _ in tree.walk() for action in agent.actions]
    gates = [agent.gate for agent, _ in tree.walk() if agent.gate is not None]
    return actions + gates


# what a label names: (agent path, the action) or (the gated sub-agent's path, None)
Owner = tuple[str, Action | None]


def _owners(tree: Agent) -> Iterator[tuple[str, Owner, Location]]:
    for agent, path, where in walk_paths(tree):
        for position, action in enumerate(agent.actions):
            yield action.label, (path, action), (*where, "actions", position, "label")
        if agent.gate is not None:
            yield agent.gate, (path, None), (*where, "gate")


def check_deploy(previous: Agent, tree: Agent, where: Location) -> None:
    """Refuse a deployed ``tree`` that changes what a deploy keeps (see the module's docstring)
    from the tree in force before it, ``previous``; ``where`` is where ``tree`` is written."""
    if tree.gate is not None:
        raise FieldError(
            (*where, "gate"), "the root has no caller to ask: only a sub-agent can be gated"
        )
    if tree.name != previous.name:
        raise FieldError((*where, "name"), f"a deploy keeps the root's name {previous.name!r}")
    repeated = sorted(label for label, count in Counter(tree_labels(tree)).items() if count > 1)
    if repeated:
        raise FieldError(where, f"action labels must be unique, {repeated} repeat")
    before = agents_at(previous)
    for agent, path, at in walk_paths(tree):
        old = before.get(path)
        if old is None:
            continue
        for name in KEPT:
            if getattr(agent, name) != getattr(old, name):
                raise FieldError(
                    (*where, *at, name),
                    f"a deploy keeps the {name} of {path!r} ({getattr(old, name)!r})",
                )
        if (agent.window is None) != (old.window is None):
            had = "a window" if old.window is not None else "no window"
            raise FieldError(
                (*where, *at, "window"),
                f"a deploy keeps whether {path!r} has a window (it had {had}): another "
                "conversation-manager type is the conversation_manager_other corruption",
            )


def check_labels(trees: Sequence[tuple[Location, Agent]]) -> None:
    """Refuse a label that names two different actions over the trees of one scenario (each
    given with where it is written)."""
    named: dict[str, Owner] = {}
    for where, tree in trees:
        for label, owner, at in _owners(tree):
            first = named.setdefault(label, owner)
            if first != owner:
                path, action = first
                what = "the gate" if action is None else f"action {action.tool!r}"
                raise FieldError(
                    (*where, *at),
                    f"label {label!r} names {what} of {path!r} in an earlier tree: a label "
                    "names one action in every tree (give a moved or changed action a new label)",
                )

"""What a tool shared by many agent objects needs of the one calling it.

The SDKs' tool decorators (strands' ``@tool``, openai-agents' ``function_tool``) read a
function's signature and docstring into a pydantic input model and a tool spec: a millisecond or
more a tool, paid at every build of a tree (every start and every restart) while an adapter's
tools were closures over its session.  A decorated tool holds no run's state, and one tool
shared by many agents is how a user's module-level tool is used; so an adapter decorates each
protected action and ordinary tool once per process and shares it.  What a call needs of the
agent running it (its path in the tree, the ledger, its action or ordinary tool of that name)
comes from ``CALLERS``, by the agent object the SDK's tool context names: ``bind`` enters each
agent of a build there, and the entry goes with the agent.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from fakes.effects import OrdinaryTool
from fakes.protected import Ledger, ProtectedAction
from scenarios import model as scenario_model


@dataclass(frozen=True)
class Caller:
    """What the shared tools of one agent object need of it."""

    path: str  # the agent's path in the tree
    ledger: Ledger
    actions: Mapping[str, ProtectedAction]  # its protected actions, by tool name
    effects: Mapping[str, OrdinaryTool]  # its ordinary tools, by tool name


class Callers:
    """Every agent object of a built tree, with what its tools need of it, by identity (an SDK's
    agent may be an unhashable dataclass); an entry goes when its agent does."""

    def __init__(self) -> None:
        self._by_id: dict[int, Caller] = {}

    def __getitem__(self, agent: Any) -> Caller:
        return self._by_id[id(agent)]

    def __setitem__(self, agent: Any, caller: Caller) -> None:
        self._by_id[id(agent)] = caller
        weakref.finalize(agent, self._by_id.pop, id(agent), None)


CALLERS: Final = Callers()


def bind(agent: Any, spec: scenario_model.Agent, path: str, ledger: Ledger) -> None:
    """Enter ``agent``, built from ``spec`` at ``path``, for the shared tools it runs."""
    CALLERS[agent] = Caller(
        path=path,
        ledger=ledger,
        actions={
            action.tool: ProtectedAction(action.label, action.questions) for action in spec.actions
        },
        effects={effect.tool: OrdinaryTool(effect.tool) for effect in spec.effects},
    )

"""A tree's protected actions and ordinary tools as the Strands Agents SDK's ``@tool`` tools,
each decorated once per process and shared by every agent that has it, as a user's module-level
tool is.

``@tool`` reads the function's signature and docstring into a pydantic input model and a tool
spec: about a millisecond a tool, paid at every build of a tree (every start and every
restart) while the tools were closures over the session.  A decorated tool holds no run's state
(the SDK's registry never changes one it is handed), so one per tool name and label serves every
agent of every build.  What a call needs of the agent running it (its path in the tree, the
ledger, its action or ordinary tool of that name) comes from ``CALLERS``, by the agent the
SDK's ``ToolContext`` names: ``bind`` enters each agent of a build there, and the entry goes
with the agent.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from fakes.effects import OrdinaryTool
from fakes.protected import CALL_FIELD, Ledger, ProtectedAction
from scenarios import model as scenario_model


@dataclass(frozen=True)
class Caller:
    """What the shared tools of one agent object need of it."""

    path: str  # the agent's path in the tree
    ledger: Ledger
    actions: Mapping[str, ProtectedAction]  # its protected actions, by tool name
    effects: Mapping[str, OrdinaryTool]  # its ordinary tools, by tool name


# every agent object of a built tree, with what its tools need of it (weakly: it goes with it)
CALLERS: Final[weakref.WeakKeyDictionary[Any, Caller]] = weakref.WeakKeyDictionary()


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


@functools.cache
def action_tool(name: str, label: str, *, hook: bool) -> Any:
    """The protected action ``label``'s tool, named ``name``: it asks through
    ``ToolContext.interrupt`` itself, or, with ``hook``, runs what a ``BeforeToolCallEvent``
    hook approved."""
    from strands import ToolContext, tool

    if hook:

        async def run_approved(call: str, tool_context: ToolContext) -> str:
            caller = CALLERS[tool_context.agent]
            return caller.actions[name].run(
                caller.ledger,
                agent=caller.path,
                tool_use_id=tool_context.tool_use["toolUseId"],
                prompt=call,
            )

        handler = run_approved
    else:

        async def run(call: str, tool_context: ToolContext) -> str:
            def ask(question: str, why: Any) -> Any:
                return tool_context.interrupt(question, reason=why)

            caller = CALLERS[tool_context.agent]
            return caller.actions[name].perform(
                ask,
                caller.ledger,
                agent=caller.path,
                tool_use_id=tool_context.tool_use["toolUseId"],
                prompt=call,
            )

        handler = run
    # async, so the SDK runs it on its event loop rather than in a worker thread: concurrent
    # tool calls then interleave the same way on every run (a deterministic history)
    handler.__doc__ = (
        f"Protected action {label}: runs only with a human's approval.\n\n"
        f"Args:\n    {CALL_FIELD}: the prompt of the call it serves."
    )
    # the SDK reads the annotations at run time; this module's are strings (PEP 563)
    handler.__annotations__ = {CALL_FIELD: str, "tool_context": ToolContext, "return": str}
    return tool(name=name, context=True)(handler)


@functools.cache
def effect_tool(name: str) -> Any:
    """The ordinary tool ``name``: a side effect, asks nothing."""
    from strands import ToolContext, tool

    async def run(tool_context: ToolContext) -> str:
        caller = CALLERS[tool_context.agent]
        return caller.effects[name].run(
            caller.ledger, agent=caller.path, tool_use_id=tool_context.tool_use["toolUseId"]
        )

    # async for the same reason as a protected action's (a deterministic history)
    run.__doc__ = f"Ordinary tool {name}: a side effect, asks nothing."
    run.__annotations__ = {"tool_context": ToolContext, "return": str}
    return tool(name=name, context=True)(run)

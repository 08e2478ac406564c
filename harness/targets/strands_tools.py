"""A tree's protected actions and ordinary tools as the Strands Agents SDK's ``@tool`` tools,
each decorated once per process and shared by every agent that has it (``callers``): what a
call needs of the agent running it comes from ``CALLERS``, by ``ToolContext.agent``.
"""

from __future__ import annotations

import functools
from typing import Any

from fakes.effects import read_tally, read_window_calls
from fakes.protected import CALL_FIELD
from harness.targets.callers import CALLERS
from scenarios.tree import tally_key


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
def effect_tool(name: str, tally: bool = False) -> Any:
    """The ordinary tool ``name``: a side effect, asks nothing.  A tally one reads its counter
    from the calling agent's key/value state (``Agent.state``, which the SDK persists with the
    agent: its session, or an ephemeral sub-agent's stored turn) and writes it back plus one,
    and reads the model calls its agent's sliding window counted (``ConversationManager.
    get_state()``, which the SDK persists with the agent too), where it has one."""
    from strands import ToolContext, tool
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    async def run(tool_context: ToolContext) -> str:
        caller = CALLERS[tool_context.agent]
        seen = window_calls = None
        if tally:
            state = tool_context.agent.state
            seen = read_tally(state, tally_key(name))
            state.set(tally_key(name), seen + 1)
            manager = tool_context.agent.conversation_manager
            if isinstance(manager, SlidingWindowConversationManager):
                window_calls = read_window_calls(manager.get_state())
        return caller.effects[name].run(
            caller.ledger,
            agent=caller.path,
            tool_use_id=tool_context.tool_use["toolUseId"],
            seen=seen,
            window_calls=window_calls,
        )

    # async for the same reason as a protected action's (a deterministic history)
    run.__doc__ = f"Ordinary tool {name}: a side effect, asks nothing."
    run.__annotations__ = {"tool_context": ToolContext, "return": str}
    return tool(name=name, context=True)(run)

"""Known-bad variants (``harness.targets.variants`` registers them) whose bug shows after a
deploy: a restart that rebuilds the agents from a changed tree (``scenarios.steps.Deploy``).

Each is the reference ``Agent`` with one mistake an implementation plausibly makes when a parked
call's tool is gone, said in its docstring; everything else is the reference's.
"""

from __future__ import annotations

from harness.reference.agent import Agent, ToolUse
from harness.reference.state import AgentState, Interrupt


class DropGoneCallsAgent(Agent):
    """A parked call whose tool a deploy renamed or removed is run like any call of an unknown
    tool: it ends with an error result, so its question disappears and an answer to it is
    accepted and lost, silently (what a loop that looks tools up by name does when the name is
    gone).  Differs from the reference in ``_asked_by_gone_call`` only: it finds none."""

    def _asked_by_gone_call(self, state: AgentState, use: ToolUse) -> list[Interrupt]:
        return []

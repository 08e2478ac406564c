"""A known-bad variant (``harness.targets.variants`` registers it) whose bug only a restart that
is a new process shows: the parked turns of its sub-agents live in module state.

openai-agents kept its nested agent-as-tool runs in a module-level map keyed by the tool call,
so a resume in the process that asked found the nested run and finished it, while a resume in a
new process found nothing and started the nested agent over, which asked again (issue #2487,
fixed by pull requests #2500 and #2501).  ``ProcessMemoryTool`` is the reference's
agent-as-tool with that flaw: the calls whose turn it parked are remembered in
``PARKED_IN_THIS_PROCESS``, which a rebuild of the tree inside the same process finds again,
and a call not remembered there ignores its stored continuation and starts its sub-agent's turn
over.  So the harness's old
in-process restart, which rebuilt the objects but kept the module, certifies it; only a restart
that forgets what a new process would (``--isolation fork`` or ``process``) catches it.
"""

from __future__ import annotations

from typing import Final

from harness.reference.agent import Agent, AgentResult, ToolOutcome
from harness.reference.agent_as_tool import SubAgentTool
from harness.reference.state import AgentState

# the calls whose sub-agent turn is parked, of every tree built in this process, by the session
# that built it (its work directory) and the agent-as-tool's path: what a module-level cache
# keyed by the call remembers
PARKED_IN_THIS_PROCESS: Final[dict[tuple[str, str], set[str]]] = {}


class ProcessMemoryTool(SubAgentTool):
    """An ephemeral sub-agent resumes only a parked turn this process remembers.

    Differs from the reference in one seam, ``owns``: a call resumes its parked turn (restored
    from its stored continuation, as the reference does) only when this process remembers
    parking it, in its map for the session and the tool, shared by every tree the session
    builds in this process (``remember``); otherwise the stored continuation is ignored and the
    call is a new one, which starts its sub-agent's turn over with the prompt (it asks again;
    the answer is not applied).  A rebuild in the same process remembers; a new process does
    not."""

    remembered: set[str] | None = None

    def remember(self, session: str, path: str) -> None:
        """Remember parked calls in this process's map of ``session``'s tool at ``path``."""
        self.remembered = PARKED_IN_THIS_PROCESS.setdefault((session, path), set())

    def owns(self, caller: AgentState, outer: str) -> bool:
        forgotten = (
            self.live is None
            and self.parked_in_session is None
            and self.remembered is not None
            and outer not in self.remembered
        )
        return not forgotten and super().owns(caller, outer)

    def _outcome(
        self, caller: AgentState, outer: str, sub_agent: Agent, result: AgentResult
    ) -> ToolOutcome:
        outcome = super()._outcome(caller, outer, sub_agent, result)
        if self.remembered is not None:
            if outer in self.parked:  # parked again: remembered here, until it ends
                self.remembered.add(outer)
            else:
                self.remembered.discard(outer)
        return outcome


def forget(session: str) -> None:
    """Drop what this process remembers for ``session`` (a new session: its directory may be a
    reused name)."""
    for key in [key for key in PARKED_IN_THIS_PROCESS if key[0] == session]:
        del PARKED_IN_THIS_PROCESS[key]

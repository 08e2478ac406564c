"""Known-bad variants (``harness.targets.variants`` registers them) whose bug is in a retried
tool call: an after-tool-call hook running a call again (``scenarios.tree.Retry``).

Each is the reference ``Agent`` with one mistake an implementation of retries plausibly makes,
said in its docstring; everything else (naming, routing, the stored turn) is the reference's.
"""

from __future__ import annotations

from typing import Final

from harness.reference.agent import Agent, Interrupted, ToolOutcome, ToolUse
from harness.reference.state import AgentState

HOOK_COUNTS: Final = "retry_hook_counts"  # where the hook keeps its own count


class RetryReusesIdsAgent(Agent):
    """Counts a retried call's attempts where the hook keeps its own count, not in the call's
    identity: every attempt keeps the first attempt's key, so the first attempt's answers are
    replayed to the retry (a denial ends it again unasked, an approval runs the action again
    unasked) and a retried sub-agent call takes the first attempt's answered questions for a
    parked turn of its own.  The bound is kept.  Differs from the reference in ``_retried``
    only."""

    def _retried(self, work: AgentState, use: ToolUse, outcome: ToolOutcome) -> bool:
        policy = self.retries.get(use.name)
        counts = work.interrupt_state.context.get(HOOK_COUNTS, {})
        retried = int(counts.get(use.tool_use_id, 0))
        if policy is None or isinstance(outcome, Interrupted) or not policy.wants(outcome, retried):
            return False
        work.interrupt_state.context[HOOK_COUNTS] = {**counts, use.tool_use_id: retried + 1}
        return True

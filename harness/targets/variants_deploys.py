"""Known-bad variants (``harness.targets.variants`` registers them) whose bug shows when a parked
call cannot resume: after a deploy (a restart that rebuilds the agents from a changed tree,
``scenarios.steps.Deploy``) its tool is gone, or its stored turn is damaged.

Each is the reference ``Agent`` with one mistake an implementation plausibly makes there, said
in its docstring; everything else is the reference's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from harness.reference.agent import Agent, AgentError, ToolUse, _answered
from harness.reference.state import JSON, AgentState, Interrupt


class DropGoneCallsAgent(Agent):
    """A parked call whose tool a deploy renamed or removed is run like any call of an unknown
    tool: it ends with an error result, so its question disappears and an answer to it is
    accepted and lost, silently (what a loop that looks tools up by name does when the name is
    gone).  Differs from the reference in ``_asked_by_gone_call`` only: it finds none."""

    def _asked_by_gone_call(self, state: AgentState, use: ToolUse) -> list[Interrupt]:
        return []


class RunsBeforeItRefusesAgent(Agent):
    """An answer whose calls cannot all resume (a call's tool is gone, its stored turn damaged) is
    refused only once the turn has been carried out as far as it goes: the calls before the one
    that cannot resume have run, their approved actions too, when the error is raised, and the
    questions stay pending, as a loop that checks each parked call as it resumes it would.

    Differs from the reference in ``prepare_resume`` where the answers name only pending
    questions and are not null, and a call refuses them: the answered turn is carried out on a
    copy first (what ran stays run), then the reference's refusal is raised.  The agent's own
    state is left as it was, as the reference leaves it.
    """

    def prepare_resume(self, responses: Mapping[str, JSON]) -> None:
        try:
            super().prepare_resume(responses)
        except AgentError:
            parked = self.state.interrupt_state
            pending = {interrupt.id for interrupt in parked.pending}
            if parked.activated and set(responses) <= pending and None not in responses.values():
                # the call that cannot resume fails the loop: the refusal raised below says why
                with contextlib.suppress(Exception):
                    self._loop(_answered(self.state, responses), resuming=True)
            raise

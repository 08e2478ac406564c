"""Known-bad variants (``harness.targets.variants`` registers them) whose bug is in a gated call:
the question a caller asks before it calls a gated sub-agent (``scenarios.tree.Agent.gate``), and
the sub-agent's own questions asked in that same call, under the same toolUseId.

Each is the reference ``SubAgentTool`` with one mistake an implementation of gates plausibly
makes, said in its docstring; everything else (naming, routing, the stored turn) is the
reference's.
"""

from __future__ import annotations

from dataclasses import replace

from harness.reference.agent import Agent as ReferenceAgent
from harness.reference.agent import AgentResult, ToolCall, ToolOutcome
from harness.reference.agent_as_tool import SubAgentTool
from harness.reference.naming import tool_interrupt_id
from harness.reference.state import JSON, AgentState


def _gate_answer(caller: AgentState, outer: str) -> JSON:
    """The answer the caller recorded for the gate of call ``outer`` (None if none yet): an
    answered ordinary question of the caller under that call's key."""
    prefix = tool_interrupt_id(outer, "")
    for interrupt in caller.interrupt_state.interrupts:
        if interrupt.id.startswith(prefix) and interrupt.response is not None:
            return interrupt.response
    return None


class GateAnswersNestedTool(SubAgentTool):
    """Takes the gate's approval for the answer to the sub-agent's own questions in the same
    call: once the human approved calling it, whatever the sub-agent asks under that toolUseId
    is answered with the same approval (an SDK keying answers by toolUseId makes this mistake).
    Differs from the reference in ``_outcome`` only."""

    def _outcome(
        self, caller: AgentState, outer: str, sub_agent: ReferenceAgent, result: AgentResult
    ) -> ToolOutcome:
        approval = _gate_answer(caller, outer) if self.gate is not None else None
        while approval is not None and result.stop_reason == "interrupt":
            result = sub_agent.resume({interrupt.id: approval for interrupt in result.interrupts})
        return super()._outcome(caller, outer, sub_agent, result)


class GateAskedAgainTool(SubAgentTool):
    """Asks the gate again when a gated call resumes its parked sub-agent, as if the call were
    new: the gate's answer is not kept with the parked turn, so the human is asked "may I call
    it?" a second time and the sub-agent's answer waits behind it.  Differs from the reference in
    ``run`` only, and only for a call that owns a parked turn."""

    def run(self, call: ToolCall) -> ToolOutcome:
        if self.gate is not None and self.owns(call.caller, call.key):
            forgetful = call.caller.copy()
            prefix = tool_interrupt_id(call.key, "")
            forgetful.interrupt_state.interrupts = [
                interrupt
                for interrupt in forgetful.interrupt_state.interrupts
                if not interrupt.id.startswith(prefix)
            ]
            self.gate.refusal(replace(call, caller=forgetful, consulted=[]))  # asks: raises
        return super().run(call)

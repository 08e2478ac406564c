"""Protected actions: leaf tools that must not run without a human's approval.

Each question is raised as an interrupt whose reason carries the action's label, which is how the
harness matches a pending interrupt to an action without trusting any id, and the prompt of the
call it serves (its agent's path and that prompt identify the call: twin calls of one sub-agent
with different prompts ask different questions, and run as different ledger records).  The
action runs only when every question it asks is answered with ``APPROVE``; any other answer runs
nothing.  Every execution is appended to the ledger, which outlives restarts, so "ran exactly
once" is checkable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from fakes.log import AppendOnlyLog

APPROVE: Final = "approve"
DENY: Final = "deny"
QUESTION_NAME: Final = "approval"
# the tool input under which the scripted model tells a protected action the prompt its agent is
# answering (``fakes.model.ToolCall.prompt_field``)
CALL_FIELD: Final = "call"

Ask = Callable[[str, Any], Any]


def question_name(number: int) -> str:
    """The interrupt name of question ``number`` (1-based): a later question is a new one."""
    return QUESTION_NAME if number == 1 else f"{QUESTION_NAME}-{number}"


def reason(label: str, number: int, questions: int, prompt: str | None = None) -> dict[str, Any]:
    """What a question shows the human: the action, which question of how many, and the prompt
    of the call it serves (when the action knows it)."""
    shown: dict[str, Any] = {"action": label, "question": number, "of": questions}
    if prompt is not None:
        shown["prompt"] = prompt
    return shown


def prompt_of(tool_input: Any) -> str | None:
    """The prompt a protected action's input says it serves, or None."""
    if isinstance(tool_input, dict) and isinstance(tool_input.get(CALL_FIELD), str):
        return str(tool_input[CALL_FIELD])
    return None


def label_of(interrupt_reason: Any) -> str | None:
    """The action label carried by an interrupt's reason, or None if it is not ours."""
    if isinstance(interrupt_reason, dict) and isinstance(interrupt_reason.get("action"), str):
        return str(interrupt_reason["action"])
    return None


class Ledger:
    """Which protected actions ran, in order, as recorded by the actions themselves."""

    def __init__(self, log: AppendOnlyLog) -> None:
        self.log = log

    def record(self, label: str, agent: str, tool_use_id: str, prompt: str | None = None) -> None:
        """One execution: the action, the call it served (its agent's path and the prompt it
        was given, when known) and the tool call's local id."""
        entry = {"action": label, "agent": agent, "tool_use_id": tool_use_id}
        if prompt is not None:
            entry["prompt"] = prompt
        self.log.append(entry)

    def executions(self, start: int = 0) -> list[dict[str, Any]]:
        """The executions so far, from the ``start``-th on."""
        return self.log.records(start)


@dataclass(frozen=True)
class ProtectedAction:
    label: str
    questions: int = 1

    @property
    def refusal(self) -> str:
        """What the action returns when it is not approved."""
        return f"{self.label}: refused"

    @property
    def done(self) -> str:
        """What the action returns once it ran."""
        return f"{self.label}: done"

    def approved(self, ask: Ask, prompt: str | None = None) -> bool:
        """Ask every question through ``ask`` (which raises to interrupt) until one is answered
        with anything but ``APPROVE``; whether none was.  A before-tool-call hook asks this way."""
        return all(
            ask(question_name(number), reason(self.label, number, self.questions, prompt))
            == APPROVE
            for number in range(1, self.questions + 1)
        )

    def run(
        self, ledger: Ledger, *, agent: str, tool_use_id: str, prompt: str | None = None
    ) -> str:
        """Run the action, already approved: record it in the ledger."""
        ledger.record(self.label, agent, tool_use_id, prompt)
        return self.done

    def perform(
        self,
        ask: Ask,
        ledger: Ledger,
        *,
        agent: str,
        tool_use_id: str,
        prompt: str | None = None,
    ) -> str:
        """Ask every question through ``ask`` (which raises to interrupt), then run or refuse."""
        if not self.approved(ask, prompt):
            return self.refusal
        return self.run(ledger, agent=agent, tool_use_id=tool_use_id, prompt=prompt)

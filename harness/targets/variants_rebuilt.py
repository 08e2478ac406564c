"""Known-bad variants whose bug is in what a tree rebuilt from the store is built with
(``harness.targets.variants``: a ``VariantTree`` with ``persisted`` set): the same tree as the
reference's until a restart, so only what follows one differs from the run without restarts.

* ``sending_twice``: a model client that sends each request twice and keeps the second reply;
* ``dry_run``: protected actions asked and answered, never carried out;
* ``denied_at_once``: protected actions whose new questions are denied where they are asked;
* ``unheard``: protected actions that never hear their answers, so each asks again.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final

from fakes.protected import DENY, Ledger
from harness.reference.agent import InterruptRaised, Model, Tool, ToolCall, ToolOutcome, ToolUse
from harness.reference.naming import tool_interrupt_id
from harness.reference.state import JSON, AgentState, Interrupt, Message
from harness.reference.tree import ActionSpec, ActionToolFactory, ModelFactory
from harness.targets.reference import ActionTool


def sending_twice(model_for: ModelFactory, when: Callable[[], bool]) -> ModelFactory:
    """``model_for`` whose every model sends each request twice and keeps the second reply
    while ``when()`` holds (``answers_send_requests_twice_when_rebuilt``).  The first goes with
    a copy of the provider state, which its reply updates and nothing keeps: the provider takes
    the second as the same request, so every turn is the one the scenario scripts, billed
    twice."""

    def built(path: str) -> Model:
        model = model_for(path)

        def send(messages: list[Message], model_state: dict[str, Any]) -> Message:
            if when():
                model(list(messages), copy.deepcopy(model_state))  # its reply is dropped
            return model(messages, model_state)

        return send

    return built


class DryRun(Ledger):
    """A ledger that records nothing: the actions of a dry run (``actions_dry_run_when_rebuilt``)
    answer that they are done, and nothing is carried out."""

    def record(self, label: str, agent: str, tool_use_id: str, prompt: str | None = None) -> None:
        return None


def dry_run(action_tool: ActionToolFactory) -> ActionToolFactory:
    """``action_tool`` whose protected actions are built over a ``DryRun``: still asked, still
    approved or refused, never carried out."""

    def built(action: ActionSpec, path: str) -> Tool:
        tool = action_tool(action, path)
        if isinstance(tool, ActionTool):
            return replace(tool, ledger=DryRun(tool.ledger.log))
        return tool

    return built


class DeniedWhereAsked(ToolCall):
    """A tool call whose questions not answered yet are answered with a denial where they are
    asked (``questions_denied_when_rebuilt``): none reaches the human; one answered before keeps
    its answer."""

    def interrupt(self, name: str, reason: JSON) -> JSON:
        try:
            return super().interrupt(name, reason)
        except InterruptRaised:
            return DENY  # a human channel would have been asked here


class Unheard(ToolCall):
    """A tool call that never hears the answers recorded for its questions
    (``answers_unheard_when_rebuilt``): each is asked again, under the same id."""

    def interrupt(self, name: str, reason: JSON) -> JSON:
        raise InterruptRaised(
            Interrupt(id=tool_interrupt_id(self.key, name), name=name, reason=reason)
        )


@dataclass
class CalledAs:
    """An action tool whose every call is made as ``call`` (a ``ToolCall`` kind) makes it."""

    name: str
    tool: ActionTool
    call: type[ToolCall]

    def prepare(self, caller: AgentState, use: ToolUse) -> None:
        return self.tool.prepare(caller, use)

    def run(self, call: ToolCall) -> ToolOutcome:
        return self.tool.run(self.call(call.use, call.caller, call.emit, call.consulted))


def _called_as(call: type[ToolCall]) -> Callable[[ActionToolFactory], ActionToolFactory]:
    """What makes ``action_tool``'s protected actions each a ``CalledAs`` ``call``."""

    def wrap(action_tool: ActionToolFactory) -> ActionToolFactory:
        def built(action: ActionSpec, path: str) -> Tool:
            tool = action_tool(action, path)
            return CalledAs(tool.name, tool, call) if isinstance(tool, ActionTool) else tool

        return built

    return wrap


# ``action_tool`` whose protected actions deny each new question where it is asked
denied_at_once: Final = _called_as(DeniedWhereAsked)
# ``action_tool`` whose protected actions never hear their answers
unheard: Final = _called_as(Unheard)

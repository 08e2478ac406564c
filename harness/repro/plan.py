"""What a reproducer replays, as plain data: the agent tree, the steps and, per step, what must
happen, all derived from the scenario alone (the oracle), never from an SDK's behaviour.

A reproducer is a standalone script: it cannot import the harness, so everything it needs travels
as literals (lists, dicts, strings) that each SDK's template (``harness.repro.templates``) embeds.
Scenario features a template cannot express are named, so the command refuses the file in one
line instead of writing a script that replays something else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from scenarios.model import Agent, Answer, Resend, Restart, Run, Scenario
from scenarios.oracle import expectations
from scenarios.tree import Call

DEFAULT_PROMPT: Final = Call.model_fields["prompt"].default  # what a call asks, unless it says

# what the templates express: protected actions that ask through the tool's own interrupt,
# sub-agents (ephemeral or preserve_context with a session, called by their agent's name or a
# tool name of their own), run/answer/resume/resend/restart steps; what they do not, named here
TREE_FEATURES: Final[dict[str, Callable[[Agent], bool]]] = {
    "hook": lambda agent: any(action.hook for action in agent.actions),
    "gate": lambda agent: agent.gate is not None,
    "retry": lambda agent: (
        agent.retry is not None or any(action.retry is not None for action in agent.actions)
    ),
    "window": lambda agent: agent.window is not None,
    "state": lambda agent: bool(agent.state),
    "stateful_provider": lambda agent: agent.stateful_provider,
    "effects": lambda agent: bool(agent.effects),
    "session_store: false": lambda agent: agent.preserve_context and not agent.session_store,
}


class NotExpressible(ValueError):
    """The scenario uses something no reproducer template expresses; the message says what."""


@dataclass(frozen=True)
class Plan:
    """One scenario as a reproducer replays it.

    ``tree``: each agent as ``{"name", "agent", "preserve", "actions": {tool: label},
    "questions": {label: n}, "subs": [...], "turns": [[[tool, id, prompt], ...], ..., answer]}``
    (``name`` what its caller calls it by, ``agent`` its own name where that differs (a
    ``tool_name``); the tool-calling turns, then the answer text; by prompt, ``"*"`` for any
    other, where the agent's script depends on it; a call's prompt, ``agent``, ``preserve``,
    ``actions``, ``questions`` (an action asking more than once) and ``subs`` only where they
    say something).  ``steps``: ``["run", prompt]``, ``["answer", [[label, response], ...],
    [[id, response], ...], [[label, prompt, response], ...]]`` (its empty lists at its end left
    out), ``["resume", response]`` (one answer naming no question), ``["resend", index]`` or
    ``["restart"]``.
    ``expected``: per step (None for a restart) ``[pending ("label#question"), labels that
    run, final answer, error ("required" | "forbidden" | "allowed")]``.
    """

    name: str
    symptom: str
    tree: dict[str, Any]
    steps: list[list[Any]]
    expected: list[list[Any] | None]


def plan_of(
    name: str,
    scenario: Scenario,
    symptom: str,
    cannot: Mapping[str, Callable[[Agent], bool]] | None = None,
) -> Plan:
    """The plan of ``scenario``; raises NotExpressible naming what no template expresses (or
    what the SDK ``cannot``)."""
    used = sorted(
        feature
        for feature, has in {**TREE_FEATURES, **(cannot or {})}.items()
        for tree in _trees(scenario)
        for agent, _ in tree.walk()
        if has(agent)
    )
    steps: list[list[Any]] = []
    for step in scenario.steps:
        if isinstance(step, Run):
            steps.append(["run", step.run])
        elif isinstance(step, Answer) and step.resume is not None:
            steps.append(["resume", step.resume])  # one answer keyed by no question
        elif isinstance(step, Answer):
            given: list[Any] = [
                [[label, response] for label, response in step.answer.items()],
                [[key, response] for key, response in step.answer_ids.items()],
                [
                    [label, prompt, response]
                    for label, by_prompt in step.answer_calls.items()
                    for prompt, response in by_prompt.items()
                ],
            ]
            while given and not given[-1]:
                given.pop()
            steps.append(["answer", *given])
        elif isinstance(step, Resend):
            steps.append(["resend", step.resend])
        elif isinstance(step, Restart) and step.tree is None:
            steps.append(["restart"])
        else:
            used.append("deploy" if isinstance(step, Restart) else type(step).__name__.lower())
    if used:
        raise NotExpressible(f"uses {', '.join(sorted(set(used)))}")
    expected: list[list[Any] | None] = [
        None
        if isinstance(step, Restart)
        else [
            [f"{label}#{number}" for label, number in want.pending],
            list(want.executions),
            want.final_answer,
            want.error,
        ]
        for step, want in zip(scenario.steps, expectations(scenario), strict=True)
    ]
    return Plan(name, symptom, agent_data(scenario.tree), steps, expected)


def _trees(scenario: Scenario) -> list[Agent]:
    return [tree for _, tree in scenario.trees()]


def agent_data(agent: Agent) -> dict[str, Any]:
    """One agent (and its sub-agents) as the literal a template embeds."""

    def played(turns: Any, answer: str) -> list[Any]:
        calls = [[[call.tool, call.id, *_asked(call)] for call in turn] for turn in turns]
        return [*calls, answer]

    turns: Any = played(agent.turns, agent.answer)
    if agent.prompts:
        turns = {p: played(agent.turns_for(p), agent.answer_for(p)) for p in agent.prompts}
        turns["*"] = played(agent.turns, agent.answer)
    data: dict[str, Any] = {"name": agent.tool}
    if agent.tool_name is not None:
        data["agent"] = agent.name
    if agent.preserve_context:
        data["preserve"] = True
    if agent.actions:
        data["actions"] = {action.tool: action.label for action in agent.actions}
    if asks := {action.label: action.questions for action in agent.actions if action.questions > 1}:
        data["questions"] = asks
    if agent.sub_agents:
        data["subs"] = [agent_data(sub) for sub in agent.sub_agents]
    return data | {"turns": turns}


def _asked(call: Call) -> list[str]:
    """A call's prompt, where it is not the default one (the script supplies that)."""
    return [] if call.prompt == DEFAULT_PROMPT else [call.prompt]


def symptom_of(scenario: Scenario) -> str:
    """What the scenario says must happen, on one line (its description)."""
    return " ".join(scenario.description.split())

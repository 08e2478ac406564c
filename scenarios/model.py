"""The scenario data model: an agent tree, its scripted models, and the human's steps.

A scenario is plain data so that any implementation can run it through a small adapter (as
JSON-Schema-Test-Suite does for validators).  Validation is pydantic's: unknown fields, wrong
types and impossible trees are refused with the path of the offending field.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, Final, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from scenarios.corruptions import (
    CORRUPTION_CAPABILITY,
    CORRUPTIONS,
    DESCRIPTIONS,
    Corruption,
    FormatSpecificCorruption,
    GenericCorruption,
)
from scenarios.deploys import check_deploy, check_labels, tree_labels
from scenarios.fields import NAME_PATTERN, FieldError, Location, Name, Strict, field_path
from scenarios.steps import (
    STEP_KEYS,
    Answer,
    Corrupt,
    Deploy,
    Repair,
    Resend,
    Response,
    Restart,
    Run,
    Step,
    TaggedStep,
)
from scenarios.tree import Action, Agent, Call, Effect, PromptScript, Retry, Turns, Window

__all__ = [
    "CORRUPTIONS",
    "CORRUPTION_CAPABILITY",
    "DESCRIPTIONS",
    "NAME_PATTERN",
    "SCENARIO_CLASSES",
    "STEP_KEYS",
    "Action",
    "Agent",
    "Answer",
    "Call",
    "Corrupt",
    "Corruption",
    "Deploy",
    "Effect",
    "Expect",
    "FieldError",
    "FormatSpecificCorruption",
    "GenericCorruption",
    "Location",
    "Name",
    "PromptScript",
    "Repair",
    "Resend",
    "Response",
    "Restart",
    "Retry",
    "Run",
    "Scenario",
    "ScenarioClass",
    "Step",
    "Strict",
    "TaggedStep",
    "Turns",
    "Window",
    "field_path",
]


class Expect(Strict):
    """Explicit expectations, checked on top of those derived from the scenario."""

    executions: dict[Name, int] | None = Field(
        None, description="Action label to how often it runs over the whole scenario."
    )
    pending: tuple[Name, ...] | None = Field(
        None, description="Labels of the actions still pending after the last step."
    )
    final_answer: str | None = Field(None, description="The root's last final answer.")
    errors: tuple[Annotated[int, Field(ge=0)], ...] | None = Field(
        None,
        description="Steps (0-based indices) that must end in a loud error: raised, or logged "
        "at ERROR level.",
    )


ScenarioClass = Literal[
    "colliding-ids",
    "partial-answers",
    "deep-nesting",
    "restart-anywhere",
    "stateful-model",
    "sliding-window",
    "schema-skew",
    "re-interrupt",
    "mixed",
    "shared-session",
    "preserve-context-no-store",
    "event-payload",
    "twin-calls",
    "unknown-answers",
    "gated-agent-call",
    "side-effects",
    "deploy-skew",
    "retries",
    "adversarial-ids",
]
# what each class a file declares means (the file's ``classes``: what it sets out to exercise)
SCENARIO_CLASSES: Final[dict[str, str]] = {
    "colliding-ids": "two sub-agent calls raise the same local interrupt id (same tool, same "
    "toolUseId)",
    "partial-answers": "the human answers some of the pending questions and leaves the others",
    "deep-nesting": "a protected action three or more levels down the tree",
    "restart-anywhere": "restarts between the steps; the run must look like the restart-free run",
    "stateful-model": "a sub-agent's model needs the previous response id from its model state "
    "after a resume",
    "sliding-window": "a sliding-window conversation manager whose call count must survive a "
    "restore",
    "schema-skew": "a stored turn in another schema version or shape, or made for another "
    "conversation-manager type",
    "re-interrupt": "a resumed call asks another question",
    "mixed": "ordinary and nested questions in one orchestrator turn",
    "shared-session": "a preserve_context sub-agent with a parked turn is called by a second "
    "caller",
    "preserve-context-no-store": "a preserve_context sub-agent without a session store, then a "
    "restart",
    "event-payload": "nested questions whose stored turn must not show in public events",
    "twin-calls": "one sub-agent called twice in one orchestrator turn",
    "unknown-answers": "an answer names no pending question: an id nothing shows, or one "
    "answered already",
    "gated-agent-call": "a caller asks before calling a gated sub-agent, which then asks its own "
    "question in the same call",
    "side-effects": "a sub-agent runs an ordinary tool with a side effect, then asks: the tool "
    "must not run again when it resumes",
    "deploy-skew": "a restart deploys a changed tree between a question and its answer: the "
    "answer reaches its call where it still exists, else it is refused loudly and stays pending",
    "retries": "a hook retries a tool call (an action's, or a sub-agent's) after its result or "
    "its error: every attempt is a new call that asks again under ids of its own",
    "adversarial-ids": "toolUseIds a naming scheme may confuse: prefixes of each other across a "
    "separator, percent-escapes of each other, NFC/NFD twins, long ids alike but at their end",
}


def _bare_steps_in_schema(schema: dict[str, Any]) -> None:
    """A step may be written as the bare word ``restart`` or ``repair`` (see ``_bare_restart``)."""
    steps = schema["properties"]["steps"]
    steps["items"] = {"anyOf": [steps["items"], {"enum": ["restart", "repair"]}]}


class Scenario(Strict):
    """One scenario file: an agent tree, the human's steps, and where the case comes from.

    Beyond each field's own type, a scenario is refused when:

    - two actions anywhere in the tree share a label (a gate's label counts as an action's),
      or the root has a gate, a retry or a tool_name;
    - the first step other than a restart is not a run;
    - an answer names a label no action (or gate) has;
    - an `answer_calls` entry names a label no action has (a gate is answered by label only),
      a label the same step also answers by label, no prompt, or a prompt no call that can ask
      that action is given;
    - a repair has no corruption before it;
    - a resend names a step that is not an earlier answer, or one without an id (`resume`);
    - an agent's `prompts` names a prompt it is never given (no run step gives it to the
      root, no call of its parent gives it to a sub-agent);
    - a corruption's `which` asks for more stored continuations than the steps so far leave
      (at least two for `foreign`);
    - `expect.errors` names a step that does not exist, or one that must not fail (a run or an
      answer that can go ahead, a restart);
    - a deploy's tree (a restart's `tree`) renames the root, changes a gate, a session store, a
      provider's kind or whether an agent has a window, for an agent at a path the tree before
      it has too; or a label names different actions in two trees (each label names one
      action, of the agent at one path, in every tree).
    - a step talks to root session `b` and the scenario has a corruption, a repair, a deploy,
      an `expect` block, or a preserve_context sub-agent called by the root (one live
      sub-agent's history would be both sessions'); or session `b`'s first step other than a
      restart is not a run; or a resend names an answer of the other session; or a restart
      names a session in a scenario without session `b`.

    The labels and prompts an answer may name are those of every tree the scenario deploys.
    """

    model_config = ConfigDict(json_schema_extra=_bare_steps_in_schema)

    description: str = Field(description="What happens and what must happen, in sentences.")
    source: str = Field(
        description="Where the case comes from: a public pull request or issue by repository "
        "and number, or the generated scenario it was shrunk from."
    )
    classes: tuple[ScenarioClass, ...] = Field(
        (), description="Which scenario classes it exercises."
    )
    tree: Agent = Field(description="The orchestrator, with its sub-agents inside.")
    steps: tuple[TaggedStep, ...] = Field(
        description="What the human does, in order; the first step other than a restart is a run."
    )
    expect: Expect | None = Field(
        None, description="Explicit expectations on top of those derived from the steps."
    )

    @field_validator("steps", mode="before")
    @classmethod
    def _bare_restart(cls, steps: Any) -> Any:
        """``- restart`` in a file is short for ``- restart: true`` (and ``- repair`` likewise)."""
        if isinstance(steps, list):
            return [{step: True} if step in ("restart", "repair") else step for step in steps]
        return steps

    @model_validator(mode="after")
    def _labels_and_steps(self) -> Scenario:
        if self.tree.gate is not None:
            raise FieldError(
                ("tree", "gate"), "the root has no caller to ask: only a sub-agent can be gated"
            )
        if self.tree.tool_name is not None:
            raise FieldError(
                ("tree", "tool_name"), "the root has no caller to call it: only a sub-agent has one"
            )
        if self.tree.retry is not None:
            raise FieldError(
                ("tree", "retry"),
                "the root has no caller to retry it: a retry goes on a sub-agent or an action",
            )
        labels = Counter(self.labels)
        repeated = sorted(label for label, count in labels.items() if count > 1)
        if repeated:
            raise FieldError(("tree",), f"action labels must be unique, {repeated} repeat")
        runs = {step.run for step in self.steps if isinstance(step, Run)}
        _prompts_given(self.tree, runs, ("tree",))
        previous = self.tree
        for where, tree in self.trees()[1:]:
            check_deploy(previous, tree, where)
            _prompts_given(tree, runs, where)
            previous = tree
        check_labels(self.trees())
        every_label = {label for _, tree in self.trees() for label in tree_labels(tree)}
        first = next((step for step in self.steps if not isinstance(step, Restart)), None)
        if not isinstance(first, Run):
            raise FieldError(("steps",), "the first step other than a restart must be a run")
        asked_by: dict[str, set[str]] = {}
        for _, tree in self.trees():
            for label, prompts in _prompts_asking(tree, runs).items():
                asked_by.setdefault(label, set()).update(prompts)
        for index, step in enumerate(self.steps):
            if isinstance(step, Answer):
                unknown = sorted(set(step.answer) - every_label)
                if unknown:
                    raise FieldError(("steps", index, "answer"), f"no action labelled {unknown}")
                _calls_answered(step, asked_by, ("steps", index, "answer_calls"))
            if isinstance(step, Repair) and not any(
                isinstance(earlier, Corrupt) for earlier in self.steps[:index]
            ):
                raise FieldError(("steps", index, "repair"), "no corruption before it to repair")
            if isinstance(step, Resend) and not (
                step.resend < index and isinstance(self.steps[step.resend], Answer)
            ):
                raise FieldError(
                    ("steps", index, "resend"), f"step {step.resend} is not an earlier answer"
                )
            if isinstance(step, Resend) and _resumes(self.steps[step.resend]):
                raise FieldError(
                    ("steps", index, "resend"),
                    f"step {step.resend} is an answer without an id: give it again as a step",
                )
        if self.two_sessions:
            _two_sessions_allowed(self)
        else:
            for index, step in enumerate(self.steps):
                if isinstance(step, Restart) and step.session is not None:
                    raise FieldError(
                        ("steps", index, "session"),
                        "a restart names a root session only where a step talks to session b",
                    )
        for position, index in enumerate((self.expect and self.expect.errors) or ()):
            if index >= len(self.steps):
                raise FieldError(
                    ("expect", "errors", position),
                    f"no step {index}: the steps are numbered 0 to {len(self.steps) - 1}",
                )
        return self

    @property
    def two_sessions(self) -> bool:
        """Whether a step talks to root session `b`: two users of one deployment."""
        return any(getattr(step, "session", "a") == "b" for step in self.steps)

    @property
    def labels(self) -> list[str]:
        """Every label of the tree the scenario starts with: each action's, then each gate's."""
        return tree_labels(self.tree)

    def trees(self) -> list[tuple[tuple[str | int, ...], Agent]]:
        """The tree it starts with, then each tree a restart deploys, with where each is
        written."""
        found: list[tuple[tuple[str | int, ...], Agent]] = [(("tree",), self.tree)]
        for index, step in enumerate(self.steps):
            if isinstance(step, Restart) and step.tree is not None:
                found.append((("steps", index, "restart", "tree"), step.tree))
        return found

    def depth(self) -> int:
        return max(depth for _, depth in self.tree.walk())

    def without_restarts(self) -> Scenario:
        """The restart-free control: the same steps with every restart removed, re-numbered."""
        kept: list[Step] = []
        renumber: dict[int, int] = {}
        for index, step in enumerate(self.steps):
            if isinstance(step, Restart):
                continue
            renumber[index] = len(kept)
            if isinstance(step, Resend):
                step = step.model_copy(update={"resend": renumber[step.resend]})
            kept.append(step)
        update: dict[str, Any] = {"steps": tuple(kept)}
        if self.expect is not None and self.expect.errors is not None:
            errors = tuple(renumber[index] for index in self.expect.errors if index in renumber)
            update["expect"] = self.expect.model_copy(update={"errors": errors})
        return self.model_copy(update=update)


def _two_sessions_allowed(scenario: Scenario) -> None:
    """Refuse what a scenario with two root sessions may not hold (see ``Scenario``)."""
    if scenario.expect is not None:
        raise FieldError(("expect",), "a scenario with two root sessions has no expect block")
    for position, sub in enumerate(scenario.tree.sub_agents):
        if sub.preserve_context:
            raise FieldError(
                ("tree", "sub_agents", position, "preserve_context"),
                "with two root sessions the root's sub-agents are ephemeral: one live "
                "sub-agent's history would be both sessions'",
            )
    first_of_b = True
    for index, step in enumerate(scenario.steps):
        if isinstance(step, Corrupt | Repair) or (isinstance(step, Restart) and step.tree):
            kind = "a deploy" if isinstance(step, Restart) else type(step).__name__.lower()
            raise FieldError(("steps", index), f"{kind} is not allowed with two root sessions")
        session = getattr(step, "session", None) or "a"
        if isinstance(step, Restart):
            continue
        if session == "b" and first_of_b and not isinstance(step, Run):
            raise FieldError(
                ("steps", index), "session b's first step other than a restart must be a run"
            )
        first_of_b = first_of_b and session != "b"
        if isinstance(step, Resend):
            answered = getattr(scenario.steps[step.resend], "session", "a")
            if answered != session:
                raise FieldError(
                    ("steps", index, "session"),
                    f"step {step.resend} is an answer of session {answered}, not {session}",
                )


def _resumes(step: Step) -> bool:
    """Whether ``step`` is an answer without an id (``resume``)."""
    return isinstance(step, Answer) and step.resume is not None


def _prompts_given(agent: Agent, given: set[str], where: tuple[str | int, ...]) -> None:
    """Refuse a key of ``agent.prompts`` that is not among the prompts it is ``given``; then the
    same for its sub-agents, each given the prompts its calls carry in any of ``agent``'s
    turns."""
    for prompt in agent.prompts:
        if prompt not in given:
            raise FieldError(
                (*where, "prompts", prompt),
                f"{agent.name!r} is never given this prompt; it is given {sorted(given)}",
            )
    for position, sub in enumerate(agent.sub_agents):
        _prompts_given(sub, _prompts_of_calls(agent, sub), (*where, "sub_agents", position))


def _prompts_of_calls(agent: Agent, sub: Agent) -> set[str]:
    """The prompts ``agent``'s turns give ``sub`` when they call it."""
    return {
        call.prompt
        for _, turns in agent.scripts()
        for turn in turns
        for call in turn
        if call.tool == sub.tool
    }


def _prompts_asking(agent: Agent, given: set[str]) -> dict[str, set[str]]:
    """For each action label, the prompts of the calls that can ask it: those its agent is given
    (the runs for the root, the calls' prompts in its parent's turns for a sub-agent)."""
    asking = {action.label: set(given) for action in agent.actions}
    for sub in agent.sub_agents:
        asking |= _prompts_asking(sub, _prompts_of_calls(agent, sub))
    return asking


def _calls_answered(
    step: Answer, asked_by: dict[str, set[str]], where: tuple[str | int, ...]
) -> None:
    """Refuse an ``answer_calls`` entry naming no action, a label also answered by label, or a
    prompt no call of its action's agent is given."""
    for label, by_prompt in step.answer_calls.items():
        if label not in asked_by:
            raise FieldError((*where, label), f"no action labelled {label!r}")
        if label in step.answer:
            raise FieldError(
                (*where, label), "answered by label in the same step too: give one or the other"
            )
        if not by_prompt:
            raise FieldError((*where, label), "expected at least one prompt to answer")
        for prompt in by_prompt:
            if prompt not in asked_by[label]:
                raise FieldError(
                    (*where, label, prompt),
                    f"no call that can ask {label!r} is given this prompt; "
                    f"they are given {sorted(asked_by[label])}",
                )

"""The scenario data model: an agent tree, its scripted models, and the human's steps.

A scenario is plain data so that any implementation can run it through a small adapter (as
JSON-Schema-Test-Suite does for validators).  Validation is pydantic's: unknown fields, wrong
types and impossible trees are refused with the path of the offending field.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from fakes.corruption import Corruption

NAME_PATTERN: Final = r"^[A-Za-z0-9_\-]+$"
Name = Annotated[str, Field(min_length=1, pattern=NAME_PATTERN)]
Response = Literal["approve", "deny"]

Location = tuple[str | int, ...]  # a field inside a scenario: ("steps", 1, "answer")


def field_path(location: Location) -> str:
    """How every error names a field: ``steps[1].answer``, ``tree.sub_agents[0].window.size``,
    ``answer_ids["v1:x"]`` (a key that is not a plain name is quoted); empty for the top."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.fullmatch(NAME_PATTERN, part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text


class FieldError(ValueError):
    """A problem a validator found in one field below the model it validates.  ``location`` is
    relative to that model, so the error line names the field itself, not the model around it."""

    def __init__(self, location: Location, problem: str) -> None:
        super().__init__(problem)
        self.location = location
        self.problem = problem

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.location, self.problem))


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Window(Strict):
    """A sliding-window conversation manager: keep ``size`` messages, trim every ``per_turn``
    model calls."""

    size: Annotated[int, Field(ge=2)]
    per_turn: Annotated[int, Field(ge=1)] = 1


class Action(Strict):
    """A protected action: tool ``tool`` of its agent, known to the human as ``label``."""

    tool: Name
    label: Name
    questions: Annotated[int, Field(ge=1, le=3)] = 1
    hook: bool = False  # raised by a before-tool-call hook instead of the tool itself


class Call(Strict):
    """One tool call a model issues: which tool, under which toolUseId (may collide on purpose)."""

    tool: Name
    id: str
    prompt: str = "do your part"  # what a sub-agent is asked; ignored for actions


class Agent(Strict):
    name: Name
    preserve_context: bool = False  # for a sub-agent: keep its history across calls
    session_store: bool = True  # for a preserve_context sub-agent: persisted across restarts
    stateful_provider: bool = False
    window: Window | None = None
    state: dict[str, Any] = Field(default_factory=dict)  # initial key/value state
    actions: tuple[Action, ...] = ()
    sub_agents: tuple[Agent, ...] = ()
    turns: tuple[tuple[Call, ...], ...] = ()  # per prompt: the tool-calling turns, in order
    answer: str = "done"  # the text the model answers with after its last tool-calling turn

    @model_validator(mode="after")
    def _calls_name_tools(self) -> Agent:
        tools = [action.tool for action in self.actions] + [sub.name for sub in self.sub_agents]
        duplicates = sorted(name for name, count in Counter(tools).items() if count > 1)
        if duplicates:
            raise FieldError((), f"agent {self.name!r} has two tools named {duplicates}")
        for index, turn in enumerate(self.turns):
            for position, call in enumerate(turn):
                if call.tool not in tools:
                    raise FieldError(
                        ("turns", index, position, "tool"),
                        f"calls {call.tool!r}, which is not one of {self.name!r}'s tools "
                        f"{sorted(tools)}",
                    )
            ids = Counter(call.id for call in turn)
            repeated = sorted(tool_use_id for tool_use_id, count in ids.items() if count > 1)
            if repeated:
                raise FieldError(("turns", index), f"repeats toolUseId {repeated} in one message")
        return self

    def walk(self, depth: int = 1) -> Iterator[tuple[Agent, int]]:
        """Every agent of the tree with its depth (the root is depth 1)."""
        yield self, depth
        for sub in self.sub_agents:
            yield from sub.walk(depth + 1)


class Run(Strict):
    run: str


class Answer(Strict):
    """Answer every pending question of these actions (by label), or these root-visible ids."""

    answer: dict[Name, Response] = Field(default_factory=dict)
    answer_ids: dict[str, Response] = Field(default_factory=dict)


class Restart(Strict):
    restart: Literal[True]


class Corrupt(Strict):
    """Damage the ``which``-th stored continuation, then restart (only a reload reads it).
    ``pick`` chooses the node (or byte) a fuzzing damage hits; the others ignore it."""

    corrupt: Corruption
    which: Annotated[int, Field(ge=0)] = 0
    pick: Annotated[int, Field(ge=0)] = 0


class Repair(Strict):
    """Put back what the corruption damaged (as restoring a backup would), then restart."""

    repair: Literal[True]


class Resend(Strict):
    """Send again exactly the answer given at step ``resend`` (0-based)."""

    resend: Annotated[int, Field(ge=0)]


Step = Run | Answer | Restart | Corrupt | Repair | Resend
STEP_KEYS: Final = {
    "run": "Run",
    "answer": "Answer",
    "answer_ids": "Answer",
    "restart": "Restart",
    "corrupt": "Corrupt",
    "repair": "Repair",
    "resend": "Resend",
}


def _step_kind(value: Any) -> str | None:
    """Which kind of step ``value`` is, by the first key that names one (so a malformed step is
    reported against its own kind, not against every kind it is not)."""
    if isinstance(value, BaseModel):
        return type(value).__name__
    if isinstance(value, dict):
        return next((STEP_KEYS[key] for key in value if key in STEP_KEYS), None)
    return None


TaggedStep = Annotated[
    Annotated[Run, Tag("Run")]
    | Annotated[Answer, Tag("Answer")]
    | Annotated[Restart, Tag("Restart")]
    | Annotated[Corrupt, Tag("Corrupt")]
    | Annotated[Repair, Tag("Repair")]
    | Annotated[Resend, Tag("Resend")],
    Discriminator(
        _step_kind,
        custom_error_type="step_kind",
        custom_error_message="a step is one of run, answer, answer_ids, restart, corrupt, "
        "repair, resend",
    ),
]


class Expect(Strict):
    """Explicit expectations, checked on top of those derived from the scenario."""

    executions: dict[Name, int] | None = None
    pending: tuple[Name, ...] | None = None
    final_answer: str | None = None


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
]


class Scenario(Strict):
    description: str
    source: str  # where the bug was seen (a review thread, an issue, a counterexample)
    classes: tuple[ScenarioClass, ...] = ()
    tree: Agent
    steps: tuple[TaggedStep, ...]
    expect: Expect | None = None

    @field_validator("steps", mode="before")
    @classmethod
    def _bare_restart(cls, steps: Any) -> Any:
        """``- restart`` in a file is short for ``- restart: true`` (and ``- repair`` likewise)."""
        if isinstance(steps, list):
            return [{step: True} if step in ("restart", "repair") else step for step in steps]
        return steps

    @model_validator(mode="after")
    def _labels_and_steps(self) -> Scenario:
        labels = Counter(action.label for agent, _ in self.tree.walk() for action in agent.actions)
        repeated = sorted(label for label, count in labels.items() if count > 1)
        if repeated:
            raise FieldError(("tree",), f"action labels must be unique, {repeated} repeat")
        first = next((step for step in self.steps if not isinstance(step, Restart)), None)
        if not isinstance(first, Run):
            raise FieldError(("steps",), "the first step other than a restart must be a run")
        for index, step in enumerate(self.steps):
            if isinstance(step, Answer):
                unknown = sorted(set(step.answer) - set(labels))
                if unknown:
                    raise FieldError(("steps", index, "answer"), f"no action labelled {unknown}")
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
        return self

    @property
    def labels(self) -> list[str]:
        return [action.label for agent, _ in self.tree.walk() for action in agent.actions]

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
            kept.append(Resend(resend=renumber[step.resend]) if isinstance(step, Resend) else step)
        return self.model_copy(update={"steps": tuple(kept)})

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
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

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


# the damage a corrupt step does to a stored continuation (fakes.corruption applies it): what
# each target words in its own stored shape, then what any stored JSON document can suffer
FormatSpecificCorruption = Literal[
    "schema_version_other",
    "schema_version_missing",
    "schema_version_newer",
    "payload_missing",
    "field_missing",
    "type_swap",
    "previous_shape",
    "conversation_manager_other",
]
GenericCorruption = Literal[
    "truncated",
    "deleted",
    "foreign",
    "key_deleted",
    "value_swapped",
    "document_truncated",
]
Corruption = Literal[FormatSpecificCorruption, GenericCorruption]
CORRUPTIONS: Final[tuple[str, ...]] = get_args(Corruption)
DESCRIPTIONS: Final[dict[str, str]] = {
    "schema_version_other": "the schema version is one the code does not know",
    "schema_version_missing": "the schema version field is gone",
    "schema_version_newer": "the schema version is the next one after the code's",
    "payload_missing": "the turn's payload (the agent's data) is gone",
    "field_missing": "a required field inside the payload is gone",
    "type_swap": "a list inside the payload holds a string instead",
    "previous_shape": "the turn is stored in the previous revision's shape",
    "conversation_manager_other": "the turn was stored for another conversation-manager type",
    "truncated": "the stored turn is cut in half (its JSON text, kept as a string)",
    "deleted": "the stored turn is gone",
    "foreign": "the stored turn is another call's",
    "key_deleted": "one key (or list item) of the stored turn is gone, at any depth",
    "value_swapped": "one value of the stored turn has another JSON type, at any depth",
    "document_truncated": "the stored document holding the turn is cut short (at a byte)",
}


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

    size: Annotated[int, Field(ge=2, description="How many messages the window keeps.")]
    per_turn: Annotated[
        int,
        Field(ge=1, description="Trim before every `per_turn`-th model call (the count is state)."),
    ] = 1


class Action(Strict):
    """A protected action: tool ``tool`` of its agent, known to the human as ``label``."""

    tool: Annotated[Name, Field(description="The tool's name, as the agent's model calls it.")]
    label: Annotated[
        Name,
        Field(
            description="The action's name for the human: steps answer by it, the ledger records "
            "it; unique in the whole tree."
        ),
    ]
    questions: Annotated[
        int,
        Field(
            ge=1,
            le=3,
            description="How many questions it asks, one after another; it runs only after "
            "every one is approved (more than 1 needs the target's `multi_question`).",
        ),
    ] = 1
    hook: bool = Field(
        False,
        description="Asked by a before-tool-call hook instead of the tool itself (needs "
        "`hook_interrupts`).",
    )


class Call(Strict):
    """One tool call a model issues: which tool, under which toolUseId (may collide on purpose)."""

    tool: Annotated[
        Name, Field(description="An action's `tool` or a sub-agent's `name` of the same agent.")
    ]
    id: str = Field(
        description="The toolUseId the model issues; may repeat another call's on purpose "
        "(never twice in one turn)."
    )
    prompt: str = Field(
        "do your part", description="What a sub-agent is asked; ignored for an action."
    )


class Agent(Strict):
    """An agent of the tree (the root is the orchestrator) and what its scripted model does.
    Its tools are its actions and its sub-agents: no two have the same name, every call in its
    turns names one of them, and no toolUseId appears twice in one turn."""

    name: Annotated[
        Name, Field(description="The agent's name; a sub-agent is called as a tool by it.")
    ]
    preserve_context: bool = Field(
        False, description="For a sub-agent: keep its history across calls."
    )
    session_store: bool = Field(
        True,
        description="For a preserve_context sub-agent: its history is persisted, so it survives "
        "a restart (false needs `storeless_sub_agents`).",
    )
    stateful_provider: bool = Field(
        False,
        description="Its model keeps server-side state: a follow-up request must carry the "
        "previous response id from the model state.",
    )
    window: Window | None = Field(
        None, description="A sliding-window conversation manager (needs `sliding_window`)."
    )
    state: dict[str, Any] = Field(
        default_factory=dict,
        description="Initial key/value state; its strings are canaries that must never show "
        "in a public event.",
    )
    actions: tuple[Action, ...] = Field((), description="Its protected actions.")
    sub_agents: tuple[Agent, ...] = Field((), description="Agents it calls as tools.")
    turns: tuple[tuple[Call, ...], ...] = Field(
        (),
        description="For every prompt it is given: its tool-calling turns, in order, each the "
        "list of tool calls of one model message.",
    )
    answer: str = Field(
        "done", description="The text its model answers with after its last tool-calling turn."
    )

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
    """Send a prompt to the root (the orchestrator)."""

    run: str = Field(description="The prompt.")


class Answer(Strict):
    """Answer every pending question of these actions (by label), or these root-visible ids."""

    model_config = ConfigDict(json_schema_extra={"minProperties": 1})

    answer: dict[Name, Response] = Field(
        default_factory=dict,
        description="Action label to `approve` or `deny`: answers every question of that "
        "action the root shows.",
    )
    answer_ids: dict[str, Response] = Field(
        default_factory=dict,
        description="Root-visible id to `approve` or `deny`, as the target shows ids. An id "
        "not shown as pending at that point is sent as given, and the whole answer must then be "
        "refused (I14).",
    )


class Restart(Strict):
    """Drop every object and rebuild from storage only; `- restart` is short for it."""

    restart: Literal[True] = Field(description="Always `true`.")


class Corrupt(Strict):
    """Damage the ``which``-th stored continuation, then restart (only a reload reads it).
    ``pick`` chooses the node (or byte) a fuzzing damage hits; the others ignore it."""

    corrupt: Corruption = Field(description="The damage (see the list of corruptions).")
    which: Annotated[
        int, Field(ge=0, description="Which stored continuation, in the order the target keeps.")
    ] = 0
    pick: Annotated[
        int, Field(ge=0, description="For the fuzzing damages: which node or byte they hit.")
    ] = 0


class Repair(Strict):
    """Put back what the corruption damaged (as restoring a backup would), then restart."""

    repair: Literal[True] = Field(description="Always `true`; `- repair` is short for it.")


class Resend(Strict):
    """Send again exactly the answer given at step ``resend`` (0-based).  An answer carried
    out already names questions no longer pending: it must be refused (I14)."""

    resend: Annotated[int, Field(ge=0, description="The index of an earlier answer step.")]


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
}


def _bare_steps_in_schema(schema: dict[str, Any]) -> None:
    """A step may be written as the bare word ``restart`` or ``repair`` (see ``_bare_restart``)."""
    steps = schema["properties"]["steps"]
    steps["items"] = {"anyOf": [steps["items"], {"enum": ["restart", "repair"]}]}


class Scenario(Strict):
    """One scenario file: an agent tree, the human's steps, and where the case comes from.

    Beyond each field's own type, a scenario is refused when:

    - two actions anywhere in the tree share a label;
    - the first step other than a restart is not a run;
    - an answer names a label no action has;
    - a repair has no corruption before it;
    - a resend names a step that is not an earlier answer;
    - a corruption's `which` asks for more stored continuations than the steps so far leave
      (at least two for `foreign`);
    - `expect.errors` names a step that does not exist, or one that must not fail (a run or an
      answer that can go ahead, a restart).
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
        for position, index in enumerate((self.expect and self.expect.errors) or ()):
            if index >= len(self.steps):
                raise FieldError(
                    ("expect", "errors", position),
                    f"no step {index}: the steps are numbered 0 to {len(self.steps) - 1}",
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
        update: dict[str, Any] = {"steps": tuple(kept)}
        if self.expect is not None and self.expect.errors is not None:
            errors = tuple(renumber[index] for index in self.expect.errors if index in renumber)
            update["expect"] = self.expect.model_copy(update={"errors": errors})
        return self.model_copy(update=update)

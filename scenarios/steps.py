"""The human's steps: run a prompt, answer questions, restart, corrupt a stored continuation,
repair it, resend an answer."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from scenarios.corruptions import Corruption
from scenarios.fields import FieldError, Name, Strict
from scenarios.tree import Agent

Response = Literal["approve", "deny"]
RootSession = Literal["a", "b"]
SESSION: Final = (
    "Which root session it talks to: `a` (the default) or `b`, two users of one "
    "deployment whose orchestrators call the same agent-tool objects, each session with its own "
    "root conversation and store (`b` needs `root_sessions`)."
)
# an answer step's fields: they reach the target in the order written, which canonical data keeps
ORDERED: Final = ("answer", "answer_ids", "answer_calls")


def keys_sorted(value: Any, ordered: bool = False) -> Any:
    """A scenario's JSON data with every object's keys sorted, but within an answer step's
    fields (``ORDERED``), which keep the order they are sent in: the canonical form the corpus
    writes and a finding's digest hashes."""
    if isinstance(value, dict):
        keys = list(value) if ordered else sorted(value)
        return {key: keys_sorted(value[key], ordered or key in ORDERED) for key in keys}
    if isinstance(value, list):
        return [keys_sorted(item, ordered) for item in value]
    return value


class Run(Strict):
    """Send a prompt to the root (the orchestrator)."""

    run: str = Field(description="The prompt.")
    session: RootSession = Field("a", description=SESSION)


class Answer(Strict):
    """Answer every pending question of these actions (by label), of these calls (by label and
    the prompt of the call that asks), or these root-visible ids.  The answers reach the target
    in the order written: each label's questions (in the order the root shows them), then each
    call's, then each id; nothing is re-sorted.  To answer in an order across steps, give one
    answer step after another (the questions left out stay pending meanwhile).  Or, alone,
    `resume`: one answer that names no question (a resume value not keyed by any id), which
    answers the one pending question, and must be refused when several are pending (I14)."""

    model_config = ConfigDict(json_schema_extra={"minProperties": 1})

    answer: dict[Name, Response] = Field(
        default_factory=dict,
        description="Action label to `approve` or `deny`: answers every question of that "
        "action the root shows.",
    )
    answer_ids: dict[str, Response] = Field(
        default_factory=dict,
        description="Root-visible id to `approve` or `deny`, as the target shows ids. Each id "
        "settles exactly the question shown under it (a twin call's question that shares its "
        "label stays pending). An id not shown as pending at that point is sent as given, and the "
        "whole answer must then be refused (I14).",
    )
    answer_calls: dict[Name, dict[str, Response]] = Field(
        default_factory=dict,
        description="Action label to a map of prompt to `approve` or `deny`: answers the "
        "questions of that action asked by the call given that prompt (its question names it), "
        "so twin calls sharing a label can be answered differently.",
    )
    resume: Response | None = Field(
        None,
        description="One answer without an id (`approve` or `deny`), as a resume value not "
        "keyed by interrupt id: with exactly one question pending it answers that question; "
        "with several pending it names none of them, so the whole answer must be refused (I14) "
        "and they all stay pending (needs `scalar_resume`). Given alone, never beside the "
        "other fields.",
    )
    session: RootSession = Field("a", description=SESSION)

    @model_validator(mode="after")
    def _resume_alone(self) -> Answer:
        if self.resume is not None and (self.answer or self.answer_ids or self.answer_calls):
            raise FieldError(
                ("resume",), "an answer without an id is given alone, never beside keyed answers"
            )
        return self


class Deploy(Strict):
    """A deploy between the question and the answer: the agents are rebuilt from ``tree``, a
    changed tree (a sub-agent or a tool renamed, added or removed, another window size, another
    `preserve_context`, other scripts, played from where each agent is), and the stored state
    is restored into them.  A pending question whose asking call still exists (the same tool of
    the agent at the same path, every call above it too) is answered as before; one whose call
    is gone stays pending, and an answer naming it is refused loudly (the whole answer: nothing
    runs).  A parked call of a sub-agent whose `preserve_context` changed still exists: it
    resumes its parked turn, wherever that was stored (needs `changed_tree`)."""

    tree: Agent = Field(description="The tree after the deploy; the steps after it run on it.")


def _restart_kind(value: Any) -> str:
    """A restart's value: a mapping (or a ``Deploy``) is a deploy, anything else is judged as
    the plain ``true``."""
    return "DeployRestart" if isinstance(value, dict | Deploy) else "PlainRestart"


class Restart(Strict):
    """Drop every object and rebuild from storage only; `- restart` is short for it (with two
    root sessions it rebuilds both, each from its own store, or with `session` that session's
    orchestrator alone).  With a `tree`, the rebuild is a deploy of a changed tree (see
    Deploy)."""

    restart: Annotated[
        Annotated[Literal[True], Tag("PlainRestart")] | Annotated[Deploy, Tag("DeployRestart")],
        Discriminator(
            _restart_kind,
            custom_error_type="restart_kind",
            custom_error_message="a restart is `true` or a deploy `{tree: ...}`",
        ),
    ] = Field(
        description="`true`, or a deploy: `{tree: ...}`, the tree the agents are rebuilt from."
    )
    session: RootSession | None = Field(
        None,
        description="With two root sessions: rebuild only this session's orchestrator from its "
        "store, while the agent tools it shares and the other session stay as they are (one "
        "user's session reloaded in a live deployment; needs `root_sessions`). Absent: every "
        "object is dropped.",
    )

    @property
    def tree(self) -> Agent | None:
        """The changed tree this restart deploys, None for a plain restart."""
        return self.restart.tree if isinstance(self.restart, Deploy) else None


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
    session: RootSession = Field("a", description=SESSION)


Step = Run | Answer | Restart | Corrupt | Repair | Resend
STEP_KEYS: Final = {
    "run": "Run",
    "answer": "Answer",
    "answer_ids": "Answer",
    "answer_calls": "Answer",
    "resume": "Answer",
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
        custom_error_message="a step is one of run, answer, answer_ids, answer_calls, resume, "
        "restart, corrupt, repair, resend",
    ),
]

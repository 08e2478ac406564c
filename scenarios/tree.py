"""The agent tree: each agent with its protected actions, its sub-agents (called as tools) and
what its scripted model does."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from scenarios.fields import FieldError, Name, Strict


class Window(Strict):
    """A sliding-window conversation manager: keep ``size`` messages, trim every ``per_turn``
    model calls."""

    size: Annotated[int, Field(ge=2, description="How many messages the window keeps.")]
    per_turn: Annotated[
        int,
        Field(ge=1, description="Trim before every `per_turn`-th model call (the count is state)."),
    ] = 1


class Retry(Strict):
    """A bounded retry of a tool's calls by its agent's after-tool-call hook: when a call ends
    the way `after` names, the hook runs it again at once, at most `times` times per call.
    Every attempt is a new call: it asks its questions again, under ids of its own (never the
    earlier attempt's), and an action runs only on its own attempt's approval (so an action
    approved once runs once); a retried sub-agent call starts a new call of the sub-agent (its
    gate, if any, asks again).  A call ends with an *error* when it did not do its work (an
    action or a gate denied, a busy preserve_context sub-agent refusing a second caller), with a
    *result* when it did (an action that ran, a sub-agent that answered)."""

    after: Literal["error", "result"] = Field(
        description="Which ending the hook retries: `error` (the call did not do its work) or "
        "`result` (it did)."
    )
    times: Annotated[
        int,
        Field(ge=1, le=3, description="How many times at most one call is retried."),
    ]


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
    retry: Retry | None = Field(
        None, description="Its agent's hook retries each of its calls (needs `retries`)."
    )


class Effect(Strict):
    """An ordinary tool with a side effect (a lookup, a write): tool `tool` of its agent.  It
    asks nothing and runs as soon as the model calls it; the ledger records every run (agent,
    tool, toolUseId), and each scripted call must run exactly once over the whole scenario
    (once per attempt of a retried call that plays it): never again when its agent resumes
    after a question, nor after a restart (needs `ordinary_tools`)."""

    tool: Annotated[Name, Field(description="The tool's name, as the agent's model calls it.")]
    tally: bool = Field(
        False,
        description="Each run also reads a counter from its agent's key/value state (under "
        "`tally:` and the tool's name, 0 when absent), records the value it read in the ledger "
        "and writes it back plus one: so state written before a question must be read back "
        "after the resume, a restart between them included (needs `agent_state`). In an agent "
        "with a `window` it also records the model calls the window has counted (its "
        "conversation-manager state), which must be carried likewise.",
    )


TALLY_PREFIX = "tally:"  # an agent's key/value state holds a tally effect's counter under it


def tally_key(tool: str) -> str:
    """The key/value state key of tally effect ``tool``'s counter."""
    return f"{TALLY_PREFIX}{tool}"


class Call(Strict):
    """One tool call a model issues: which tool, under which toolUseId (may collide on purpose)."""

    tool: Annotated[
        Name,
        Field(
            description="An action's or an effect's `tool`, or a sub-agent's `tool_name` (else "
            "its `name`), of the same agent."
        ),
    ]
    id: str = Field(
        description="The toolUseId the model issues; may repeat another call's on purpose "
        "(never twice in one turn)."
    )
    prompt: str = Field(
        "do your part", description="What a sub-agent is asked; ignored for an action."
    )


Turns = tuple[tuple[Call, ...], ...]


class PromptScript(Strict):
    """What an agent's model does for one prompt, in place of the agent's `turns` and `answer`:
    so two calls of one sub-agent with different prompts can act and answer differently."""

    turns: Turns = Field(
        (),
        description="Its tool-calling turns for this prompt, in order, each the list of tool "
        "calls of one model message.",
    )
    answer: str | None = Field(
        None,
        description="The text its model answers with after its last tool-calling turn for this "
        "prompt (default: the agent's `answer`).",
    )


class Agent(Strict):
    """An agent of the tree (the root is the orchestrator) and what its scripted model does.
    Its tools are its actions, its effects and its sub-agents: no two have the same name, every
    call in its turns names one of them, and no toolUseId appears twice in one turn."""

    name: Annotated[
        Name,
        Field(
            description="The agent's name; a sub-agent is called as a tool by it, unless it has "
            "a `tool_name`."
        ),
    ]
    tool_name: Name | None = Field(
        None,
        description="For a sub-agent: the name its caller calls it by, when not its `name` "
        "(needs `tool_names`); so sibling sub-agents may share an agent name, as clones of one "
        "agent do. Its path in the tree (the ledger's agent, a deploy's) is named by it too.",
    )
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
        "previous response id from the model state, and the first request of a conversation "
        "must carry none (it would continue another conversation); a request that breaks either "
        "is refused, and the refusal is journaled.",
    )
    window: Window | None = Field(
        None, description="A sliding-window conversation manager (needs `sliding_window`)."
    )
    gate: Name | None = Field(
        None,
        description="For a sub-agent: before each call its caller asks one question under this "
        "label (answered like an action's; unique among all labels); approved, the sub-agent is "
        "called, denied, it is not and its caller gets a refusal (needs `gated_sub_agents`).",
    )
    retry: Retry | None = Field(
        None,
        description="For a sub-agent: its caller's hook retries each call of it (needs `retries`).",
    )
    state: dict[str, Any] = Field(
        default_factory=dict,
        description="Initial key/value state; its strings are canaries that must never show "
        "in a public event.",
    )
    actions: tuple[Action, ...] = Field((), description="Its protected actions.")
    effects: tuple[Effect, ...] = Field(
        (), description="Its ordinary tools with a side effect: they ask nothing."
    )
    sub_agents: tuple[Agent, ...] = Field((), description="Agents it calls as tools.")
    turns: Turns = Field(
        (),
        description="For every prompt not in `prompts`: its tool-calling turns, in order, each the "
        "list of tool calls of one model message.",
    )
    answer: str = Field(
        "done", description="The text its model answers with after its last tool-calling turn."
    )
    prompts: dict[str, PromptScript] = Field(
        default_factory=dict,
        description="Per prompt it is given (a run's prompt for the root, a call's `prompt` for "
        "a sub-agent): what its model does instead of `turns` and `answer`.",
    )

    @model_validator(mode="after")
    def _calls_name_tools(self) -> Agent:
        tools = [action.tool for action in self.actions] + [sub.tool for sub in self.sub_agents]
        tools += [effect.tool for effect in self.effects]
        duplicates = sorted(name for name, count in Counter(tools).items() if count > 1)
        if duplicates:
            raise FieldError((), f"agent {self.name!r} has two tools named {duplicates}")
        for key in self.state:
            if key.startswith(TALLY_PREFIX):
                raise FieldError(
                    ("state", key),
                    f"keys starting {TALLY_PREFIX!r} are the tally effects' counters: "
                    "use another key",
                )
        for where, turns in self.scripts():
            for index, turn in enumerate(turns):
                for position, call in enumerate(turn):
                    if call.tool not in tools:
                        raise FieldError(
                            (*where, index, position, "tool"),
                            f"calls {call.tool!r}, which is not one of {self.name!r}'s tools "
                            f"{sorted(tools)}",
                        )
                ids = Counter(call.id for call in turn)
                repeated = sorted(tool_use_id for tool_use_id, count in ids.items() if count > 1)
                if repeated:
                    raise FieldError(
                        (*where, index), f"repeats toolUseId {repeated} in one message"
                    )
        return self

    @property
    def tool(self) -> str:
        """The name its caller calls it by (and its path names it by): its `tool_name`, else its
        `name`."""
        return self.tool_name or self.name

    def scripts(self) -> Iterator[tuple[tuple[str, ...], Turns]]:
        """Every list of turns it may play, with where it is written: `turns`, then each
        prompt's."""
        yield ("turns",), self.turns
        for prompt, script in self.prompts.items():
            yield ("prompts", prompt, "turns"), script.turns

    def turns_for(self, prompt: str) -> Turns:
        """The tool-calling turns its model plays for ``prompt``."""
        script = self.prompts.get(prompt)
        return self.turns if script is None else script.turns

    def answer_for(self, prompt: str) -> str:
        """The text its model answers ``prompt`` with, after its last tool-calling turn."""
        script = self.prompts.get(prompt)
        return self.answer if script is None or script.answer is None else script.answer

    def walk(self, depth: int = 1) -> Iterator[tuple[Agent, int]]:
        """Every agent of the tree with its depth (the root is depth 1)."""
        yield self, depth
        for sub in self.sub_agents:
            yield from sub.walk(depth + 1)

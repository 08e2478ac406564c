"""Standalone reproducers: one scenario (a regression file, or the file a recorded bug class
names as its proof) written out as a script that imports only an SDK and the standard library,
as an SDK's bug template asks for.

The script holds the plan's literals (``harness.repro.plan``: the tree, the steps and what the
oracle says each step must show), the SDK's section (``harness.repro.strands``, ...) and the
shared steps and checks (``harness.repro.templates``).  It exits 1 while any check fails, 0 once
every one holds.  A target without a section has no reproducer hook: ``NoHook``.

A plugin gives its target a hook without a fork: a ``Hook`` under the entry-point group
``nested_interrupt_harness.repro``, named as its target (docs/adapters.md, "A reproducer hook");
the example plugin's is ``examples/plugin/src/tinyagents/harness_repro.py``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import Any, Final

from harness.repro import adk, langgraph, openai_agents, strands, templates
from harness.repro.literals import literal
from harness.repro.plan import NotExpressible, Plan, plan_of, symptom_of
from harness.repro.sources import findings_files
from scenarios.model import Agent, Scenario

__all__ = [
    "HOOKS",
    "Hook",
    "NoHook",
    "NotExpressible",
    "Plan",
    "hook_for",
    "plan_of",
    "reproducer",
    "symptom_of",
]


@dataclass(frozen=True)
class Hook:
    """A target's reproducer hook: its SDK's distribution, the script's imports, its section.

    The section defines ``build(store)`` (the whole tree, restored from what the SDK stored in
    the directory ``store``, if anything) and ``advance(app, given)`` (one run, ``given`` the
    prompt, or one answer, ``given`` a list of ``(interrupt id, response)``), which returns
    ``(stop reason or None on a failure, [Pending], final answer, error, public events)``; its
    scripted model asks ``next_turn(agent, path, said)`` for its turn (``harness.repro.templates``).
    """

    distribution: str
    imports: str
    section: str
    # what the SDK cannot express, beyond what no template does (``plan.TREE_FEATURES``)
    cannot: Mapping[str, Callable[[Agent], bool]] = field(default_factory=dict)
    # whether ``advance`` returns the public events (the privacy check reads them)
    events: bool = True
    # what of the templates this target always uses
    always: frozenset[str] = frozenset()
    # what of the templates (``features``) the SDK cannot express, each with the reason
    refuses: Mapping[str, str] = field(default_factory=dict)


# what the templates' features are in a scenario file, to name them in a refusal
FIELDS: Final = {
    "questions": "an action asking more than once (questions:)",
    "resume": "an answer naming no question (resume:)",
    "preserve": "a sub-agent keeping its context (preserve_context:)",
    "agent": "a sub-agent called by a tool name of its own (tool_name:)",
}
STRANDS_REFUSES: Final = {
    "resume": "strands-agents takes an answer only as an interruptResponse naming its "
    "interruptId: it has no answer keyed by no id",
}
OPENAI_AGENTS_REFUSES: Final = {
    "questions": "needs_approval asks once per tool call",
    "resume": "an answer is RunState.approve or reject of one pending item: the SDK has no "
    "answer naming none",
}

ADK_REFUSES: Final = {
    "questions": "require_confirmation asks once per tool call",
    "resume": "a confirmation is a FunctionResponse naming the id of the request it answers: "
    "ADK has no answer naming none",
    "preserve": "a sub-agent keeps no history across calls: AgentTool runs each call in a new "
    "in-memory session, a single_turn sub-agent on a new branch per call",
    "agent": "an AgentTool (and a single_turn sub-agent) is called by its agent's name",
}


# each target with a reproducer hook
HOOKS: Final = {
    "strands": Hook(
        strands.DISTRIBUTION, strands.IMPORTS, strands.SECTION, refuses=STRANDS_REFUSES
    ),
    **{
        target: Hook(
            langgraph.DISTRIBUTION,
            langgraph.imports(target),
            langgraph.section(target),
            always=langgraph.ALWAYS[target],
        )
        for target in langgraph.SHAPES
    },
    "openai-agents": Hook(
        openai_agents.DISTRIBUTION,
        openai_agents.IMPORTS,
        openai_agents.SECTION,
        events=False,
        refuses=OPENAI_AGENTS_REFUSES,
    ),
    **{
        target: Hook(
            adk.DISTRIBUTION,
            adk.IMPORTS,
            adk.SECTION,
            events=False,
            always=adk.ALWAYS[target],
            refuses=ADK_REFUSES,
        )
        for target in adk.SHAPES
    },
}


class NoHook(LookupError):
    """The target has no reproducer template (or a plugin's cannot be loaded): one line."""


ENTRY_POINT_GROUP: Final = "nested_interrupt_harness.repro"


def hook_for(target: str) -> Hook:
    """``target``'s hook: a built-in one, else the one a plugin declares under
    ``ENTRY_POINT_GROUP`` by the target's name (raises ``NoHook`` in one line)."""
    if target in HOOKS:
        return HOOKS[target]
    for entry_point in entry_points(group=ENTRY_POINT_GROUP, name=target):
        where = f"repro entry point {entry_point.name!r} ({entry_point.value})"
        try:
            hook = entry_point.load()
        except Exception as failure:  # a plugin's import error is its one line, never a traceback
            raise NoHook(
                f"--target {target}: {where}: {type(failure).__name__}: {failure}"
            ) from None
        if not isinstance(hook, Hook):
            raise NoHook(f"--target {target}: {where}: expected a harness.repro.Hook")
        return hook
    raise NoHook(f"--target {target}: no reproducer hook")


def newest_findings(target: str) -> str:
    """The newest release of ``target`` with a findings file ("?" if none)."""
    files = findings_files(target)
    return ".".join(map(str, files[-1][0])) if files else "?"


def release_of(distribution: str, default: str) -> str:
    """The installed release of ``distribution`` (what the script is written against)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return default


def reproducer(
    target: str,
    name: str,
    scenario: Scenario,
    symptom: str | None = None,
    release: str = "",
    invariants: frozenset[str] | None = None,
) -> str:
    """The script reproducing ``scenario`` on ``target``'s SDK (raises ``NoHook``,
    ``NotExpressible``).  ``invariants``: the bug's own, where the script is for one bug: the
    privacy check (I8) is left out unless they name it, so another bug of the release (a stored
    turn in the events) does not fail the script where this one is fixed."""
    section = hook_for(target)
    plan = plan_of(name, scenario, symptom or symptom_of(scenario), section.cannot)
    sdk = section.distribution
    release = release or release_of(sdk, newest_findings(target))
    wrapped = textwrap.fill(plan.symptom, width=99, initial_indent="Symptom: ")
    pip = f"{sdk}=={release}"
    header = (
        templates.HEADER.replace(
            "@NEEDS@", textwrap.fill(templates.NEEDS.replace("@PIP@", pip), 99)
        )
        .replace("@NAME@", plan.name)
        .replace("@SDK@", sdk)
        .replace("@RELEASE@", release)
        .replace("@PIP@", pip)
        .replace("@SYMPTOM@", wrapped.replace('"""', "'''"))
    )
    steps = [[step, want] for step, want in zip(plan.steps, plan.expected, strict=True)]
    data = f"TREE = {literal(plan.tree, 7)}\n{STEPS_COMMENT}\nSTEPS = {literal(steps, 8)}"
    body = "\n".join((section.imports, data, templates.RECORDS, section.section, templates.CHECKS))
    used = features(plan, section)
    if refused := sorted(used & set(section.refuses)):
        raise NotExpressible(
            "; ".join(f"uses {FIELDS.get(name, name)}: {section.refuses[name]}" for name in refused)
        )
    if invariants is not None and "I8" not in invariants:
        used.discard("stores")
    return (
        "\n".join((header, templates.select(body, used)))
        .replace("\n\n\n\n", "\n\n\n")
        .replace("\n\n\n\n", "\n\n\n")
    )


def features(plan: Plan, hook: Hook) -> set[str]:
    """What of the templates ``plan`` uses (``templates.select`` keeps only that)."""
    kinds = {step[0] for step in plan.steps}
    answers = [step for step in plan.steps if step[0] == "answer"]
    agents = list(_agents(plan.tree))
    found = {kind for kind in ("restart", "resend", "resume") if kind in kinds}
    found |= {"rerun"} if sum(step[0] == "run" for step in plan.steps) > 1 else set()
    found |= {"by_id"} if any(len(step) > 2 and step[2] for step in answers) else set()
    found |= {"by_call"} if any(len(step) > 3 and step[3] for step in answers) else set()
    found |= {"by_any"} if found & {"by_id", "by_call"} else set()
    # a sub-agent's turn stored at one step that a public event of a later step could carry
    advancing = sum(step[0] != "restart" for step in plan.steps)
    asks_below = any(agent.get("actions") or agent.get("subs") for agent in agents[1:])
    found |= {"stores"} if hook.events and asks_below and advancing > 1 else set()
    found |= {"prompts"} if any(isinstance(agent["turns"], dict) for agent in agents) else set()
    found |= {"preserve"} if any(agent.get("preserve") for agent in agents) else set()
    found |= {"agent"} if any("agent" in agent for agent in agents) else set()
    found |= {"questions"} if any(agent.get("questions") for agent in agents) else set()
    errors = {want[3] for want in plan.expected if want is not None}
    return found | {f"error_{kind}" for kind in errors} | hook.always


def _agents(tree: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield tree
    for sub in tree.get("subs", []):
        yield from _agents(sub)


STEPS_COMMENT: Final = (
    "# each step; then (the oracle) the questions pending, what runs, the final answer, an error"
)

"""Standalone reproducers: one scenario (a regression file, or the file a recorded bug class
names as its proof) written out as a script that imports only an SDK and the standard library,
as an SDK's bug template asks for.

The script holds the plan's literals (``harness.repro.plan``: the tree, the steps and what the
oracle says each step must show), the SDK's section (``harness.repro.strands``, ...) and the
shared steps and checks (``harness.repro.templates``).  It exits 1 while any check fails, 0 once
every one holds.  A target without a section has no reproducer hook: ``NoHook``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Final

from harness.repro import langgraph, openai_agents, strands, templates
from harness.repro.plan import NotExpressible, Plan, plan_of, symptom_of
from harness.repro.sources import findings_files
from scenarios.model import Agent, Scenario

__all__ = ["HOOKS", "NoHook", "NotExpressible", "Plan", "plan_of", "reproducer", "symptom_of"]


@dataclass(frozen=True)
class Hook:
    """A target's reproducer hook: its SDK's distribution, the script's imports, its section."""

    distribution: str
    imports: str
    section: str
    # what the SDK cannot express, beyond what no template does (``plan.TREE_FEATURES``)
    cannot: Mapping[str, Callable[[Agent], bool]] = field(default_factory=dict)


# needs_approval asks once per tool call: an action cannot ask a second question
ONE_QUESTION: Final = {
    "multi-question actions": lambda agent: any(action.questions > 1 for action in agent.actions)
}


# each target with a reproducer hook
HOOKS: Final = {
    "strands": Hook(strands.DISTRIBUTION, strands.IMPORTS, strands.SECTION),
    **{
        target: Hook(langgraph.DISTRIBUTION, langgraph.imports(target), langgraph.section(target))
        for target in langgraph.SHAPES
    },
    "openai-agents": Hook(
        openai_agents.DISTRIBUTION, openai_agents.IMPORTS, openai_agents.SECTION, ONE_QUESTION
    ),
}


class NoHook(LookupError):
    """The target has no reproducer template."""


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
    target: str, name: str, scenario: Scenario, symptom: str | None = None, release: str = ""
) -> str:
    """The script reproducing ``scenario`` on ``target``'s SDK (raises ``NoHook``,
    ``NotExpressible``)."""
    section = HOOKS.get(target)
    if section is None:
        raise NoHook(f"--target {target}: no reproducer hook (those with one: {sorted(HOOKS)})")
    plan = plan_of(name, scenario, symptom or symptom_of(scenario), section.cannot)
    sdk = section.distribution
    release = release or release_of(sdk, newest_findings(target))
    wrapped = textwrap.fill(plan.symptom, width=99, initial_indent="Symptom: ")
    header = (
        templates.HEADER.replace("@NAME@", plan.name)
        .replace("@SDK@", sdk)
        .replace("@RELEASE@", release)
        .replace("@PIP@", f"{sdk}=={release}")
        .replace("@SYMPTOM@", wrapped.replace('"""', "'''"))
    )
    steps = [[step, want] for step, want in zip(plan.steps, plan.expected, strict=True)]
    data = f"TREE = {literal(plan.tree, 7)}\n{STEPS_COMMENT}\nSTEPS = {literal(steps, 8)}"
    return (
        "\n".join(
            (header, section.imports, data, templates.RECORDS, section.section, templates.CHECKS)
        )
        .replace("\n\n\n\n", "\n\n\n")
        .replace("\n\n\n\n", "\n\n\n")
    )


WIDTH: Final = 99
STEPS_COMMENT: Final = (
    "# each step; then (the oracle) the questions pending, what runs, the final answer, an error"
)


def literal(value: object, column: int = 0, indent: int = 0) -> str:
    """``value`` as a Python literal: on one line where it fits from ``column``; else its items
    packed into lines, each indented four spaces more, an item that fits no line laid out so."""
    flat = repr(value)
    if column + len(flat) <= WIDTH or not isinstance(value, dict | list) or not value:
        return flat
    inner = " " * (indent + 4)
    items = value.items() if isinstance(value, dict) else [(None, item) for item in value]
    lines = [inner]
    for key, item in items:
        prefix = "" if key is None else f"{key!r}: "
        text = f"{prefix}{item!r},"
        if len(lines[-1]) + len(text) + 1 > WIDTH and lines[-1].strip():
            lines.append(inner)
        if len(lines[-1]) + len(text) > WIDTH:
            text = prefix + literal(item, len(lines[-1]) + len(prefix), indent + 4) + ","
        lines[-1] += ("" if not lines[-1].strip() else " ") + text
    opening, closing = "{}" if isinstance(value, dict) else "[]"
    return opening + "\n" + "\n".join(lines) + "\n" + " " * indent + closing

"""Finding targets by name: the built-in ones, plus any installed package's entry points.

A third party adds a target without forking by declaring, in its own package metadata::

    [project.entry-points."nested_interrupt_harness.targets"]
    my-sdk = "my_package.harness_target:MySdkTarget"

where ``MySdkTarget()`` satisfies ``harness.targets.base.Target``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from importlib.util import find_spec
from typing import Final

from harness.targets.base import Target

ENTRY_POINT_GROUP: Final = "nested_interrupt_harness.targets"


class UnknownTarget(LookupError):
    """No installed target has that name."""


def _reference() -> Target:
    from harness.targets.reference import ReferenceTarget

    return ReferenceTarget()


def _strands() -> Target:
    from harness.targets.strands import StrandsTarget

    return StrandsTarget()


def _strands_snapshot() -> Target:
    from harness.targets.strands import StrandsTarget

    return StrandsTarget(session_manager="snapshot")


def _openai_agents() -> Target:
    from harness.targets.openai_agents import OpenAIAgentsTarget

    return OpenAIAgentsTarget()


def _langgraph() -> Target:
    from harness.targets.langgraph import LangGraphTarget

    return LangGraphTarget()


def _langgraph_subgraph_node() -> Target:
    from harness.targets.langgraph import LangGraphTarget

    return LangGraphTarget(shape="subgraph-node")


BUILT_IN: Final[dict[str, Callable[[], Target]]] = {
    "reference": _reference,
    "strands": _strands,
    "strands-snapshot": _strands_snapshot,
    "langgraph": _langgraph,
    "langgraph-subgraph-node": _langgraph_subgraph_node,
    "openai-agents": _openai_agents,
}
# the module a built-in target drives: it is listed only where that module is importable
NEEDS_MODULE: Final[dict[str, str]] = {
    "strands": "strands",
    "strands-snapshot": "strands",
    "langgraph": "langgraph",
    "langgraph-subgraph-node": "langgraph",
    "openai-agents": "agents",
}


def built_in_expressible() -> dict[str, frozenset[str]]:
    """What each built-in target can express (``TargetInfo.expressible``), read off its adapter's
    constants, so without its SDK (strands as from 1.59, the releases with a stored turn):
    ``python -m harness generate`` commits a sample of generated scenarios for each set."""
    from fakes.corruption import CORRUPTIONS
    from harness.targets import langgraph, openai_agents, strands
    from harness.targets.reference import ReferenceTarget

    def damages(kinds: frozenset[str]) -> frozenset[str]:
        return frozenset(f"corruption:{kind}" for kind in kinds)

    with_stored_turns = strands.TARGET_CAPABILITIES | damages(frozenset(CORRUPTIONS))
    return {
        "reference": ReferenceTarget.info.expressible,
        "strands": with_stored_turns,
        "strands-snapshot": with_stored_turns,
        "langgraph": langgraph.CAPABILITIES,
        "langgraph-subgraph-node": langgraph.CAPABILITIES,
        "openai-agents": openai_agents.TARGET_CAPABILITIES | damages(openai_agents.CORRUPTIONS),
    }


def available() -> dict[str, Callable[[], Target]]:
    """Every target that can be built here, by name, sorted (an SDK's targets only where the
    SDK is installed)."""
    found: dict[str, Callable[[], Target]] = {
        name: build for name, build in BUILT_IN.items() if _importable(NEEDS_MODULE.get(name))
    }
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name not in found:
            found[entry_point.name] = _loader(entry_point.load)
    return dict(sorted(found.items()))


def _importable(module: str | None) -> bool:
    return module is None or find_spec(module) is not None


def _loader(load: Callable[[], object]) -> Callable[[], Target]:
    def build() -> Target:
        factory = load()
        if not callable(factory):
            raise TypeError(f"entry point {factory!r} is not callable")
        target: Target = factory()
        return target

    return build


def variants() -> dict[str, Callable[[], Target]]:
    """The known-bad variants of the reference (``harness.targets.variants``), by target name
    (``bad-<slug>``), sorted.  ``get`` builds them; ``available`` never lists them, so a check
    without ``--target`` does not run them."""
    from harness.targets.variants import VARIANT_PREFIX, VARIANTS

    return {f"{VARIANT_PREFIX}{slug}": build for slug, build in sorted(VARIANTS.items())}


def get(name: str) -> Target:
    targets = available()
    if name in targets:
        return targets[name]()
    from harness.targets.variants import VARIANT_PREFIX  # variants import targets: not at the top

    if name.startswith(VARIANT_PREFIX):
        bad = variants()
        if name in bad:
            return bad[name]()
        raise UnknownTarget(f"unknown target {name!r}; known-bad variants: {', '.join(bad)}")
    raise UnknownTarget(f"unknown target {name!r}; installed targets: {', '.join(targets)}")

"""Finding targets by name: the built-in ones, plus any installed package's entry points.

A third party adds a target without forking by declaring, in its own package metadata::

    [project.entry-points."nested_interrupt_harness.targets"]
    my-sdk = "my_package.harness_target:MySdkTarget"

where ``MySdkTarget()`` satisfies ``harness.targets.base.Target``.

A target that cannot be loaded is *broken*, never a traceback: an entry point whose module does
not import, whose object is not callable or raises when called, or whose ``TargetInfo`` claims a
capability the harness does not know (``interrupt-ids`` for ``interrupt_ids``) raises
``BrokenTarget`` with one line naming the target, where it comes from and what went wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from difflib import get_close_matches
from importlib.metadata import entry_points
from importlib.util import find_spec
from typing import Final

from harness.targets.base import CAPABILITIES, Target
from scenarios.corruptions import CORRUPTION_CAPABILITY

ENTRY_POINT_GROUP: Final = "nested_interrupt_harness.targets"


class UnknownTarget(LookupError):
    """No installed target has that name."""


class BrokenTarget(LookupError):
    """A target that is installed but cannot be loaded: ``name``, and ``reason`` in one line
    (where it comes from, and what went wrong)."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason

    @property
    def refusal(self) -> str:
        """The one line a command that needed it shows."""
        return f"target {self.name} cannot be loaded: {self.reason}"


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


def _langgraph_toolnode() -> Target:
    from harness.targets.langgraph import LangGraphTarget

    return LangGraphTarget(shape="toolnode")


def _adk() -> Target:
    from harness.targets.adk import AdkTarget

    return AdkTarget()


def _adk_single_turn() -> Target:
    from harness.targets.adk import AdkTarget

    return AdkTarget(shape="single-turn")


BUILT_IN: Final[dict[str, Callable[[], Target]]] = {
    "reference": _reference,
    "strands": _strands,
    "strands-snapshot": _strands_snapshot,
    "langgraph": _langgraph,
    "langgraph-subgraph-node": _langgraph_subgraph_node,
    "langgraph-toolnode": _langgraph_toolnode,
    "openai-agents": _openai_agents,
    "adk": _adk,
    "adk-single-turn": _adk_single_turn,
}
# the module a built-in target drives: it is listed only where that module is importable
NEEDS_MODULE: Final[dict[str, str]] = {
    "strands": "strands",
    "strands-snapshot": "strands",
    "langgraph": "langgraph",
    "langgraph-subgraph-node": "langgraph",
    "langgraph-toolnode": "langgraph",
    "openai-agents": "agents",
    "adk": "google.adk",
    "adk-single-turn": "google.adk",
}


def built_in_expressible() -> dict[str, frozenset[str]]:
    """What each built-in target can express (``TargetInfo.expressible``), read off its adapter's
    constants, so without its SDK (strands as from 1.59, the releases with a stored turn):
    ``python -m harness generate`` commits a sample of generated scenarios for each set."""
    from harness.targets import adk, langgraph, openai_agents, openai_agents_storage, strands
    from harness.targets.reference import ReferenceTarget
    from scenarios.model import CORRUPTIONS

    def damages(kinds: frozenset[str]) -> frozenset[str]:
        return frozenset(f"{CORRUPTION_CAPABILITY}{kind}" for kind in kinds)

    with_stored_turns = strands.TARGET_CAPABILITIES | damages(frozenset(CORRUPTIONS))
    return {
        "reference": ReferenceTarget.info.expressible,
        "strands": with_stored_turns,
        "strands-snapshot": with_stored_turns,
        "langgraph": langgraph.CAPABILITIES_OF_SHAPE["tools"],
        "langgraph-subgraph-node": langgraph.CAPABILITIES_OF_SHAPE["subgraph-node"],
        "langgraph-toolnode": langgraph.CAPABILITIES_OF_SHAPE["toolnode"],
        "openai-agents": (
            openai_agents.TARGET_CAPABILITIES | damages(openai_agents_storage.CORRUPTIONS)
        ),
        "adk": adk.TARGET_CAPABILITIES,
        "adk-single-turn": adk.TARGET_CAPABILITIES,
    }


def older_releases_expressible() -> dict[str, frozenset[str]]:
    """What a built-in target can express on an older release of its SDK that can express less
    (read off its adapter's constants, so without that release): strands before 1.59 stores no
    sub-agent turn.  ``generate`` commits a sample for each such set too, so every release tox
    checks runs committed data."""
    from harness.targets import strands

    return {"strands-1.58": strands.TARGET_CAPABILITIES - strands.WITHOUT_STORED_TURNS}


def available() -> dict[str, Callable[[], Target]]:
    """Every target that can be built here, by name, sorted (an SDK's targets only where the
    SDK is installed)."""
    found: dict[str, Callable[[], Target]] = {
        name: _guarded(name, "built-in", build)
        for name, build in BUILT_IN.items()
        if _importable(NEEDS_MODULE.get(name))
    }
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name not in found:
            found[entry_point.name] = _guarded(
                entry_point.name,
                f"entry point {entry_point.value}",
                _from_entry_point(entry_point.load),
            )
    return dict(sorted(found.items()))


def _importable(module: str | None) -> bool:
    """Whether ``module`` can be imported; a dotted name whose parent package is missing (no
    ``google`` at all, for ``google.adk``) cannot."""
    if module is None:
        return True
    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _from_entry_point(load: Callable[[], object]) -> Callable[[], Target]:
    def build() -> Target:
        factory = load()
        if not callable(factory):
            raise TypeError(f"{factory!r} is not callable (expected a Target class or factory)")
        target: Target = factory()
        return target

    return build


def _guarded(name: str, origin: str, build: Callable[[], Target]) -> Callable[[], Target]:
    """``build``, raising ``BrokenTarget`` in one line where it fails (an import error, a
    factory that raises): a plugin's mistake is shown as the line it ends with."""

    def guarded() -> Target:
        try:
            return build()
        except Exception as failure:
            raise BrokenTarget(name, f"{origin}: {last_line(failure)}") from None

    return guarded


def last_line(failure: BaseException) -> str:
    """An exception as one line: its type and the last line of its message."""
    lines = str(failure).strip().splitlines()
    return f"{type(failure).__name__}: {lines[-1]}" if lines else type(failure).__name__


def checked(name: str, target: Target) -> Target:
    """``target``, once its ``TargetInfo`` names only capabilities the harness knows: a typo
    would otherwise make every scenario needing that capability silently not applicable."""
    unknown = sorted(set(target.info.capabilities) - set(CAPABILITIES))
    if unknown:
        close = get_close_matches(unknown[0], CAPABILITIES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise BrokenTarget(
            name,
            f"TargetInfo.capabilities: unknown capability {unknown[0]!r}{hint}; known ones: "
            "python -m harness targets --verbose, docs/adapters.md",
        )
    return target


def variants() -> dict[str, Callable[[], Target]]:
    """The known-bad variants of the reference (``harness.targets.variants``), by target name
    (``bad-<slug>``), sorted.  ``get`` builds them; ``available`` never lists them, so a check
    without ``--target`` does not run them."""
    from harness.targets.variants import VARIANT_PREFIX, VARIANTS

    return {f"{VARIANT_PREFIX}{slug}": build for slug, build in sorted(VARIANTS.items())}


def get(name: str) -> Target:
    """The target of that name, built and checked (``UnknownTarget``, ``BrokenTarget``)."""
    targets = available()
    if name in targets:
        return checked(name, targets[name]())
    from harness.targets.variants import VARIANT_PREFIX  # variants import targets: not at the top

    if name.startswith(VARIANT_PREFIX):
        bad = variants()
        if name in bad:
            return checked(name, bad[name]())
        raise UnknownTarget(f"unknown target {name!r}; known-bad variants: {', '.join(bad)}")
    raise UnknownTarget(f"unknown target {name!r}; installed targets: {', '.join(targets)}")

"""The layers, read from the source: who may import whom, and no import cycle.

    fakes  <-  reference  <-  targets  <-  runner  ->  history  ->  checkers  ->  reports

and above them all the command line (``harness.cli`` and the commands it dispatches to), which
nothing below imports; a command imports no other command, only the modules they share.

The reference is pure (it imports nothing of the project but itself), the scenario language knows
nothing of the harness or the fakes (the fakes read its vocabulary: a corruption's name), the
checkers judge a recorded history and never see a target, and the targets never reach up into
what runs or judges them.  Every import counts,
also one made inside a function to put off loading an SDK.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("harness", "scenarios", "fakes")


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def imports() -> dict[str, frozenset[str]]:
    """Each module of the project: the project's modules it imports."""
    modules = {
        _name(path): path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    graph = {}
    for module, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[module] = frozenset(name for name in found if name in modules and name != module)
    return graph


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


# (importer, what it may not import)
FORBIDDEN = [
    ("harness.reference", ["harness", "scenarios", "fakes"]),
    ("fakes", ["harness", "scenarios.oracle", "scenarios.strategies", "scenarios.corpus"]),
    ("scenarios", ["harness", "fakes"]),
    (
        "harness.checkers",
        [
            "harness.targets",
            "harness.reference",
            "harness.runner",
            "harness.campaigns",
            "harness.findings",
        ],
    ),
    (
        "harness.targets",
        ["harness.runner", "harness.checkers", "harness.findings", "harness.campaigns"],
    ),
    # judging findings needs the scenario classes, not the generators (and hypothesis); it judges
    # what a run recorded and runs nothing itself
    (
        "harness.findings",
        [
            "scenarios.statistics",
            "scenarios.strategies",
            "scenarios.corpus",
            "harness.runner",
            "harness.targets",
            "harness.reference",
            "harness.campaigns",
            "harness.conformance",
        ],
    ),
    # a findings file's model knows no run and no file on disk; judging writes nothing
    (
        "harness.findings.document",
        [
            "harness.history",
            "harness.findings.loading",
            "harness.findings.verdict",
            "harness.findings.recording",
        ],
    ),
    ("harness.findings.verdict", ["harness.findings.loading", "harness.findings.recording"]),
    # mutation testing runs mutmut on the code in another process; it imports none of it
    ("harness.mutation", ["harness", "scenarios", "fakes"]),
]


def crossings(graph: dict[str, frozenset[str]], layer: str, forbidden: list[str]) -> list[str]:
    return sorted(
        f"{module} imports {imported}"
        for module, imported_modules in graph.items()
        if inside(module, layer)
        for imported in imported_modules
        if not inside(imported, layer)
        and any(inside(imported, package) for package in forbidden)
        and not (layer == "harness.targets" and imported == "harness")  # its __version__
    )


# (importer, the only modules of the project outside it that it may import)
ONLY = [
    # the fakes read the scenario language's vocabulary (a corruption's name), nothing else of it
    ("fakes", ["scenarios.corruptions"]),
    # the parts the scenario model gathers depend on what they share, never on the whole
    ("scenarios.corruptions", []),
    ("scenarios.fields", []),
    ("scenarios.tree", ["scenarios.fields"]),
    # a deploy step carries the tree it deploys
    ("scenarios.steps", ["scenarios.fields", "scenarios.corruptions", "scenarios.tree"]),
    ("scenarios.deploys", ["scenarios.fields", "scenarios.tree"]),
]


def beyond(graph: dict[str, frozenset[str]], layer: str, allowed: list[str]) -> list[str]:
    """Imports from inside ``layer`` of anything of the project outside it but ``allowed``."""
    return sorted(
        f"{module} imports {imported}"
        for module, imported_modules in graph.items()
        if inside(module, layer)
        for imported in imported_modules
        if not inside(imported, layer) and not any(inside(imported, a) for a in allowed)
    )


COMMAND_LINE = ("harness.cli", "harness.commands")
# the modules of harness.commands that several commands share; every other one is a command
SHARED_BY_COMMANDS = {
    f"harness.commands.{name}" for name in ("inputs", "options", "planning", "outputs", "progress")
}


def reaching_up_to_the_command_line(graph: dict[str, frozenset[str]]) -> list[str]:
    """Imports of the command line from anywhere but the command line (and ``__main__``)."""
    return sorted(
        f"{module} imports {imported}"
        for module, imported_modules in graph.items()
        if module != "harness.__main__" and not any(inside(module, top) for top in COMMAND_LINE)
        for imported in imported_modules
        if any(inside(imported, top) for top in COMMAND_LINE)
    )


def command_to_command(graph: dict[str, frozenset[str]]) -> list[str]:
    """Imports of one command's module by another command's."""
    commands = {
        module
        for module in graph
        if inside(module, "harness.commands")
        and module != "harness.commands"
        and module not in SHARED_BY_COMMANDS
    }
    return sorted(
        f"{module} imports {imported}"
        for module in commands
        for imported in graph[module]
        if imported in commands
    )


# the two runs of ``mutate``: each its own modules, beside what both share (``harness.mutation``
# itself, ``mutants``, ``source``, ``reviews``, ``markdown``)
MUTATION_RUNS = {
    "round trip": {"harness.mutation.round_trip", "harness.mutation.round_trip_report"},
    "sdk": {f"harness.mutation.{name}" for name in ("sdk", "classify", "sdk_run", "sdk_report")},
}


def run_to_run(graph: dict[str, frozenset[str]]) -> list[str]:
    """Imports of one mutation run's modules by the other's."""
    (one, other) = MUTATION_RUNS.values()
    return sorted(
        f"{module} imports {imported}"
        for mine, theirs in ((one, other), (other, one))
        for module in mine
        for imported in graph.get(module, frozenset())
        if imported in theirs
    )


def cycle(graph: dict[str, frozenset[str]]) -> str | None:
    """One import cycle, as "a -> b -> a", or None."""
    for start in sorted(graph):
        stack = [(start, [start])]
        seen = {start}
        while stack:
            module, path = stack.pop()
            for imported in sorted(graph[module]):
                if imported == start:
                    return " -> ".join([*path, start])
                if imported not in seen:
                    seen.add(imported)
                    stack.append((imported, [*path, imported]))
    return None


@pytest.mark.parametrize(("layer", "forbidden"), FORBIDDEN, ids=[layer for layer, _ in FORBIDDEN])
def test_a_layer_imports_nothing_above_it(layer: str, forbidden: list[str]) -> None:
    assert crossings(imports(), layer, forbidden) == []


@pytest.mark.parametrize(("layer", "allowed"), ONLY, ids=[layer for layer, _ in ONLY])
def test_a_module_imports_only_what_it_needs(layer: str, allowed: list[str]) -> None:
    graph = imports()
    assert any(inside(module, layer) for module in graph)  # it reads them
    assert beyond(graph, layer, allowed) == []


def test_no_module_imports_itself_through_others() -> None:
    assert cycle(imports()) is None


def test_nothing_below_the_command_line_imports_it() -> None:
    assert reaching_up_to_the_command_line(imports()) == []


def test_a_command_imports_no_other_command() -> None:
    graph = imports()
    assert {"harness.commands.check", "harness.commands.record"} <= set(graph)  # it reads them
    assert set(graph) >= SHARED_BY_COMMANDS
    assert command_to_command(graph) == []


def test_the_two_mutation_runs_share_modules_but_not_each_others() -> None:
    graph = imports()
    assert set(graph) >= set().union(*MUTATION_RUNS.values())  # it reads them
    assert run_to_run(graph) == []
    mixed = {**graph, "harness.mutation.sdk_report": frozenset({"harness.mutation.round_trip"})}
    assert run_to_run(mixed) == ["harness.mutation.sdk_report imports harness.mutation.round_trip"]


def test_the_reading_sees_the_command_line_imported_from_below() -> None:
    graph = {
        "harness.__main__": frozenset({"harness.cli"}),
        "harness.cli": frozenset({"harness.commands.check", "harness.commands.run"}),
        "harness.commands.check": frozenset({"harness.commands.inputs", "harness.commands.run"}),
        "harness.commands.run": frozenset({"harness.commands.inputs"}),
        "harness.commands.inputs": frozenset(),
        "harness.report": frozenset({"harness.commands.inputs"}),
    }
    assert reaching_up_to_the_command_line(graph) == [
        "harness.report imports harness.commands.inputs"
    ]
    assert command_to_command(graph) == ["harness.commands.check imports harness.commands.run"]


def test_the_reading_sees_a_cycle_and_a_crossing() -> None:
    """The checks above can fail: fed a graph with a cycle and a forbidden import, they do."""
    graph = {
        "harness.checkers.x": frozenset({"harness.targets.base", "harness.checkers.y"}),
        "harness.checkers.y": frozenset({"harness.checkers.x"}),
        "harness.targets.base": frozenset({"harness"}),
        "harness": frozenset(),
    }
    assert crossings(graph, "harness.checkers", ["harness.targets"]) == [
        "harness.checkers.x imports harness.targets.base"
    ]
    assert crossings(graph, "harness.targets", ["harness"]) == []  # its __version__ only
    assert cycle(graph) == "harness.checkers.x -> harness.checkers.y -> harness.checkers.x"
    assert cycle({**graph, "harness.checkers.y": frozenset()}) is None
    stores = {"fakes.stores": frozenset({"fakes.log", "scenarios.corruptions", "scenarios.model"})}
    assert beyond(stores, "fakes", ["scenarios.corruptions"]) == [
        "fakes.stores imports scenarios.model"
    ]

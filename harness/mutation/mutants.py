"""The mutants of a mutmut 3 run: starting it, and reading back what it left.

mutmut leaves ``mutants/<file>.py.meta`` (an exit code per mutant) and
``mutants/mutmut-stats.json`` (the tests that cover each function) in the tree it ran in;
``mutmut show NAME`` gives one mutant's diff.  Both runs, the round trip and the SDK, read
them here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Final

# exit codes mutmut 3 records per mutant
KILLED: Final = frozenset({1, 3})
SURVIVED: Final = frozenset({0})
NO_TESTS: Final = frozenset({33, 5})
TIMEOUT: Final = frozenset({36, 24, -24})


class MutationError(RuntimeError):
    """mutmut did not run, or left no results; the message is one line."""


@dataclass(frozen=True)
class Mutant:
    name: str  # e.g. harness.reference.naming.x__quote__mutmut_5
    module: str  # harness.reference.naming
    function: str  # _quote, SubAgentTool.prepare
    status: str  # killed | survived | no tests | timeout | not run
    direction: str = ""  # of the round trip; the SDK run has none

    @property
    def mangled_function(self) -> str:
        return self.name.rsplit("__mutmut_", 1)[0]


def short_name(name: str) -> str:
    """A mutant's name without its module: ``x__quote__mutmut_5``."""
    return name.rsplit(".", 1)[-1]


@dataclass
class Result:
    mutants: list[Mutant]
    diffs: dict[str, str] = field(default_factory=dict)
    tests: dict[str, list[str]] = field(default_factory=dict)  # mangled function -> tests

    def of(self, status: str) -> list[Mutant]:
        return [mutant for mutant in self.mutants if mutant.status == status]


NAME: Final = re.compile(r"^(?P<module>.+)\.x(?:ǁ(?P<cls>[^ǁ]+)ǁ|_)(?P<function>.+)__mutmut_\d+$")


def parse_name(name: str) -> tuple[str, str]:
    """(module, function) of a mutmut 3 mutant name; methods come as ``Class.method``."""
    match = NAME.match(name)
    if match is None:
        raise MutationError(f"not a mutmut 3 mutant name: {name!r}")
    function = match["function"]
    if match["cls"]:
        function = f"{match['cls']}.{function}"
    return match["module"], function


def status_of(code: int | None) -> str:
    if code is None:
        return "not run"
    if code in KILLED:
        return "killed"
    if code in SURVIVED:
        return "survived"
    if code in NO_TESTS:
        return "no tests"
    if code in TIMEOUT:
        return "timeout"
    return f"exit {code}"


def no_direction(module: str, function: str) -> str:
    return ""


def read_results(workdir: Path, direction: Callable[[str, str], str] = no_direction) -> Result:
    """The mutants of the last ``mutmut run`` in ``workdir``, each given its ``direction``."""
    metas = sorted((workdir / "mutants").rglob("*.py.meta"))
    if not metas:
        raise MutationError(f"{workdir / 'mutants'}: no mutmut results (did mutmut run?)")
    mutants = []
    for meta in metas:
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        for name, code in sorted(codes.items()):
            module, function = parse_name(name)
            mutants.append(
                Mutant(name, module, function, status_of(code), direction(module, function))
            )
    stats_path = workdir / "mutants" / "mutmut-stats.json"
    tests: dict[str, list[str]] = {}
    if stats_path.exists():
        stats = json.loads(stats_path.read_text(encoding="utf-8"))
        tests = {
            key: sorted(value) for key, value in stats["tests_by_mangled_function_name"].items()
        }
    return Result(mutants, tests=tests)


def mutmut_version() -> str:
    try:
        return version("mutmut")
    except PackageNotFoundError:
        raise MutationError("mutmut is not installed (the mutation extra)") from None


def listed(module_path: str, source: str) -> list[str]:
    """The full names of the mutants mutmut makes of ``source``, the module at ``module_path``
    (relative to a source path), without running anything: from mutmut 3.8's own generator,
    so they are the names ``mutmut run`` gives (a run's results are checked against them)."""
    try:
        from mutmut.mutation.file_mutation import mutate_file_contents

        names = mutate_file_contents(module_path, source).mutant_names
    except (ImportError, AttributeError):
        raise MutationError(
            f"mutmut {mutmut_version()} cannot list its mutants before a run; expected "
            "mutmut 3.8 or later (a shard runs only its own)"
        ) from None
    module = module_path.removesuffix(".py").replace("/", ".")
    return sorted(f"{module}.{name}" for name in names)


def run_mutmut(workdir: Path, patterns: Iterable[str], max_children: int) -> None:
    """``mutmut run`` in ``workdir`` (only ``patterns`` if any), its progress on stderr."""
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children)]
    finished = subprocess.run([*command, *patterns], cwd=workdir, check=False)
    if finished.returncode != 0:
        raise MutationError(f"mutmut run exited {finished.returncode}")


# every diff in one process: each ``mutmut show`` costs a second of interpreter and mutmut
# start-up, once per survivor otherwise; its output, then a line holding only ENDED
SHOW_EACH: Final = """
import sys
from mutmut.__main__ import cli
for name in sys.argv[1:]:
    cli.main(["show", name], standalone_mode=False)
    print("\\0", flush=True)
"""
ENDED: Final = "\0"


def show(workdir: Path, names: Iterable[str]) -> dict[str, str]:
    """Each mutant's diff (``mutmut show``), by name, from one mutmut process."""
    wanted = list(names)
    if not wanted:
        return {}
    finished = subprocess.run(
        [sys.executable, "-c", SHOW_EACH, *wanted],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )
    shown = finished.stdout.split(f"\n{ENDED}\n")
    if finished.returncode != 0 or len(shown) != len(wanted) + 1:
        raise MutationError(
            f"mutmut show exited {finished.returncode} after {len(shown) - 1} of "
            f"{len(wanted)} diffs: {finished.stderr.strip().splitlines()[-1:] or ['no error']}"
        )
    return {
        name: "\n".join(line for line in text.splitlines() if not line.startswith("# "))
        for name, text in zip(wanted, shown, strict=False)
    }

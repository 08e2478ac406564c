"""Mutation testing of the reference's round trip: ``python -m harness mutate``.

mutmut 3 mutates the round-trip code (configured under ``[tool.mutmut]`` in ``pyproject.toml``):
naming (up), routing (down), continuation store and restore, and the agent-as-tool resume path;
the suite it runs against each mutant is the fast part of ours that covers that code.  This
module runs it, reads its results (``mutants/<file>.py.meta``: an exit code per mutant;
``mutants/mutmut-stats.json``: the tests that cover each function), and writes
``reports/mutation.md`` (a pull-request comment) and ``reports/mutation.json``: a score per
direction, every survivor with its diff and the tests that ran against it, timeouts and
untested mutants.  A survivor passes only if ``mutation/equivalent.yaml`` lists it with the
reason it cannot change behaviour; any other survivor fails the run (exit 1).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

ROOT: Final = Path(__file__).resolve().parent.parent
EQUIVALENT: Final = ROOT / "mutation" / "equivalent.yaml"
DIRECTIONS: Final = ("up", "down", "store", "restore", "resume")
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
    direction: str

    @property
    def mangled_function(self) -> str:
        return self.name.rsplit("__mutmut_", 1)[0]


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


def direction(module: str, function: str) -> str:
    """Which direction of the round trip a function belongs to."""
    name = module.rsplit(".", 1)[-1]
    if name == "naming":
        return "up"
    if name == "routing":
        return "down"
    if name == "continuation":
        return "store" if function in ("store", "digest") else "restore"
    return "resume"


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


def read_results(workdir: Path) -> Result:
    """The mutants of the last ``mutmut run`` in ``workdir``."""
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


def load_equivalent(path: Path = EQUIVALENT) -> dict[str, str]:
    """Reviewed equivalent mutants: name -> the reason it cannot change behaviour."""
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    entries: dict[str, str] = {}
    for index, entry in enumerate(data):
        if not isinstance(entry, dict) or not {"mutant", "reason"} <= set(entry):
            raise MutationError(f"{path}: [{index}]: expected a mapping with mutant and reason")
        if len(str(entry["reason"]).strip()) < 10:
            raise MutationError(f"{path}: [{index}].reason: a reason a reviewer can check")
        entries[str(entry["mutant"])] = str(entry["reason"]).strip()
    return entries


def run_mutmut(workdir: Path, patterns: Iterable[str], max_children: int) -> None:
    """``mutmut run`` in ``workdir`` (only ``patterns`` if any), its progress on stderr."""
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children)]
    finished = subprocess.run([*command, *patterns], cwd=workdir, check=False)
    if finished.returncode != 0:
        raise MutationError(f"mutmut run exited {finished.returncode}")


def show(workdir: Path, name: str) -> str:
    """The diff of one mutant (``mutmut show``)."""
    finished = subprocess.run(
        [sys.executable, "-m", "mutmut", "show", name],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = finished.stdout.splitlines()
    return "\n".join(line for line in lines if not line.startswith("# "))


def changed_functions(workdir: Path, since: str, files: Iterable[str]) -> list[str]:
    """mutmut name patterns for the functions whose lines changed since the git ref ``since``."""
    patterns = []
    for path in files:
        diff = subprocess.run(
            ["git", "diff", "-U0", since, "--", path],
            cwd=workdir,
            capture_output=True,
            text=True,
            check=False,
        )
        if diff.returncode != 0:
            raise MutationError(f"--since {since}: git diff failed: {diff.stderr.strip()}")
        lines = {
            int(start) + offset
            for start, count in re.findall(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", diff.stdout, re.M)
            for offset in range(max(int(count or 1), 1))
        }
        module = path.removesuffix(".py").replace("/", ".")
        for qualified, (first, last) in _functions(workdir / path).items():
            if any(first <= line <= last for line in lines):
                cls, _, function = qualified.rpartition(".")
                patterns.append(
                    f"{module}.xǁ{cls}ǁ{function}__mutmut_*"
                    if cls
                    else f"{module}.x_{function}__mutmut_*"
                )
    return sorted(set(patterns))


def _functions(path: Path) -> dict[str, tuple[int, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        name: (function.lineno, function.end_lineno or function.lineno)
        for name, function in functions_of(tree)
    }


def functions_of(
    tree: ast.AST, prefix: str = ""
) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method in a syntax tree, by qualified name ("Class.method")."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((prefix + child.name, child))
        elif isinstance(child, ast.ClassDef):
            found.extend(functions_of(child, f"{prefix}{child.name}."))
    return found


def document(result: Result, equivalent: dict[str, str], since: str | None) -> dict[str, Any]:
    scores = {}
    for name in DIRECTIONS:
        mine = [mutant for mutant in result.mutants if mutant.direction == name]
        killed = sum(mutant.status == "killed" for mutant in mine)
        allowed = sum(mutant.status == "survived" and mutant.name in equivalent for mutant in mine)
        judged = len(mine) - allowed
        scores[name] = {
            "mutants": len(mine),
            "killed": killed,
            "equivalent": allowed,
            "score": None if not judged else round(killed / judged, 4),
        }
    survivors = [
        {
            "mutant": mutant.name,
            "direction": mutant.direction,
            "function": f"{mutant.module}.{mutant.function}",
            "diff": result.diffs.get(mutant.name, ""),
            "tests": result.tests.get(mutant.mangled_function, []),
            "equivalent": equivalent.get(mutant.name),
        }
        for mutant in result.of("survived")
    ]
    unreviewed = [entry["mutant"] for entry in survivors if entry["equivalent"] is None]
    stale = stale_reviews(result, equivalent, whole=since is None)
    return {
        "since": since,
        "scores": scores,
        "survivors": survivors,
        "timeouts": [mutant.name for mutant in result.of("timeout")],
        "untested": [mutant.name for mutant in result.of("no tests")],
        "unreviewed": unreviewed,
        "stale_reviews": stale,
        "passes": not unreviewed and not stale,
    }


def stale_reviews(result: Result, equivalent: dict[str, str], *, whole: bool) -> list[str]:
    """Reviews that excuse no survivor: their mutant was killed, or (in a run of the whole
    round trip) no longer exists.  mutmut numbers a function's mutants in order, so after the
    code changes a name can stand for another mutant; a review left behind must be dropped
    or redone, never kept to excuse whatever comes to carry its name."""
    status = {mutant.name: mutant.status for mutant in result.mutants}
    return sorted(
        name
        for name in equivalent
        if (name in status and status[name] != "survived") or (whole and name not in status)
    )


def markdown(report: dict[str, Any]) -> str:
    lines = ["# Mutation testing: the reference's round trip", ""]
    if report["since"]:
        lines += [f"Functions changed since `{report['since']}` only.", ""]
    lines += ["| direction | mutants | killed | equivalent (reviewed) | score |"]
    lines += ["|---|---:|---:|---:|---:|"]
    for name, score in report["scores"].items():
        shown = "-" if score["score"] is None else f"{100 * score['score']:.1f}%"
        lines.append(
            f"| {name} | {score['mutants']} | {score['killed']} | {score['equivalent']} | {shown} |"
        )
    lines.append("")
    unreviewed = [s for s in report["survivors"] if s["equivalent"] is None]
    lines += [f"## Survivors not reviewed ({len(unreviewed)})", ""]
    for survivor in unreviewed:
        tests = survivor["tests"]
        lines += [f"### `{survivor['mutant']}` ({survivor['direction']})", ""]
        lines += ["```diff", survivor["diff"].strip(), "```", ""]
        lines += [f"{len(tests)} tests ran against it" + (f", e.g. `{tests[0]}`" if tests else "")]
        lines.append("")
    reviewed = [s for s in report["survivors"] if s["equivalent"] is not None]
    if reviewed:
        lines += [f"## Equivalent mutants (reviewed: {len(reviewed)})", ""]
        lines += [f"- `{s['mutant']}`: {s['equivalent']}" for s in reviewed]
        lines.append("")
    if report["stale_reviews"]:
        lines += [f"## Reviews that excuse no survivor ({len(report['stale_reviews'])})", ""]
        lines += ["Killed or gone: drop the review from mutation/equivalent.yaml, or redo it.", ""]
        lines += [f"- `{name}`" for name in report["stale_reviews"]] + [""]
    for key, title in (("timeouts", "Timeouts"), ("untested", "Mutants no test reaches")):
        if report[key]:
            lines += [f"## {title}", ""] + [f"- `{name}`" for name in report[key]] + [""]
    lines.append(
        "Verdict: "
        + ("passes" if report["passes"] else "fails: survivors to kill or review, or stale reviews")
    )
    return "\n".join(lines) + "\n"


def mutate(
    workdir: Path,
    since: str | None,
    max_children: int,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run mutmut on the round-trip code (or the functions changed since ``since``) and build
    the report document."""
    files = _configured_files(workdir)
    patterns = changed_functions(workdir, since, files) if since else []
    if since and not patterns:
        return document(Result([]), {}, since)
    run_mutmut(workdir, patterns, max_children)
    result = read_results(workdir)
    if patterns:
        wanted = [re.compile(re.escape(p).replace(r"\*", ".*")) for p in patterns]
        result.mutants = [m for m in result.mutants if any(w.fullmatch(m.name) for w in wanted)]
    for mutant in result.of("survived"):
        if progress is not None:
            progress(f"diff of {mutant.name}")
        result.diffs[mutant.name] = show(workdir, mutant.name)
    return document(result, load_equivalent(), since)


def _configured_files(workdir: Path) -> list[str]:
    import tomllib

    config = tomllib.loads((workdir / "pyproject.toml").read_text(encoding="utf-8"))
    files: list[str] = config["tool"]["mutmut"]["only_mutate"]
    return files

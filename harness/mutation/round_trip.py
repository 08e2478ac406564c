"""Mutation testing of the reference's round trip: ``python -m harness mutate``.

mutmut 3 mutates the round-trip code (configured under ``[tool.mutmut]`` in ``pyproject.toml``):
naming (up), routing (down), continuation store and restore, and the agent-as-tool resume path;
the suite it runs against each mutant is the fast part of ours that covers that code.  This
module runs it (on every function, or on those changed since a git ref) and reads its results
back, each mutant given its direction; ``round_trip_report`` turns them into the report.  A
survivor passes only if ``mutation/equivalent.yaml`` lists it with the reason it cannot change
behaviour.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from harness.mutation import ROOT
from harness.mutation.mutants import MutationError, Result, read_results, run_mutmut, show
from harness.mutation.reviews import read_reviews
from harness.mutation.round_trip_report import document
from harness.mutation.source import function_lines

EQUIVALENT: Final = ROOT / "mutation" / "equivalent.yaml"
# what mutmut's run of the round trip reads: its configuration, the code and the tests
RUN_TREE: Final = ("pyproject.toml", "conftest.py", "harness", "scenarios", "fakes", "tests")
NO_BYTECODE: Final = shutil.ignore_patterns("__pycache__", "*.pyc")


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


def load_equivalent(path: Path = EQUIVALENT) -> dict[str, str]:
    """Reviewed equivalent mutants: name -> the reason it cannot change behaviour."""
    return {str(review["mutant"]): str(review["reason"]).strip() for review in read_reviews(path)}


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
        for qualified, (first, last) in function_lines(workdir / path).items():
            if any(first <= line <= last for line in lines):
                cls, _, function = qualified.rpartition(".")
                patterns.append(
                    f"{module}.xǁ{cls}ǁ{function}__mutmut_*"
                    if cls
                    else f"{module}.x_{function}__mutmut_*"
                )
    return sorted(set(patterns))


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
    with copy_without_bytecode(workdir) as tree:
        run_mutmut(tree, patterns, max_children)
        result = read_results(tree, direction)
        if patterns:
            wanted = [re.compile(re.escape(p).replace(r"\*", ".*")) for p in patterns]
            result.mutants = [m for m in result.mutants if any(w.fullmatch(m.name) for w in wanted)]
        survivors = [mutant.name for mutant in result.of("survived")]
        if progress is not None and survivors:
            progress(f"diffs of {len(survivors)} survivors")
        result.diffs.update(show(tree, survivors))
    return document(result, load_equivalent(), since)


@contextmanager
def copy_without_bytecode(workdir: Path) -> Iterator[Path]:
    """A scratch copy of what the run reads (``RUN_TREE``), without ``__pycache__``.

    mutmut copies its ``also_copy`` directories into ``mutants/`` as it starts.  In the checkout
    they are not still: under ``tox p`` another environment's pytest writes its bytecode there
    (a ``.pyc.<pid>`` file, renamed as it is done), and a file listed and gone before it is
    copied failed the whole run (``shutil.Error``, once, on a busy machine).  Nothing writes in
    the copy, and the bytecode, which is never needed, is left behind."""
    with tempfile.TemporaryDirectory(prefix="nested-interrupt-mutation-") as scratch:
        tree = Path(scratch)
        for name in RUN_TREE:
            source = workdir / name
            if source.is_dir():
                shutil.copytree(source, tree / name, ignore=NO_BYTECODE)
            else:
                shutil.copy2(source, tree / name)
        yield tree


def _configured_files(workdir: Path) -> list[str]:
    config = tomllib.loads((workdir / "pyproject.toml").read_text(encoding="utf-8"))
    files: list[str] = config["tool"]["mutmut"]["only_mutate"]
    return files

"""Mutation testing of a real SDK's agent-as-tool module: ``python -m harness mutate --sdk NAME``.

Both scratch trees (``sdk``) hold the same source, so mutmut names the same mutants in both and
the two results join by name; ``sdk_report`` gives three kill rates (the SDK's suite, the
harness, both) and the mutants only the harness kills.  A timeout counts as detected: the suite
hung.  The figure that matters is the behaviour-changing mutants each suite leaves alive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from harness.mutation import ROOT
from harness.mutation.classify import load_reviewed, mutant_functions
from harness.mutation.mutants import Mutant, MutationError, read_results, run_mutmut
from harness.mutation.sdk import (
    SUITES,
    Sdk,
    fetch_sdk_tests,
    installed,
    prepare_tree,
    strip_neutral_decorators,
)
from harness.mutation.sdk_report import document


def equivalents_file(sdk: Sdk, release: str) -> Path:
    return ROOT / "mutation" / f"{sdk.name}-{release}.yaml"


def mutate_sdk(
    sdk: Sdk,
    workdir: Path,
    max_children: int,
    progress: Callable[[str], None] | None = None,
    *,
    rerun: bool = True,
    suites: Iterable[str] = SUITES,
) -> dict[str, Any]:
    """Copy the installed SDK into scratch trees under ``workdir``, run mutmut with each suite,
    and build the report document.  Only the ``suites`` named are rebuilt and rerun (after
    editing the harness's tests, say, the SDK's suite need not run again); the others' last
    results are read back.  Without ``rerun``, read every tree's last results instead (after
    editing the reviewed file, say)."""
    rerun_suites = frozenset(suites) if rerun else frozenset()
    unknown = sorted(rerun_suites - set(SUITES))
    if unknown:
        raise MutationError(f"unknown suite {unknown[0]!r}; expected one of: {', '.join(SUITES)}")
    package_dir, release = installed(sdk)
    reviewed = load_reviewed(equivalents_file(sdk, release))
    sdk_tests = None
    if "sdk" in rerun_suites:
        sdk_tests = fetch_sdk_tests(sdk, release, workdir / "download")
    results: dict[str, dict[str, Mutant]] = {}
    unmutated: list[str] = []
    for suite in SUITES:
        tree = workdir / f"{sdk.name}-{release}" / suite
        if suite in rerun_suites:
            if progress is not None:
                progress(f"{suite} suite: mutmut in {tree}")
            prepare_tree(tree, suite, sdk, package_dir, sdk_tests)
            run_mutmut(tree, [], max_children)
        source = (tree / sdk.module_path).read_text(encoding="utf-8")
        unmutated = strip_neutral_decorators(source, sdk.neutral_decorators)[1]
        results[suite] = {mutant.name: mutant for mutant in read_results(tree).mutants}
    functions = mutant_functions(workdir / f"{sdk.name}-{release}" / "sdk", sdk.module_path)
    return document(sdk, release, results, functions, reviewed, unmutated)

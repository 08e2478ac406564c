"""Mutation testing of a real SDK's agent-as-tool module: ``python -m harness mutate --sdk NAME``.

Both scratch trees (``sdk``) hold the same source, so mutmut names the same mutants in both and
the two results join by name; ``sdk_report`` gives three kill rates (the SDK's suite, the
harness, both) and the mutants only the harness kills.  A timeout counts as detected: the suite
hung.  The figure that matters is the behaviour-changing mutants each suite leaves alive.

A run gives a shard result (``shards``): the whole run is shard 1/1; ``--shard I/N`` lists the
module's mutants first and has mutmut run only that shard's, in both trees.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from harness.mutation import ROOT
from harness.mutation.classify import Reviewed, load_reviewed, mutant_functions
from harness.mutation.mutants import (
    Mutant,
    MutationError,
    listed,
    mutmut_version,
    read_results,
    run_mutmut,
)
from harness.mutation.sdk import (
    SDKS,
    SUITES,
    Sdk,
    fetch_sdk_tests,
    installed,
    prepare_tree,
    strip_neutral_decorators,
)
from harness.mutation.sdk_report import Header, document, observe
from harness.mutation.shards import WHOLE, Merged, Shard, shard_result


def equivalents_file(sdk: Sdk, release: str) -> Path:
    return ROOT / "mutation" / f"{sdk.name}-{release}.yaml"


def header(sdk: Sdk, release: str) -> dict[str, str]:
    return {
        "sdk": sdk.name,
        "distribution": sdk.distribution,
        "version": release,
        "module": sdk.module_path,
        "mutmut": mutmut_version(),
    }


def mutate_sdk(
    sdk: Sdk,
    workdir: Path,
    max_children: int,
    progress: Callable[[str], None] | None = None,
    *,
    rerun: bool = True,
    suites: Iterable[str] = SUITES,
    shard: Shard = WHOLE,
) -> dict[str, Any]:
    """Copy the installed SDK into scratch trees under ``workdir``, run mutmut with each suite
    on the mutants of ``shard``, and give the shard result.  Only the ``suites`` named are
    rebuilt and rerun (after editing the harness's tests, say, the SDK's suite need not run
    again); the others' last results are read back.  Without ``rerun``, read every tree's last
    results instead (after editing the reviewed file, say)."""
    rerun_suites = frozenset(suites) if rerun else frozenset()
    unknown = sorted(rerun_suites - set(SUITES))
    if unknown:
        raise MutationError(f"unknown suite {unknown[0]!r}; expected one of: {', '.join(SUITES)}")
    package_dir, release = installed(sdk)
    about = header(sdk, release)
    source, unmutated = strip_neutral_decorators(
        (package_dir / sdk.module).read_text(encoding="utf-8"), sdk.neutral_decorators
    )
    names: list[str] | None = None  # every mutant
    every: list[str] = []
    if shard != WHOLE:
        if progress is not None:
            progress(f"listing the mutants of {sdk.module_path} for shard {shard}")
        every = listed(sdk.module_path, source)
        names = [name for name in every if shard.holds(name)]
        if not names:  # nothing to run in either tree
            return shard_result(about, unmutated, every, shard, [], sorted(rerun_suites))
    sdk_tests = None
    if "sdk" in rerun_suites:
        sdk_tests = fetch_sdk_tests(sdk, release, workdir / "download")
    results: dict[str, dict[str, Mutant]] = {}
    for suite in SUITES:
        tree = workdir / f"{sdk.name}-{release}" / suite
        if suite in rerun_suites:
            if progress is not None:
                progress(f"{suite} suite: mutmut in {tree}")
            prepare_tree(tree, suite, sdk, package_dir, sdk_tests)
            run_mutmut(tree, names or [], max_children)
        results[suite] = {mutant.name: mutant for mutant in read_results(tree).mutants}
    if names is not None and set(results["sdk"]) != set(every):
        raise MutationError(
            f"mutmut {about['mutmut']} made other mutants of {sdk.module_path} than it listed "
            f"({len(results['sdk'])}, not {len(every)})"
        )
    functions = mutant_functions(workdir / f"{sdk.name}-{release}" / "sdk", sdk.module_path)
    observed = observe(results, functions, names)
    return shard_result(
        about, unmutated, sorted(results["sdk"]), shard, observed, sorted(rerun_suites)
    )


def reviews_of(header: Header) -> tuple[Reviewed, str]:
    """The reviewed survivors of the SDK release a run was of, and their file (as shown)."""
    sdk = SDKS.get(header["sdk"])
    if sdk is None:
        raise MutationError(f"unknown SDK {header['sdk']!r}; expected one of: {', '.join(SDKS)}")
    path = equivalents_file(sdk, header["version"])
    shown = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    return load_reviewed(path), shown


def report_of(merged: Merged) -> dict[str, Any]:
    """The report of a whole run (its shards merged), the reviews of its release applied."""
    reviewed, shown = reviews_of(merged.header)
    return document(merged.header, merged.unmutated, merged.observed, reviewed, shown)

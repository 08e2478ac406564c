"""A real SDK to mutate, and the scratch working trees its mutants run in.

The installed SDK package is copied into two scratch trees (site-packages is never touched, and
nothing of the SDK is committed): one runs the SDK's own unit tests (the ``tests/`` of its
source distribution, fetched from PyPI) against each mutant, the other the harness's suite for
that SDK's target.  mutmut skips decorated functions; behaviour-neutral decorators
(``@override``) are dropped in the copy, and every function left unmutated is listed.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import tarfile
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path
from typing import Final

from harness.mutation import ROOT
from harness.mutation.mutants import MutationError
from harness.mutation.source import functions_of

SUITES: Final = ("sdk", "harness")
KEPT_DECORATORS: Final = frozenset({"staticmethod", "classmethod"})  # mutmut mutates under these
IGNORED: Final = shutil.ignore_patterns("__pycache__", "*.pyc")


@dataclass(frozen=True)
class Sdk:
    """An SDK whose agent-as-tool module the harness can mutation-test."""

    name: str  # the harness target's name
    distribution: str  # on PyPI
    package: str  # the import name
    module: str  # the module to mutate, relative to the package directory
    sdk_tests: tuple[str, ...]  # the SDK's own tests that exercise it (paths in its sdist)
    harness_tests: tuple[str, ...]  # the harness's suite for this SDK's target
    neutral_decorators: frozenset[str] = frozenset({"override"})

    @property
    def module_path(self) -> str:
        return f"{self.package}/{self.module}"


SDKS: Final = {
    "strands": Sdk(
        name="strands",
        distribution="strands-agents",
        package="strands",
        module="agent/_agent_as_tool.py",
        sdk_tests=(
            "tests/strands/agent/test_agent_as_tool.py",
            "tests/strands/agent/test_agent_delegation.py",
            "tests/strands/agent/test_agent.py",
            "tests/strands/tools/test_registry.py",
        ),
        harness_tests=("tests/test_strands_target.py", "tests/test_strands_agent_as_tool.py"),
    ),
}


def installed(sdk: Sdk) -> tuple[Path, str]:
    """The installed package's directory and its distribution's version."""
    spec = find_spec(sdk.package)
    try:
        release = version(sdk.distribution)
    except PackageNotFoundError:
        release = None
    if spec is None or spec.origin is None or release is None:
        raise MutationError(f"--sdk {sdk.name}: {sdk.distribution} is not installed")
    return Path(spec.origin).parent, release


def fetch_sdk_tests(sdk: Sdk, release: str, cache: Path) -> Path:
    """The ``tests/`` of the SDK's source distribution (downloaded once into ``cache``)."""
    unpacked = cache / f"{sdk.distribution}-{release}"
    if (unpacked / "tests").is_dir():
        return unpacked / "tests"
    cache.mkdir(parents=True, exist_ok=True)
    download = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"),
            *("--no-binary", ":all:", "--dest", str(cache), f"{sdk.distribution}=={release}"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    archives = sorted(cache.glob(f"{sdk.distribution.replace('-', '_')}-{release}.tar.gz"))
    if download.returncode != 0 or not archives:
        last = (download.stderr.strip().splitlines() or ["no archive"])[-1]
        raise MutationError(f"--sdk {sdk.name}: cannot download its sdist {release}: {last}")
    staging = cache / "staging"
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(archives[0]) as archive:
        members = [m for m in archive.getmembers() if m.name.split("/")[1:2] == ["tests"]]
        archive.extractall(staging, members=members, filter="data")
    (root,) = staging.iterdir()
    unpacked.mkdir(parents=True, exist_ok=True)
    shutil.move(root / "tests", unpacked / "tests")
    shutil.rmtree(staging)
    return unpacked / "tests"


def strip_neutral_decorators(source: str, neutral: Iterable[str]) -> tuple[str, list[str]]:
    """``source`` without the behaviour-neutral decorators, and the functions mutmut will still
    skip (those that keep another decorator), by qualified name."""
    tree = ast.parse(source)
    dropped: set[int] = set()
    unmutated: list[str] = []
    names = frozenset(neutral)
    for qualified, function in functions_of(tree):
        kept = []
        for decorator in function.decorator_list:
            if _decorator_name(decorator) in names:
                end = decorator.end_lineno or decorator.lineno
                dropped.update(range(decorator.lineno, end + 1))
            else:
                kept.append(_decorator_name(decorator))
        if any(name not in KEPT_DECORATORS for name in kept):
            unmutated.append(f"{qualified} (@{', @'.join(kept)})")
    lines = source.splitlines(keepends=True)
    stripped = "".join(line for number, line in enumerate(lines, 1) if number not in dropped)
    return stripped, unmutated


def _decorator_name(decorator: ast.expr) -> str:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ast.unparse(target)


MUTMUT_SECTION: Final = """
[tool.mutmut]
source_paths = ["{package}/"]
only_mutate = ["{module}"]
also_copy = {also_copy}
pytest_add_cli_args_test_selection = {tests}
pytest_add_cli_args = {arguments}
"""


def harness_pytest_options() -> str:
    """The checkout's own pytest settings as a TOML table: its tests mark modules ``slow`` under
    ``--strict-markers``, so in a scratch tree without the markers they would not collect."""
    with (ROOT / "pyproject.toml").open("rb") as stream:
        options = tomllib.load(stream)["tool"]["pytest"]["ini_options"]
    lines = [f"{key} = {json.dumps(value)}" for key, value in options.items()]
    return "\n".join(["[tool.pytest.ini_options]", *lines]) + "\n"


def _toml_list(items: Iterable[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def prepare_tree(
    tree: Path, suite: str, sdk: Sdk, package_dir: Path, sdk_tests: Path | None
) -> list[str]:
    """Build the scratch working tree for one suite; the functions mutmut will skip."""
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    shutil.copytree(package_dir, tree / sdk.package, ignore=IGNORED)
    mutated = tree / sdk.module_path
    source, unmutated = strip_neutral_decorators(
        mutated.read_text(encoding="utf-8"), sdk.neutral_decorators
    )
    mutated.write_text(source, encoding="utf-8")
    arguments = ["-p", "no:cacheprovider"]
    if suite == "sdk":
        if sdk_tests is None:
            raise MutationError(f"--sdk {sdk.name}: its own tests are missing")
        shutil.copytree(sdk_tests, tree / "tests", ignore=IGNORED)
        tests, also_copy = sdk.sdk_tests, ["tests/"]
        # the SDK's tests run without the harness's pytest plugin
        arguments += ["-p", "no:nested_interrupt_harness"]
        header = '[tool.pytest.ini_options]\nasyncio_default_fixture_loop_scope = "function"\n'
    else:
        for name in ("harness", "scenarios", "fakes"):
            shutil.copytree(ROOT / name, tree / name, ignore=IGNORED)
        (tree / "tests").mkdir()
        for name in ("conftest.py", "tests/conftest.py", *sdk.harness_tests):
            shutil.copy2(ROOT / name, tree / name)
        tests = sdk.harness_tests
        also_copy = ["conftest.py", "scenarios/", "fakes/", "harness/", "tests/"]
        arguments += ["--snapshot-warn-unused"]
        header = harness_pytest_options()
    config = MUTMUT_SECTION.format(
        package=sdk.package,
        module=sdk.module_path,
        also_copy=_toml_list(also_copy),
        tests=_toml_list(tests),
        arguments=_toml_list(arguments),
    )
    (tree / "pyproject.toml").write_text(header + config, encoding="utf-8")
    return unmutated

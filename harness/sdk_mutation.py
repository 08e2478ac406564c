"""Mutation testing of a real SDK's agent-as-tool module: ``python -m harness mutate --sdk NAME``.

The installed SDK package is copied into two scratch working trees (site-packages is never
touched, and nothing of the SDK is committed): one runs the SDK's own unit tests (from its source
distribution on PyPI) against each mutant, the other the harness's suite for that SDK's target.
Both trees hold the same source, so mutmut names the same mutants in both and the two results join
by name: the report gives three kill rates (the SDK's suite, the harness, both) and the mutants
only the harness kills.

mutmut skips decorated functions; behaviour-neutral decorators (``@override``) are dropped in the
copy, and every function left unmutated is listed.  Survivors are classified: ``message text``
(the mutation changes only what a log call or a raised exception says, found by comparing the
mutant's syntax tree with the original's), ``equivalent`` (reviewed, with a reason, in
``mutation/<sdk>-<version>.yaml``, which may also mark a mutant ``message text`` the syntax rule
misses) or ``behaviour`` (everything else).  A timeout counts as detected: the suite hung.  The
figure that matters is the behaviour-changing mutants each suite leaves alive.
"""

from __future__ import annotations

import ast
import difflib
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

import yaml

from harness.mutation import ROOT, Mutant, MutationError, functions_of, read_results, run_mutmut

SUITES: Final = ("sdk", "harness")
BEHAVIOUR: Final = "behaviour"
MESSAGE_TEXT: Final = "message text"
EQUIVALENT: Final = "equivalent"
KEPT_DECORATORS: Final = frozenset({"staticmethod", "classmethod"})  # mutmut mutates under these
LOG_METHODS: Final = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
)
IGNORED: Final = shutil.ignore_patterns("__pycache__", "*.pyc")
DETECTED: Final = frozenset({"killed", "timeout"})


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


Function = ast.FunctionDef | ast.AsyncFunctionDef


MUTMUT_SECTION: Final = """
[tool.mutmut]
source_paths = ["{package}/"]
only_mutate = ["{module}"]
also_copy = {also_copy}
pytest_add_cli_args_test_selection = {tests}
pytest_add_cli_args = {arguments}
"""


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
        header = '[tool.pytest.ini_options]\naddopts = "-ra --strict-markers"\n'
    config = MUTMUT_SECTION.format(
        package=sdk.package,
        module=sdk.module_path,
        also_copy=_toml_list(also_copy),
        tests=_toml_list(tests),
        arguments=_toml_list(arguments),
    )
    (tree / "pyproject.toml").write_text(header + config, encoding="utf-8")
    return unmutated


# --- reading the mutants back -------------------------------------------------------------


def mutant_functions(tree: Path, sdk: Sdk) -> dict[str, Function]:
    """Every function of mutmut's rewritten module (originals and mutants) by mangled name."""
    path = tree / "mutants" / sdk.module_path
    if not path.exists():
        raise MutationError(f"{path}: mutmut wrote no mutants")
    parsed = ast.parse(path.read_text(encoding="utf-8"))
    return {function.name: function for _, function in functions_of(parsed)}


def _original_name(mutant: str) -> str:
    return mutant.rsplit(".", 1)[-1].rsplit("__mutmut_", 1)[0] + "__mutmut_orig"


def diff(functions: dict[str, Function], mutant: str) -> str:
    """The mutant against the original, as a unified diff of their unparsed source."""
    original = functions[_original_name(mutant)]
    changed = functions[mutant.rsplit(".", 1)[-1]]
    before = ast.unparse(original).replace(original.name, "_").splitlines()
    after = ast.unparse(changed).replace(changed.name, "_").splitlines()
    lines = difflib.unified_diff(before, after, "original", "mutant", n=1, lineterm="")
    return "\n".join(lines)


Pair = tuple[ast.AST, ast.AST]


def where_changed(original: ast.AST, mutant: ast.AST) -> list[Pair] | None:
    """The (original, mutant) node pairs from the root down to the smallest node the mutant
    changed (None when the two are the same)."""
    here = (original, mutant)
    if type(original) is not type(mutant):
        return [here]
    for name in original._fields:
        if name == "name" and isinstance(original, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        before, after = getattr(original, name, None), getattr(mutant, name, None)
        pairs: list[tuple[Any, Any]]
        if isinstance(before, list) and isinstance(after, list):
            if len(before) != len(after):
                return [here]
            pairs = list(zip(before, after, strict=True))
        else:
            pairs = [(before, after)]
        for left, right in pairs:
            if isinstance(left, ast.AST) and isinstance(right, ast.AST):
                inner = where_changed(left, right)
                if inner is not None:
                    return [here, *inner]
            elif left != right:
                return [here]
    return None


def is_message_text(pairs: list[Pair]) -> bool:
    """Whether a change at the end of ``chain`` only alters what a message says: it sits in a
    log call's arguments (or drops some), in the arguments of the exception a ``raise`` builds,
    or it is a string literal inside a text block (a ``"text"`` value or a ``text=`` argument,
    what a model or a human reads), changed into another string."""
    chain = [original for original, _ in pairs]
    for index, node in enumerate(chain):
        below = chain[index + 1] if index + 1 < len(chain) else None
        if isinstance(node, ast.Call) and below is not node.func:
            if _is_log_call(node):
                return True
            if below is not None and index > 0 and isinstance(chain[index - 1], ast.Raise):
                return True
    return all(map(_is_literal, pairs[-1])) and any(
        _is_text_field(node, below) for node, below in pairwise(chain)
    )


def _is_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_text_field(node: ast.AST, below: ast.AST) -> bool:
    if isinstance(node, ast.keyword):
        return node.arg == "text"
    if isinstance(node, ast.Dict):
        keys = [
            key.value if isinstance(key, ast.Constant) else None
            for key, value in zip(node.keys, node.values, strict=True)
            if value is below
        ]
        return keys == ["text"]
    return False


def _is_log_call(call: ast.Call) -> bool:
    function = call.func
    if not isinstance(function, ast.Attribute) or function.attr not in LOG_METHODS:
        return False
    owner = ast.unparse(function.value).lower()
    return owner.endswith(("logger", "log", "logging"))


Reviewed = dict[str, tuple[str, str]]  # mutant name -> (class, reason)


def load_reviewed(path: Path) -> Reviewed:
    """The reviewed survivors: each a mutant (its short name), a class (``equivalent``, or
    ``message text``) and the reason a reviewer can check."""
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    reviewed: Reviewed = {}
    for index, entry in enumerate(data if isinstance(data, list) else [data]):
        if not isinstance(entry, dict) or not {"mutant", "reason"} <= set(entry):
            raise MutationError(f"{path}: [{index}]: expected a mapping with mutant and reason")
        kind = entry.get("class", EQUIVALENT)
        if kind not in (EQUIVALENT, MESSAGE_TEXT):
            raise MutationError(f"{path}: [{index}].class: expected equivalent or message text")
        if len(str(entry["reason"]).strip()) < 10:
            raise MutationError(f"{path}: [{index}].reason: a reason a reviewer can check")
        reviewed[str(entry["mutant"])] = (kind, " ".join(str(entry["reason"]).split()))
    return reviewed


def classify(functions: dict[str, Function], mutant: str, reviewed: Reviewed) -> str:
    if _short(mutant) in reviewed:
        return reviewed[_short(mutant)][0]
    original = functions[_original_name(mutant)]
    pairs = where_changed(original, functions[mutant.rsplit(".", 1)[-1]])
    if pairs is not None and is_message_text(pairs):
        return MESSAGE_TEXT
    return BEHAVIOUR


# --- the run and its report -----------------------------------------------------------------


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
    functions = mutant_functions(workdir / f"{sdk.name}-{release}" / "sdk", sdk)
    return document(sdk, release, results, functions, reviewed, unmutated)


def document(
    sdk: Sdk,
    release: str,
    results: dict[str, dict[str, Mutant]],
    functions: dict[str, Function],
    reviewed: Reviewed,
    unmutated: list[str],
) -> dict[str, Any]:
    names = sorted(set(results["sdk"]) | set(results["harness"]))
    mismatched = set(results["sdk"]) ^ set(results["harness"])
    if mismatched:
        raise MutationError(f"the two trees named different mutants, e.g. {sorted(mismatched)[0]}")
    rows: list[dict[str, Any]] = []
    for name in names:
        status = {suite: results[suite][name].status for suite in SUITES}
        killed = {suite: status[suite] in DETECTED for suite in SUITES}
        rows.append(
            {
                "mutant": name,
                "function": results["sdk"][name].function,
                "sdk": status["sdk"],
                "harness": status["harness"],
                "class": classify(functions, name, reviewed),
                "killed_by": [suite for suite in SUITES if killed[suite]],
            }
        )
    rates = {}
    for label, suites in (("sdk", ("sdk",)), ("harness", ("harness",)), ("both", SUITES)):
        rates[label] = _rates(rows, suites)
    for row in rows:
        if row["class"] != MESSAGE_TEXT and len(row["killed_by"]) < len(SUITES):
            row["diff"] = diff(functions, row["mutant"])
        if _short(row["mutant"]) in reviewed:
            row["reason"] = reviewed[_short(row["mutant"])][1]
    behaviour_left = [r for r in rows if r["class"] == BEHAVIOUR and not r["killed_by"]]
    by_function: dict[str, dict[str, int]] = {}
    for row in rows:
        tally = by_function.setdefault(
            row["function"], {"mutants": 0, "behaviour": 0, "sdk": 0, "harness": 0}
        )
        tally["mutants"] += 1
        if row["class"] == BEHAVIOUR:
            tally["behaviour"] += 1
            for suite in row["killed_by"]:
                tally[suite] += 1
    return {
        "sdk": sdk.name,
        "distribution": sdk.distribution,
        "version": release,
        "module": sdk.module_path,
        "unmutated": unmutated,
        "rates": rates,
        "only_harness": [r["mutant"] for r in rows if r["killed_by"] == ["harness"]],
        "only_sdk": [r["mutant"] for r in rows if r["killed_by"] == ["sdk"]],
        "behaviour_left": [r["mutant"] for r in behaviour_left],
        "by_function": dict(sorted(by_function.items())),
        "mutants": rows,
    }


def _rates(rows: list[dict[str, Any]], suites: tuple[str, ...]) -> dict[str, Any]:
    def killed(row: dict[str, Any]) -> bool:
        return any(row[suite] in DETECTED for suite in suites)

    behaviour = [row for row in rows if row["class"] == BEHAVIOUR]
    return {
        "mutants": len(rows),
        "killed": sum(killed(row) for row in rows),
        "behaviour": len(behaviour),
        "behaviour_killed": sum(killed(row) for row in behaviour),
        "survivors_by_class": {
            kind: sum(row["class"] == kind and not killed(row) for row in rows)
            for kind in (BEHAVIOUR, MESSAGE_TEXT, EQUIVALENT)
        },
    }


GATE: Final = 0.95  # the harness must kill this share of the behaviour-changing mutants


def verdict(report: dict[str, Any]) -> list[str]:
    """Why the run fails, if it does: the harness kills under 95% of the behaviour-changing
    mutants, or no more of them than the SDK's own suite."""
    harness, own = report["rates"]["harness"], report["rates"]["sdk"]
    problems = []
    if not harness["behaviour"]:
        return ["no behaviour-changing mutants: nothing was measured"]
    share = harness["behaviour_killed"] / harness["behaviour"]
    if share < GATE:
        problems.append(f"the harness kills {share:.1%} of behaviour-changing mutants (< 95%)")
    if harness["behaviour_killed"] <= own["behaviour_killed"]:
        problems.append("the harness kills no more behaviour-changing mutants than the SDK's suite")
    return problems


SUITE_TITLES: Final = {
    "sdk": "the SDK's own suite",
    "harness": "the harness",
    "both": "both together",
}


def _share(part: int, whole: int) -> str:
    return "-" if not whole else f"{part}/{whole} ({100 * part / whole:.1f}%)"


def markdown(report: dict[str, Any]) -> str:
    rows = report["mutants"]
    lines = [
        f"# Mutation testing: {report['distribution']} {report['version']}, `{report['module']}`",
        "",
        f"{len(rows)} mutants of the installed SDK's agent-as-tool module (a scratch copy),"
        " each run against the SDK's own unit tests and against the harness's "
        f"`{report['sdk']}` target suite.",
        "",
        "| suite | killed | behaviour-changing killed | survivors: behaviour"
        " | message text | equivalent |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, title in SUITE_TITLES.items():
        rate = report["rates"][key]
        left = rate["survivors_by_class"]
        lines.append(
            f"| {title} | {_share(rate['killed'], rate['mutants'])} "
            f"| {_share(rate['behaviour_killed'], rate['behaviour'])} "
            f"| {left[BEHAVIOUR]} | {left[MESSAGE_TEXT]} | {left[EQUIVALENT]} |"
        )
    lines += [
        "",
        "| function | mutants | behaviour-changing | killed by the SDK's suite | by the harness |",
        "|---|---:|---:|---:|---:|",
    ]
    for function, tally in report["by_function"].items():
        lines.append(
            f"| `{function}` | {tally['mutants']} | {tally['behaviour']} "
            f"| {tally['sdk']} | {tally['harness']} |"
        )
    lines += ["", f"Killed only by the harness: {len(report['only_harness'])}; only by the SDK's"]
    lines[-1] += f" suite: {len(report['only_sdk'])}."
    lines.append("")
    if report["unmutated"]:
        lines += ["Functions mutmut does not mutate (decorated):", ""]
        lines += [f"- `{name}`" for name in report["unmutated"]]
        lines.append("")
    by_name = {row["mutant"]: row for row in rows}
    sections = (
        ("Behaviour-changing mutants nothing kills", report["behaviour_left"]),
        (
            "Behaviour-changing mutants only the SDK's suite kills",
            [n for n in report["only_sdk"] if by_name[n]["class"] == BEHAVIOUR],
        ),
        (
            "Behaviour-changing mutants only the harness kills",
            [n for n in report["only_harness"] if by_name[n]["class"] == BEHAVIOUR],
        ),
    )
    for title, names in sections:
        lines += [f"## {title} ({len(names)})", ""]
        for name in names:
            row = by_name[name]
            lines += [f"### `{_short(name)}` in `{row['function']}`", ""]
            lines += ["```diff", row.get("diff", "").strip(), "```", ""]
    reviewed = [row for row in rows if row["class"] == EQUIVALENT]
    if reviewed:
        lines += [f"## Reviewed equivalent mutants ({len(reviewed)})", ""]
        lines += [f"- `{_short(row['mutant'])}`: {row['reason']}" for row in reviewed]
        lines.append("")
    problems = verdict(report)
    lines.append("Verdict: " + ("passes" if not problems else "fails: " + "; ".join(problems)))
    return "\n".join(lines) + "\n"


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]

"""Mutation testing of a real SDK: the scratch copy, the survivor classes and the three kill
rates.  (Running mutmut on the SDK itself is ``python -m harness mutate --sdk strands``.)"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.mutation import classify, sdk_report, sdk_run
from harness.mutation.classify import BEHAVIOUR, EQUIVALENT, MESSAGE_TEXT, UNREACHABLE
from harness.mutation.mutants import Mutant, MutationError, listed, read_results, run_mutmut
from harness.mutation.sdk import SDKS, SUITES, prepare_tree, strip_neutral_decorators
from harness.mutation.shards import Shard

ROOT = Path(__file__).resolve().parent.parent

SOURCE = textwrap.dedent(
    """\
    class Tool:
        @override
        async def stream(self, use):
            yield use

        @property
        def name(self):
            return "tool"

        @staticmethod
        @override
        def make():
            return Tool()
    """
)


def test_neutral_decorators_are_dropped_and_the_functions_still_skipped_are_listed() -> None:
    stripped, unmutated = strip_neutral_decorators(SOURCE, {"override"})
    assert "@override" not in stripped
    assert "@property" in stripped
    assert "@staticmethod" in stripped
    assert unmutated == ["Tool.name (@property)"]
    ast.parse(stripped)


def _functions(source: str) -> dict[str, Any]:
    tree = ast.parse(textwrap.dedent(source))
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


MUTANTS = _functions(
    """\
    def x_f__mutmut_orig(parent, key):
        logger.debug("key=<%s> | resuming", key)
        if key not in parent:
            raise KeyError(f"no turn for {key}")
        return parent[key] + 1

    def x_f__mutmut_1(parent, key):
        logger.debug("XXkey=<%s> | resumingXX", key)
        if key not in parent:
            raise KeyError(f"no turn for {key}")
        return parent[key] + 1

    def x_f__mutmut_2(parent, key):
        logger.debug("key=<%s> | resuming", None)
        if key not in parent:
            raise KeyError(f"no turn for {key}")
        return parent[key] + 1

    def x_f__mutmut_3(parent, key):
        logger.debug("key=<%s> | resuming", key)
        if key not in parent:
            raise KeyError(None)
        return parent[key] + 1

    def x_f__mutmut_4(parent, key):
        logger.debug("key=<%s> | resuming", key)
        if key in parent:
            raise KeyError(f"no turn for {key}")
        return parent[key] + 1

    def x_f__mutmut_5(parent, key):
        logger.debug("key=<%s> | resuming", key)
        if key not in parent:
            raise KeyError(f"no turn for {key}")
        return parent[key] - 1

    def x_f__mutmut_6(parent, key):
        logger.info("key=<%s> | resuming", key)
        if key not in parent:
            raise KeyError(f"no turn for {key}")
        return parent[key] + 1

    def x_f__mutmut_7(parent, key):
        logger.debug("key=<%s> | resuming", key)
        if key not in parent:
            raise ValueError(f"no turn for {key}")
        return parent[key] + 1

    def x_g__mutmut_orig(use):
        logger.debug("use=<%s>", use)
        return {"toolUseId": use, "content": [{"text": "no result"}]}

    def x_g__mutmut_1(use):
        logger.debug(use)
        return {"toolUseId": use, "content": [{"text": "no result"}]}

    def x_g__mutmut_2(use):
        logger.debug("use=<%s>", use)
        return {"toolUseId": use, "content": [{"text": "XXno resultXX"}]}

    def x_g__mutmut_3(use):
        logger.debug("use=<%s>", use)
        return {"XXtoolUseIdXX": use, "content": [{"text": "no result"}]}

    def x_g__mutmut_4(use):
        logger.debug("use=<%s>", use)
        return {"toolUseId": use, "content": [{"text": None}]}
    """
)


@pytest.mark.parametrize(
    ("mutant", "kind"),
    [
        ("m.x_f__mutmut_1", MESSAGE_TEXT),  # a log call's format string
        ("m.x_f__mutmut_2", MESSAGE_TEXT),  # a log call's argument
        ("m.x_f__mutmut_3", MESSAGE_TEXT),  # what the raised exception says
        ("m.x_f__mutmut_4", BEHAVIOUR),  # the condition
        ("m.x_f__mutmut_5", BEHAVIOUR),  # the result
        ("m.x_f__mutmut_6", BEHAVIOUR),  # the log level is not the text
        ("m.x_f__mutmut_7", BEHAVIOUR),  # the exception's type is not the text
        ("m.x_g__mutmut_1", MESSAGE_TEXT),  # a log call that lost an argument
        ("m.x_g__mutmut_2", MESSAGE_TEXT),  # what a text block says
        ("m.x_g__mutmut_3", BEHAVIOUR),  # a key, not text
        ("m.x_g__mutmut_4", BEHAVIOUR),  # no text at all
    ],
)
def test_survivors_are_classified_from_the_syntax_trees(mutant: str, kind: str) -> None:
    assert classify.classify(MUTANTS, mutant, {}) == kind


def test_a_reviewed_equivalent_is_classified_so() -> None:
    reviewed = {
        "x_f__mutmut_5": (EQUIVALENT, "the result is never read"),
        "x_f__mutmut_4": (MESSAGE_TEXT, "only decides whether a warning is logged"),
    }
    assert classify.classify(MUTANTS, "m.x_f__mutmut_5", reviewed) == EQUIVALENT
    assert classify.classify(MUTANTS, "m.x_f__mutmut_4", reviewed) == MESSAGE_TEXT


def test_the_reviewed_file_needs_a_known_class_and_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "reviewed.yaml"
    path.write_text("- {mutant: x_f__mutmut_5, class: harmless, reason: never read anywhere}\n")
    with pytest.raises(MutationError, match=r"\[0\]\.class: expected equivalent, unreachable"):
        classify.load_reviewed(path)
    path.write_text("- {mutant: x_f__mutmut_5, reason: ok}\n")
    with pytest.raises(MutationError, match="a reason a reviewer can check"):
        classify.load_reviewed(path)
    path.write_text("- {mutant: x_f__mutmut_5, reason: the result is never read}\n")
    assert classify.load_reviewed(path) == {
        "x_f__mutmut_5": (EQUIVALENT, "the result is never read")
    }


def test_the_diff_shows_the_changed_line_only() -> None:
    shown = classify.diff(MUTANTS, "m.x_f__mutmut_5")
    assert "-    return parent[key] + 1" in shown
    assert "+    return parent[key] - 1" in shown
    assert "mutmut" not in shown


def _mutant(number: int, status: str) -> Mutant:
    return Mutant(f"m.x_f__mutmut_{number}", "m", "f", status, "resume")


def _results(sdk: dict[int, str], harness: dict[int, str]) -> dict[str, dict[str, Mutant]]:
    return {
        "sdk": {_mutant(n, s).name: _mutant(n, s) for n, s in sdk.items()},
        "harness": {_mutant(n, s).name: _mutant(n, s) for n, s in harness.items()},
    }


HEADER = {
    "sdk": "strands",
    "distribution": "strands-agents",
    "version": "9.9",
    "module": "strands/agent/_agent_as_tool.py",
    "mutmut": "3.8.1",
}


def _report(
    results: dict[str, dict[str, Mutant]], reviewed: classify.Reviewed | None = None
) -> dict[str, Any]:
    observed = sdk_report.observe(results, MUTANTS)
    return sdk_report.document(HEADER, [], observed, reviewed or {}, "mutation/strands-9.9.yaml")


def test_three_kill_rates_join_the_two_suites_by_mutant_name() -> None:
    results = _results(
        sdk={1: "survived", 3: "killed", 4: "survived", 5: "killed", 6: "survived"},
        harness={1: "survived", 3: "survived", 4: "killed", 5: "timeout", 6: "survived"},
    )
    report = _report(results)
    rates = report["rates"]
    assert [rates[s]["killed"] for s in ("sdk", "harness", "both")] == [2, 2, 3]
    # mutants 4, 5, 6 change behaviour; 1 and 3 only message text
    assert [rates[s]["behaviour_killed"] for s in ("sdk", "harness", "both")] == [1, 2, 2]
    assert rates["both"]["survivors_by_class"] == {
        BEHAVIOUR: 1,
        MESSAGE_TEXT: 1,
        EQUIVALENT: 0,
        UNREACHABLE: 0,
    }
    assert report["only_harness"] == ["m.x_f__mutmut_4"]
    assert report["only_sdk"] == ["m.x_f__mutmut_3"]
    assert report["behaviour_left"] == ["m.x_f__mutmut_6"]
    # 2 of 3 behaviour-changing mutants is under the 95% gate
    assert sdk_report.verdict(report) == [
        "the harness kills 66.7% of behaviour-changing mutants (< 95%)"
    ]
    text = sdk_report.markdown(report)
    assert "| the harness | 2/5 (40.0%) | 2/3 (66.7%) | 1 | 2 | 0 | 0 |" in text
    assert "Verdict: fails" in text


def test_the_gate_passes_when_the_harness_kills_every_behaviour_change_the_sdk_misses() -> None:
    results = _results(
        sdk={1: "survived", 4: "survived", 5: "killed"},
        harness={1: "survived", 4: "killed", 5: "killed"},
    )
    report = _report(results)
    assert sdk_report.verdict(report) == []
    assert sdk_report.markdown(report).endswith("Verdict: passes\n")


def test_the_trees_must_name_the_same_mutants() -> None:
    results = _results(sdk={1: "killed"}, harness={2: "killed"})
    with pytest.raises(MutationError, match="different mutants"):
        sdk_report.observe(results, MUTANTS)


def test_reviewed_survivors_are_counted_in_their_own_columns() -> None:
    """An equivalent and an unreachable survivor leave the behaviour-changing count, each in
    its own column and section, with its reason."""
    results = _results(
        sdk={4: "survived", 5: "survived", 6: "survived", 7: "killed"},
        harness={4: "survived", 5: "survived", 6: "killed", 7: "killed"},
    )
    reviewed = {
        "x_f__mutmut_4": (UNREACHABLE, "only a key the public API never passes reaches it"),
        "x_f__mutmut_5": (EQUIVALENT, "the result is never read"),
    }
    report = _report(results, reviewed)
    both = report["rates"]["both"]
    assert (both["behaviour"], both["behaviour_killed"]) == (2, 2)
    assert both["survivors_by_class"] == {
        BEHAVIOUR: 0,
        MESSAGE_TEXT: 0,
        EQUIVALENT: 1,
        UNREACHABLE: 1,
    }
    text = sdk_report.markdown(report)
    assert "| both together | 2/4 (50.0%) | 2/2 (100.0%) | 0 | 0 | 1 | 1 |" in text
    assert "## Reviewed unreachable mutants (1)" in text
    assert "- `x_f__mutmut_4`: only a key the public API never passes reaches it" in text
    assert "## Reviewed equivalent mutants (1)" in text


@pytest.mark.parametrize("status", ["killed", "timeout"])
@pytest.mark.parametrize("kind", [EQUIVALENT, UNREACHABLE, MESSAGE_TEXT])
def test_a_review_of_a_killed_mutant_is_refused(status: str, kind: str) -> None:
    """Whatever its class, a review excuses a survivor only: one of a mutant a suite killed
    (or hung on) is refused, naming the file, the mutant and the suite."""
    results = _results(sdk={4: status, 5: "survived"}, harness={4: "survived", 5: "survived"})
    reviewed = {
        "x_f__mutmut_4": (kind, "it looked harmless to a reviewer"),
        "x_f__mutmut_5": (EQUIVALENT, "the result is never read"),
    }
    with pytest.raises(MutationError) as refused:
        _report(results, reviewed)
    assert str(refused.value) == (
        f"mutation/strands-9.9.yaml: a review of a killed mutant: x_f__mutmut_4 ({kind}, killed "
        "by the SDK's own suite); expected reviews only of mutants no suite kills (remove them)"
    )
    del reviewed["x_f__mutmut_4"]
    assert _report(results, reviewed)["rates"]["sdk"]["killed"] == 1


def test_a_review_of_a_mutant_the_run_does_not_have_is_refused() -> None:
    results = _results(sdk={5: "survived"}, harness={5: "survived"})
    reviewed = {"x_f__mutmut_9": (EQUIVALENT, "the result is never read")}
    with pytest.raises(
        MutationError, match=r"strands-9\.9\.yaml: no such mutant in this run: x_f__mutmut_9;"
    ):
        _report(results, reviewed)


def test_the_scratch_trees_copy_the_package_and_never_touch_the_original(tmp_path: Path) -> None:
    package = tmp_path / "site" / "strands"
    (package / "agent").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    original = SOURCE.replace("class Tool", "class _AgentAsTool")
    (package / "agent" / "_agent_as_tool.py").write_text(original)
    sdk_tests = tmp_path / "sdist" / "tests"
    sdk_tests.mkdir(parents=True)
    (sdk_tests / "test_it.py").write_text("def test_it(): pass\n")
    sdk = SDKS["strands"]
    for suite in SUITES:
        tree = tmp_path / suite
        unmutated = prepare_tree(tree, suite, sdk, package, sdk_tests)
        assert unmutated == ["_AgentAsTool.name (@property)"]
        copied = (tree / "strands" / "agent" / "_agent_as_tool.py").read_text()
        assert "@override" not in copied
        config = (tree / "pyproject.toml").read_text()
        assert 'only_mutate = ["strands/agent/_agent_as_tool.py"]' in config
        assert 'source_paths = ["strands/"]' in config
    assert (package / "agent" / "_agent_as_tool.py").read_text() == original
    assert (tmp_path / "sdk" / "tests" / "test_it.py").exists()
    assert (tmp_path / "harness" / "tests" / "test_strands_target.py").exists()
    assert (tmp_path / "harness" / "harness" / "mutation" / "sdk.py").exists()


def test_the_harness_tree_collects_the_harness_tests_as_the_checkout_does(tmp_path: Path) -> None:
    """The harness's tests mark modules ``slow`` under ``--strict-markers``: a scratch tree
    without the checkout's markers failed at collection, after the SDK's 45-minute tree."""
    import strands

    sdk = SDKS["strands"]
    tree = tmp_path / "harness"
    prepare_tree(tree, "harness", sdk, Path(strands.__file__).parent, None)
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    collected = subprocess.run(
        [*command, *sdk.harness_tests],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    assert re.search(r"^\d+ tests collected", collected.stdout, re.MULTILINE)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--sdk", "nope"], "--sdk: unknown SDK 'nope'; expected one of: strands"),
        (["--sdk", "strands", "--since", "HEAD"], "--since: not with --sdk"),
        (["--report-only"], "--report-only: only with --sdk"),
        (
            ["--sdk", "strands", "--suite", "own"],
            "--suite: unknown suite 'own'; expected one of: sdk, harness",
        ),
        (["--suite", "harness"], "--suite: only with --sdk"),
        (
            ["--sdk", "strands", "--suite", "sdk", "--report-only"],
            "--suite: not with --report-only",
        ),
    ],
)
def test_a_bad_sdk_option_exits_2_with_one_line(
    arguments: list[str], message: str, tmp_path: Path
) -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "harness", "mutate", *arguments, "--reports", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert finished.returncode == 2
    assert message in finished.stderr
    assert len(finished.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


MODULE = "strands/agent/_agent_as_tool.py"
REWRITTEN = "\n".join(ast.unparse(function) for function in MUTANTS.values()) + "\n"


def _ran(tree: Path, codes: dict[int, int]) -> None:
    """What ``mutmut run`` leaves in a tree: the rewritten module and each mutant's exit code."""
    module = tree / "mutants" / MODULE
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(REWRITTEN)
    keys = {f"strands.agent._agent_as_tool.x_f__mutmut_{n}": code for n, code in codes.items()}
    (tree / "mutants" / f"{MODULE}.meta").write_text(json.dumps({"exit_code_by_key": keys}))


def test_one_suite_is_rerun_and_the_others_last_results_are_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--suite harness``: only the harness's tree is rebuilt and run again; the SDK's tree is
    neither rebuilt nor run (nor its sdist fetched), and its last results join the new ones."""
    package = tmp_path / "site" / "strands"
    (package / "agent").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agent" / "_agent_as_tool.py").write_text(SOURCE)
    workdir = tmp_path / "work"
    own_tree, harness_tree = workdir / "strands-9.9" / "sdk", workdir / "strands-9.9" / "harness"
    sdk = SDKS["strands"]
    sdk_tests = tmp_path / "sdist" / "tests"
    sdk_tests.mkdir(parents=True)
    prepare_tree(own_tree, "sdk", sdk, package, sdk_tests)
    _ran(own_tree, {3: 1, 4: 0, 5: 1})  # the SDK's suite: 3 and 5 killed, 4 survived
    harness_tree.mkdir(parents=True)
    (harness_tree / "stale").write_text("left by the previous run")
    runs: list[Path] = []

    def run_mutmut(tree: Path, patterns: list[str], max_children: int) -> None:
        runs.append(tree)
        assert (tree / "tests" / "test_strands_target.py").exists()
        _ran(tree, {3: 0, 4: 1, 5: 1})  # the harness: 4 and 5 killed, 3 survived

    def no_download(*arguments: object) -> Path:
        raise AssertionError("the SDK's own tests are fetched only to rerun its suite")

    monkeypatch.setattr(sdk_run, "installed", lambda _: (package, "9.9"))
    monkeypatch.setattr(sdk_run, "fetch_sdk_tests", no_download)
    monkeypatch.setattr(sdk_run, "run_mutmut", run_mutmut)
    result = sdk_run.mutate_sdk(sdk, workdir, 1, suites=("harness",))
    assert runs == [harness_tree]
    assert not (harness_tree / "stale").exists()
    assert result["suites_run"] == ["harness"]
    rows = {row["mutant"].rsplit("_", 1)[-1]: row for row in result["mutants"]}
    assert {n: (row["sdk"], row["harness"]) for n, row in rows.items()} == {
        "3": ("killed", "survived"),
        "4": ("survived", "killed"),
        "5": ("killed", "killed"),
    }
    with pytest.raises(MutationError, match="unknown suite 'own'"):
        sdk_run.mutate_sdk(sdk, workdir, 1, suites=("own",))


def test_mutmut_lists_the_mutants_it_makes_and_a_shard_runs_only_its_own(tmp_path: Path) -> None:
    """A shard rests on two things mutmut does: its generator, called before any run, names
    the mutants a run makes; and ``mutmut run NAMES`` runs those and no other.  Checked on a
    tiny package with real mutmut."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    source = textwrap.dedent(
        """\
        def add(a, b):
            return a + b


        def greet(name):
            if not name:
                return "nobody"
            return "hi " + name
        """
    )
    (tmp_path / "pkg" / "mod.py").write_text(source)
    (tmp_path / "tests" / "test_mod.py").write_text(
        "from pkg.mod import add, greet\n\n\ndef test_it():\n"
        "    assert add(2, 3) == 5\n    assert greet('x') == 'hi x'\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mutmut]\nsource_paths = ["pkg/"]\nonly_mutate = ["pkg/mod.py"]\n'
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:nested_interrupt_harness"]\n'
    )
    names = listed("pkg/mod.py", source)
    assert "pkg.mod.x_greet__mutmut_1" in names
    chosen = [name for name in names if Shard(1, 2).holds(name)]
    assert 0 < len(chosen) < len(names)
    run_mutmut(tmp_path, chosen, 1)
    ran = {mutant.name: mutant.status for mutant in read_results(tmp_path).mutants}
    assert sorted(ran) == names
    assert {name for name, status in ran.items() if status != "not run"} == set(chosen)

"""The pytest plugin: scenario files become test items that fail with their violations."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
REGRESSIONS = ROOT / "scenarios" / "regressions"
PLUGIN = ("-p", "no:nested_interrupt_harness", "-p", "harness.pytest_plugin")


@pytest.fixture(autouse=True)
def _import_this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


def test_scenario_files_become_items_that_pass_on_the_reference(pytester: pytest.Pytester) -> None:
    for name in ("colliding-ids", "twin-calls"):
        shutil.copy(REGRESSIONS / f"{name}.yaml", pytester.path / f"{name}.yaml")
    (pytester.path / "settings.yaml").write_text("not: a scenario\n", encoding="utf-8")
    result = pytester.runpytest_subprocess(*PLUGIN, "--harness-target", "reference", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*colliding-ids?reference? PASSED*"])


def test_a_violated_expectation_fails_the_item_with_the_violation(
    pytester: pytest.Pytester,
) -> None:
    text = (REGRESSIONS / "colliding-ids.yaml").read_text(encoding="utf-8")
    wrong = text.replace("steps:", "expect: {executions: {deploy-a: 2}}\nsteps:")
    (pytester.path / "wrong.yaml").write_text(wrong, encoding="utf-8")
    result = pytester.runpytest_subprocess(*PLUGIN, "--harness-target", "reference")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*O expected-outcome at step 3: expected deploy-a ran 2 times*"])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("tree: {}\nsteps: []\n", "*broken.yaml: *"),  # a scenario the model refuses
        ("tree:\n  name: root\n\tturns: []\nsteps: [run: go]\n", "*broken.yaml: line 3*"),
        ("description: |\n  x\n y\ntree: {name: root}\n", "*broken.yaml: line *"),
    ],
    ids=["invalid", "a-tab", "bad-indent"],
)
def test_a_scenario_file_that_cannot_be_read_is_a_collection_error_in_one_line(
    pytester: pytest.Pytester, text: str, problem: str
) -> None:
    (pytester.path / "broken.yaml").write_text(text, encoding="utf-8")
    (pytester.path / "settings.yaml").write_text("a: [unclosed\n", encoding="utf-8")  # not one
    result = pytester.runpytest_subprocess(*PLUGIN, "--harness-target", "reference")
    result.assert_outcomes(errors=1)  # pytest stops at a collection error, as for a module
    result.stdout.fnmatch_lines(["*ERROR collecting broken.yaml*", problem])
    assert "Traceback" not in result.stdout.str()
    assert "settings.yaml" not in result.stdout.str()


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("steps:", "stpes:", "stpes: unknown field; did you mean steps?"),
        ("tree:", "tre:", "tre: unknown field; did you mean tree?"),
    ],
    ids=["steps", "tree"],
)
def test_a_misspelt_top_level_key_is_a_collection_error_naming_it(
    pytester: pytest.Pytester, old: str, new: str, problem: str
) -> None:
    text = (REGRESSIONS / "colliding-ids.yaml").read_text(encoding="utf-8")
    (pytester.path / "misspelt.yaml").write_text(text.replace(old, new), encoding="utf-8")
    # YAML files of other tools, one with a `steps` list, are still left alone
    (pytester.path / "pipeline.yaml").write_text("name: build\nsteps: [make]\n", encoding="utf-8")
    result = pytester.runpytest_subprocess(*PLUGIN, "--harness-target", "reference")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ERROR collecting misspelt.yaml*", f"*misspelt.yaml: {problem}"])
    assert "Traceback" not in result.stdout.str()
    assert "pipeline.yaml" not in result.stdout.str()


def test_without_a_target_the_plugin_collects_nothing(pytester: pytest.Pytester) -> None:
    shutil.copy(REGRESSIONS / "colliding-ids.yaml", pytester.path / "colliding-ids.yaml")
    result = pytester.runpytest_subprocess(*PLUGIN)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_harness_regressions_adds_the_built_in_files(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--harness-target", "reference", "--harness-regressions"
    )
    result.assert_outcomes(passed=len(list(REGRESSIONS.glob("*.yaml"))))


@pytest.mark.parametrize("environment", [".venv", "env"])  # norecursedirs; a pyvenv.cfg
def test_the_bundled_files_are_collected_from_a_virtual_environment_inside_the_project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, environment: str
) -> None:
    """The harness installed (copied) into a virtual environment in the project's folder: the
    bundled regression files and the profile's sample are collected all the same, under ids
    relative to the project."""
    site = pytester.path / environment / "lib" / "python3" / "site-packages"
    for package in ("harness", "scenarios", "fakes"):
        shutil.copytree(ROOT / package, site / package, ignore=IGNORED)
    (pytester.path / environment / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    shutil.copy(REGRESSIONS / "twin-calls.yaml", pytester.path / "mine.yaml")
    options = ("--harness-target", "reference", "--harness-regressions", "--harness-profile", "ci")
    outside = pytester.runpytest_subprocess(*PLUGIN, *options, "--collect-only", "-q")
    monkeypatch.setenv("PYTHONPATH", str(site))
    inside = pytester.runpytest_subprocess(*PLUGIN, *options, "--collect-only", "-q")
    names = [line for line in inside.outlines if "::" in line]
    assert len(names) == len([line for line in outside.outlines if "::" in line])
    bundled = f"{environment}/lib/python3/site-packages/scenarios/"
    regressions = [name for name in names if name.startswith(bundled + "regressions/")]
    assert len(regressions) == len(list(REGRESSIONS.glob("*.yaml")))
    assert any(name.startswith(bundled + "corpus/ci/") for name in names)
    assert "mine.yaml::mine[reference]" in names
    # and they run: the bundled regression files pass on the reference
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--harness-target", "reference", "-p", "no:cacheprovider", "--harness-regressions"
    )
    result.assert_outcomes(passed=len(regressions) + 1)


IGNORED = shutil.ignore_patterns("__pycache__", "*.egg-info")


# --- findings -----------------------------------------------------------------------------------

WRONG = (
    (REGRESSIONS / "colliding-ids.yaml")
    .read_text(encoding="utf-8")
    .replace("steps:", "expect: {executions: {deploy-a: 2}}\nsteps:")
)
WHY = "the scenario expects deploy-a to run twice, which no approval allows"


def findings_for(pytester: pytest.Pytester, scenario: str, text: str, witness: str) -> Path:
    """A folder with the reference's findings file recording ``witness`` for ``scenario``."""
    from harness import __version__
    from harness.findings import scenario_digest
    from scenarios.loading import parse_scenario

    digest = scenario_digest(parse_scenario(yaml.safe_load(text), scenario))
    folder = pytester.path.parent / "findings"
    folder.mkdir(exist_ok=True)
    (folder / f"reference-{__version__}.yaml").write_text(
        f"target: reference\nversion: {__version__}\nfindings:\n"
        f"  - scenario: {scenario}\n    digest: {digest}\n    explanation: {WHY}\n"
        f"    witnesses:\n      - {witness}\n",
        encoding="utf-8",
    )
    return folder


def test_a_recorded_finding_is_a_strict_xfail_with_its_explanation(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    folder = findings_for(
        pytester, "wrong", WRONG, "{invariant: O, step: answer, seen: '^ran once$'}"
    )
    arguments = [*PLUGIN, "--harness-target", "reference", "-rx"]
    result = pytester.runpytest_subprocess(*arguments, "--harness-findings", str(folder))
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines([f"XFAIL wrong.yaml::wrong?reference? - recorded finding: {WHY}"])
    # without the findings folder, the same violation fails the item
    pytester.runpytest_subprocess(*arguments).assert_outcomes(failed=1)


def test_a_findings_file_edited_during_the_session_changes_no_verdict_of_it(
    pytester: pytest.Pytester,
) -> None:
    """The findings file is read once a session: the xfail mark given at collection and the
    verdict of the run rest on the same reading, though the file no longer parses by then."""
    (pytester.path / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    folder = findings_for(
        pytester, "wrong", WRONG, "{invariant: O, step: answer, seen: '^ran once$'}"
    )
    [path] = folder.glob("reference-*.yaml")
    pytester.makeconftest(
        "def pytest_collection_finish(session):\n"
        f"    open({str(path)!r}, 'w', encoding='utf-8').write('target: [unclosed\\n')\n"
    )
    arguments = [*PLUGIN, "--harness-target", "reference", "--harness-findings", str(folder)]
    result = pytester.runpytest_subprocess(*arguments, "-rx")
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines([f"XFAIL wrong.yaml::wrong?reference? - recorded finding: {WHY}"])
    assert path.read_text(encoding="utf-8") == "target: [unclosed\n"  # edited, indeed


def test_a_recorded_finding_that_no_longer_shows_fails_the_item(pytester: pytest.Pytester) -> None:
    good = (REGRESSIONS / "colliding-ids.yaml").read_text(encoding="utf-8")
    (pytester.path / "colliding-ids.yaml").write_text(good, encoding="utf-8")
    witness = "{invariant: I2, step: answer, seen: '^deploy-b ran 0 times$'}"
    folder = findings_for(pytester, "colliding-ids", good, witness)
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--harness-target", "reference", "--harness-findings", str(folder)
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*recorded finding no longer shows: I2 at an answer step, seen ^deploy-b ran 0 times$*"]
    )


def test_a_violation_the_finding_does_not_name_fails_the_item(pytester: pytest.Pytester) -> None:
    (pytester.path / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    witness = "{invariant: O, step: answer, seen: '^ran twice$', sometimes: true}"
    folder = findings_for(pytester, "wrong", WRONG, witness)
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--harness-target", "reference", "--harness-findings", str(folder)
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*O expected-outcome at step 3: expected deploy-a ran 2 times*"])


def test_a_skip_names_the_scenario(pytester: pytest.Pytester) -> None:
    pytest.importorskip("strands")
    text = (REGRESSIONS / "colliding-ids.yaml").read_text(encoding="utf-8")
    (pytester.path / "empty-id.yaml").write_text(
        text.replace("{tool: worker_b, id: call-2}", "{tool: worker_b, id: ''}"), encoding="utf-8"
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "--harness-target", "strands", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] empty-id.yaml:1: empty-id: not applicable on strands: needs "
            "empty_tool_use_ids"
        ]
    )


def test_the_bundled_findings_make_pytest_agree_with_check_on_a_released_sdk(
    pytester: pytest.Pytester,
) -> None:
    """The regression files on the installed strands: what check excuses is an xfail here."""
    pytest.importorskip("strands")
    from harness.findings import load_document
    from harness.targets.base import missing_capabilities
    from harness.targets.strands import StrandsTarget
    from scenarios.loading import load_scenario

    info = StrandsTarget().info
    document = load_document(info.findings_name, info.version)
    assert document is not None
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--harness-target", "strands", "--harness-regressions"
    )
    files = sorted(REGRESSIONS.glob("*.yaml"))
    # the findings of these files: the file also records the coverage shapes' own regression
    # files (scenarios/regressions/coverage/), which --harness-regressions does not collect
    recorded = {finding.scenario for finding in document.findings} & {path.stem for path in files}
    # a file strands cannot express (an answer without an id) is a skip, as check says N/A
    skipped = sum(1 for path in files if missing_capabilities(info, load_scenario(path)))
    result.assert_outcomes(
        xfailed=len(recorded),
        passed=len(files) - len(recorded) - skipped,
        skipped=skipped,
    )


def test_an_unknown_harness_profile_is_refused_in_one_line(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--harness-target", "reference", "--harness-profile", "nightly"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines == [
        "ERROR: --harness-profile: expected one of ci (a sample committed in scenarios/corpus/), "
        "got 'nightly'",
        "",
    ]

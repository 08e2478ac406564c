"""The pytest plugin: scenario files become test items that fail with their violations."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

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


def test_a_malformed_file_fails_with_its_one_line_error(pytester: pytest.Pytester) -> None:
    (pytester.path / "broken.yaml").write_text("tree: {}\nsteps: []\n", encoding="utf-8")
    result = pytester.runpytest_subprocess(*PLUGIN, "--harness-target", "reference")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*broken.yaml: *"])


def test_without_a_target_the_plugin_collects_nothing(pytester: pytest.Pytester) -> None:
    shutil.copy(REGRESSIONS / "colliding-ids.yaml", pytester.path / "colliding-ids.yaml")
    result = pytester.runpytest_subprocess(*PLUGIN)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_harness_regressions_adds_the_built_in_files(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--harness-target", "reference", "--harness-regressions"
    )
    result.assert_outcomes(passed=len(list(REGRESSIONS.glob("*.yaml"))))

"""The pytest plugin on the committed ci sample as a whole (``--harness-profile ci``): every
scenario of it becomes an item, and on the reference every item passes.  It runs in tox's
``sample`` environment, with the other tests of the whole sample."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ("-p", "no:nested_interrupt_harness", "-p", "harness.pytest_plugin")


def test_harness_profile_runs_the_committed_sample_as_items(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the checkout's harness, not an installed one
    sample = ROOT / "scenarios" / "corpus" / "ci" / "generated.jsonl"
    size = len(sample.read_text(encoding="utf-8").splitlines()) - 1  # less its header line
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--harness-target", "reference", "--harness-profile", "ci", "-v"
    )
    result.assert_outcomes(passed=size)
    result.stdout.fnmatch_lines(
        ["*generated-000?reference? PASSED*", "*generated-restore-000?reference? PASSED*"]
    )

"""The pytest plugin on the committed ci sample as a whole (``--harness-profile ci``): every
scenario of it becomes an item, and items pass on the reference.  It runs in tox's ``sample``
environment, with the other tests of the whole sample.

Whether the reference passes on *every* scenario of the sample is check's to say: ``check
--target reference --profile ci`` (tox's ``check`` environment) runs the same scenarios through
the same runner and checkers, and fails on any violation.  Here the plugin collects the whole
sample (every scenario read, validated and turned into an item) and runs the first scenario of
each family, so an item that cannot be run, or passes where check would fail, still shows,
without running the sample a second time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ("-p", "no:nested_interrupt_harness", "-p", "harness.pytest_plugin")
SAMPLE = ROOT / "scenarios" / "corpus" / "ci" / "generated.jsonl"
PROFILE = ("--harness-target", "reference", "--harness-profile", "ci")


def families() -> list[str]:
    """The name of each family's first scenario in the committed sample (``generated-000``,
    ``generated-restore-000``, ...), in file order."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()[1:]  # less its header line
    names = [json.loads(line)["name"] for line in lines]
    return [name for name in names if name.endswith("-000")]


def test_harness_profile_collects_the_committed_sample_as_items(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the checkout's harness, not an installed one
    size = len(SAMPLE.read_text(encoding="utf-8").splitlines()) - 1  # less its header line
    result = pytester.runpytest_subprocess(*PLUGIN, *PROFILE, "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([f"{size} tests collected*"])


def test_harness_profile_runs_the_first_scenario_of_each_family_as_a_passing_item(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    first = families()
    assert len(first) >= 2, first  # the general and the restore family, and any newer one
    chosen = " or ".join(f"{name}[" for name in first)
    result = pytester.runpytest_subprocess(*PLUGIN, *PROFILE, "-v", "-k", chosen)
    result.assert_outcomes(passed=len(first))
    result.stdout.fnmatch_lines_random([f"*{name}?reference? PASSED*" for name in first])

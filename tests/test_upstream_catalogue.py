"""The catalogue of public upstream bugs (scenarios/upstream/): what each entry must say, and
the refusal of one that says it wrong, in one line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from harness.upstream import CATALOGUE, ROOT, Bug, CatalogueError, catalogue, load_bug
from scenarios.loading import REGRESSIONS, load_scenario

BUGS = catalogue()


def test_the_catalogue_holds_at_least_15_bugs_and_4_per_sdk() -> None:
    per_sdk = Counter(bug.sdk for bug in BUGS)
    assert len(BUGS) >= 15
    assert set(per_sdk) == {"strands-agents", "langgraph", "openai-agents", "google-adk"}
    assert min(count for sdk, count in per_sdk.items() if sdk != "google-adk") >= 4, per_sdk
    assert per_sdk["google-adk"] >= 1, per_sdk


@pytest.mark.parametrize("bug", BUGS, ids=[bug.id for bug in BUGS])
def test_each_entry_either_names_its_regression_file_or_says_why_it_cannot(bug: Bug) -> None:
    if bug.gap is not None:
        assert len(bug.gap.split()) >= 10, "a gap names its reason in a sentence"
        return
    assert bug.scenario is not None
    path = ROOT / bug.scenario
    # among the regression files, so check runs it on every pinned release in CI
    assert path.parent == REGRESSIONS, path
    scenario = load_scenario(path)
    assert bug.tracker.split("#")[1] in scenario.source, "the file cites the bug it shows"
    assert bug.last_affected is not None


def test_the_regression_files_written_for_upstream_bugs_are_all_catalogued() -> None:
    written = {path.stem for path in REGRESSIONS.glob("upstream-*.yaml")}
    named = {Path(bug.scenario).stem for bug in BUGS if bug.scenario is not None}
    assert written <= named


def test_open_and_fixed_bugs_and_gaps_are_all_present() -> None:
    assert any(bug.is_open and bug.gap is None for bug in BUGS)
    assert any(bug.first_fixed is not None for bug in BUGS)
    assert any(bug.gap is not None for bug in BUGS)


GOOD = (CATALOGUE / "langgraph-8579.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('first_fixed: "1.2.13"', 'first_fixed: "1.2.11"'), "first_fixed: 1.2.11 is not after"),
        (("target: langgraph-subgraph-node", "target: strands"), "target: 'strands' does not"),
        (("invariants: [I14]", "invariants: [I99]"), "invariants: unknown ['I99']"),
        (("invariants: [I14]", "invariants: []"), "invariants: name at least one"),
        (("id: langgraph-8579", "id: langgraph-1"), "id: 'langgraph-1' is not the file's name"),
        (
            ("tracker: langchain-ai/langgraph#8579", "tracker: langgraph-8579"),
            "tracker: String should",
        ),
        (
            ("scenario: scenarios/regressions/upstream-langgraph-8579.yaml", ""),
            "scenario: needed unless",
        ),
    ],
)
def test_a_bad_entry_is_refused_in_one_line_naming_the_field(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    old, new = change
    assert old in GOOD
    path = tmp_path / "langgraph-8579.yaml"
    path.write_text(GOOD.replace(old, new), encoding="utf-8")
    with pytest.raises(CatalogueError) as refused:
        load_bug(path)
    text = str(refused.value)
    assert "\n" not in text
    assert text.startswith(f"{path}: ")
    assert message in text, text


def test_a_gap_with_a_scenario_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "langgraph-8579.yaml"
    path.write_text(GOOD + "gap: the language cannot say it\n", encoding="utf-8")
    with pytest.raises(CatalogueError, match="gap: a gap has no scenario"):
        load_bug(path)


def test_the_backtest_page_names_every_gap_among_what_the_harness_cannot_see_yet() -> None:
    page = (ROOT / "docs" / "backtest.md").read_text(encoding="utf-8")
    section = page.split("## What the harness cannot see yet", 1)[1].split("\n## ", 1)[0]
    named = {bug.id for bug in BUGS if f"`{bug.id}`" in section}
    gaps = {bug.id for bug in BUGS if bug.gap is not None}
    assert gaps <= named, f"gaps docs/backtest.md does not name: {sorted(gaps - named)}"


def test_the_readme_names_exactly_the_gaps_among_what_it_cannot_see_yet() -> None:
    """The front page's short list: every gap, and no bug the backtest can run (a bug that
    stops being a gap leaves it)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## What it cannot see yet", 1)[1].split("\n## ", 1)[0]
    named = {bug.id for bug in BUGS if f"`{bug.id}`" in section}
    assert named == {bug.id for bug in BUGS if bug.gap is not None}

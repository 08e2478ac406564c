"""Findings files: recorded classes of a known bug cover generated scenarios it reaches, and
nothing else; a class that cannot be checked is refused with one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.findings import (
    FindingClass,
    FindingsFileError,
    class_findings,
    judge_findings,
    load_classes,
    load_findings,
)

HEADER = "target: sdk\nversion: '1.0'\n"
RECORDED = (
    "findings:\n"
    "  - {scenario: twin-ids, invariants: [I2, O], explanation: two calls share one id}\n"
)
CLASS = (
    "classes:\n"
    "  - class: shared-call-id\n"
    "    shown_by: [twin-ids]\n"
    "    scenario_classes: [twin-calls]\n"
    "    evidence: 'same tool invocation'\n"
    "    invariants: [I2, O]\n"
    "    explanation: the SDK refuses the approval of either twin\n"
)
REFUSED = "UserError: the same tool invocation identity belongs to both runs"


def classes_in(tmp_path: Path, text: str) -> tuple[FindingClass, ...]:
    (tmp_path / "sdk-1.0.yaml").write_text(HEADER + RECORDED + text, encoding="utf-8")
    return load_classes("sdk", "1.0", tmp_path)


def test_a_class_covers_a_generated_scenario_it_recognises(tmp_path: Path) -> None:
    (shared,) = load_classes_and_check(tmp_path)
    found = class_findings([shared], "generated-007", {"twin-calls", "mixed"}, [REFUSED], {"I2"})
    assert [(f.scenario, f.invariant, f.required) for f in found] == [
        ("generated-007", "I2", False)
    ]
    assert "`shared-call-id`" in found[0].explanation
    assert "twin-ids" in found[0].explanation


def load_classes_and_check(tmp_path: Path) -> tuple[FindingClass, ...]:
    loaded = classes_in(tmp_path, CLASS)
    assert [found.name for found in loaded] == ["shared-call-id"]
    return loaded


@pytest.mark.parametrize(
    ("scenario", "classes", "errors"),
    [
        ("twin-ids", {"twin-calls"}, [REFUSED]),  # a regression file is recorded by name only
        ("generated-007", {"mixed"}, [REFUSED]),  # not a scenario of the class
        ("generated-007", {"twin-calls"}, ["ValueError: something else"]),  # no evidence
        ("generated-007", {"twin-calls"}, []),
    ],
)
def test_a_class_covers_nothing_it_does_not_recognise(
    tmp_path: Path, scenario: str, classes: set[str], errors: list[str]
) -> None:
    loaded = load_classes_and_check(tmp_path)
    assert class_findings(loaded, scenario, classes, errors, {"I2", "O"}) == ()


def test_an_invariant_the_class_does_not_list_stays_new(tmp_path: Path) -> None:
    loaded = load_classes_and_check(tmp_path)
    recorded = load_findings("sdk", "1.0", tmp_path) + class_findings(
        loaded,
        "generated-007",
        {"twin-calls"},
        [REFUSED],
        {"I2", "I4"},
    )
    seen = {("generated-007", "I2"), ("generated-007", "I4")}
    verdict = judge_findings(seen, recorded, ["generated-007"])
    assert verdict.new == (("generated-007", "I4"),)
    assert [(f.scenario, f.invariant) for f in verdict.expected] == [("generated-007", "I2")]
    assert not verdict.disappeared  # the regression file did not run, and classes never must


def test_a_class_that_does_not_show_is_not_missing(tmp_path: Path) -> None:
    loaded = load_classes_and_check(tmp_path)
    recorded = class_findings(loaded, "generated-001", {"twin-calls"}, [REFUSED], set())
    assert recorded == ()
    assert judge_findings(set(), recorded, ["generated-001"]).passes


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (CLASS.replace("[twin-ids]", "[unrecorded]"), "'unrecorded' is not a scenario recorded"),
        (CLASS.replace("[twin-calls]", "[twins]"), "unknown scenario class 'twins'"),
        (CLASS.replace("'same tool invocation'", "'(unclosed'"), "not a regular expression"),
        (
            CLASS.replace("    scenario_classes: [twin-calls]\n", "").replace(
                "    evidence: 'same tool invocation'\n", ""
            ),
            "needs scenario_classes or evidence",
        ),
        (CLASS.replace("[I2, O]", "[I13]"), "classes.0.invariants.0"),
        (CLASS.replace("shared-call-id", "Shared Call"), "classes.0.class"),
        (CLASS.replace("    shown_by: [twin-ids]\n", ""), "classes.0.shown_by"),
    ],
)
def test_a_class_that_cannot_be_checked_is_refused_in_one_line(
    tmp_path: Path, text: str, problem: str
) -> None:
    with pytest.raises(FindingsFileError) as refused:
        classes_in(tmp_path, text)
    message = str(refused.value)
    assert problem in message
    assert str(tmp_path / "sdk-1.0.yaml") in message
    assert "\n" not in message

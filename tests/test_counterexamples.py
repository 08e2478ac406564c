"""Every failing generated scenario of ``check`` and ``faults`` is written as a regression file
under ``<reports>/counterexamples/``, which ``run`` reproduces: the same invariants violated (or,
for a damaged continuation, the same fault class).  A passing run writes nothing, a second run
writes the same bytes, and a run replaces only the files it wrote itself for that target.

Small samples on the reference's known-bad variants: the first scenarios of each family of the
committed ci sample, and campaigns of a few cases; ``tox -e check`` runs the whole sample."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from harness.campaigns.corruption import classify, is_case
from harness.checkers import check
from harness.cli import main
from harness.commands import faults, planning
from harness.counterexamples import check_failures, rebased
from harness.findings import Verdict
from harness.runner import AdapterError, run_scenario
from harness.targets import registry
from harness.targets.reference import ReferenceTarget
from scenarios import corpus
from scenarios.counterexamples import file_name, header, owner
from scenarios.loading import REGRESSIONS, load_scenario
from scenarios.model import Scenario

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "docs" / "scenario.schema.json"
VARIANT = "bad-no-namespacing"
FAULTY = ("bad-swallow-restore-failure", "bad-exposed-continuation")
REGRESSION = REGRESSIONS / "colliding-ids.yaml"  # fails on VARIANT, and is a file already
EACH_FAMILY = 3  # scenarios of each generated family in the small sample


def small(named: list[tuple[str, Scenario]]) -> list[tuple[str, Scenario]]:
    """The first scenarios of each family of a sample."""
    general = [item for item in named if not item[0].startswith(corpus.RESTORE)]
    focused = [item for item in named if item[0].startswith(corpus.RESTORE)]
    return general[:EACH_FAMILY] + focused[:EACH_FAMILY]


@pytest.fixture(scope="module")
def sample() -> Iterator[list[tuple[str, Scenario]]]:
    """check --profile ci draws its sample from the first scenarios of the committed one."""
    real = planning.generated
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(planning, "generated", lambda *arguments: small(real(*arguments)))
        yield small(real("ci", None, ""))


def check_small(reports: Path, *targets: str) -> int:
    arguments = ["check", "--profile", "ci", "--scenarios", str(REGRESSION)]
    for target in targets:
        arguments += ["--target", target]
    return main([*arguments, "--reports", str(reports)])


@pytest.fixture(scope="module")
def checked(sample: list[tuple[str, Scenario]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reports of one check of the variant on the small sample."""
    reports = tmp_path_factory.mktemp("first") / "reports"
    assert check_small(reports, VARIANT) == 1
    return reports


def files(reports: Path) -> dict[str, bytes]:
    folder = reports / "counterexamples"
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_each_failing_generated_scenario_is_written_and_nothing_else(
    sample: list[tuple[str, Scenario]], checked: Path
) -> None:
    variant = registry.get(VARIANT)
    failing = [name for name, scenario in sample if check(run_scenario(variant, scenario, name))]
    assert 0 < len(failing) < len(sample), "the sample must hold failing and passing scenarios"
    # no other target's, no passing scenario's, no regression file's (colliding-ids fails too)
    assert sorted(files(checked)) == sorted(file_name(name, VARIANT) for name in failing)
    document = json.loads((checked / "conformance.json").read_text(encoding="utf-8"))
    assert document["counterexamples"] == {
        f"{VARIANT} 0.1.0": {
            name: f"counterexamples/{file_name(name, VARIANT)}" for name in failing
        }
    }
    report = (checked / "conformance.md").read_text(encoding="utf-8")
    assert f"written to `counterexamples/{file_name(failing[0], VARIANT)}`" in report


def test_each_file_is_a_regression_file_that_run_reproduces(
    sample: list[tuple[str, Scenario]], checked: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    document = json.loads((checked / "conformance.json").read_text(encoding="utf-8"))
    new = document["findings"][f"{VARIANT} 0.1.0"]["new"]
    drawn = dict(sample)
    capsys.readouterr()
    for name, path in document["counterexamples"][f"{VARIANT} 0.1.0"].items():
        file = checked / path
        text = file.read_text(encoding="utf-8")
        assert text.startswith(header("check", VARIANT, "0.1.0"))
        assert list(validator.iter_errors(yaml.safe_load(text))) == []
        loaded = load_scenario(file)
        assert (loaded.tree, loaded.steps) == (drawn[name].tree, drawn[name].steps)
        assert main(["run", str(file), "--target", VARIANT, "--json"]) == 1
        verdicts = json.loads(capsys.readouterr().out)["verdicts"]
        violated = {invariant for invariant, found in verdicts.items() if found}
        assert violated == {item["invariant"] for item in new if item["scenario"] == name}
        assert main(["run", str(file), "--target", "reference"]) == 0
        capsys.readouterr()


def test_a_written_file_is_checked_as_a_file_and_not_written_again(
    checked: Path, tmp_path: Path
) -> None:
    arguments = ["check", "--target", VARIANT, "--scenarios", str(checked / "counterexamples")]
    assert main([*arguments, "--reports", str(tmp_path)]) == 1
    assert not (tmp_path / "counterexamples").exists()


@pytest.mark.usefixtures("sample")
def test_a_second_run_writes_the_same_bytes_and_no_more(checked: Path, tmp_path: Path) -> None:
    again = tmp_path / "reports"
    shutil.copytree(checked, again)
    assert check_small(again, VARIANT) == 1
    assert files(again) == files(checked)
    elsewhere = tmp_path / "elsewhere"
    assert check_small(elsewhere, VARIANT) == 1
    assert files(elsewhere) == files(checked)


@pytest.mark.usefixtures("sample")
def test_a_passing_target_writes_nothing(tmp_path: Path) -> None:
    assert check_small(tmp_path, "reference") == 0
    assert not (tmp_path / "counterexamples").exists()
    document = json.loads((tmp_path / "conformance.json").read_text(encoding="utf-8"))
    assert document["counterexamples"] == {}


def test_a_run_replaces_only_the_files_it_wrote_for_that_target(
    sample: list[tuple[str, Scenario]],
    checked: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "counterexamples"
    folder.mkdir()
    written = json.loads((checked / "conformance.json").read_text(encoding="utf-8"))
    failing = list(written["counterexamples"][f"{VARIANT} 0.1.0"])
    passing = next(name for name, _ in sample if name not in failing)
    stale = folder / file_name(passing, VARIANT)  # an earlier check's, passing now
    stale.write_text(header("check", VARIANT, "0.0.9") + "description: old\n", encoding="utf-8")
    kept = {
        folder / file_name(failing[0], VARIANT): "a hand-made file in the way\n",
        folder / file_name(passing, "bad-shared-object"): header("check", "bad-shared-object", "1"),
        folder / "notes.yaml": "mine\n",
    }
    kept[folder / f"faults-privacy@{VARIANT}.yaml"] = header("faults", VARIANT, "0.1.0")
    for path, text in kept.items():
        path.write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert check_small(tmp_path, VARIANT) == 1
    assert not stale.exists()
    assert {path: path.read_text(encoding="utf-8") for path in kept} == kept
    [refusal] = [line for line in capsys.readouterr().err.splitlines() if "not written" in line]
    assert refusal.startswith(f"{folder / file_name(failing[0], VARIANT)}: not written: ")
    assert owner("check", VARIANT).strip() in refusal
    for name in failing[1:]:
        assert (folder / file_name(name, VARIANT)).read_bytes() == files(checked)[
            file_name(name, VARIANT)
        ]


def test_a_generated_scenario_whose_adapter_broke_is_written_with_the_error(
    sample: list[tuple[str, Scenario]],
) -> None:
    (name, scenario), (other, _) = sample[:2]
    error = AdapterError("raising-sdk", name, 2, "restart", "RuntimeError: lost the handle")
    info = ReferenceTarget.info
    ran, failing = check_failures(info, sample, {name, other}, Verdict(), [error], "ci")
    assert ran == [name, other]
    [written] = failing
    assert (written.name, written.scenario) == (name, scenario)
    assert written.description == (
        "Generated scenario on reference 0.1.0: the adapter broke its contract at step 2 "
        "(restart): RuntimeError: lost the handle"
    )


@pytest.fixture
def no_crash_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    """No crash campaign (its scenarios are the regression files, already files, never written):
    these tests are about what the other campaigns write."""
    monkeypatch.setattr(faults, "scenarios_from", lambda _: [])


def run_faults(reports: Path, *targets: str) -> int:
    arguments = ["faults", "--examples", "4", "--invariant-examples", "2", "--shrink", "0"]
    for target in targets:
        arguments += ["--target", target]
    return main([*arguments, "--reports", str(reports)])


@pytest.mark.usefixtures("no_crash_scenario")
def test_faults_writes_the_example_of_each_failing_part_and_run_reproduces_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_faults(tmp_path, *FAULTY) == 1
    document = json.loads((tmp_path / "faults.json").read_text(encoding="utf-8"))
    expected: dict[str, tuple[str, str, dict[str, Any]]] = {}
    for entry in document["targets"].values():
        for fault_class, example in entry["corruption"]["examples"].items():
            if fault_class not in ("SAFE", "TOLERATED"):
                name = f"faults-corruption-{fault_class.lower().replace('_', '-')}"
                expected[file_name(name, entry["name"])] = (entry["name"], fault_class, example)
        for campaign in ("privacy", "isolation"):
            if entry[campaign]["violating"]:
                example = entry[campaign]["example"]
                expected[file_name(f"faults-{campaign}", entry["name"])] = (
                    entry["name"],
                    entry[campaign]["invariant"],
                    example,
                )
    assert {target for target, _, _ in expected.values()} == set(FAULTY)
    assert sorted(files(tmp_path)) == sorted(expected)
    report = (tmp_path / "faults.md").read_text(encoding="utf-8")
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    capsys.readouterr()
    for name, (target, what, example) in expected.items():
        assert example["counterexample"] == f"counterexamples/{name}"
        assert f"- written to `counterexamples/{name}`" in report
        path = tmp_path / "counterexamples" / name
        assert list(validator.iter_errors(yaml.safe_load(path.read_text(encoding="utf-8")))) == []
        assert main(["run", str(path), "--target", target, "--json"]) == 1
        shown = json.loads(capsys.readouterr().out)
        if what.startswith("I"):
            assert shown["verdicts"][what], f"{name}: {what} not violated by run"
        else:
            assert shown["fault_class"]["class"] == what
            assert shown["fault_class"]["reasons"] == example["reasons"]
    again = tmp_path / "again"
    assert run_faults(again, *FAULTY) == 1
    assert files(again) == files(tmp_path)


@pytest.mark.usefixtures("no_crash_scenario")
def test_faults_on_a_clean_target_writes_nothing(tmp_path: Path) -> None:
    assert run_faults(tmp_path, "reference") == 0
    assert not (tmp_path / "counterexamples").exists()


def test_a_merged_report_names_the_files_from_its_own_folder(checked: Path, tmp_path: Path) -> None:
    latest = tmp_path / "latest"
    shutil.copytree(checked, latest)
    assert main(["report", str(latest / "conformance.json"), "--reports", str(tmp_path)]) == 1
    merged = json.loads((tmp_path / "conformance.json").read_text(encoding="utf-8"))
    [paths] = merged["counterexamples"].values()
    assert paths
    assert all(path.startswith("latest/counterexamples/") for path in paths.values())
    assert all((tmp_path / path).is_file() for path in paths.values())
    assert rebased({"t": {"s": "counterexamples/s@t.yaml"}}, Path("a/b"), Path("a")) == {
        "t": {"s": "b/counterexamples/s@t.yaml"}
    }


def test_a_report_whose_counterexamples_are_malformed_is_refused_in_one_line(
    checked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads((checked / "conformance.json").read_text(encoding="utf-8"))
    document["counterexamples"] = {"x": ["not", "a", "mapping"]}
    path = tmp_path / "conformance.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    capsys.readouterr()
    assert main(["report", str(path), "--reports", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"{path}: counterexamples: expected a mapping")
    assert not (tmp_path / "out").exists()


def test_file_names_never_collide_nor_leave_the_folder() -> None:
    names = {
        file_name(scenario, target)
        for scenario, target in [
            ("generated-007", "bad-x"),
            ("generated-007-bad", "x"),
            ("generated", "007-bad-x"),
            ("generated-007@bad", "x"),
            ("generated-007", "bad@x"),
            ("../up", "t/../../x"),
        ]
    }
    assert len(names) == 6
    assert all("/" not in name for name in names)


def test_run_names_the_fault_class_of_a_corruption_case_and_fails_a_bad_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = REGRESSIONS / "fault-foreign.yaml"  # run, corrupt, answer, repair, resend
    assert is_case(load_scenario(path))
    assert not is_case(load_scenario(REGRESSION))
    capsys.readouterr()
    assert main(["run", str(path), "--target", "reference"]) == 0
    assert "\nfault class SAFE: " in capsys.readouterr().out
    variant = registry.get("bad-swallow-restore-failure")
    found = classify(run_scenario(variant, load_scenario(path), "again"))
    assert found.fault_class not in ("SAFE", "TOLERATED")
    assert main(["run", str(path), "--target", variant.info.name, "--json"]) == 1
    shown = json.loads(capsys.readouterr().out)["fault_class"]
    assert shown == {"class": found.fault_class, "reasons": list(found.reasons)}
    assert main(["run", str(REGRESSION), "--target", "reference", "--json"]) == 0
    assert "fault_class" not in json.loads(capsys.readouterr().out)

"""The findings search path: the bundled folder (shipped in the wheel), the folders plugins
declare through an entry point, and ``--findings DIR``; two files for one target version on the
path are refused in one line, and ``record`` writes into the folder the user names."""

from __future__ import annotations

import fnmatch
import json
import sys
import tomllib
from collections.abc import Iterable
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.cli import main
from harness.findings import FINDINGS, FindingsFileError, load_document
from harness.findings import search as findings_search
from harness.findings.search import BUNDLED, ENTRY_POINT_GROUP, inherited, locate, search_path

ROOT = Path(__file__).resolve().parent.parent
GOOD = (ROOT / "scenarios" / "regressions" / "colliding-ids.yaml").read_text(encoding="utf-8")
VERSION = harness.__version__
FILE = f"reference-{VERSION}.yaml"


def declare(monkeypatch: pytest.MonkeyPatch, *entries: tuple[str, str]) -> None:
    """Installed plugins declaring findings folders: ``(name, "module:callable")``."""
    declared = [EntryPoint(name, value, ENTRY_POINT_GROUP) for name, value in entries]

    def entry_points(*, group: str) -> Iterable[EntryPoint]:
        return declared if group == ENTRY_POINT_GROUP else []

    monkeypatch.setattr(findings_search, "entry_points", entry_points)


def plugin_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, body: str) -> None:
    """A module a plugin would ship, importable as ``name``."""
    package = tmp_path / "site"
    package.mkdir(exist_ok=True)
    (package / f"{name}.py").write_text(body, encoding="utf-8")
    monkeypatch.syspath_prepend(str(package))
    monkeypatch.delitem(sys.modules, name, raising=False)  # another test's module of that name


def test_the_bundled_folder_ships_in_the_wheel() -> None:
    """Every bundled findings file matches the package data pyproject.toml ships."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = project["tool"]["setuptools"]["package-data"]["scenarios"]
    shipped = sorted(BUNDLED.glob("*.yaml"))
    assert shipped
    for path in shipped:
        inside = path.relative_to(BUNDLED.parent).as_posix()
        assert any(fnmatch.fnmatch(inside, pattern) for pattern in patterns), inside
    assert FINDINGS == BUNDLED == ROOT / "scenarios" / "findings"


def test_without_plugins_the_path_is_the_bundled_folder_then_the_given_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    declare(monkeypatch)
    assert search_path() == (BUNDLED,)
    assert search_path([tmp_path, BUNDLED, tmp_path]) == (BUNDLED, tmp_path)  # each once


def test_a_plugin_declares_its_folder_with_a_callable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "their-findings"
    folder.mkdir()
    plugin_module(
        tmp_path,
        monkeypatch,
        "their_plugin",
        f"def findings_folder():\n    return {str(folder)!r}\n",
    )
    declare(monkeypatch, ("their-sdk", "their_plugin:findings_folder"))
    assert search_path([tmp_path]) == (BUNDLED, folder, tmp_path)
    (folder / "their-sdk-2.0.yaml").write_text("target: their-sdk\nversion: '2.0'\n", "utf-8")
    document = load_document("their-sdk", "2.0")  # the default path has the plugin's folder
    assert document is not None
    assert (document.target, document.version) == ("their-sdk", "2.0")


@pytest.mark.parametrize(
    ("body", "value", "problem"),
    [
        (None, "missing_plugin:folder", "cannot load: ModuleNotFoundError: No module named"),
        ("folder = 'not a callable'\n", "odd_plugin:folder", "expected a callable"),
        ("def folder():\n    return 3\n", "odd_plugin:folder", "expected a folder path, got 3"),
        ("def folder():\n    return '/nowhere/at/all'\n", "odd_plugin:folder", "is not a folder"),
        ("def folder():\n    raise KeyError('x')\n", "odd_plugin:folder", "cannot load: KeyError"),
    ],
)
def test_a_declaration_that_cannot_be_used_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str | None, value: str, problem: str
) -> None:
    if body is not None:
        plugin_module(tmp_path, monkeypatch, "odd_plugin", body)
    declare(monkeypatch, ("broken", value))
    with pytest.raises(FindingsFileError) as refused:
        search_path()
    message = str(refused.value)
    assert message.startswith(f"findings entry point 'broken' ({value}): ")
    assert problem in message
    assert "\n" not in message


def test_two_files_for_one_target_version_are_refused_naming_both(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
        (folder / "sdk-1.0.yaml").write_text("target: sdk\nversion: '1.0'\n", encoding="utf-8")
    assert locate("sdk", "1.0", [first, first]) == first / "sdk-1.0.yaml"  # one folder, twice
    assert locate("sdk", "2.0", [first, second]) is None
    with pytest.raises(FindingsFileError) as refused:
        locate("sdk", "1.0", [first, second])
    assert str(refused.value) == (
        f"{second / 'sdk-1.0.yaml'}: a second findings file for sdk 1.0 on the findings path "
        f"(the first is {first / 'sdk-1.0.yaml'}): keep one"
    )


# --- through the command line -------------------------------------------------------------------


@pytest.fixture
def wrong(tmp_path: Path) -> Path:
    """A scenario whose expectation the reference does not meet: one violation, O at step 3."""
    path = tmp_path / "wrong-expectation.yaml"
    path.write_text(
        GOOD.replace("steps:", "expect: {executions: {deploy-a: 2}}\nsteps:"), encoding="utf-8"
    )
    return path


def recorded(folder: Path, wrong: Path) -> Path:
    """``record --findings folder``, with the explanation a person then writes."""
    assert (
        main(
            [
                "record",
                "--target",
                "reference",
                "--scenarios",
                str(wrong),
                "--findings",
                str(folder),
            ]
        )
        == 1
    )
    path = folder / FILE
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("TO BE EXPLAINED: why does it happen?", "the scenario expects two runs"),
        encoding="utf-8",
    )
    return path


def test_record_writes_into_the_named_folder_and_check_judges_by_it(
    tmp_path: Path, wrong: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "our-findings"  # created by record
    path = recorded(mine, wrong)
    assert not (BUNDLED / FILE).exists()
    check = ["check", "--target", "reference", "--scenarios", str(wrong)]
    reports = tmp_path / "reports"
    assert main([*check, "--reports", str(reports)]) == 1  # the bundled path has no finding
    assert main([*check, "--findings", str(mine), "--reports", str(reports)]) == 0
    document = json.loads((reports / "conformance.json").read_text(encoding="utf-8"))
    [verdict] = document["findings"].values()
    assert [item["explanation"] for item in verdict["expected"]] == [
        "the scenario expects two runs"
    ]
    # recording again into the same folder keeps the person's explanation
    capsys.readouterr()
    assert (
        main(
            ["record", "--target", "reference", "--scenarios", str(wrong), "--findings", str(mine)]
        )
        == 0
    )
    assert "the scenario expects two runs" in path.read_text(encoding="utf-8")


def test_a_plugin_folder_judges_check_without_any_option(
    tmp_path: Path, wrong: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "plugin-findings"
    recorded(folder, wrong)
    plugin_module(
        tmp_path, monkeypatch, "ref_plugin", f"def findings():\n    return {str(folder)!r}\n"
    )
    declare(monkeypatch, ("ref-plugin", "ref_plugin:findings"))
    reports = tmp_path / "reports"
    arguments = ["check", "--target", "reference", "--scenarios", str(wrong)]
    assert main([*arguments, "--reports", str(reports)]) == 0


def test_check_refuses_two_files_on_the_path_before_anything_runs(
    tmp_path: Path, wrong: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = recorded(tmp_path / "first", wrong)
    (tmp_path / "second").mkdir()
    (tmp_path / "second" / FILE).write_bytes(first.read_bytes())
    reports = tmp_path / "reports"
    capsys.readouterr()
    arguments = ["check", "--target", "reference", "--scenarios", str(wrong)]
    folders = ["--findings", str(tmp_path / "first"), "--findings", str(tmp_path / "second")]
    assert main([*arguments, *folders, "--reports", str(reports)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"{tmp_path / 'second' / FILE}: a second findings file for reference")
    assert not reports.exists()


def test_record_refuses_to_write_a_second_file_for_the_path(
    tmp_path: Path, wrong: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = recorded(tmp_path / "first", wrong)
    capsys.readouterr()
    arguments = ["record", "--target", "reference", "--scenarios", str(wrong)]
    folders = ["--findings", str(tmp_path / "second"), "--findings", str(tmp_path / "first")]
    assert main([*arguments, *folders]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line == (
        f"{first}: the findings path already holds reference {VERSION}'s findings file; "
        f"record into its folder (--findings {first.parent}) or move it"
    )
    assert not (tmp_path / "second").exists()


@pytest.mark.parametrize("command", ["check", "faults", "determinism"])
def test_a_findings_folder_that_is_not_one_is_refused(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    reports = tmp_path / "reports"
    status = main(
        [command, "--target", "reference", "--findings", str(missing), "--reports", str(reports)]
    )
    assert status == 2
    assert capsys.readouterr().err == f"--findings: {missing} is not a folder\n"
    assert not reports.exists()


def test_a_broken_plugin_declaration_stops_check_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    declare(monkeypatch, ("gone", "gone_plugin:findings"))
    reports = tmp_path / "reports"
    assert main(["check", "--target", "reference", "--reports", str(reports)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line == (
        "findings entry point 'gone' (gone_plugin:findings): cannot load: "
        "ModuleNotFoundError: No module named 'gone_plugin'"
    )
    assert not reports.exists()


def test_a_release_without_a_file_is_judged_by_the_newest_earlier_ones(tmp_path: Path) -> None:
    """strands 1.61.1, between the pinned 1.59.0 and 1.62.0, has no file of its own: the
    findings of 1.59.0 judge it; a release before every file, or a local build, has none."""
    for version in ("1.58.1", "1.59.0", "1.62.0"):
        (tmp_path / f"sdk-{version}.yaml").write_text(
            f"target: sdk\nversion: '{version}'\n", encoding="utf-8"
        )
    (tmp_path / "sdk-extra-1.60.0.yaml").write_text(
        "target: sdk-extra\nversion: '1.60.0'\n", encoding="utf-8"
    )
    assert inherited("sdk", "1.61.1", [tmp_path]) == "1.59.0"
    assert inherited("sdk", "1.70", [tmp_path]) == "1.62.0"
    assert inherited("sdk", "1.62.0", [tmp_path]) is None  # it has its own
    assert inherited("sdk", "1.0.0", [tmp_path]) is None  # nothing earlier
    assert inherited("sdk", "1.61.1+pr12", [tmp_path]) is None  # not a plain release
    document = load_document("sdk", "1.61.1", tmp_path)
    assert document is not None
    assert document.version == "1.59.0"


THEIR_TARGET = """\
from dataclasses import replace

from harness.targets.reference import ReferenceTarget


class TheirTarget(ReferenceTarget):
    info = replace(ReferenceTarget.info, name="their-sdk", version="2.0")


def findings_folder():
    return {theirs!r}


def other_folder():
    return {other!r}
"""


def test_record_for_a_plugin_target_writes_into_the_folder_the_plugin_declares(
    tmp_path: Path, wrong: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin target's first findings file goes beside its adapter (the findings folder its
    plugin declares under the target's name), not into the harness's bundled folder, which for
    an installed harness is in site-packages."""
    from harness.commands import record as recording
    from harness.targets import registry

    theirs, other = tmp_path / "their-findings", tmp_path / "other-findings"
    theirs.mkdir()
    other.mkdir()
    module = THEIR_TARGET.format(theirs=str(theirs), other=str(other))
    plugin_module(tmp_path, monkeypatch, "their_sdk_harness", module)
    declared = {
        registry.ENTRY_POINT_GROUP: [
            EntryPoint("their-sdk", "their_sdk_harness:TheirTarget", registry.ENTRY_POINT_GROUP)
        ],
        ENTRY_POINT_GROUP: [  # another plugin's folder, first by name, is not theirs
            EntryPoint("another-sdk", "their_sdk_harness:other_folder", ENTRY_POINT_GROUP),
            EntryPoint("their-sdk", "their_sdk_harness:findings_folder", ENTRY_POINT_GROUP),
        ],
    }

    def entry_points(*, group: str) -> Iterable[EntryPoint]:
        return declared.get(group, [])

    for module_of in (registry, findings_search, recording):
        monkeypatch.setattr(module_of, "entry_points", entry_points)
    bundled = BUNDLED / "their-sdk-2.0.yaml"
    assert not bundled.exists()
    try:
        arguments = ["record", "--target", "their-sdk", "--scenarios", str(wrong)]
        assert main(arguments) == 1  # a new finding, its explanation still to write
        assert not bundled.exists()
    finally:
        bundled.unlink(missing_ok=True)  # so a failing run leaves the checkout as it was
    document = load_document("their-sdk", "2.0", [theirs], drafts=True)
    assert document is not None
    assert [entry.scenario for entry in document.findings] == ["wrong-expectation"]
    assert list(other.iterdir()) == []


@pytest.mark.parametrize("edit", ["broken", "emptied"])
def test_a_findings_file_edited_while_check_runs_changes_nothing_of_that_check(
    tmp_path: Path, wrong: Path, monkeypatch: pytest.MonkeyPatch, edit: str
) -> None:
    """The file is read once, before anything runs, and the run is judged by that copy: an
    edit made meanwhile (here, once the runs started) is neither a traceback nor half a verdict."""
    from harness.commands import check as check_command

    folder = tmp_path / "our-findings"
    path = recorded(folder, wrong)
    started = check_command.judge

    def edited_meanwhile(*arguments: Any, **options: Any) -> Any:
        text = (
            "target: [unclosed\n"
            if edit == "broken"
            else f"target: reference\nversion: {VERSION}\n"
        )
        path.write_text(text, encoding="utf-8")
        return started(*arguments, **options)

    monkeypatch.setattr(check_command, "judge", edited_meanwhile)
    reports = tmp_path / "reports"
    arguments = ["check", "--target", "reference", "--scenarios", str(wrong)]
    assert main([*arguments, "--findings", str(folder), "--reports", str(reports)]) == 0
    document = json.loads((reports / "conformance.json").read_text(encoding="utf-8"))
    [verdict] = document["findings"].values()
    assert [item["explanation"] for item in verdict["expected"]] == [
        "the scenario expects two runs"
    ]

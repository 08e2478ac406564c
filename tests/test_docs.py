"""The documentation in ``docs/`` stays true: the generated scenario reference is what the
generator writes today, the schema accepts every real scenario file, and each hand-written page
names everything the code has (every checker, capability, recognised class).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest
import yaml

from harness.checkers import CHECKERS
from harness.cli import build_parser
from harness.findings import FindingsFileError, load_classes
from harness.targets.base import CAPABILITIES
from scenarios import schema
from scenarios.classes import RECOGNISED
from scenarios.loading import regression_files
from scenarios.model import SCENARIO_CLASSES, ScenarioClass

ROOT = Path(__file__).resolve().parent.parent
MALFORMED = ROOT / "tests" / "malformed"


@pytest.mark.parametrize("name", [schema.SCHEMA_FILE, schema.FORMAT_FILE])
def test_the_committed_scenario_reference_is_what_the_generator_writes(name: str) -> None:
    written = {schema.SCHEMA_FILE: schema.schema_text(), schema.FORMAT_FILE: schema.format_text()}
    committed = (schema.DOCS / name).read_text(encoding="utf-8")
    assert committed == written[name], f"docs/{name} is stale: run python -m scenarios.schema"


def test_the_generator_check_fails_on_a_stale_file_and_passes_after_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert schema.main(["--docs", str(tmp_path), "--check"]) == 1
    assert schema.main(["--docs", str(tmp_path)]) == 0
    assert schema.main(["--docs", str(tmp_path), "--check"]) == 0
    edited = tmp_path / schema.FORMAT_FILE
    edited.write_text(edited.read_text(encoding="utf-8") + "a hand edit\n", encoding="utf-8")
    assert schema.main(["--docs", str(tmp_path), "--check"]) == 1
    assert "scenario-format.md: out of date" in capsys.readouterr().err


def _validator() -> jsonschema.protocols.Validator:
    document = schema.json_schema()
    jsonschema.Draft202012Validator.check_schema(document)
    validator: jsonschema.protocols.Validator = jsonschema.Draft202012Validator(document)
    return validator


def _data(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", regression_files(), ids=lambda path: path.stem)
def test_an_editor_given_the_schema_accepts_every_regression_file(path: Path) -> None:
    errors = [error.message for error in _validator().iter_errors(_data(path))]
    assert errors == []


# malformed files whose problem is a field's own type (the schema sees it; cross-field rules and
# YAML syntax it cannot)
REFUSED_BY_THE_SCHEMA = [
    "agent-unknown-field.yaml",
    "answer-maybe.yaml",
    "answer-ids-odd-key.yaml",
    "questions-four.yaml",
    "restart-false.yaml",
    "unknown-step-kind.yaml",
    "unknown-class.yaml",
    "window-size-one.yaml",
    "missing-source.yaml",
]


@pytest.mark.parametrize("name", REFUSED_BY_THE_SCHEMA)
def test_the_schema_refuses_a_field_of_the_wrong_type(name: str) -> None:
    assert list(_validator().iter_errors(_data(MALFORMED / name)))


def test_the_schema_takes_restart_and_repair_as_bare_words_and_nothing_else() -> None:
    document = _data(regression_files()[0])
    validator = _validator()
    for word in ("restart", "repair"):
        assert validator.is_valid({**document, "steps": [*document["steps"], word]})
    assert not validator.is_valid({**document, "steps": [*document["steps"], "rewind"]})
    assert not validator.is_valid({**document, "steps": [*document["steps"], {}]})


def test_every_scenario_class_a_file_can_declare_has_a_meaning() -> None:
    assert list(SCENARIO_CLASSES) == list(get_args(ScenarioClass))
    reference = (schema.DOCS / schema.FORMAT_FILE).read_text(encoding="utf-8")
    for name, meaning in SCENARIO_CLASSES.items():
        assert f"- `{name}`: {meaning}" in reference


DOCS = ROOT / "docs"
HEADING = re.compile(r"^## (I\d+|D|O): (.+)$", re.MULTILINE)


def _read(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def test_the_invariants_page_has_a_section_for_every_checker_and_marks_the_rest_unchecked() -> None:
    sections = dict(HEADING.findall(_read("invariants.md")))
    checked = {checker.id: checker for checker in CHECKERS}
    assert set(checked) <= set(sections)
    for invariant, title in sections.items():
        if invariant in checked:
            assert "not yet checked" not in title, invariant
        else:
            assert title.endswith("(specified, not yet checked)"), invariant
    summary = _read("invariants.md")
    for checker in CHECKERS:
        assert f"| {checker.id} | `{checker.slug}` |" in summary


def test_the_adapter_guide_quotes_every_capability_as_the_code_means_it() -> None:
    """One source: the guide's table says what ``CAPABILITIES`` (and ``targets --verbose``)
    says, word for word, for every capability and no other."""
    rows = re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \|", _read("adapters.md"), re.MULTILINE)
    quoted = {name: meaning.strip() for name, meaning in rows if name in CAPABILITIES}
    assert quoted == CAPABILITIES


def test_the_findings_page_explains_every_class_a_findings_file_may_name() -> None:
    page = _read("findings.md")
    for name in RECOGNISED:
        assert f"| `{name}` |" in page, name


LINK = re.compile(r"\]\(([^)\s]+)\)")


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", _pages(), ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_link_stays_inside_the_repository_and_resolves(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if target.startswith("#"):
            continue
        assert "://" not in target, f"{page.name} links outside the repository: {target}"
        resolved = (page.parent / target.split("#", 1)[0]).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name} links outside the repository: {target}"
        assert resolved.exists(), f"{page.name} links to a missing file: {target}"


def test_a_findings_file_naming_an_unknown_class_is_pointed_at_the_list(tmp_path: Path) -> None:
    witness = "{invariant: I2, step: answer, seen: '^ship ran 2 times$'}"
    (tmp_path / "sdk-1.0.yaml").write_text(
        "target: sdk\nversion: '1.0'\nfindings:\n"
        f"  - {{scenario: twin-ids, digest: 'sha256:{'0' * 64}',\n"
        f"     explanation: two calls share one id, witnesses: [{witness}]}}\n"
        "classes:\n"
        "  - {class: shared-id, shown_by: [twin-ids], scenario_classes: [deep-nesting],\n"
        f"     explanation: a declared class and not a recognised one, witnesses: [{witness}]}}\n",
        encoding="utf-8",
    )
    with pytest.raises(FindingsFileError) as refused:
        load_classes("sdk", "1.0", tmp_path)
    message = str(refused.value)
    assert "unknown scenario class 'deep-nesting'" in message
    assert "docs/findings.md" in message
    assert (ROOT / "docs" / "findings.md").exists()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    main_job, test_suite = (line.split("  #", 1)[0].strip() for line in block.splitlines()[:2])
    assert main_job.endswith("tox p -p 4 -m conformance")
    assert f"{test_suite} || status=$?" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


MATRIX = "${{ matrix.shard }}"


def _harness_commands(text: str) -> list[list[str]]:
    """The arguments of every ``python -m harness`` command in ``text``, and of every
    ``tox -e mutation-sdk -- ...`` (the env's own command with them), a matrix value put in."""
    tox = (ROOT / "tox.ini").read_text(encoding="utf-8")
    env = tox.split("[testenv:mutation-sdk]", 1)[1]
    command = env.split("\ncommands = ", 1)[1].split("\n", 1)[0]
    commands = []
    for line in text.replace(MATRIX, "1").splitlines():
        line = line.split("  #", 1)[0].strip()
        if line.startswith("python -m harness "):
            commands.append(shlex.split(line)[3:])
        elif line.startswith("tox -e mutation-sdk -- "):
            given = line.split(" -- ", 1)[1]
            commands.append(shlex.split(command.replace("{posargs}", given))[3:])
    return commands


def test_the_cluster_page_shows_the_shard_workflow_as_the_example_file_has_it() -> None:
    example = (ROOT / "examples" / "mutation-sdk-shards.yml").read_text(encoding="utf-8")
    assert f"```yaml\n{example}```" in _read("cluster.md")
    jobs = yaml.safe_load(example)["jobs"]
    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1))
    assert jobs["merge"]["needs"] == "shard"
    assert _harness_commands(example) == [
        ["mutate", "--sdk", "strands", "--reports", "reports", "--shard", f"1/{len(shards)}"],
        ["mutate", "--merge", "shards/*.json", "--baseline"],
    ]


def test_every_harness_command_the_cluster_page_shows_is_one_it_takes() -> None:
    commands = _harness_commands(_read("cluster.md"))
    assert sum(arguments[:1] == ["mutate"] for arguments in commands) >= 7
    parser = build_parser()
    for arguments in commands:
        parser.parse_args(arguments)  # an option it does not have is BadInput

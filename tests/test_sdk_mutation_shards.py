"""SDK mutation in shards: a mutant's shard comes from its name alone, each shard runs only its
own mutants, and the shards of a run merged give the report of one run, byte for byte; a
merge refuses shards that overlap, are missing or come from another run.  (mutmut itself is
stood in for by what it leaves in a tree: the rewritten module and each mutant's exit code.)"""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.mutation import sdk_report, sdk_run
from harness.mutation.baseline import baseline_path
from harness.mutation.classify import EQUIVALENT, MESSAGE_TEXT, UNREACHABLE, Reviewed
from harness.mutation.mutants import Mutant, MutationError, parse_name
from harness.mutation.sdk import SUITES
from harness.mutation.shards import (
    WHOLE,
    Shard,
    merge,
    parse_shard,
    read_shard,
    shard_of,
    shard_result,
)
from harness.mutation.source import functions_of

MODULE = "strands/agent/_agent_as_tool.py"
REWRITTEN = textwrap.dedent(
    """\
    def x_f__mutmut_orig(parent, key):
        logger.debug("key=<%s>", key)
        return parent[key] + 1

    def x_f__mutmut_1(parent, key):
        logger.debug("XXkey=<%s>XX", key)
        return parent[key] + 1

    def x_f__mutmut_2(parent, key):
        logger.debug("key=<%s>", key)
        return parent[key] - 1

    def x_f__mutmut_3(parent, key):
        logger.debug("key=<%s>", key)
        return parent[key] + 2

    def x_f__mutmut_4(parent, key):
        logger.debug(None, key)
        return parent[key] + 1

    def x_f__mutmut_5(parent, key):
        logger.debug("key=<%s>", key)
        return parent[None] + 1

    def x_g__mutmut_orig(use):
        return {"toolUseId": use, "content": [{"text": "no result"}]}

    def x_g__mutmut_1(use):
        return {"toolUseId": use, "content": [{"text": "XXno resultXX"}]}

    def x_g__mutmut_2(use):
        return {"XXtoolUseIdXX": use, "content": [{"text": "no result"}]}

    def x_g__mutmut_3(use):
        return {"toolUseId": None, "content": [{"text": "no result"}]}
    """
)
FUNCTIONS = {function.name: function for _, function in functions_of(ast.parse(REWRITTEN))}
NAMES = sorted(
    f"strands.agent._agent_as_tool.{name}" for name in FUNCTIONS if not name.endswith("_orig")
)
HEADER = {
    "sdk": "strands",
    "distribution": "strands-agents",
    "version": "9.9",
    "module": MODULE,
    "mutmut": "3.8.1",
}
STATUSES = ("killed", "survived", "timeout", "no tests")


def test_shard_values_must_be_i_of_n() -> None:
    assert parse_shard("2/4") == Shard(2, 4)
    assert parse_shard("1/1") == WHOLE
    for bad in ("0/4", "5/4", "4", "a/b", "1/0", "-1/4", "1/4/2", "01/4", " 1/4", ""):
        with pytest.raises(MutationError) as refused:
            parse_shard(bad)
        assert str(refused.value) == (
            f"--shard: expected I/N, whole numbers with 1 <= I <= N (such as 2/4); got {bad!r}"
        )


@given(st.lists(st.text(min_size=1), min_size=1, unique=True), st.integers(1, 8))
def test_every_mutant_is_in_exactly_one_shard_whatever_the_order(
    names: list[str], count: int
) -> None:
    shards = [Shard(index, count) for index in range(1, count + 1)]
    held = [[name for name in names if shard.holds(name)] for shard in shards]
    assert sorted(name for names_of_one in held for name in names_of_one) == sorted(names)
    backwards = [[name for name in reversed(names) if shard.holds(name)] for shard in shards]
    assert [sorted(one) for one in held] == [sorted(one) for one in backwards]


def test_a_mutants_shard_is_the_same_on_every_machine_and_release() -> None:
    """Shards of one run may be run by different machines and merged by a third: the split is
    a SHA-256 of the name, so these values are fixed for good."""
    name = "strands.agent._agent_as_tool.xǁ_AgentAsToolǁstream__mutmut_125"
    assert [shard_of(name, count) for count in (1, 2, 3, 4, 8)] == [1, 2, 2, 4, 4]


def _results(codes: dict[str, dict[str, str]]) -> dict[str, dict[str, Mutant]]:
    results: dict[str, dict[str, Mutant]] = {}
    for suite in SUITES:
        results[suite] = {}
        for name, status in codes[suite].items():
            module, function = parse_name(name)
            results[suite][name] = Mutant(name, module, function, status)
    return results


def _shards(results: dict[str, dict[str, Mutant]], count: int) -> list[tuple[Path, dict[str, Any]]]:
    """Each shard's result as its own run writes it, through JSON."""
    shards = []
    for index in range(1, count + 1):
        shard = Shard(index, count)
        held = [name for name in NAMES if shard.holds(name)]
        observed = sdk_report.observe(results, FUNCTIONS, held)
        result = shard_result(HEADER, ["T.name (@property)"], NAMES, shard, observed, SUITES)
        shards.append((Path(shard.file_name("strands")), json.loads(json.dumps(result))))
    return shards


def _written(report: dict[str, Any]) -> tuple[str, str]:
    return json.dumps(report, indent=2) + "\n", sdk_report.markdown(report)


def _document(shards: list[tuple[Path, dict[str, Any]]], reviewed: Reviewed) -> dict[str, Any]:
    merged = merge(shards)
    return sdk_report.document(merged.header, merged.unmutated, merged.observed, reviewed)


@given(
    statuses=st.fixed_dictionaries(
        {suite: st.lists(st.sampled_from(STATUSES), min_size=8, max_size=8) for suite in SUITES}
    ),
    reviews=st.lists(st.sampled_from((None, EQUIVALENT, UNREACHABLE, MESSAGE_TEXT)), min_size=8),
    count=st.integers(1, 4),
    order=st.randoms(use_true_random=False),
)
def test_the_shards_of_a_run_merged_are_the_report_of_one_run(
    statuses: dict[str, list[str]], reviews: list[str | None], count: int, order: Any
) -> None:
    codes = {suite: dict(zip(NAMES, statuses[suite], strict=True)) for suite in SUITES}
    results = _results(codes)
    survivors = [n for n in NAMES if not any(codes[s][n] in sdk_report.DETECTED for s in SUITES)]
    reviewed = {
        name.rsplit(".", 1)[-1]: (kind, "a reason a reviewer can check")
        for name, kind in zip(survivors, reviews, strict=False)
        if kind is not None
    }
    one_run = _document(_shards(results, 1), reviewed)
    shards = _shards(results, count)
    order.shuffle(shards)
    assert _written(_document(shards, reviewed)) == _written(one_run)
    assert [row["mutant"] for row in one_run["mutants"]] == NAMES


def _four_shards() -> list[tuple[Path, dict[str, Any]]]:
    killed = {name: "killed" for name in NAMES}
    return _shards(_results({"sdk": killed, "harness": killed}), 4)


def test_a_merge_refuses_a_shard_given_twice() -> None:
    shards = _four_shards()
    with pytest.raises(MutationError) as refused:
        merge([*shards, (Path("copy.json"), shards[1][1])])
    assert str(refused.value) == (
        "copy.json: shard 2/4 again (also mutation-sdk-strands-shard-2-of-4.json); "
        "expected each once"
    )


def test_a_merge_refuses_a_missing_shard() -> None:
    shards = _four_shards()
    with pytest.raises(MutationError) as refused:
        merge([shards[0], shards[3]])
    assert str(refused.value) == "--merge: shard 2/4, 3/4 missing; expected every shard of 4"


def test_a_merge_refuses_shards_of_another_split_or_another_run() -> None:
    shards = _four_shards()
    other = _shards(_results({s: {n: "killed" for n in NAMES} for s in SUITES}), 3)
    with pytest.raises(MutationError, match=r"shard 1/3, but .*-2-of-4\.json is of 4 shards"):
        merge([shards[1], other[0]])
    later = {**shards[2][1], "version": "9.10"}
    with pytest.raises(MutationError, match=r"^b\.json: its version differs from .*-1-of-4"):
        merge([shards[0], (Path("b.json"), later)])


def test_a_merge_refuses_a_mutant_in_the_wrong_shard_or_missing_from_its_own() -> None:
    (first, one), (second, two), *rest = _four_shards()
    moved = {**one, "mutants": one["mutants"] + two["mutants"][:1]}
    stray = two["mutants"][0]["mutant"]
    with pytest.raises(MutationError) as refused:
        merge([(first, moved), (second, two), *rest])
    assert str(refused.value) == f"{first}: mutant {stray} is not one of shard 1/4's"
    lacking = {**two, "mutants": two["mutants"][1:]}
    with pytest.raises(MutationError) as refused:
        merge([(first, one), (second, lacking), *rest])
    assert str(refused.value) == f"{second}: shard 2/4 lacks mutant {stray}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON; expected a shard result of mutate --shard"),
        ("[]", "expected a shard result of mutate --shard (a mapping)"),
        ('{"shard": "1/2"}', "no sdk; expected a shard result of mutate --shard"),
    ],
)
def test_a_file_that_is_not_a_shard_result_is_named(
    text: str, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "shard.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(MutationError) as refused:
        read_shard(path)
    assert str(refused.value) == f"{path}: {message}"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("shard", "5/4", "shard: expected I/N with 1 <= I <= N; got '5/4'"),
        ("version", 9.9, "version: expected text"),
        ("all_mutants", [1, 2], "all_mutants: expected a list of text"),
        ("suites_run", ["unit"], "suites_run: expected some of sdk, harness"),
        ("mutants", {}, "mutants: expected a list of rows"),
    ],
)
def test_a_shard_result_with_a_field_of_the_wrong_kind_is_named(
    field: str, value: object, message: str, tmp_path: Path
) -> None:
    (_, data), *_ = _four_shards()
    path = tmp_path / "shard.json"
    path.write_text(json.dumps({**data, field: value}), encoding="utf-8")
    with pytest.raises(MutationError) as refused:
        read_shard(path)
    assert str(refused.value) == f"{path}: {message}"


def test_a_shard_row_must_say_what_each_suite_did(tmp_path: Path) -> None:
    (_, data), *_ = _four_shards()
    data["mutants"][0]["syntax"] = "harmless"
    path = tmp_path / "shard.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(MutationError, match=r"mutants\[0\]\.syntax: expected behaviour or mess"):
        read_shard(path)
    del data["mutants"][0]["harness"]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(MutationError, match=r"mutants\[0\]: expected a row with mutant, functi"):
        read_shard(path)


# The command, with mutmut stood in for: what each suite does to each mutant (an exit code)
SDK_CODES = dict(zip(NAMES, (0, 1, 0, 0, 1, 0, 1, 0), strict=True))
HARNESS_CODES = dict(zip(NAMES, (0, 1, 1, 0, 36, 0, 0, 1), strict=True))


@pytest.fixture
def fake_mutmut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    """``mutmut run`` in a scratch tree, as it leaves it; the runs it was asked for."""
    package = tmp_path / "site" / "strands"
    (package / "agent").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agent" / "_agent_as_tool.py").write_text("def f(parent, key):\n    pass\n")
    (tmp_path / "sdist" / "tests").mkdir(parents=True)
    runs: list[tuple[str, list[str]]] = []

    def run_mutmut(tree: Path, names: list[str], max_children: int) -> None:
        runs.append((tree.name, list(names)))
        codes = SDK_CODES if tree.name == "sdk" else HARNESS_CODES
        module = tree / "mutants" / MODULE
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text(REWRITTEN)
        ran = {name: (code if not names or name in names else None) for name, code in codes.items()}
        (tree / "mutants" / f"{MODULE}.meta").write_text(json.dumps({"exit_code_by_key": ran}))

    monkeypatch.setattr(sdk_run, "installed", lambda _: (package, "9.9"))
    monkeypatch.setattr(sdk_run, "fetch_sdk_tests", lambda *_: tmp_path / "sdist" / "tests")
    monkeypatch.setattr(sdk_run, "run_mutmut", run_mutmut)
    monkeypatch.setattr(sdk_run, "listed", lambda module, source: list(NAMES))
    return runs


def _mutate(*arguments: str | Path) -> int:
    return main(["mutate", *map(str, arguments)])


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_shard_runs_merged_write_the_report_of_one_run_byte_for_byte(
    count: int,
    fake_mutmut: list[tuple[str, list[str]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    work, one, sharded = tmp_path / "work", tmp_path / "one", tmp_path / "sharded"
    assert _mutate("--sdk", "strands", "--workdir", work, "--reports", one) == 1
    assert fake_mutmut == [("sdk", []), ("harness", [])]  # every mutant
    fake_mutmut.clear()
    capsys.readouterr()
    for index in range(1, count + 1):
        assert _mutate("--sdk", "strands", "--shard", f"{index}/{count}", "--workdir", work,
                       "--reports", sharded) == 0  # fmt: skip
        held = [name for name in NAMES if Shard(index, count).holds(name)]
        if count == 1:  # every mutant
            assert fake_mutmut == [(suite, []) for suite in SUITES]
        else:  # only the shard's, and no run at all for an empty shard
            assert fake_mutmut == ([(suite, held) for suite in SUITES] if held else [])
        fake_mutmut.clear()
        line = capsys.readouterr().out.strip()
        assert line.startswith(f"shard {index}/{count} of strands-agents 9.9: {len(held)} of 8 ")
    assert not (sharded / "mutation-sdk-strands.md").exists()
    files = sorted(sharded.glob("mutation-sdk-strands-shard-*.json"))
    assert len(files) == count
    assert _mutate("--merge", *reversed(files), "--reports", sharded) == 1
    for name in ("mutation-sdk-strands.json", "mutation-sdk-strands.md"):
        assert (sharded / name).read_bytes() == (one / name).read_bytes(), name


def test_a_refused_merge_is_one_line_exit_2_and_writes_no_report(
    fake_mutmut: list[tuple[str, list[str]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for index in (1, 2):
        _mutate("--sdk", "strands", "--shard", f"{index}/3", "--workdir", tmp_path / "w",
                "--reports", tmp_path)  # fmt: skip
    capsys.readouterr()
    first, second = (tmp_path / Shard(i, 3).file_name("strands") for i in (1, 2))
    assert _mutate("--merge", first, second, "--reports", tmp_path) == 2
    assert capsys.readouterr().err == "--merge: shard 3/3 missing; expected every shard of 3\n"
    assert _mutate("--merge", first, second, first, "--reports", tmp_path) == 2
    error = capsys.readouterr().err
    assert error == f"{first}: shard 1/3 again (also {first}); expected each once\n"
    assert not list(tmp_path.glob("mutation-sdk-strands.*"))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--sdk", "strands", "--shard", "5/4"], "--shard: expected I/N, whole numbers with 1 <="),
        (["--sdk", "strands", "--shard", "two"], "--shard: expected I/N, whole numbers with 1 <="),
        (["--shard", "1/4"], "--shard: only with --sdk"),
        (["--sdk", "strands", "--shard", "1/4", "--suite", "sdk"], "--shard: not with --suite"),
        (["--sdk", "strands", "--shard", "1/4", "--report-only"], "--shard: not with --report-o"),
        (["--sdk", "strands", "--shard", "1/4", "--baseline"], "--baseline: not with --shard"),
        (["--sdk", "strands", "--suite", "sdk", "--baseline"], "--baseline: not with --suite"),
        (["--sdk", "strands", "--report-only", "--baseline"], "--baseline: not with --suite or"),
        (["--baseline"], "--baseline: only with --sdk"),
        (["--merge", "a.json", "--sdk", "strands"], "--merge: not with --sdk"),
        (["--merge", "a.json", "--shard", "1/2"], "--merge: not with --shard"),
        (["--merge", "missing.json"], "missing.json: No such file or directory; expected a sha"),
    ],
)
def test_bad_shard_options_are_one_line_and_exit_2(
    arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _mutate(*arguments, "--reports", tmp_path) == 2
    error = capsys.readouterr().err
    assert error.startswith(message)
    assert len(error.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_a_shard_whose_run_named_other_mutants_than_mutmut_listed_is_refused(
    fake_mutmut: list[tuple[str, list[str]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sdk_run, "listed", lambda module, source: [*NAMES, f"{NAMES[0]}0"])
    count = next(n for n in range(2, 9) if Shard(1, n).holds(NAMES[0]))
    with pytest.raises(
        MutationError, match=r"made other mutants of .* than it listed \(8, not 9\)"
    ):
        sdk_run.mutate_sdk(sdk_run.SDKS["strands"], tmp_path / "work", 1, shard=Shard(1, count))


def test_an_empty_shard_runs_nothing_and_still_names_every_mutant(
    fake_mutmut: list[tuple[str, list[str]]], tmp_path: Path
) -> None:
    empty = next(
        Shard(index, count)
        for count in range(2, 16)
        for index in range(1, count + 1)
        if not any(Shard(index, count).holds(name) for name in NAMES)
    )
    result = sdk_run.mutate_sdk(sdk_run.SDKS["strands"], tmp_path / "work", 1, shard=empty)
    assert fake_mutmut == []
    assert (result["shard"], result["mutants"], result["all_mutants"]) == (str(empty), [], NAMES)


def test_a_run_and_its_shards_merged_write_the_same_baseline(
    fake_mutmut: list[tuple[str, list[str]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, sharded = tmp_path / "one", tmp_path / "sharded"
    assert _mutate("--sdk", "strands", "--workdir", tmp_path / "w", "--reports", one,
                   "--baseline") == 1  # fmt: skip
    written = baseline_path(one, "strands", "9.9")
    assert written == one / "baselines" / "mutation-sdk-strands-9.9.json"
    baseline = json.loads(written.read_text(encoding="utf-8"))
    report = json.loads((one / "mutation-sdk-strands.json").read_text(encoding="utf-8"))
    assert baseline["rates"] == report["rates"]
    assert (baseline["version"], baseline["mutmut"]) == ("9.9", report["mutmut"])
    assert baseline["only_harness"] == len(report["only_harness"]) == 2
    for index in (1, 2, 3):
        _mutate("--sdk", "strands", "--shard", f"{index}/3", "--workdir", tmp_path / "w",
                "--reports", sharded)  # fmt: skip
    files = [sharded / Shard(index, 3).file_name("strands") for index in (1, 2, 3)]
    assert _mutate("--merge", *files, "--reports", sharded, "--baseline") == 1
    assert baseline_path(sharded, "strands", "9.9").read_bytes() == written.read_bytes()


def test_a_merge_of_results_stitched_together_writes_no_baseline(
    fake_mutmut: list[tuple[str, list[str]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--suite harness`` reran one tree and read the other's last results back: its figures
    are not one run's."""
    one = tmp_path / "one"
    _mutate("--sdk", "strands", "--workdir", tmp_path / "w", "--reports", one)
    assert _mutate("--sdk", "strands", "--suite", "harness", "--workdir", tmp_path / "w",
                   "--reports", one) == 1  # fmt: skip
    capsys.readouterr()
    kept = one / Shard(1, 1).file_name("strands")
    assert json.loads(kept.read_text(encoding="utf-8"))["suites_run"] == ["harness"]
    out = tmp_path / "out"
    assert _mutate("--merge", kept, "--reports", out, "--baseline") == 2
    assert capsys.readouterr().err == (
        f"--baseline: {kept} did not run both suites itself (--suite or --report-only); "
        "expected a baseline from one run of both suites\n"
    )
    assert not out.exists()


def test_a_merge_refuses_the_committed_review_of_a_mutant_a_suite_killed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reviews of strands 1.62.0 as committed: on a run where the SDK's own suite kills one
    reviewed mutant, the merge names the file, the mutant and the suite, and writes nothing."""
    reviewed = sdk_run.load_reviewed(sdk_run.ROOT / "mutation" / "strands-1.62.0.yaml")
    names = sorted(f"strands.agent._agent_as_tool.{short}" for short in reviewed)
    killed = names[0]
    rows = [
        {
            "mutant": name,
            "function": parse_name(name)[1],
            "sdk": "killed" if name == killed else "survived",
            "harness": "survived",
            "syntax": "behaviour",
            "diff": "",
        }
        for name in names
    ]
    path = tmp_path / "shard.json"
    header = {**HEADER, "version": "1.62.0"}
    path.write_text(json.dumps(shard_result(header, [], names, WHOLE, rows, SUITES)))
    assert _mutate("--merge", path, "--reports", tmp_path / "out") == 2
    short = killed.rsplit(".", 1)[1]
    assert capsys.readouterr().err == (
        f"mutation/strands-1.62.0.yaml: a review of a killed mutant: {short} "
        f"({reviewed[short][0]}, killed by the SDK's own suite); expected reviews only of "
        "mutants no suite kills (remove them)\n"
    )
    assert not (tmp_path / "out").exists()
    rows[0]["sdk"] = "survived"
    path.write_text(json.dumps(shard_result(header, [], names, WHOLE, rows, SUITES)))
    assert _mutate("--merge", path, "--reports", tmp_path / "out") == 1  # nothing measured
    report = json.loads((tmp_path / "out" / "mutation-sdk-strands.json").read_text())
    left = report["rates"]["both"]["survivors_by_class"]
    assert left == {kind: sum(c == kind for c, _ in reviewed.values()) for kind in left}


def test_a_whole_run_whose_reviews_are_refused_keeps_its_results_for_a_merge(
    fake_mutmut: list[tuple[str, list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A refused review ends a long run with one line and no report, but what the suites did
    is kept: after the review file is fixed, a merge of that result gives the report."""
    reviews = tmp_path / "strands-9.9.yaml"
    reviews.write_text("- {mutant: x_f__mutmut_2, reason: the result is never read}\n")
    monkeypatch.setattr(sdk_run, "equivalents_file", lambda sdk, release: reviews)
    out = tmp_path / "out"
    assert _mutate("--sdk", "strands", "--workdir", tmp_path / "w", "--reports", out) == 2
    kept = out / Shard(1, 1).file_name("strands")
    assert capsys.readouterr().err == (
        f"{reviews}: a review of a killed mutant: x_f__mutmut_2 (equivalent, killed by the SDK's "
        "own suite and the harness); expected reviews only of mutants no suite kills (remove "
        f"them); the run's results are in {kept} (mutate --merge it)\n"
    )
    assert sorted(path.name for path in out.iterdir()) == [kept.name]
    reviews.write_text("- {mutant: x_f__mutmut_1, reason: only the log line's text changes}\n")
    assert _mutate("--merge", kept, "--reports", out) == 1
    report = json.loads((out / "mutation-sdk-strands.json").read_text(encoding="utf-8"))
    assert report["mutants"][0]["reason"] == "only the log line's text changes"

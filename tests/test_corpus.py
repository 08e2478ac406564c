"""The committed ci sample (``scenarios/corpus/``): it is what ``python -m harness generate``
writes with the installed hypothesis, every scenario in it is a valid regression scenario, each
built-in target finds the file drawn within its capabilities, and a malformed file is refused in
one line."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import hypothesis
import pytest
from hypothesis import given, settings

from fakes.corruption import CORRUPTIONS
from harness.cli import main
from harness.commands.planning import generated
from harness.targets import adk, langgraph, openai_agents, registry, strands
from harness.targets.base import CAPABILITIES, requirements
from scenarios import corpus
from scenarios.classes import classes_of
from scenarios.loading import parse_scenario
from scenarios.model import Answer, Corrupt, Scenario, Step
from scenarios.strategies import (
    DRAWN_CAPABILITIES,
    effects_scenarios,
    restore_scenarios,
    scenarios,
)
from scenarios.strategies.deploys import DEPLOY_CAPABILITY, DEPLOY_NEEDS, deploy_scenarios
from scenarios.strategies.gates import GATE_CAPABILITY, gated_scenarios
from scenarios.strategies.retries import RETRY_CAPABILITY, retried_scenarios

FILES = corpus.files("ci")
EVERY = frozenset(CAPABILITIES) | {f"corruption:{kind}" for kind in CORRUPTIONS}


@functools.cache
def committed(path: Path) -> corpus.Named:
    return corpus.read(path, "ci")


def drawn_by_the_installed_hypothesis() -> None:
    """Fail, in one line, when the installed hypothesis is not the release that drew the corpus:
    its draws differ, and a new sample must be a deliberate, triaged change."""
    for path in FILES:
        drew = corpus.header(path, "ci")["hypothesis"]
        if drew != hypothesis.__version__:
            pytest.fail(
                f"{path.name} was drawn by hypothesis {drew}, {hypothesis.__version__} is "
                f"installed: install {drew}, or regenerate deliberately (python -m harness "
                f"generate --profile ci) and triage the findings again",
                pytrace=False,
            )


def test_the_committed_corpus_is_what_generate_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    drawn_by_the_installed_hypothesis()
    assert main(["generate", "--profile", "ci", "--corpus", str(tmp_path)]) == 0
    assert "triage its findings again" in capsys.readouterr().out
    written = corpus.files("ci", tmp_path)
    assert [path.name for path in written] == [path.name for path in FILES]
    stale = [
        path.name
        for path in FILES
        if path.read_bytes() != (tmp_path / "ci" / path.name).read_bytes()
    ]
    assert stale == [], f"{stale} differ from what generate writes: regenerate deliberately"


def test_another_hypothesis_release_fails_the_corpus_test_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hypothesis, "__version__", "0.0.1")
    with pytest.raises(pytest.fail.Exception) as failure:
        drawn_by_the_installed_hypothesis()
    message = str(failure.value)
    assert "\n" not in message
    assert "0.0.1 is installed" in message
    assert "regenerate deliberately (python -m harness generate --profile ci)" in message


def test_a_line_keeps_the_order_answers_were_drawn_in_and_sorts_every_other_key(
    tmp_path: Path,
) -> None:
    """The runner sends an answer's responses in the order written, the order a person gave
    them in; the committed line must not sort them away."""
    name, scenario = next(
        (name, scenario)
        for name, scenario in committed(FILES[0])
        if any(isinstance(step, Answer) and len(step.answer) > 1 for step in scenario.steps)
    )
    steps = tuple(
        Answer(answer=dict(reversed(step.answer.items()))) if isinstance(step, Answer) else step
        for step in scenario.steps
    )
    path = tmp_path / "generated.jsonl"
    path.write_text(
        corpus.render("ci", None, [(name, scenario.model_copy(update={"steps": steps}))])
    )
    [(_, read_back)] = corpus.read(path, "ci")

    def orders(steps: tuple[Step, ...]) -> list[list[str]]:
        return [list(step.answer) for step in steps if isinstance(step, Answer)]

    assert orders(read_back.steps) == orders(steps)
    assert orders(steps) != [sorted(order) for order in orders(steps)]
    line = json.loads(path.read_text().splitlines()[1])
    assert list(line["scenario"]) == sorted(line["scenario"])


def test_generate_replaces_every_file_and_removes_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def tiny(profile: str, capabilities: frozenset[str] | None) -> corpus.Named:
        return committed(FILES[0])[:2]

    monkeypatch.setattr(corpus, "draw", tiny)
    folder = tmp_path / "ci"
    folder.mkdir()
    (folder / "generated.jsonl").write_text("not a corpus file\n", encoding="utf-8")
    (folder / "generated-gone.jsonl").write_text("{}\n", encoding="utf-8")
    assert main(["generate", "--corpus", str(tmp_path)]) == 0
    assert "generated-gone.jsonl: removed" in capsys.readouterr().out
    assert [path.name for path in corpus.files("ci", tmp_path)] == [path.name for path in FILES]
    assert len(corpus.read(folder / "generated.jsonl", "ci")) == 2


def test_the_corpus_holds_every_family_under_todays_names() -> None:
    assert [path.name for path in FILES] == [
        "generated-adk.jsonl",
        "generated-langgraph-subgraph-node.jsonl",
        "generated-langgraph.jsonl",
        "generated-openai-agents.jsonl",
        "generated-strands-1.58.jsonl",
        "generated-strands.jsonl",
        "generated.jsonl",
    ]
    for path in FILES:
        names = [name for name, _ in committed(path)]
        within = corpus.header(path, "ci")["capabilities"]
        retried = [f"generated-retried-{i:03d}" for i in range(25)]
        gated = [f"generated-gated-{i:03d}" for i in range(25)]
        assert names == [f"generated-{i:03d}" for i in range(200)] + [
            f"generated-restore-{i:03d}" for i in range(200)
        ] + [f"generated-effects-{i:03d}" for i in range(25)] + (
            gated if within is None or GATE_CAPABILITY in within else []
        ) + [f"generated-ids-{i:03d}" for i in range(25)] + (
            retried if within is None or RETRY_CAPABILITY in within else []
        ) + [f"generated-deploy-{i:03d}" for i in range(25)] + [
            f"generated-twins-{i:03d}" for i in range(25)
        ]


def test_langgraphs_two_shapes_run_the_same_lines_but_the_retried_calls() -> None:
    """The subgraph-node shape cannot retry (no tool-call interceptor sees a node): its file is
    the tools shape's without the retried-call family, every other line the same bytes, so its
    scenarios keep the names and contents its findings record."""
    folder = corpus.folder("ci")
    tools = (folder / "generated-langgraph.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    nodes = (folder / "generated-langgraph-subgraph-node.jsonl").read_text(encoding="utf-8")
    assert nodes.splitlines()[1:] == [line for line in tools if '"generated-retried-' not in line]
    assert corpus.header(folder / "generated-langgraph.jsonl", "ci")["capabilities"] == (
        corpus.header(folder / "generated-langgraph-subgraph-node.jsonl", "ci")["capabilities"]
        | {RETRY_CAPABILITY}
    )


def counted_size(drawn: corpus.Named) -> int:
    """How many scenarios of a sample the class statistics count (the 5% is of those)."""
    return sum(corpus.counted(name) for name, _ in drawn)


def test_the_effects_family_is_at_least_five_percent_of_every_sample_and_has_ordinary_tools() -> (
    None
):
    for path in FILES:
        drawn = committed(path)
        effects = [scenario for name, scenario in drawn if name.startswith(corpus.EFFECTS)]
        assert len(effects) >= 0.05 * counted_size(drawn), path.name
        assert all(requirements(scenario) >= {"ordinary_tools"} for scenario in effects)
        classed = [scenario for scenario in effects if "side-effects" in classes_of(scenario)]
        assert len(classed) >= 0.05 * counted_size(drawn), path.name


def test_the_gated_family_is_at_least_five_percent_of_every_sample_and_has_gates() -> None:
    """Of every sample drawn within gated_sub_agents (adk's cannot gate an agent tool)."""
    for path in FILES:
        within = corpus.header(path, "ci")["capabilities"]
        if within is not None and GATE_CAPABILITY not in within:
            assert not any(name.startswith(corpus.GATED) for name, _ in committed(path))
            continue
        drawn = committed(path)
        gated = [scenario for name, scenario in drawn if name.startswith(corpus.GATED)]
        assert len(gated) >= 0.05 * counted_size(drawn), path.name
        assert all(requirements(scenario) >= {GATE_CAPABILITY} for scenario in gated)
        classed = [scenario for scenario in gated if "gated-agent-call" in classes_of(scenario)]
        assert len(classed) >= 0.05 * counted_size(drawn), path.name
        others = [scenario for name, scenario in drawn if not name.startswith(corpus.GATED)]
        assert not any("gated-agent-call" in classes_of(scenario) for scenario in others)


def test_the_twins_family_calls_one_sub_agent_with_prompts_that_act_and_answer_apart() -> None:
    """Every twins scenario's first turn calls one sub-agent with two or more prompts, each
    scripted with its own answer, and at least one of those calls asks: results or approvals
    handed to the wrong twin would show."""
    for path in FILES:
        twins = [scenario for name, scenario in committed(path) if name.startswith(corpus.TWINS)]
        assert len(twins) == 25, path.name
        for scenario in twins:
            twin = scenario.tree.sub_agents[0]
            called = [call.prompt for call in scenario.tree.turns[0] if call.tool == twin.name]
            assert len(called) >= 2, path.name
            assert set(called) == set(twin.prompts), path.name
            answers = [script.answer for script in twin.prompts.values()]
            assert len(set(answers)) == len(answers), path.name
            assert any(script.turns for script in twin.prompts.values()), path.name
            assert "twin-calls" in classes_of(scenario), path.name


def test_a_family_is_drawn_only_within_capabilities_that_have_what_it_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[float] = []

    def sample(profile: str, family: object, share: float = 1.0) -> list[Scenario]:
        asked.append(share)
        return []

    monkeypatch.setattr(corpus, "sample", sample)
    everything = len(corpus.FAMILIES)
    assert corpus.draw("ci", None) == []
    assert len(asked) == everything
    asked.clear()
    corpus.draw("ci", frozenset({"restart", GATE_CAPABILITY, RETRY_CAPABILITY, DEPLOY_CAPABILITY}))
    assert len(asked) == everything
    asked.clear()
    corpus.draw("ci", frozenset({"restart"}))
    assert len(asked) == everything - 3  # not the gated, retried or deploy family
    asked.clear()
    corpus.draw("ci", frozenset({DEPLOY_CAPABILITY}))
    assert len(asked) == everything - 3  # a deploy is a restart: none without it either
    assert {family.prefix: family.needs for family in corpus.FAMILIES if family.needs} == {
        "gated-": {GATE_CAPABILITY},
        "retried-": {RETRY_CAPABILITY},
        "deploy-": DEPLOY_NEEDS,
    }


def test_the_ids_family_is_at_least_five_percent_of_every_sample_and_has_adversarial_ids() -> None:
    for path in FILES:
        drawn = committed(path)
        ids = [scenario for name, scenario in drawn if name.startswith(corpus.IDS)]
        assert len(ids) >= 0.05 * counted_size(drawn), path.name
        classed = [scenario for scenario in ids if "adversarial-ids" in classes_of(scenario)]
        assert len(classed) >= 0.05 * counted_size(drawn), path.name
        others = [scenario for name, scenario in drawn if not name.startswith(corpus.IDS)]
        assert not any("adversarial-ids" in classes_of(scenario) for scenario in others)


def test_the_retried_family_is_at_least_five_percent_of_every_sample_that_can_retry() -> None:
    """Where retries can be expressed, its scenarios are 5% of the counted sample and a retry
    happens in every one (the oracle makes a call again); where they cannot, none is drawn."""
    for path in FILES:
        drawn = committed(path)
        within = corpus.header(path, "ci")["capabilities"]
        retried = [scenario for name, scenario in drawn if name.startswith(corpus.RETRIED)]
        if within is not None and RETRY_CAPABILITY not in within:
            assert retried == [], path.name
            continue
        assert all(requirements(scenario) >= {RETRY_CAPABILITY} for scenario in retried)
        classed = [scenario for scenario in retried if "retries" in classes_of(scenario)]
        assert len(classed) == len(retried) >= 0.05 * counted_size(drawn), path.name
        others = [scenario for name, scenario in drawn if not name.startswith(corpus.RETRIED)]
        assert not any("retries" in classes_of(scenario) for scenario in others)


def test_the_deploy_family_is_at_least_five_percent_of_every_sample_and_deploys_while_asking() -> (
    None
):
    for path in FILES:
        drawn = committed(path)
        deploys = [scenario for name, scenario in drawn if name.startswith(corpus.DEPLOY)]
        assert all(requirements(scenario) >= DEPLOY_NEEDS for scenario in deploys)
        classed = [scenario for scenario in deploys if "deploy-skew" in classes_of(scenario)]
        assert len(classed) >= 0.05 * counted_size(drawn), path.name
        others = [scenario for name, scenario in drawn if not name.startswith(corpus.DEPLOY)]
        assert not any("deploy-skew" in classes_of(scenario) for scenario in others)


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.stem)
def test_every_corpus_scenario_loads_as_a_regression_file_does(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["profile"] == "ci"
    assert header["scenarios"] == len(lines) - 1
    read = committed(path)
    for number, (line, (name, scenario)) in enumerate(zip(lines[1:], read, strict=True), 2):
        data = json.loads(line)
        assert data["name"] == name
        # the loader of scenarios/regressions/: schema, then the oracle's expectations
        assert parse_scenario(data["scenario"], f"{path.name}: line {number}") == scenario
        needed = {step.corrupt for step in scenario.steps if isinstance(step, Corrupt)}
        within = header["capabilities"]
        if within is not None:
            assert {f"corruption:{kind}" for kind in needed} <= set(within)


def stand_in_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Build the SDK targets without their SDKs: their constructors read only the version."""
    monkeypatch.setattr(strands, "sdk_version", lambda: "1.62.0")
    monkeypatch.setattr(langgraph, "sdk_version", lambda: "1.2.24")
    monkeypatch.setattr(openai_agents, "sdk_version", lambda: "0.24.0")
    monkeypatch.setattr(adk, "sdk_version", lambda: "2.13.0")


def test_the_capabilities_generate_knows_are_those_the_targets_declare(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stand_in_versions(monkeypatch)
    known = registry.built_in_expressible()
    assert set(known) == set(registry.BUILT_IN)
    for name, build in registry.BUILT_IN.items():
        assert build().info.expressible == known[name], name


@pytest.mark.parametrize("name", sorted(registry.BUILT_IN))
def test_every_built_in_target_finds_the_file_drawn_within_its_capabilities(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in_versions(monkeypatch)
    expressible = registry.BUILT_IN[name]().info.expressible
    found = corpus.find("ci", expressible)
    assert found is not None
    shared = expressible >= DRAWN_CAPABILITIES
    assert (found.name == "generated.jsonl") == shared
    if not shared:
        within = corpus.header(found, "ci")["capabilities"]
        assert within == expressible & DRAWN_CAPABILITIES
        assert found.name in {f"generated-{name}.jsonl", *_same_set_names(name)}


def test_an_older_sdk_release_that_expresses_less_runs_a_committed_file_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """strands-agents before 1.59 stores no sub-agent turn: the target says so, and generate
    commits a sample drawn within what it can express, which tox's strands-1.58 env runs."""
    monkeypatch.setattr(strands, "sdk_version", lambda: "1.58.1")
    expressible = strands.StrandsTarget().info.expressible
    assert expressible in registry.older_releases_expressible().values()
    found = corpus.find("ci", expressible)
    assert found is not None
    assert found.name == "generated-strands-1.58.jsonl"
    assert corpus.header(found, "ci")["capabilities"] == expressible & DRAWN_CAPABILITIES


def _same_set_names(name: str) -> set[str]:
    """The files named after another built-in target that draws within the same capabilities
    (``generate`` names a file after the first target drawing within its set)."""
    known = registry.built_in_expressible()
    drawn = corpus.drawn_within(known[name])
    return {
        f"generated-{other}.jsonl" for other in known if corpus.drawn_within(known[other]) == drawn
    }


def test_a_fully_capable_target_runs_the_shared_sample() -> None:
    assert corpus.drawn_within(EVERY) is None
    assert corpus.drawn_within(DRAWN_CAPABILITIES) is None
    assert (
        corpus.find("ci", EVERY)
        == corpus.find("ci", None)
        == corpus.folder("ci") / ("generated.jsonl")
    )


ASKED: set[str] = set()


class Consulted(frozenset[str]):
    """A capability set that remembers which capabilities the generators asked about."""

    def __contains__(self, item: object) -> bool:
        ASKED.add(str(item))
        return super().__contains__(item)


def test_the_generators_consult_exactly_the_drawn_capabilities() -> None:
    """So a sample drawn within a set's drawn part is the one drawn within the whole set, and a
    file's header need record only that part."""
    ASKED.clear()
    every = Consulted(EVERY)

    @settings(max_examples=30, derandomize=True, database=None, deadline=None)
    @given(
        scenarios(capabilities=every),
        restore_scenarios(capabilities=every),
        effects_scenarios(capabilities=every),
        gated_scenarios(capabilities=every),
        retried_scenarios(capabilities=every),
        deploy_scenarios(capabilities=every),
    )
    def draw(
        general: Scenario,
        focused: Scenario,
        effects: Scenario,
        gated: Scenario,
        retried: Scenario,
        deployed: Scenario,
    ) -> None:
        del general, focused, effects, gated, retried, deployed

    draw()
    assert set(DRAWN_CAPABILITIES) == ASKED


def test_a_target_prefix_goes_after_generated_in_both_families() -> None:
    drawn = committed(corpus.folder("ci") / "generated-strands.jsonl")
    names = [name for name, _ in corpus.named(drawn, "strands-snapshot-")]
    assert names[0] == "generated-strands-snapshot-000"
    assert names[200] == "generated-restore-strands-snapshot-000"
    assert [name for name, _ in corpus.named(drawn, "")] == [name for name, _ in drawn]


def test_check_draws_a_sample_no_file_was_drawn_within_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[tuple[str, frozenset[str] | None]] = []

    def drawn(profile: str, capabilities: frozenset[str] | None) -> corpus.Named:
        asked.append((profile, capabilities))
        return committed(FILES[0])[:1]

    monkeypatch.setattr(corpus, "draw", drawn)
    narrow = frozenset({"restart"})
    assert generated("ci", narrow, "custom-") == [
        ("generated-custom-000", committed(FILES[0])[0][1])
    ]
    assert asked == [("ci", narrow)]
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert "no sample drawn within custom's capabilities; drawing it with hypothesis" in err
    # the other profiles are drawn, and say nothing
    assert generated("dev", None, "")[0][0] == "generated-000"
    assert asked[-1] == ("dev", None)
    assert capsys.readouterr().err == ""


def test_check_runs_the_committed_file_not_a_new_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(profile: str, capabilities: frozenset[str] | None) -> corpus.Named:
        raise AssertionError("drew instead of reading the corpus")

    monkeypatch.setattr(corpus, "draw", refuse)
    for path in FILES:
        within = corpus.header(path, "ci")["capabilities"]
        assert generated("ci", within, "") == committed(path)


GOOD_HEADER = {
    "capabilities": None,
    "hypothesis": "6.170.17",
    "profile": "ci",
    "regenerate": "python -m harness generate --profile ci",
    "scenarios": 1,
}
GOOD_LINE = '{"name":"generated-000","scenario":{"description":"d","source":"s","steps":[{"run":"p"}],"tree":{"name":"orchestrator"}}}'  # noqa: E501


def lines(*rows: object) -> str:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)


MALFORMED = {
    "empty": ("", "line 1: expected the header"),
    "header-not-json": ("{capabilities\n", "line 1: not JSON (Expecting property name"),
    "header-a-list": (lines([1]), "line 1: expected the header: {"),
    "header-missing-key": (
        lines({key: value for key, value in GOOD_HEADER.items() if key != "hypothesis"}),
        "line 1: expected the header's keys capabilities, hypothesis, profile, regenerate, "
        "scenarios, got capabilities, profile, regenerate, scenarios",
    ),
    "header-extra-key": (
        lines({**GOOD_HEADER, "x": 1}),
        "line 1: expected the header's keys capabilities, hypothesis, profile, regenerate, "
        "scenarios, got capabilities, hypothesis, profile, regenerate, scenarios, x",
    ),
    "other-profile": (
        lines({**GOOD_HEADER, "profile": "dev"}, GOOD_LINE),
        "line 1: profile: expected 'ci' (the folder it is in), got 'dev'",
    ),
    "capabilities-a-string": (
        lines({**GOOD_HEADER, "capabilities": "restart"}, GOOD_LINE),
        "line 1: capabilities: expected null or a list of capability names",
    ),
    "count-negative": (
        lines({**GOOD_HEADER, "scenarios": -1}),
        "line 1: scenarios: expected how many lines follow",
    ),
    "too-few": (
        lines({**GOOD_HEADER, "scenarios": 2}, GOOD_LINE),
        "line 2: expected 2 scenarios after the header (its scenarios), found 1",
    ),
    "no-final-newline": (lines(GOOD_HEADER) + GOOD_LINE, "line 2: expected a newline at the end"),
    "blank-line": (lines(GOOD_HEADER, "", GOOD_LINE), "line 2: expected a scenario line"),
    "line-not-json": (lines(GOOD_HEADER, "{name"), "line 2: not JSON"),
    "extra-key": (
        lines(GOOD_HEADER, {**json.loads(GOOD_LINE), "note": 1}),
        "line 2: expected the keys name and scenario, got name, note, scenario",
    ),
    "bad-name": (
        lines(GOOD_HEADER, {**json.loads(GOOD_LINE), "name": "colliding-ids"}),
        "line 2: name: expected generated-NNN or generated-restore-NNN or generated-effects-NNN "
        "or generated-gated-NNN or generated-ids-NNN or generated-retried-NNN or "
        "generated-deploy-NNN or generated-twins-NNN, got 'colliding-ids'",
    ),
    "repeated-name": (
        lines({**GOOD_HEADER, "scenarios": 2}, GOOD_LINE, GOOD_LINE),
        "line 3: name: generated-000 is already an earlier line's",
    ),
    "bad-scenario": (
        lines(GOOD_HEADER, GOOD_LINE.replace('"run":"p"}', '"run":"p"},{"answer":{"x":"deny"}}')),
        "line 2: scenario: steps[1].answer: no action labelled ['x']",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_corpus_file_exits_2_with_one_line_and_no_report(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = MALFORMED[case]
    folder = tmp_path / "corpus" / "ci"
    folder.mkdir(parents=True)
    path = folder / "generated.jsonl"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(corpus, "CORPUS", tmp_path / "corpus")
    reports = tmp_path / "reports"
    status = main(["check", "--target", "reference", "--profile", "ci", "--reports", str(reports)])
    captured = capsys.readouterr()
    assert status == 2
    lines_out = captured.err.strip().splitlines()
    assert len(lines_out) == 1, captured.err
    assert lines_out[0].startswith(f"{path}: "), lines_out[0]
    assert expected in lines_out[0]
    assert "Traceback" not in captured.err
    assert not reports.exists()


def test_two_files_drawn_within_the_same_capabilities_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "ci"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        (folder / name).write_text(lines(GOOD_HEADER, GOOD_LINE), encoding="utf-8")
    monkeypatch.setattr(corpus, "CORPUS", tmp_path)
    reports = str(tmp_path / "reports")
    assert main(["check", "--target", "reference", "--profile", "ci", "--reports", reports]) == 2
    assert capsys.readouterr().err == (
        f"{folder / 'b.jsonl'}: line 1: capabilities: expected a set no other file has, "
        "a.jsonl has the same\n"
    )


def test_a_good_corpus_file_written_by_hand_is_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "corpus" / "ci"
    folder.mkdir(parents=True)
    (folder / "generated.jsonl").write_text(lines(GOOD_HEADER, GOOD_LINE), encoding="utf-8")
    monkeypatch.setattr(corpus, "CORPUS", tmp_path / "corpus")
    reports = tmp_path / "reports"
    assert (
        main(["check", "--target", "reference", "--profile", "ci", "--reports", str(reports)]) == 0
    )
    document = json.loads((reports / "conformance.json").read_text(encoding="utf-8"))
    [names] = document["scenarios"].values()
    assert [name for name in names if name.startswith("generated-")] == ["generated-000"]

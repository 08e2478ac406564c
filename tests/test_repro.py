"""Reproducers (``python -m harness repro``): the script written for a regression file imports
only the SDK and the standard library, is short and ruff-clean, and, run alone in a fresh
interpreter that cannot import the harness (``-I``, an empty working directory), exits 1 on a
release whose findings file records the bug and 0 where nothing is wrong.  Which exit is due
comes from the installed release's findings file, never from running the harness's target.  Each
tox environment runs the scripts of the targets whose SDK it holds (strands: the default one and
strands-1.58/1.59; langgraph; openai-agents; adk, for both adk shapes)."""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
import yaml

from harness import repro
from harness.cli import main
from harness.findings.loading import load_document
from harness.repro import HOOKS, Hook, NotExpressible, plan_of, reproducer, symptom_of
from harness.repro.literals import WIDTH, literal
from harness.repro.sources import findings_files
from harness.repro.templates import select
from scenarios.loading import REGRESSIONS, load_scenario, parse_scenario, regression_files

SDK_MODULES = {"strands", "langgraph", "langchain_core", "agents", "openai", "google"}
# a handful per target, run in the tox environment holding its SDK: each costs seconds of the
# SDK's import and run (3 to 6 CPU-s), so CI runs the first of each, an open finding of the
# pinned release, and REPRO_ALL=1 (tox -e repro-releases, outside CI) every one and the green
# scenario; docs/reproducers.md gives the loop that runs every regression file's
RUN_ALL = {
    "strands": ("stale-answer-id", "restored-turn-not-re-emitted", "nested-partial-answer"),
    "langgraph": ("stale-answer-id", "re-interrupt", "deep-nesting"),
    "langgraph-subgraph-node": ("stale-answer-id", "colliding-ids"),
    "openai-agents": ("nested-call-reuses-a-finished-id", "deep-nesting"),
    "adk": ("upstream-adk-7245", "upstream-langgraph-6624"),
    "adk-single-turn": ("partial-answers", "twin-calls-answered-by-id"),
}
ALL = os.environ.get("REPRO_ALL") == "1"
RUN_IN_CI = {target: names[:1] for target, names in RUN_ALL.items()}
MAX_LINES = 200  # every script, on every target: only the parts of the templates its scenario uses
# the project's own selection of rules (pyproject.toml), on a file outside the project
RUFF = ("ruff", "check", "--isolated", "--line-length", "100", "--select", "E,F,W,I,B,UP,SIM,RUF")

# nothing wrong: the orchestrator's own protected action asks, a restart, the approval
GREEN = {
    "description": "The orchestrator's own action asks; after a restart the approval runs it.",
    "source": "written for the reproducer tests",
    "tree": {
        "name": "orchestrator",
        "actions": [{"tool": "deploy", "label": "deploy"}],
        "turns": [[{"tool": "deploy", "id": "call-1"}]],
    },
    "steps": [{"run": "ship it"}, "restart", {"answer": {"deploy": "approve"}}],
}


def installed(target: str) -> str | None:
    try:
        return version(HOOKS[target].distribution)
    except PackageNotFoundError:
        return None


# the targets whose SDK this environment holds, each with the scripts it runs
RUNS = [
    (target, name)
    for target, names in (RUN_ALL if ALL else RUN_IN_CI).items()
    if installed(target)
    for name in ((*names, "green") if ALL else names)
]


@functools.cache
def expressible(target: str = "strands") -> list[tuple[str, str]]:
    """(name, script) of every regression file a reproducer for ``target`` expresses."""
    found = []
    for path in regression_files():
        try:
            found.append((path.stem, reproducer(target, path.stem, load_scenario(path))))
        except NotExpressible:
            continue
    return found


def recorded_on_installed_release(target: str) -> set[str]:
    """The regression files the installed release's findings record for ``target`` (its own
    file, or the file of a range of releases that names it)."""
    document = load_document(target, installed(target), None)
    assert document is not None, f"{target} {installed(target)} has no findings file"
    return {entry.scenario for entry in document.findings}


def run_alone(script: str, where: Path) -> subprocess.CompletedProcess[str]:
    (where / "repro.py").write_text(script, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-I", "repro.py"], cwd=where, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("target", sorted(HOOKS))
def test_scripts_import_only_the_sdk_and_the_standard_library_and_stay_short(target: str) -> None:
    scripts = expressible(target)
    assert len(scripts) >= 20  # the files using no gate, retry, window, deploy or corruption
    for name, script in scripts:
        imported = set()
        for node in ast.walk(ast.parse(script)):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add(str(node.module).split(".")[0])
        assert imported <= set(sys.stdlib_module_names) | SDK_MODULES, (name, imported)
        assert script.count("\n") < MAX_LINES, name
        assert HOOKS[target].distribution in script.splitlines()[0], name


@pytest.mark.parametrize("target", sorted(HOOKS))
def test_scripts_are_ruff_clean(target: str, tmp_path: Path) -> None:
    for name, script in expressible(target):
        (tmp_path / f"{name.replace('-', '_')}.py").write_text(script, encoding="utf-8")
    checked = subprocess.run(
        [sys.executable, "-m", *RUFF, str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("target", "name"), RUNS)
def test_script_exits_1_while_the_release_has_the_bug_and_0_where_it_has_none(
    target: str, name: str, tmp_path: Path
) -> None:
    """The exit due is the installed release's findings file's word: 1 for a file it records,
    0 for one it does not (a regression file this release passes), and for the green scenario
    (the orchestrator's own action, a restart, the approval: nothing wrong)."""
    if name == "green":
        recorded, script = False, reproducer(target, "green", parse_scenario(GREEN, "green"))
    else:
        recorded = name in recorded_on_installed_release(target)
        script = dict(expressible(target))[name]
    ran = run_alone(script, tmp_path)
    assert ran.returncode == (1 if recorded else 0), ran.stdout + ran.stderr
    last = "check(s) failed: the bug is there" if recorded else "every check holds"
    assert ran.stdout.splitlines()[-1].endswith(last)
    assert ("FAIL:" in ran.stdout) == recorded
    assert name != "green" or "[1] restart" in ran.stdout


def test_ci_runs_an_open_finding_per_target_and_all_runs_both_exits() -> None:
    """CI's script per target is an open finding of the newest pinned release (exit 1); the
    full set outside CI exercises both exits per target (the green scenario's 0 and, but for
    strands, a file the release passes).  The findings files make the choice (kept true when a
    release is bumped: pick files again)."""
    for target, names in RUN_ALL.items():
        for release, path in findings_files(target)[-1:]:
            document = yaml.safe_load(path.read_text(encoding="utf-8"))
            recorded = {entry["scenario"] for entry in document["findings"]}
            assert RUN_IN_CI[target][0] in recorded, (target, release)
            assert target == "strands" or any(name not in recorded for name in names), target


@pytest.mark.parametrize("target", ["reference", "langgraph-toolnode"])
def test_a_target_without_the_hook_is_refused_in_one_line(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["repro", "stale-answer-id", "--target", target]) == 2
    err = capsys.readouterr().err
    assert err == f"--target {target}: no reproducer hook\n"


class PluginEntryPoint:
    """What ``importlib.metadata.entry_points`` yields for a plugin's repro hook."""

    def __init__(self, value: str, loads: Callable[[], object]) -> None:
        self.name, self.value, self.load = "toy", value, loads


def plugin(monkeypatch: pytest.MonkeyPatch, value: str, loads: Callable[[], object]) -> None:
    def found(group: str, name: str) -> list[PluginEntryPoint]:
        assert group == "nested_interrupt_harness.repro"
        return [PluginEntryPoint(value, loads)] if name == "toy" else []

    monkeypatch.setattr(repro, "entry_points", found)


def test_a_plugins_hook_is_found_by_its_targets_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A plugin's section in the script: the strands one under another name stands in for it."""
    toy = Hook("strands-agents", HOOKS["strands"].imports, HOOKS["strands"].section)
    plugin(monkeypatch, "toy_package.repro:HOOK", lambda: toy)
    out = tmp_path / "repro.py"
    assert main(["repro", "stale-answer-id", "--target", "toy", "-o", str(out)]) == 0
    assert "def advance(root: Agent" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("loaded", "said"),
    [
        (ModuleNotFoundError("No module named 'toy_package'"), "ModuleNotFoundError: No module"),
        ({"not": "a hook"}, "expected a harness.repro.Hook"),
    ],
)
def test_a_plugins_hook_that_cannot_be_used_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    loaded: object,
    said: str,
) -> None:
    def loads() -> object:
        if isinstance(loaded, Exception):
            raise loaded
        return loaded

    plugin(monkeypatch, "toy_package.repro:HOOK", loads)
    assert main(["repro", "stale-answer-id", "--target", "toy"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("--target toy: repro entry point 'toy' (toy_package.repro:HOOK): ")
    assert said in err
    assert err.count("\n") == 1


def test_a_scenario_no_template_expresses_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["repro", "gated-agent-call", "--target", "strands"]) == 2
    err = capsys.readouterr().err
    assert err == "gated-agent-call: the strands reproducer cannot express it: uses gate\n"


def test_a_bug_by_its_class_name_uses_its_explanation_and_its_proof(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "repro.py"
    bug = "restored-turn-published-again"
    assert main(["repro", bug, "--target", "strands", "-o", str(out)]) == 0
    script = out.read_text(encoding="utf-8")
    assert "published again" in script.split('"""')[1]  # the class's explanation
    assert "'run'" in script  # the steps of its shown_by file


def test_the_data_literals_are_the_plans_values_within_the_line() -> None:
    """The layout only lays the plan out: read back, every tree and step list is the plan's, and
    no line of it outgrows the scripts' width (the 305-character ids included)."""
    for path in regression_files():
        try:
            plan = plan_of(path.stem, load_scenario(path), symptom_of(load_scenario(path)))
        except NotExpressible:
            continue
        for value, column in ((plan.tree, 7), ([plan.steps, plan.expected], 8)):
            text = literal(value, column)
            assert eval(text) == value, path.stem  # our own literal, read back
            assert all(len(line) <= WIDTH for line in (" " * column + text).splitlines()), path.stem


def test_a_template_keeps_only_the_parts_a_scenario_uses() -> None:
    template = "a\nb  #?restart\nc  #?!restart\n#?resend{\nd\n#?}\ne"
    assert select(template, {"restart"}) == "a\nb\ne"
    assert select(template, {"resend"}) == "a\nc\nd\ne"
    with pytest.raises(ValueError, match="not closed"):
        select("#?resend{\nd", set())


def test_a_script_holds_no_branch_its_scenario_does_not_take() -> None:
    """stale-answer-id resends and restarts; nested-call-reuses-a-finished-id does neither: its
    script has no resend or restart branch (fewer lines, nothing a reader must skip)."""
    resending = reproducer("strands", "s", load_scenario(REGRESSIONS / "stale-answer-id.yaml"))
    plain = reproducer(
        "strands", "n", load_scenario(REGRESSIONS / "nested-call-reuses-a-finished-id.yaml")
    )
    for branch in ('if step[0] == "resend":', 'if step[0] == "restart":'):
        assert branch in resending
        assert branch not in plain


def test_a_script_for_one_bug_checks_the_events_only_for_a_bug_of_i8() -> None:
    """Where another bug of the release leaks stored turns into the events, a script for a bug
    of I2 must still exit 0 once that bug is fixed: only a script for I8 reads the events."""
    scenario = load_scenario(REGRESSIONS / "colliding-ids.yaml")
    check = "a public event carries the stored turn"
    assert check in reproducer("strands", "c", scenario)
    assert check not in reproducer("strands", "c", scenario, invariants=frozenset({"I2"}))
    assert check in reproducer("strands", "c", scenario, invariants=frozenset({"I8"}))


def test_a_sub_agent_called_by_a_tool_name_of_its_own_keeps_its_agents_name() -> None:
    """clone-sub-agents: two tools, left and right, over two agents both named worker.  The
    script calls each by its tool's name and names each agent worker where the SDK takes an
    agent's name (openai-agents keyed its restored approvals by it: #5141)."""
    scenario = load_scenario(REGRESSIONS / "clone-sub-agents.yaml")
    subs = plan_of("c", scenario, "").tree["subs"]
    named_apart = [(sub["name"], sub["agent"]) for sub in subs]
    assert named_apart == [("left", "worker"), ("right", "worker")]
    names = {
        "openai-agents": "Agent(name=own,",
        "langgraph": "name=own)",
        "langgraph-subgraph-node": 'name=spec.get("agent", spec["name"]))',
    }
    one_name = load_scenario(REGRESSIONS / "deep-nesting.yaml")
    for target, named in names.items():
        assert named in reproducer(target, "c", scenario), target
        assert named not in reproducer(target, "d", one_name), target


def test_an_answer_naming_no_question_is_a_scalar_resume_on_langgraph() -> None:
    """resume: approve is sent as LangGraph's Command(resume=value), keyed by no interrupt id."""
    scenario = load_scenario(REGRESSIONS / "resume-without-id-two-pending.yaml")
    for target in ("langgraph", "langgraph-subgraph-node"):
        script = reproducer(target, "r", scenario)
        assert "['resume', 'approve']" in script
        assert "inputs = Command(resume=given[0])" in script


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("strands", "interruptResponse naming its interruptId"),
        ("openai-agents", "RunState"),
        ("adk", "FunctionResponse naming the id"),
        ("adk-single-turn", "FunctionResponse naming the id"),
    ],
)
def test_a_target_that_cannot_send_an_answer_naming_no_question_says_why_in_one_line(
    target: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["repro", "resume-without-id-two-pending", "--target", target]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"resume-without-id-two-pending: the {target} reproducer cannot express it: uses an answer "
        "naming no question (resume:): "
    )
    assert reason in err
    assert err.count("\n") == 1


# a stand-in SDK of the standard library only: a run asks the root's own question, an answer to
# a question it knows of runs the action; MEMORY is what a process keeps apart from its storage
TOY_IMPORTS = """\
import json
import re
import subprocess  #?restart
import sys  #?restart
import tempfile
from collections import namedtuple
from pathlib import Path
"""
TOY_SECTION = r"""
MEMORY = {}


def build(store: str) -> dict:
    return {"saved": Path(store, "asked.json")}


def advance(app: dict, given) -> tuple:
    if isinstance(given, str):
        asked = [Pending("q-1", "deploy", 1, None)]
        MEMORY["asked"] = asked
        app["saved"].write_text(json.dumps(asked))  #?stored
        return "interrupt", asked, None, None, []
    known = MEMORY.get("asked") or []
    known = [Pending(*p) for p in json.loads(app["saved"].read_text())]  #?stored
    if not [p for p in known if p.id == given[0][0]]:
        return None, [], None, "no such question", []
    RAN.append("deploy")
    return "end_turn", [], "done", None, []
"""


@pytest.mark.parametrize(("stored", "due"), [(False, 1), (True, 0)])
def test_a_restart_keeps_nothing_of_the_process_but_what_was_stored(
    stored: bool, due: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The script goes on after a restart in a new interpreter: a question the stand-in SDK kept
    only in its process's memory is gone (the answer finds nothing: exit 1, as openai-agents
    0.9.0's weakref cache, #2487), one it stored in the script's directory is found (exit 0).
    The stand-in imports nothing but the standard library, so this runs in CI at no SDK's cost."""
    section = select(TOY_SECTION, {"stored"} if stored else set())
    monkeypatch.setitem(HOOKS, "toy", Hook("toy", TOY_IMPORTS, section, events=False))
    script = reproducer("toy", "green", parse_scenario(GREEN, "green"))
    assert "subprocess.run([sys.executable, __file__, store, json.dumps(seen)])" in script
    ran = run_alone(script, tmp_path)
    assert ran.returncode == due, ran.stdout + ran.stderr
    assert "[1] restart: the steps go on in a new process" in ran.stdout
    assert ("FAIL:" in ran.stdout) == (not stored)
    assert not ran.stderr


@pytest.mark.parametrize("target", ["adk", "adk-single-turn"])
@pytest.mark.parametrize(
    ("name", "field", "reason"),
    [
        ("re-interrupt", "questions:", "require_confirmation asks once per tool call"),
        ("preserve-context-history", "preserve_context:", "keeps no history across calls"),
        ("clone-sub-agents", "tool_name:", "called by its agent's name"),
    ],
)
def test_adk_refuses_what_its_adapter_cannot_express_naming_the_field_and_why(
    target: str, name: str, field: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The features ADK lacks (docs/adapters.md: multi_question, preserve_context, tool_names)
    are refused in one line: a script would otherwise replay another scenario."""
    assert main(["repro", name, "--target", target]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{name}: the {target} reproducer cannot express it: uses ")
    assert f"({field})" in err
    assert reason in err
    assert err.count("\n") == 1


def test_an_adk_script_shows_confirmations_by_stable_handles_and_answers_with_their_ids() -> None:
    """ADK draws its confirmation ids (adk-<uuid4>): the script shows each as confirm-<n>, the
    n-th request the stored session holds, and answers with a FunctionResponse naming the real
    id to the paused invocation; AgentTool or single_turn sub-agents by the shape."""
    scenario = load_scenario(REGRESSIONS / "upstream-adk-7245.yaml")
    tool, single = (reproducer(target, "u", scenario) for target in ("adk", "adk-single-turn"))
    for script in (tool, single):
        assert 'f"confirm-{ids.index(call.id) + 1}"' in script
        assert "FunctionResponse(" in script
        assert 'options["invocation_id"] = events[-1].invocation_id' in script
        assert "ResumabilityConfig(is_resumable=True)" in script
    assert "map(AgentTool, subs)" in tool
    assert "AgentTool" not in single
    assert '"mode": "single_turn"' in single
    assert "single_turn" not in tool

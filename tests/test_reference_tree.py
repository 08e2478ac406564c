"""The issue's acceptance scenarios, on the reference tree driven with the fakes.

A restart is ``Tree(spec, ..., persisted=old_tree.persist())`` with new model and log objects over
the same files: nothing but persisted bytes and the append-only logs crosses it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakes.log import AppendOnlyLog
from fakes.model import (
    AgentScript,
    Answer,
    CallTools,
    ProviderError,
    ScriptedModel,
    response_id,
    strip_marker,
)
from fakes.model import ToolCall as ScriptedCall
from fakes.protected import APPROVE, Ledger, ProtectedAction, label_of
from harness.reference.agent import AgentError, AgentResult
from harness.reference.agent_as_tool import SUB_AGENT_TURNS, LostTurnError
from harness.reference.continuation import ContinuationError, digest
from harness.reference.conversation import SlidingWindow
from harness.reference.naming import root_visible_id, split_root_visible_id
from harness.reference.state import Interrupt
from harness.reference.tree import ActionSpec, AgentSpec, SubAgentSpec, Tree
from harness.targets.reference import ActionTool, ReferenceModel

LOCAL = "tool:1.t1:approval"


def call(tool: str, use_id: str, prompt: str | None = None) -> ScriptedCall:
    return ScriptedCall(tool, use_id, {} if prompt is None else {"prompt": prompt})


def script(*turns: Sequence[ScriptedCall], answer: str = "done") -> AgentScript:
    return AgentScript(default=(*(CallTools(tuple(turn)) for turn in turns), Answer(answer)))


def acting(name: str, label: str, **options: Any) -> AgentSpec:
    return AgentSpec(name, actions=(ActionSpec("act", label),), **options)


ACT = script([call("act", "t1")], answer="acted")


@dataclass
class Rig:
    """One scenario's world: spec, scripts, and the logs that outlive restarts."""

    spec: AgentSpec
    scripts: Mapping[str, AgentScript]
    workdir: Path | None = None  # None: in-memory logs
    stateful: frozenset[str] = frozenset()
    events: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._memory = {"journal": AppendOnlyLog(), "ledger": AppendOnlyLog()}

    def log(self, name: str) -> AppendOnlyLog:
        """A new log object, as a fresh process would open it."""
        if self.workdir is None:
            return self._memory[name]
        return AppendOnlyLog(self.workdir / f"{name}.jsonl")

    def build(self, persisted: bytes | None = None) -> Tree:
        journal, ledger = self.log("journal"), Ledger(self.log("ledger"))

        def model_for(path: str) -> ReferenceModel:
            core = ScriptedModel(
                path, self.scripts[path], journal, stateful_provider=path in self.stateful
            )
            return ReferenceModel(core)

        def action_tool(action: ActionSpec, path: str) -> ActionTool:
            return ActionTool(
                action.tool, ProtectedAction(action.label, action.questions), ledger, path
            )

        return Tree(
            self.spec,
            model_for=model_for,
            action_tool=action_tool,
            persisted=persisted,
            emit=self.events.append,
        )

    def restart(self, tree: Tree) -> Tree:
        return self.build(tree.persist())

    def executions(self) -> list[dict[str, Any]]:
        return self.log("ledger").records()

    def ran(self) -> list[str]:
        return [execution["action"] for execution in self.executions()]

    def requests(self, agent: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.log("journal").records() if agent in (None, r["agent"])]


def ids_by_label(interrupts: Sequence[Interrupt]) -> dict[str, str]:
    return {str(label_of(interrupt.reason)): interrupt.id for interrupt in interrupts}


def pending_ids(tree: Tree) -> list[str]:
    return [interrupt.id for interrupt in tree.root.state.interrupt_state.pending]


def stored(tree: Tree) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(tree.persist())
    return document


def compact_size(value: Any) -> int:
    return len(json.dumps(value, sort_keys=True, separators=(",", ":")).encode())


@dataclass(frozen=True)
class Step:
    stop_reason: str
    pending: tuple[str, ...]
    ran: tuple[str, ...]
    answer: str | None


def drive(rig: Rig, approvals: Sequence[Sequence[str]], *, restart: bool) -> list[Step]:
    """Prompt the root, then approve each step's labels; restart before every step if asked."""
    tree = rig.build()

    def observe(result: AgentResult) -> Step:
        answer = None if result.text is None else strip_marker(result.text)
        pending = tuple(i.id for i in result.interrupts)
        return Step(result.stop_reason, pending, tuple(rig.ran()), answer)

    result = tree.root("start")
    ids = ids_by_label(result.interrupts)
    steps = [observe(result)]
    for labels in approvals:
        if restart:
            tree = rig.restart(tree)
        result = tree.root.resume({ids[label]: APPROVE for label in labels})
        ids.update(ids_by_label(result.interrupts))
        steps.append(observe(result))
    if restart:
        rig.restart(tree)
    return steps


# ---- (1) colliding ids --------------------------------------------------------------------

COLLIDING = AgentSpec(
    "orch", sub_agents=(SubAgentSpec(acting("A", "A-act")), SubAgentSpec(acting("B", "B-act")))
)
COLLIDING_SCRIPTS = {
    "orch": script([call("A", "o1", "go"), call("B", "o2", "go")], answer="all done"),
    "orch/A": ACT,
    "orch/B": ACT,
}


def test_colliding_ids_approving_a_runs_only_a_and_b_waits_across_a_restart(
    tmp_path: Path,
) -> None:
    rig = Rig(COLLIDING, COLLIDING_SCRIPTS, tmp_path)
    tree = rig.build()

    first = tree.root("start")
    ids = ids_by_label(first.interrupts)
    assert sorted(ids) == ["A-act", "B-act"]
    assert ids["A-act"] != ids["B-act"]
    assert split_root_visible_id(ids["A-act"])[1] == split_root_visible_id(ids["B-act"])[1]

    second = tree.root.resume({ids["A-act"]: APPROVE})
    assert [i.id for i in second.interrupts] == [ids["B-act"]]
    assert rig.ran() == ["A-act"]

    tree = rig.restart(tree)
    assert pending_ids(tree) == [ids["B-act"]]
    with pytest.raises(AgentError):
        tree.root.resume({ids["A-act"]: APPROVE})  # re-sending A's answer runs nothing
    assert rig.ran() == ["A-act"]

    final = tree.root.resume({ids["B-act"]: APPROVE})
    assert final.stop_reason == "end_turn"
    assert strip_marker(final.text or "") == "all done"
    assert rig.executions() == [
        {"action": "A-act", "agent": "orch/A", "tool_use_id": "t1"},
        {"action": "B-act", "agent": "orch/B", "tool_use_id": "t1"},
    ]


# ---- (2) depth 3 with restarts between every step -------------------------------------------

DEEP = AgentSpec(
    "orch",
    sub_agents=(
        SubAgentSpec(AgentSpec("A", sub_agents=(SubAgentSpec(acting("leaf", "A-act")),))),
        SubAgentSpec(AgentSpec("B", sub_agents=(SubAgentSpec(acting("leaf", "B-act")),))),
    ),
)
DEEP_SCRIPTS = {
    "orch": script([call("A", "o1", "go"), call("B", "o2", "go")], answer="all done"),
    "orch/A": script([call("leaf", "m1", "deeper")], answer="A done"),
    "orch/B": script([call("leaf", "m1", "deeper")], answer="B done"),
    "orch/A/leaf": ACT,
    "orch/B/leaf": ACT,
}


def test_depth_three_resumes_across_restarts_exactly_like_the_restart_free_run(
    tmp_path: Path,
) -> None:
    with_restarts = Rig(DEEP, DEEP_SCRIPTS, tmp_path / "restarts")
    without = Rig(DEEP, DEEP_SCRIPTS, tmp_path / "oracle")

    steps = drive(with_restarts, [["A-act"], ["B-act"]], restart=True)
    oracle = drive(without, [["A-act"], ["B-act"]], restart=False)

    assert steps == oracle
    assert [step.ran for step in steps] == [(), ("A-act",), ("A-act", "B-act")]
    assert steps[1].pending == (root_visible_id("1.o2", root_visible_id("1.m1", LOCAL)),)
    assert steps[2] == Step("end_turn", (), ("A-act", "B-act"), "all done")
    assert with_restarts.requests() == without.requests()
    assert [e["agent"] for e in with_restarts.executions()] == ["orch/A/leaf", "orch/B/leaf"]


def test_depth_three_ids_unwrap_to_the_same_local_id_under_different_chains(
    tmp_path: Path,
) -> None:
    first = drive(Rig(DEEP, DEEP_SCRIPTS, tmp_path), [], restart=False)[0]

    chains = []
    for nested in first.pending:
        outer, rest = split_root_visible_id(nested)
        middle, local = split_root_visible_id(rest)
        chains.append((outer, middle, local))
    assert sorted(chains) == [("1.o1", "1.m1", LOCAL), ("1.o2", "1.m1", LOCAL)]


# ---- (3) stateful provider ---------------------------------------------------------------

SINGLE = AgentSpec("orch", sub_agents=(SubAgentSpec(acting("S", "S-act")),))
SINGLE_SCRIPTS = {"orch": script([call("S", "o1", "go")]), "orch/S": ACT}


def stateful_rig(workdir: Path) -> Rig:
    return Rig(SINGLE, SINGLE_SCRIPTS, workdir, stateful=frozenset({"orch", "orch/S"}))


def test_a_resumed_stateful_sub_agent_sends_its_previous_response_id(tmp_path: Path) -> None:
    rig = stateful_rig(tmp_path)
    tree = rig.build()
    [interrupt] = tree.root("start").interrupts
    tree = rig.restart(tree)

    result = tree.root.resume({interrupt.id: APPROVE})

    assert result.stop_reason == "end_turn"
    assert rig.ran() == ["S-act"]
    assert [(r["turn"], r["model_state"]) for r in rig.requests("orch/S")] == [
        (0, {}),
        (1, {"response_id": response_id("orch/S", "go", 0)}),
    ]
    assert rig.requests("orch")[-1]["model_state"] == {
        "response_id": response_id("orch", "start", 0)
    }


def test_a_stateful_sub_agent_without_its_model_state_is_refused_by_the_provider(
    tmp_path: Path,
) -> None:
    rig = stateful_rig(tmp_path)
    tree = rig.build()
    [interrupt] = tree.root("start").interrupts
    document = stored(tree)
    entry = document["root"]["interrupt_state"]["context"][SUB_AGENT_TURNS]["1.o1"]
    assert entry["data"]["model_state"] == {"response_id": response_id("orch/S", "go", 0)}
    entry["data"]["model_state"] = {}
    entry["digest"] = digest(entry)  # a writer that forgot the model state, not storage damage
    tree = rig.build(json.dumps(document).encode())

    with pytest.raises(ProviderError, match="without previous_response_id"):
        tree.root.resume({interrupt.id: APPROVE})

    assert rig.requests("orch/S")[-1]["model_state"] == {}
    assert pending_ids(tree) == [interrupt.id]


# ---- (4) sliding window --------------------------------------------------------------------

WINDOWED = AgentSpec(
    "orch",
    sub_agents=(SubAgentSpec(acting("S", "S-act", window=SlidingWindow(size=2, per_turn=2))),),
    window=SlidingWindow(size=2, per_turn=2),
)
WINDOWED_SCRIPTS = {"orch": script([call("S", "o1", "go")]), "orch/S": ACT}


def test_a_restored_sliding_window_sends_the_model_what_the_restart_free_run_sends(
    tmp_path: Path,
) -> None:
    with_restarts = Rig(WINDOWED, WINDOWED_SCRIPTS, tmp_path / "restarts")
    without = Rig(WINDOWED, WINDOWED_SCRIPTS, tmp_path / "oracle")

    steps = drive(with_restarts, [["S-act"]], restart=True)
    oracle = drive(without, [["S-act"]], restart=False)

    assert steps == oracle
    assert steps[-1].ran == ("S-act",)
    assert with_restarts.requests() == without.requests()
    # the resumed call is the window's 2nd: it trims 3 messages to 2
    assert [r["messages"] for r in with_restarts.requests("orch/S")] == [1, 2]
    assert [r["messages"] for r in with_restarts.requests("orch")] == [1, 2]


def test_a_window_that_lost_its_count_would_send_different_messages(tmp_path: Path) -> None:
    rig = Rig(WINDOWED, WINDOWED_SCRIPTS, tmp_path)
    tree = rig.build()
    [interrupt] = tree.root("start").interrupts
    document = stored(tree)
    entry = document["root"]["interrupt_state"]["context"][SUB_AGENT_TURNS]["1.o1"]
    data = entry["data"]
    assert data["conversation_manager_state"] == {"model_call_count": 1, "removed_message_count": 0}
    data["conversation_manager_state"]["model_call_count"] = 0
    entry["digest"] = digest(entry)  # a writer that lost the count, not storage damage

    rig.build(json.dumps(document).encode()).root.resume({interrupt.id: APPROVE})

    assert [r["messages"] for r in rig.requests("orch/S")] == [1, 3]


# ---- (5) preserve_context without a session store --------------------------------------------


def preserved_rig(workdir: Path, *, session_store: bool) -> Rig:
    spec = AgentSpec(
        "orch",
        sub_agents=(
            SubAgentSpec(acting("S", "S-act"), preserve_context=True, session_store=session_store),
        ),
    )
    return Rig(spec, {"orch": script([call("S", "o1", "go")]), "orch/S": ACT}, workdir)


def test_preserve_context_without_a_session_store_fails_loudly_after_a_restart(
    tmp_path: Path,
) -> None:
    rig = preserved_rig(tmp_path, session_store=False)
    tree = rig.build()
    [interrupt] = tree.root("start").interrupts
    assert stored(tree)["sessions"] == {}
    tree = rig.restart(tree)
    before = tree.persist()

    with pytest.raises(LostTurnError, match="session store"):
        tree.root.resume({interrupt.id: APPROVE})

    assert rig.ran() == []
    assert tree.persist() == before
    assert [(i.id, i.response) for i in tree.root.state.interrupt_state.pending] == [
        (interrupt.id, None)
    ]


def test_preserve_context_without_a_session_store_resumes_when_nothing_restarted(
    tmp_path: Path,
) -> None:
    rig = preserved_rig(tmp_path, session_store=False)
    tree = rig.build()
    [interrupt] = tree.root("start").interrupts

    assert tree.root.resume({interrupt.id: APPROVE}).stop_reason == "end_turn"
    assert rig.ran() == ["S-act"]


def test_preserve_context_with_a_session_store_resumes_after_a_restart(tmp_path: Path) -> None:
    rig = preserved_rig(tmp_path, session_store=True)
    tree = rig.build()
    [interrupt] = tree.root("start").interrupts
    assert stored(tree)["sessions"]["orch/S"]["interrupt_state"]["activated"] is True
    tree = rig.restart(tree)

    assert tree.root.resume({interrupt.id: APPROVE}).stop_reason == "end_turn"
    assert rig.ran() == ["S-act"]


# ---- (6) twin calls of one preserve_context sub-agent ---------------------------------------


def test_a_twin_call_never_takes_the_first_calls_parked_turn(tmp_path: Path) -> None:
    spec = AgentSpec(
        "orch", sub_agents=(SubAgentSpec(acting("S", "S-act"), preserve_context=True),)
    )
    scripts = {"orch": script([call("S", "o1", "first"), call("S", "o2", "second")]), "orch/S": ACT}
    rig = Rig(spec, scripts, tmp_path)
    tree = rig.build()

    first = tree.root("start")
    assert [i.id for i in first.interrupts] == [root_visible_id("1.o1", LOCAL)]
    tree = rig.restart(tree)
    assert tree.root.resume({first.interrupts[0].id: APPROVE}).stop_reason == "end_turn"

    results = {
        block["toolResult"]["toolUseId"]: block["toolResult"]
        for message in tree.root.state.messages
        for block in message["content"]
        if "toolResult" in block
    }
    assert results["o2"]["status"] == "error"
    assert "another call" in results["o2"]["content"][0]["text"]
    assert results["o1"]["status"] == "success"
    assert rig.executions() == [{"action": "S-act", "agent": "orch/S", "tool_use_id": "t1"}]
    assert [r["prompt"] for r in rig.requests("orch/S")] == ["first", "first"]


# ---- (7) bounded continuation and record -----------------------------------------------------


def test_the_orchestrator_record_drops_the_stored_turns_once_everything_resolved(
    tmp_path: Path,
) -> None:
    rig = Rig(COLLIDING, COLLIDING_SCRIPTS, tmp_path)
    tree = rig.build()
    ids = ids_by_label(tree.root("start").interrupts)
    pending_record = stored(tree)["root"]["interrupt_state"]
    assert sorted(pending_record["context"][SUB_AGENT_TURNS]) == ["1.o1", "1.o2"]

    tree.root.resume({ids["A-act"]: APPROVE})
    assert sorted(stored(tree)["root"]["interrupt_state"]["context"][SUB_AGENT_TURNS]) == ["1.o2"]
    tree = rig.restart(tree)
    tree.root.resume({ids["B-act"]: APPROVE})

    record = stored(tree)["root"]["interrupt_state"]
    assert record == {"activated": False, "interrupts": [], "context": {}}
    assert compact_size(record) < compact_size(pending_record)


def test_an_ephemeral_continuation_does_not_grow_with_earlier_completed_calls(
    tmp_path: Path,
) -> None:
    rig = Rig(SINGLE, SINGLE_SCRIPTS, tmp_path)
    tree = rig.build()
    sizes = {}
    for completed in range(7):
        [interrupt] = tree.root("same prompt").interrupts
        if completed in (0, 3, 6):
            turns = stored(tree)["root"]["interrupt_state"]["context"][SUB_AGENT_TURNS]
            entry = turns[f"{2 * completed + 1}.o1"]  # call key: model turn number, toolUseId
            # the owner names the call (its key holds a turn number); the sub-agent data is flat
            sizes[completed] = compact_size({k: v for k, v in entry.items() if k != "owner"})
        tree = rig.restart(tree)
        assert tree.root.resume({interrupt.id: APPROVE}).stop_reason == "end_turn"

    assert rig.ran() == ["S-act"] * 7
    assert sizes[0] == sizes[3] == sizes[6]
    assert len(tree.root.state.messages) == 7 * 4


# ---- the tree itself ---------------------------------------------------------------------------


def test_a_preserve_context_grandchild_survives_its_ephemeral_parents_rebuilds(
    tmp_path: Path,
) -> None:
    spec = AgentSpec(
        "orch",
        sub_agents=(
            SubAgentSpec(
                AgentSpec(
                    "M", sub_agents=(SubAgentSpec(acting("L", "L-act"), preserve_context=True),)
                )
            ),
        ),
    )
    scripts = {
        "orch": script([call("M", "o1", "go")]),
        "orch/M": script([call("L", "m1", "deeper")]),
        "orch/M/L": ACT,
    }
    rig = Rig(spec, scripts, tmp_path)

    steps = drive(rig, [["L-act"]], restart=True)

    assert steps[0].pending == (root_visible_id("1.o1", root_visible_id("1.m1", LOCAL)),)
    assert steps[-1] == Step("end_turn", (), ("L-act",), "done")


def test_public_events_never_carry_a_continuation_or_a_sub_agents_state(tmp_path: Path) -> None:
    canary = "canary-93be"
    spec = AgentSpec(
        "orch",
        sub_agents=(
            SubAgentSpec(acting("A", "A-act", initial_state={"secret": canary})),
            SubAgentSpec(acting("B", "B-act")),
        ),
    )
    rig = Rig(spec, COLLIDING_SCRIPTS, tmp_path)

    drive(rig, [["A-act"], ["B-act"]], restart=True)

    public = json.dumps(rig.events)
    assert rig.events
    for private in (SUB_AGENT_TURNS, "schema_version", canary, "response_id"):
        assert private not in public


def test_a_tree_refuses_persisted_data_of_another_format(tmp_path: Path) -> None:
    rig = Rig(COLLIDING, COLLIDING_SCRIPTS, tmp_path)

    for foreign in (b"[]", b'{"format": "other/1"}', b"{}"):
        with pytest.raises(ValueError, match="not a persisted"):
            rig.build(foreign)


def test_persisting_is_canonical(tmp_path: Path) -> None:
    rig = Rig(COLLIDING, COLLIDING_SCRIPTS, tmp_path)
    tree = rig.build()
    tree.root("start")

    assert rig.restart(tree).persist() == tree.persist()


# ---- property: partial answers over colliding ids, with or without a restart -------------------

OUTER_IDS = ("a", "a:b", "a%3Ab", "a%253Ab")


def colliding_rig(count: int) -> Rig:
    names = [f"S{index}" for index in range(count)]
    spec = AgentSpec(
        "orch", sub_agents=tuple(SubAgentSpec(acting(name, f"{name}-act")) for name in names)
    )
    scripts: dict[str, AgentScript] = {f"orch/{name}": ACT for name in names}
    scripts["orch"] = script(
        [call(name, outer, "go") for name, outer in zip(names, OUTER_IDS, strict=False)]
    )
    return Rig(spec, scripts)


@given(
    count=st.integers(2, len(OUTER_IDS)),
    first=st.sets(st.integers(0, len(OUTER_IDS) - 1)),
    restart=st.booleans(),
)
def test_partial_answers_run_exactly_the_answered_subset_then_the_rest(
    count: int, first: set[int], restart: bool
) -> None:
    rig = colliding_rig(count)
    labels = [f"S{index}-act" for index in range(count)]
    approved = [label for index, label in enumerate(labels) if index in first]
    rest = [label for label in labels if label not in approved]
    tree = rig.build()
    ids = ids_by_label(tree.root("start").interrupts)
    assert len(set(ids.values())) == count

    partial = tree.root.resume({ids[label]: APPROVE for label in approved})

    assert rig.ran() == approved
    assert [i.id for i in partial.interrupts] == [ids[label] for label in rest]
    if not rest:
        assert partial.stop_reason == "end_turn"
        return
    if restart:
        tree = rig.restart(tree)
    if approved:
        with pytest.raises(AgentError):
            tree.root.resume({ids[approved[0]]: APPROVE})
    final = tree.root.resume({ids[label]: APPROVE for label in rest})

    assert final.stop_reason == "end_turn"
    assert sorted(rig.ran()) == sorted(labels)


# ---- a deploy that turns preserve_context off ------------------------------------------------


def test_a_turn_parked_in_its_session_is_resumed_from_it_once_then_the_session_is_dropped(
    tmp_path: Path,
) -> None:
    """Parked while its sub-agent kept its history, a turn lives in the sub-agent's session.
    Deployed as ephemeral, the sub-agent resumes that turn from the session once; when the
    call is over the session is done with: no later persist holds it, and a call of the
    sub-agent with no stored turn is then refused as one, not resumed from the old session."""
    scripts = {"orch": script([call("W", "o1", "go")]), "orch/W": ACT}
    kept = AgentSpec(
        "orch", sub_agents=(SubAgentSpec(acting("W", "w-act"), preserve_context=True),)
    )
    rig = Rig(kept, scripts, tmp_path)
    tree = rig.build()
    ids = ids_by_label(tree.root("start").interrupts)
    assert "orch/W" in stored(tree)["sessions"]

    rig.spec = AgentSpec("orch", sub_agents=(SubAgentSpec(acting("W", "w-act")),))
    tree = rig.restart(tree)
    result = tree.root.resume({ids["w-act"]: APPROVE})

    assert (result.stop_reason, rig.ran()) == ("end_turn", ["w-act"])
    assert "orch/W" not in stored(tree)["sessions"]
    tool = tree.root.tools["W"]
    with pytest.raises(ContinuationError, match="no stored turn"):
        tool._sub_agent_for(tree.root.state, "o1", owned=True)  # type: ignore[attr-defined]

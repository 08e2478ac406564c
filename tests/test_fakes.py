"""The fakes: the scripted model, protected actions and their ledger, logs and stores."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fakes.corruption import CORRUPTIONS, CorruptionNotApplicable, apply
from fakes.log import AppendOnlyLog
from fakes.model import (
    AgentScript,
    Answer,
    CallTools,
    Prompt,
    ProviderError,
    Reply,
    Results,
    ScriptedModel,
    ScriptError,
    marker,
    place_in_script,
    response_id,
    strip_marker,
)
from fakes.model import ToolCall as ScriptedCall
from fakes.protected import (
    APPROVE,
    CALL_FIELD,
    DENY,
    Ledger,
    ProtectedAction,
    label_of,
    prompt_of,
    question_name,
    reason,
)
from fakes.stores import CorruptingStore, FileStore, MemoryStore, Store
from harness.reference import continuation
from harness.reference.continuation import ContinuationError
from harness.reference.tree import ActionSpec, AgentSpec, SubAgentSpec, Tree
from harness.targets.fake_model import conversation_of as bedrock_conversation
from harness.targets.reference import ActionTool, ReferenceContinuationFormat, ReferenceModel

# ---- the scripted model ------------------------------------------------------------------------


def test_the_first_turn_of_the_latest_prompt_is_played_when_no_reply_is_newer() -> None:
    conversation = [Prompt("one"), Reply(marker("one", 0)), None, Reply(marker("one", 1))]

    assert place_in_script([*conversation, Prompt("two")]) == ("two", 0, ("one", 1))
    assert place_in_script([Prompt("one")]) == ("one", 0, None)


def test_the_next_turn_of_the_latest_marked_reply_is_played_when_it_is_newer() -> None:
    conversation = [Prompt("one"), Reply(marker("one", 0)), None]

    assert place_in_script(conversation) == ("one", 1, ("one", 0))


def test_a_window_that_cut_the_prompt_still_finds_its_place() -> None:
    assert place_in_script([Reply(marker("one", 2)), None]) == ("one", 3, ("one", 2))


def test_replies_without_a_marker_and_other_messages_are_ignored() -> None:
    assert place_in_script([Prompt("one"), Reply("no marker here"), None]) == ("one", 0, None)


@pytest.mark.parametrize("conversation", [[], [None], [Reply("unmarked"), None]])
def test_a_conversation_without_prompt_or_marked_reply_is_a_script_error(
    conversation: list[Any],
) -> None:
    with pytest.raises(ScriptError, match="neither a prompt nor a scripted reply"):
        place_in_script(conversation)


@example(prompt="p", answer='say "hi"]] and stop')  # the marker's closing characters in the answer
@given(prompt=st.text(), answer=st.text())
def test_a_marked_reply_is_read_back_whatever_the_prompt_and_answer_say(
    prompt: str, answer: str
) -> None:
    reply = f"{marker(prompt, 0)} {answer}"

    assert place_in_script([Prompt(prompt), Reply(reply)]) == (prompt, 1, (prompt, 0))
    assert strip_marker(reply) == answer.lstrip()


def test_strip_marker_leaves_unmarked_text_alone() -> None:
    assert strip_marker(f"{marker('p', 3)}   done") == "done"
    assert (
        strip_marker('plain [[fake-model turn 0 of "p"]]') == 'plain [[fake-model turn 0 of "p"]]'
    )


def model(
    journal: AppendOnlyLog, turns: tuple[Any, ...], *, stateful: bool = False
) -> ScriptedModel:
    return ScriptedModel("agent", AgentScript(default=turns), journal, stateful_provider=stateful)


TURNS = (CallTools((ScriptedCall("act", "t1"),)), Answer("done"))


def test_turns_are_chosen_per_prompt_with_a_default_for_others() -> None:
    script = AgentScript(
        turns_by_prompt={
            "special": (
                Answer(
                    "special",
                ),
            )
        },
        default=TURNS,
    )
    core = ScriptedModel("agent", script, AppendOnlyLog())

    assert core.next_turn([Prompt("special")], 1, {}).turn == Answer("special")
    assert core.next_turn([Prompt("other")], 1, {}).turn == TURNS[0]


def test_an_exhausted_script_is_a_script_error_and_the_request_is_still_journaled() -> None:
    journal = AppendOnlyLog()
    core = model(journal, TURNS)

    with pytest.raises(ScriptError, match="no turn 2"):
        core.next_turn([Prompt("p"), Reply(marker("p", 1))], 2, {})
    assert journal.records()[-1]["turn"] == 2


def test_a_stateful_provider_answers_with_its_response_id_and_needs_it_back() -> None:
    core = model(AppendOnlyLog(), TURNS, stateful=True)
    model_state: dict[str, Any] = {}

    first = core.next_turn([Prompt("p")], 1, model_state)
    assert (
        model_state
        == {"response_id": response_id("agent", "p", 0)}
        == {"response_id": first.response_id}
    )

    second = core.next_turn([Prompt("p"), Reply(first.marker), None], 3, model_state)
    assert second.turn == Answer("done")
    assert model_state == {"response_id": response_id("agent", "p", 1)}


@pytest.mark.parametrize(
    ("model_state", "problem"),
    [({}, "without previous_response_id"), ({"response_id": "resp-stale"}, "stale")],
)
def test_a_stateful_provider_refuses_a_missing_or_stale_previous_response_id(
    model_state: dict[str, Any], problem: str
) -> None:
    core = model(AppendOnlyLog(), TURNS, stateful=True)

    with pytest.raises(ProviderError, match=problem):
        core.next_turn([Prompt("p"), Reply(marker("p", 0)), None], 3, model_state)


def test_a_stateful_provider_refuses_a_first_request_that_carries_a_response_id() -> None:
    journal = AppendOnlyLog()
    core = model(journal, TURNS, stateful=True)
    earlier = response_id("agent", "p", 1)

    with pytest.raises(ProviderError, match="first request of a conversation"):
        core.next_turn([Prompt("q")], 1, {"response_id": earlier})

    assert journal.records()[-1] == {
        "agent": "agent",
        "prompt": "q",
        "turn": 0,
        "messages": 1,
        "model_state": {"response_id": earlier},
        "sent": [{"prompt": "q"}],
        "refused": "first request of a conversation with a previous_response_id",
    }


def test_a_refused_request_is_journaled_with_the_refusal_an_accepted_one_without() -> None:
    journal = AppendOnlyLog()
    core = model(journal, TURNS, stateful=True)
    first = core.next_turn([Prompt("p")], 1, {})

    with pytest.raises(ProviderError, match="without previous_response_id"):
        core.next_turn([Prompt("p"), Reply(first.marker), None], 3, {})

    accepted, refused = journal.records()
    assert "refused" not in accepted
    assert refused["refused"] == "follow-up request without previous_response_id"


def test_a_stateless_provider_refuses_no_response_id_and_writes_none() -> None:
    """Only a stateful provider says a response id (harness.findings.canary.PROVIDER_CLASSES)."""
    journal = AppendOnlyLog()
    core = model(journal, TURNS)
    model_state: dict[str, Any] = {"response_id": "resp-stale"}

    core.next_turn([Prompt("q")], 1, model_state)
    core.next_turn([Prompt("q"), Reply(marker("q", 0)), None], 3, model_state)

    assert model_state == {"response_id": "resp-stale"}
    assert not [record for record in journal.records() if "refused" in record]


def test_a_stateless_model_leaves_the_model_state_alone() -> None:
    model_state = {"kept": True}

    model(AppendOnlyLog(), TURNS).next_turn([Prompt("p")], 1, model_state)

    assert model_state == {"kept": True}


def test_response_ids_are_stable_and_distinct_per_agent_prompt_and_turn() -> None:
    assert response_id("a", "p", 0) == response_id("a", "p", 0)
    made = {response_id(a, p, i) for a in ("a", "b") for p in ("p", "q") for i in (0, 1)}
    assert len(made) == 8


def test_the_journal_records_every_request_and_outlives_a_rebuilt_model(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    model(AppendOnlyLog(path), TURNS).next_turn([Prompt("p")], 1, {"x": 1})

    rebuilt = model(AppendOnlyLog(path), TURNS)
    turn = rebuilt.next_turn([Prompt("p"), Reply(marker("p", 0)), None], 3, {})

    assert turn.index == 1
    assert AppendOnlyLog(path).records() == [
        {
            "agent": "agent",
            "prompt": "p",
            "turn": 0,
            "messages": 1,
            "model_state": {"x": 1},
            "sent": [{"prompt": "p"}],
        },
        {
            "agent": "agent",
            "prompt": "p",
            "turn": 1,
            "messages": 3,
            "model_state": {},
            "sent": [{"prompt": "p"}, {"reply": ["p", 0]}, {}],
        },
    ]


AGENT_CALLS = (
    CallTools(
        (
            ScriptedCall("mailer", "c1", {"input": "mail Ana"}, sub_agent=True),
            ScriptedCall("act", "c2"),
            ScriptedCall("mailer", "c3", {"input": "mail Bo"}, sub_agent=True),
        )
    ),
    Answer("done"),
)


def test_a_request_after_sub_agent_calls_journals_the_results_it_carries_for_them() -> None:
    """Only the sub-agent calls' results of the turn just answered, by toolUseId; a call whose
    result is missing is left out; an earlier turn's results are not this request's."""
    journal = AppendOnlyLog()
    conversation = [
        Prompt("p"),
        Reply(marker("p", 0)),
        Results((("c1", "stale"),)),
        Reply(marker("p", 0)),
        Results((("c1", "mailed Ana"), ("c2", "sent"))),
    ]

    model(journal, AGENT_CALLS).next_turn(conversation, 5, {})

    assert journal.records()[-1]["results"] == {"c1": "mailed Ana"}


def test_a_request_after_a_turn_without_sub_agent_calls_journals_no_results() -> None:
    journal = AppendOnlyLog()
    core = model(journal, TURNS)

    core.next_turn([Prompt("p")], 1, {})
    core.next_turn([Prompt("p"), Reply(marker("p", 0)), Results((("t1", "ran"),))], 3, {})

    assert ["results" in record for record in journal.records()] == [False, False]


def test_reference_messages_read_as_prompts_replies_and_tool_results() -> None:
    messages = [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [{"text": marker("go", 0)}]},
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "c1", "content": [{"text": "a"}, {"text": "b"}]}},
                {"toolResult": {"toolUseId": "c2", "content": [{"json": {}}]}},
            ],
        },
    ]

    assert bedrock_conversation(messages) == [
        Prompt("go"),
        Reply(marker("go", 0)),
        Results((("c1", "a\nb"), ("c2", ""))),
    ]


# ---- protected actions and the ledger ----------------------------------------------------------


class Asker:
    """Answers questions from a table; records what was asked."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, Any]] = []

    def __call__(self, name: str, why: Any) -> Any:
        self.asked.append((name, why))
        return self.answers.get(name)


def test_an_approved_action_runs_and_is_recorded() -> None:
    ledger = Ledger(AppendOnlyLog())
    ask = Asker({"approval": APPROVE})

    done = ProtectedAction("pay").perform(ask, ledger, agent="orch/A", tool_use_id="t1")

    assert done == "pay: done"
    assert ask.asked == [("approval", {"action": "pay", "question": 1, "of": 1})]
    assert ledger.executions() == [{"action": "pay", "agent": "orch/A", "tool_use_id": "t1"}]


@pytest.mark.parametrize("answer", [DENY, None, "yes", True])
def test_any_answer_but_approve_runs_nothing(answer: Any) -> None:
    ledger = Ledger(AppendOnlyLog())

    done = ProtectedAction("pay").perform(
        Asker({"approval": answer}), ledger, agent="a", tool_use_id="t1"
    )

    assert done == "pay: refused"
    assert ledger.executions() == []


def test_a_multi_question_action_asks_each_question_and_runs_only_if_all_approved() -> None:
    ledger = Ledger(AppendOnlyLog())
    ask = Asker({"approval": APPROVE, "approval-2": APPROVE, "approval-3": APPROVE})

    assert ProtectedAction("pay", 3).perform(ask, ledger, agent="a", tool_use_id="t") == "pay: done"
    assert [name for name, _ in ask.asked] == ["approval", "approval-2", "approval-3"]
    assert [why["question"] for _, why in ask.asked] == [1, 2, 3]

    partial = Asker({"approval": APPROVE, "approval-2": DENY, "approval-3": APPROVE})
    assert ProtectedAction("pay", 3).perform(partial, ledger, agent="a", tool_use_id="t") == (
        "pay: refused"
    )
    assert [name for name, _ in partial.asked] == ["approval", "approval-2"]
    assert len(ledger.executions()) == 1


def test_a_hooks_approval_asks_without_running_and_the_approved_action_runs_without_asking() -> (
    None
):
    ledger = Ledger(AppendOnlyLog())
    action = ProtectedAction("pay", 3)
    ask = Asker({"approval": APPROVE, "approval-2": DENY})

    assert not action.approved(ask)
    assert [name for name, _ in ask.asked] == ["approval", "approval-2"]
    assert action.refusal == "pay: refused"
    assert ledger.executions() == []
    assert action.run(ledger, agent="a", tool_use_id="t") == "pay: done"
    assert ledger.executions() == [{"action": "pay", "agent": "a", "tool_use_id": "t"}]


def test_question_names_and_labels() -> None:
    assert [question_name(n) for n in (1, 2, 3)] == ["approval", "approval-2", "approval-3"]
    assert label_of(reason("pay", 1, 2)) == "pay"
    assert label_of({"action": 3}) is None
    assert label_of("pay") is None


def test_a_ledger_over_a_file_outlives_the_ledger_object(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    Ledger(AppendOnlyLog(path)).record("pay", "orch/A", "t1")
    Ledger(AppendOnlyLog(path)).record("ship", "orch/B", "t1")

    assert [e["action"] for e in Ledger(AppendOnlyLog(path)).executions()] == ["pay", "ship"]


def test_a_log_hands_out_copies_and_an_absent_file_reads_as_empty(tmp_path: Path) -> None:
    memory = AppendOnlyLog()
    record = {"a": [1]}
    memory.append(record)
    record["a"].append(2)
    memory.records()[0]["a"].append(3)

    assert memory.records() == [{"a": [1]}]
    assert AppendOnlyLog(tmp_path / "nested" / "absent.jsonl").records() == []


# ---- stores -----------------------------------------------------------------------------------

ODD_KEYS = ["tree", "a/b", "sessions/orch/A", "a:b", "sub:%3A", "ü/é:ß", "100%", "x y"]


@pytest.mark.parametrize("kind", ["memory", "files"])
def test_a_store_gets_puts_deletes_and_lists_odd_keys(tmp_path: Path, kind: str) -> None:
    store: Store = MemoryStore() if kind == "memory" else FileStore(tmp_path / "files")

    for index, key in enumerate(ODD_KEYS):
        store.put(key, f"value {index}".encode())
    store.put("tree", b"replaced")
    store.delete("a/b")
    store.delete("never stored")

    assert store.keys() == sorted(set(ODD_KEYS) - {"a/b"})
    assert store.get("tree") == b"replaced"
    assert store.get("ü/é:ß") == b"value 5"
    assert store.get("a/b") is None


def test_a_file_store_leaves_no_temporary_file_and_outlives_its_object(tmp_path: Path) -> None:
    directory = tmp_path / "files"
    store = FileStore(directory)
    for key in ODD_KEYS:
        store.put(key, b"v")
        store.put(key, b"again")

    assert [path.name for path in directory.iterdir() if path.name.startswith(".")] == []
    assert len(list(directory.iterdir())) == len(ODD_KEYS)
    assert FileStore(directory).get("sessions/orch/A") == b"again"
    assert FileStore(directory).keys() == sorted(ODD_KEYS)


keys = st.text(min_size=1, max_size=8).filter(lambda key: not key.startswith("."))


@given(entries=st.dictionaries(keys, st.binary(max_size=8), max_size=5))
def test_a_memory_store_and_a_file_store_agree(entries: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        files = FileStore(Path(directory))
        memory = MemoryStore()
        for key, value in entries.items():
            files.put(key, value)
            memory.put(key, value)

        assert files.keys() == memory.keys() == sorted(entries)
        assert all(files.get(key) == memory.get(key) == value for key, value in entries.items())


# ---- corruption ---------------------------------------------------------------------------------

ACT = AgentScript(default=(CallTools((ScriptedCall("act", "t1"),)), Answer("acted")))


def tree_with(sub_agents: tuple[str, ...], ledger: Ledger) -> Tree:
    spec = AgentSpec(
        "orch",
        sub_agents=tuple(
            SubAgentSpec(AgentSpec(name, actions=(ActionSpec("act", f"{name}-act"),)))
            for name in sub_agents
        ),
    )
    orch = AgentScript(
        default=(
            CallTools(
                tuple(
                    ScriptedCall(name, f"o{index}", {"prompt": "go"})
                    for index, name in enumerate(sub_agents, 1)
                )
            ),
            Answer("done"),
        )
    )
    journal = AppendOnlyLog()

    def model_for(path: str) -> ReferenceModel:
        return ReferenceModel(ScriptedModel(path, orch if path == "orch" else ACT, journal))

    def action_tool(action: ActionSpec, path: str) -> ActionTool:
        return ActionTool(action.tool, ProtectedAction(action.label), ledger, path)

    return Tree(spec, model_for=model_for, action_tool=action_tool)


def rebuild(tree: Tree, persisted: bytes) -> Tree:
    return Tree(
        tree.spec, model_for=tree.model_for, action_tool=tree.action_tool, persisted=persisted
    )


def at(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        document = document[step]
    return document


def interrupted_store(sub_agents: tuple[str, ...]) -> tuple[CorruptingStore, Tree, Ledger]:
    ledger = Ledger(AppendOnlyLog())
    tree = tree_with(sub_agents, ledger)
    tree.root("start")
    store = CorruptingStore(MemoryStore(), ReferenceContinuationFormat())
    store.put("tree", tree.persist())
    return store, tree, ledger


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_every_corruption_makes_the_stored_turn_unrestorable(corruption: str) -> None:
    store, tree, ledger = interrupted_store(("A", "B"))
    [first, _] = store.continuations()
    first_path = (first.key, first.path)
    original = at(json.loads(store.get("tree") or b""), first_path[1])
    assert first.value == original

    said = store.corrupt(corruption, 0)  # type: ignore[arg-type]

    assert corruption in said
    if corruption == "document_truncated":  # damage to bytes: the tree no longer parses
        with pytest.raises(json.JSONDecodeError):
            json.loads(store.get("tree") or b"")
        with pytest.raises(json.JSONDecodeError):
            rebuild(tree, store.get("tree") or b"")
        assert ledger.executions() == []
        return
    document = json.loads(store.get("tree") or b"")
    if corruption == "deleted":
        assert first_path[1][-1] not in at(document, first_path[1][:-1])
    else:
        damaged = at(document, first_path[1])
        assert damaged != original
        with pytest.raises(ContinuationError):
            continuation.restore(damaged, original["owner"], original["conversation_manager"])

    restarted = rebuild(tree, store.get("tree") or b"")
    answers = {interrupt.id: APPROVE for interrupt in restarted.root.state.interrupt_state.pending}
    assert len(answers) == 2
    with pytest.raises(ContinuationError):
        restarted.root.resume(answers)
    assert ledger.executions() == []


def test_the_continuations_of_a_stored_tree_are_located_in_a_stable_order() -> None:
    store, _, _ = interrupted_store(("A", "B"))
    store.put("garbage", b"not json {")
    store.put("other", b'{"root": {}}')

    found = store.continuations()

    prefix = ("root", "interrupt_state", "context", "sub_agent_turns")
    assert [(entry.key, entry.path) for entry in found] == [
        ("tree", (*prefix, "1.o1")),
        ("tree", (*prefix, "1.o2")),
    ]
    assert all(entry.size == len(json.dumps(entry.value, separators=(",", ":"))) for entry in found)


def test_a_stored_document_is_parsed_once_while_its_bytes_stay_the_same() -> None:
    store, _, _ = interrupted_store(("A",))
    located = store.continuations()
    document = store.document("tree")

    assert document == json.loads(store.get("tree") or b"")
    assert store.document("tree") is document  # the parse continuations() made, shared
    assert (
        located[0].value
        is document["root"]["interrupt_state"]["context"]["sub_agent_turns"]["1.o1"]
    )
    store.put("tree", json.dumps({"root": {}}).encode())
    assert store.document("tree") == {"root": {}}  # new bytes, parsed anew
    assert store.document("missing") is None
    store.put("garbage", b"not json {")
    with pytest.raises(json.JSONDecodeError):
        store.document("garbage")


def test_foreign_needs_a_second_continuation() -> None:
    store, _, _ = interrupted_store(("A",))
    before = store.get("tree")

    with pytest.raises(CorruptionNotApplicable, match="only one"):
        store.corrupt("foreign", 0)
    assert store.get("tree") == before


def test_a_continuation_beyond_the_count_is_not_applicable() -> None:
    store, _, _ = interrupted_store(("A", "B"))

    with pytest.raises(CorruptionNotApplicable, match="2 stored continuations, not 3"):
        store.corrupt("truncated", 2)


def test_an_already_damaged_turn_cannot_take_a_format_specific_damage() -> None:
    store, _, _ = interrupted_store(("A", "B"))
    store.corrupt("truncated", 0)

    with pytest.raises(CorruptionNotApplicable, match="already damaged"):
        store.corrupt("schema_version_other", 0)


def test_an_unknown_corruption_is_not_applicable() -> None:
    with pytest.raises(CorruptionNotApplicable, match="not damage to a stored turn"):
        apply("melted", ReferenceContinuationFormat(), {"x": {}}, ("x",), [])
    with pytest.raises(CorruptionNotApplicable, match="unknown corruption"):
        ReferenceContinuationFormat().damage("melted", {"data": {}})


def test_a_corrupting_store_passes_everything_through_until_asked() -> None:
    store = CorruptingStore(MemoryStore(), ReferenceContinuationFormat())
    store.put("k", b"v")
    store.put("gone", b"v")
    store.delete("gone")

    assert (store.keys(), store.get("k"), store.continuations()) == (["k"], b"v", [])


def test_an_action_serving_a_call_shows_and_records_the_calls_prompt() -> None:
    ledger = Ledger(AppendOnlyLog())
    ask = Asker({"approval": APPROVE})

    ProtectedAction("mail").perform(
        ask, ledger, agent="orch/mailer", tool_use_id="t", prompt=prompt_of({CALL_FIELD: "mail Bo"})
    )

    assert ask.asked == [
        ("approval", {"action": "mail", "question": 1, "of": 1, "prompt": "mail Bo"})
    ]
    assert ledger.executions() == [
        {"action": "mail", "agent": "orch/mailer", "tool_use_id": "t", "prompt": "mail Bo"}
    ]
    assert prompt_of({}) is None
    assert prompt_of({CALL_FIELD: 3}) is None


def test_a_call_that_asks_for_it_carries_the_prompt_its_agent_is_answering() -> None:
    send = ScriptedCall("send", "t", prompt_field=CALL_FIELD)
    other = ScriptedCall("mailer", "c", input={"prompt": "mail Ana"})
    script = AgentScript(
        turns_by_prompt={"mail Bo": (CallTools((send,)), Answer("urgent"))},
        default=(CallTools((send, other)), Answer("done")),
    )

    [bo, _] = script.turns_for("mail Bo")
    [ana, _] = script.turns_for("mail Ana")

    assert isinstance(bo, CallTools)
    assert isinstance(ana, CallTools)
    assert [dict(call.input) for call in bo.calls] == [{CALL_FIELD: "mail Bo"}]
    assert [dict(call.input) for call in ana.calls] == [
        {CALL_FIELD: "mail Ana"},
        {"prompt": "mail Ana"},
    ]

"""Conversation managers: what the model is sent, and the counter that decides when to trim."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.reference.conversation import NullConversationManager, SlidingWindow


def prompt(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


def reply(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"text": text}]}


def tool_use(use_id: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": use_id, "name": "t"}}]}


def tool_result(use_id: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"toolResult": {"toolUseId": use_id, "content": []}}]}


def is_tool_result(message: dict[str, Any]) -> bool:
    return any("toolResult" in block for block in message["content"])


def test_a_sliding_window_starts_with_a_zero_counter() -> None:
    assert SlidingWindow(size=3).initial_state() == {
        "model_call_count": 0,
        "removed_message_count": 0,
    }


def test_the_window_trims_only_every_per_turn_th_call() -> None:
    window = SlidingWindow(size=1, per_turn=3)
    history = [prompt("a"), reply("b"), prompt("c")]
    state = window.initial_state()
    sent_sizes = []
    for _ in range(6):
        sent, state = window.before_model_call(history, state)
        sent_sizes.append(len(sent))

    assert sent_sizes == [3, 3, 1, 3, 3, 1]
    assert state == {"model_call_count": 6, "removed_message_count": 4}


def test_the_window_keeps_the_newest_messages_and_counts_what_it_removed() -> None:
    history = [prompt("a"), reply("b"), prompt("c"), reply("d")]

    sent, state = SlidingWindow(size=2).before_model_call(
        history, {"model_call_count": 4, "removed_message_count": 5}
    )

    assert sent == [prompt("c"), reply("d")]
    assert state == {"model_call_count": 5, "removed_message_count": 7}


def test_a_history_within_the_size_is_sent_whole() -> None:
    history = [prompt("a"), reply("b")]

    sent, state = SlidingWindow(size=5).before_model_call(history, SlidingWindow(5).initial_state())

    assert sent == history
    assert state["removed_message_count"] == 0


def test_the_window_never_starts_on_a_tool_result_whose_call_was_cut() -> None:
    history = [prompt("a"), tool_use("t1"), tool_result("t1"), reply("b")]

    sent, state = SlidingWindow(size=2).before_model_call(history, SlidingWindow(2).initial_state())

    assert sent == [reply("b")]
    assert state["removed_message_count"] == 3


def test_the_window_does_not_change_the_history_it_is_given() -> None:
    history = [prompt("a"), reply("b"), prompt("c")]

    SlidingWindow(size=1).before_model_call(history, SlidingWindow(1).initial_state())

    assert history == [prompt("a"), reply("b"), prompt("c")]


histories = st.lists(
    st.sampled_from([prompt("p"), reply("r"), tool_use("t"), tool_result("t")]), max_size=8
)


@given(
    history=histories,
    size=st.integers(1, 5),
    per_turn=st.integers(1, 4),
    calls_before=st.integers(0, 10),
    removed_before=st.integers(0, 10),
)
def test_a_window_call_sends_a_suffix_and_accounts_for_every_removed_message(
    history: list[dict[str, Any]], size: int, per_turn: int, calls_before: int, removed_before: int
) -> None:
    window = SlidingWindow(size=size, per_turn=per_turn)

    sent, state = window.before_model_call(
        history, {"model_call_count": calls_before, "removed_message_count": removed_before}
    )

    assert sent == history[len(history) - len(sent) :]
    assert state["model_call_count"] == calls_before + 1
    assert state["removed_message_count"] == removed_before + len(history) - len(sent)
    if (calls_before + 1) % per_turn != 0:
        assert sent == history
    else:
        assert len(sent) <= size
        assert bool(sent) == bool(history)
        if sent and is_tool_result(sent[0]):
            # only when nothing but tool results is left after the cut: the newest one is kept
            assert len(sent) == 1
            assert all(is_tool_result(m) for m in history[len(history) - size :])


@pytest.mark.parametrize(("size", "per_turn"), [(0, 1), (1, 0), (-1, 1), (2, -3)])
def test_a_window_with_an_invalid_size_is_refused(size: int, per_turn: int) -> None:
    with pytest.raises(ValueError, match="size >= 1 and per_turn >= 1"):
        SlidingWindow(size=size, per_turn=per_turn)


def test_the_null_manager_keeps_everything_and_has_no_state() -> None:
    manager = NullConversationManager()
    history = [prompt("a"), tool_use("t"), tool_result("t"), reply("b")] * 10

    sent, state = manager.before_model_call(history, manager.initial_state())

    assert sent == history
    assert state == {}


def test_the_two_managers_have_distinct_type_names() -> None:
    assert NullConversationManager.type_name == "null"
    assert SlidingWindow.type_name == "sliding_window"

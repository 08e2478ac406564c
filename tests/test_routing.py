"""Routing, the downward direction: each call gets exactly its own answers, under local ids."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.reference.naming import root_visible_id, tool_interrupt_id
from harness.reference.routing import owns_pending_turn, responses_for_call
from harness.reference.state import Interrupt


def nested(outer: str, local: str, response: object = None) -> Interrupt:
    return Interrupt(
        id=root_visible_id(outer, local), name="approval", reason={}, response=response
    )


def test_responses_for_call_renames_answers_to_local_ids() -> None:
    interrupts = [
        nested("o1", "tool:t1:approval", "approve"),
        nested("o1", "sub:m1:tool:t1:approval", "deny"),
    ]

    assert responses_for_call(interrupts, "o1") == {
        "tool:t1:approval": "approve",
        "sub:m1:tool:t1:approval": "deny",
    }


def test_another_calls_answer_is_never_selected() -> None:
    interrupts = [nested("o1", "tool:t1:approval", "approve"), nested("o2", "tool:t1:approval")]

    assert responses_for_call(interrupts, "o2") == {}
    assert responses_for_call(interrupts, "o1") == {"tool:t1:approval": "approve"}


def test_unanswered_interrupts_are_excluded() -> None:
    interrupts = [nested("o1", "tool:t1:approval"), nested("o1", "tool:t2:approval", "approve")]

    assert responses_for_call(interrupts, "o1") == {"tool:t2:approval": "approve"}


def test_falsy_answers_are_still_answers() -> None:
    interrupts = [nested("o1", "a", False), nested("o1", "b", 0), nested("o1", "c", "")]

    assert responses_for_call(interrupts, "o1") == {"a": False, "b": 0, "c": ""}


def test_ordinary_interrupts_belong_to_no_call() -> None:
    ordinary = Interrupt(tool_interrupt_id("o1", "approval"), "approval", {}, "approve")

    assert responses_for_call([ordinary], "o1") == {}
    assert not owns_pending_turn([ordinary], "o1")


def test_owns_pending_turn_needs_an_interrupt_under_the_calls_prefix() -> None:
    interrupts = [nested("a:b", "tool:t1:approval")]

    assert owns_pending_turn(interrupts, "a:b")
    assert not owns_pending_turn(interrupts, "a")
    assert not owns_pending_turn(interrupts, "a%3Ab")
    assert not owns_pending_turn([], "a:b")


def test_an_answered_interrupt_still_marks_the_turn_as_owned() -> None:
    assert owns_pending_turn([nested("o1", "x", "approve")], "o1")


# Outer ids that share prefixes once quoted or unquoted.
outer_ids = st.sampled_from(["a", "a:b", "a%3Ab", "a%253Ab", "b", "a:", ":a", "", "ü"]) | st.text(
    max_size=4
)
locals_ = st.sampled_from(["tool:t1:approval", "tool:t1:approval-2", "sub:a:tool:t1:approval"])
answers = st.none() | st.sampled_from(["approve", "deny"])


@given(
    raised=st.lists(st.tuples(outer_ids, locals_, answers), max_size=8, unique_by=lambda r: r[:2]),
    asked=outer_ids,
)
def test_exactly_the_answered_interrupts_of_one_call_are_selected(
    raised: list[tuple[str, str, str | None]], asked: str
) -> None:
    interrupts = [nested(outer, local, answer) for outer, local, answer in raised]

    selected = responses_for_call(interrupts, asked)

    expected = {
        local: answer for outer, local, answer in raised if outer == asked and answer is not None
    }
    assert selected == expected
    assert owns_pending_turn(interrupts, asked) == any(outer == asked for outer, _, _ in raised)

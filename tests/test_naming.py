"""Naming, the upward direction: root-visible ids are unique, composable and invertible."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.reference.naming import (
    NESTED_PREFIX,
    NotANestedId,
    owned_by_call,
    root_visible_id,
    split_root_visible_id,
    tool_interrupt_id,
)

# Ids a model or a user could pick: separators, escapes, unicode and the empty string included.
ids = st.text() | st.sampled_from(["", ":", "%", "%3A", "a:b", "a%3Ab", "sub:x", "ü:é", "%%"])


def test_a_nested_id_names_the_outer_call_and_keeps_the_local_id_verbatim() -> None:
    nested = root_visible_id("call:1", "tool:t1:approval")

    assert nested == "sub:call%3A1:tool:t1:approval"
    assert split_root_visible_id(nested) == ("call:1", "tool:t1:approval")


def test_an_ordinary_tool_interrupt_id_quotes_both_parts() -> None:
    assert tool_interrupt_id("t:1", "ask 100%") == "tool:t%3A1:ask%20100%25"


@given(outer=ids, local=ids)
def test_split_inverts_root_visible_id_for_any_text(outer: str, local: str) -> None:
    assert split_root_visible_id(root_visible_id(outer, local)) == (outer, local)


@given(outers=st.lists(ids, min_size=3, max_size=3), tool_use_id=ids, name=ids)
def test_ids_compose_per_level_and_unwrap_level_by_level(
    outers: list[str], tool_use_id: str, name: str
) -> None:
    local = tool_interrupt_id(tool_use_id, name)
    nested = local
    for outer in reversed(outers):
        nested = root_visible_id(outer, nested)

    unwrapped = []
    for _ in outers:
        outer, nested = split_root_visible_id(nested)
        unwrapped.append(outer)

    assert unwrapped == outers
    assert nested == local


def test_three_levels_with_separators_in_every_id_unwrap_exactly() -> None:
    nested = root_visible_id("o:1", root_visible_id("m%1", root_visible_id("ü", "tool:t:q")))

    first_outer, rest = split_root_visible_id(nested)
    second_outer, rest = split_root_visible_id(rest)
    third_outer, local = split_root_visible_id(rest)

    assert (first_outer, second_outer, third_outer, local) == ("o:1", "m%1", "ü", "tool:t:q")


# A small pool, so that equal pairs and pairs that differ only in where a ":" falls both occur.
near_ids = st.sampled_from(["", ":", "a", "b", "x", "a:b", "b:x", "%3A", "a%3Ab", "3Ab:x"])


@given(first=st.tuples(near_ids, near_ids), second=st.tuples(near_ids, near_ids))
def test_distinct_outer_and_local_pairs_give_distinct_ids(
    first: tuple[str, str], second: tuple[str, str]
) -> None:
    if first != second:
        assert root_visible_id(*first) != root_visible_id(*second)
    else:
        assert root_visible_id(*first) == root_visible_id(*second)


def test_prefix_sharing_outer_ids_do_not_collide() -> None:
    made = {
        root_visible_id(outer, local)
        for outer in ("a", "a:b", "a%3Ab", "a%253Ab")
        for local in ("b:x", "x", "3Ab:x")
    }

    assert len(made) == 12


@given(outer=ids, local=ids, tool_use_id=ids, name=ids)
def test_a_nested_id_never_equals_an_ordinary_tool_interrupt_id(
    outer: str, local: str, tool_use_id: str, name: str
) -> None:
    assert root_visible_id(outer, local) != tool_interrupt_id(tool_use_id, name)


@pytest.mark.parametrize(
    "malformed",
    [
        "tool:x:y",  # an ordinary interrupt id
        "sub:%ZZ:x",  # not a valid quoting
        "sub:%3a:x",  # lower-case escape: root_visible_id never writes it
        "sub:a b:x",  # an unquoted character
        "sub:noseparator",
        "sub:",
        "SUB:a:x",
        "",
        "x:sub:a:b",
    ],
)
def test_a_malformed_id_raises_not_a_nested_id(malformed: str) -> None:
    with pytest.raises(NotANestedId) as refused:
        split_root_visible_id(malformed)
    assert refused.value.args == (malformed,)  # the error names the id it refused


def test_not_a_nested_id_is_a_value_error() -> None:
    assert issubclass(NotANestedId, ValueError)


@given(text=st.text())
def test_split_accepts_only_what_root_visible_id_can_produce(text: str) -> None:
    try:
        outer, local = split_root_visible_id(text)
    except NotANestedId:
        return
    assert root_visible_id(outer, local) == text


@given(text=st.text())
def test_a_text_without_the_nested_prefix_is_never_a_nested_id(text: str) -> None:
    if not text.startswith(NESTED_PREFIX):
        with pytest.raises(NotANestedId):
            split_root_visible_id(text)


def test_owned_by_call_is_true_only_for_the_call_that_minted_the_id() -> None:
    nested = root_visible_id("a:b", "tool:t1:approval")

    assert owned_by_call(nested, "a:b")
    assert not owned_by_call(nested, "a")
    assert not owned_by_call(nested, "a%3Ab")
    assert not owned_by_call(tool_interrupt_id("a:b", "approval"), "a:b")
    assert not owned_by_call("sub:%ZZ:x", "%ZZ")
    assert not owned_by_call("sub:noseparator", "noseparator")


@given(outer=ids, other=ids, local=ids)
def test_owned_by_call_matches_the_outer_id_exactly(outer: str, other: str, local: str) -> None:
    assert owned_by_call(root_visible_id(outer, local), other) == (outer == other)

"""Continuations: store/restore round trips, and every damage is refused loudly."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakes.corruption import apply, nodes
from harness.reference import continuation
from harness.reference.continuation import ContinuationError, restore, store
from harness.reference.state import AgentState, Interrupt, InterruptState, copy_json
from harness.targets.reference import ReferenceContinuationFormat

WINDOW = "sliding_window"


def owner(call: str = "o1") -> dict[str, str]:
    return {"sub_agent": "A", "tool_use_id": call}


short_text = st.text(max_size=6)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | short_text
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=2) | st.dictionaries(short_text, children, max_size=2)
    ),
    max_leaves=4,
)
json_objects = st.dictionaries(short_text, json_values, max_size=2)
blocks = st.one_of(
    st.builds(lambda text: {"text": text}, short_text),
    st.builds(
        lambda use_id, name, value: {
            "toolUse": {"toolUseId": use_id, "name": name, "input": value}
        },
        short_text,
        short_text,
        json_values,
    ),
    st.builds(
        lambda use_id, text: {
            "toolResult": {"toolUseId": use_id, "status": "success", "content": [{"text": text}]}
        },
        short_text,
        short_text,
    ),
)
messages = st.builds(
    lambda role, content: {"role": role, "content": content},
    st.sampled_from(["user", "assistant"]),
    st.lists(blocks, max_size=2),
)
interrupts = st.builds(
    Interrupt, id=short_text, name=short_text, reason=json_values, response=json_values
)
parked_states = st.builds(
    AgentState,
    messages=st.lists(messages, max_size=3),
    state=json_objects,
    model_state=json_objects,
    conversation_manager_state=json_objects,
    interrupt_state=st.builds(
        InterruptState,
        activated=st.just(True),
        interrupts=st.lists(interrupts, max_size=2),
        context=json_objects,
    ),
)


def parked() -> AgentState:
    return AgentState(
        messages=[
            {"role": "user", "content": [{"text": "go"}]},
            {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "t1", "name": "act", "input": {}}}],
            },
        ],
        state={"k": "v"},
        model_state={"response_id": "resp-1"},
        conversation_manager_state={"model_call_count": 1, "removed_message_count": 0},
        interrupt_state=InterruptState(
            activated=True,
            interrupts=[Interrupt("tool:t1:approval", "approval", {"action": "a"})],
            context={"tool_results": []},
        ),
    )


@given(state=parked_states, call_owner=json_values, manager=st.sampled_from(["null", WINDOW]))
def test_restore_of_store_equals_the_original_state(
    state: AgentState, call_owner: Any, manager: str
) -> None:
    entry = store(state, call_owner, manager)

    assert set(entry) == continuation.ENTRY_FIELDS
    assert entry["schema_version"] == continuation.SCHEMA_VERSION
    assert entry["conversation_manager"] == manager
    assert entry["owner"] == call_owner
    assert entry["data"] == state.to_json()
    assert restore(entry, call_owner, manager) == state
    assert restore(json.loads(json.dumps(entry)), call_owner, manager) == state


def test_store_refuses_a_turn_that_is_not_parked() -> None:
    state = parked()
    state.interrupt_state.activated = False

    with pytest.raises(
        ValueError, match=r"^only a parked \(interrupted\) turn has a continuation$"
    ):
        store(state, owner(), WINDOW)


def test_the_entry_shares_nothing_with_its_owner() -> None:
    call = {"sub_agent": "A", "tool_use_id": "o1", "path": ["orchestrator", "A"]}
    entry = store(parked(), call, WINDOW)
    call["path"].append("changed afterwards")

    assert entry["owner"]["path"] == ["orchestrator", "A"]


def test_the_entry_shares_nothing_with_the_stored_state() -> None:
    state = parked()
    entry = store(state, owner(), WINDOW)
    before = copy.deepcopy(entry)

    state.messages.append({"role": "user", "content": []})
    state.state["k"] = "changed"
    state.model_state.clear()
    state.interrupt_state.context["extra"] = 1

    assert entry == before


def test_restore_returns_data_unshared_with_the_entry() -> None:
    entry = store(parked(), owner(), WINDOW)
    before = copy.deepcopy(entry)

    restored = restore(entry, owner(), WINDOW)
    restored.messages[0]["content"].append({"text": "more"})
    restored.state["k"] = "changed"
    restored.model_state["response_id"] = "other"
    restored.conversation_manager_state["model_call_count"] = 99
    restored.interrupt_state.context["tool_results"].append("x")
    restored.interrupt_state.interrupts.clear()

    assert entry == before
    assert restore(entry, owner(), WINDOW) == parked()


def sealed(entry: Any) -> Any:
    """``entry`` with its digest made to match again: what a writer with that bug would store,
    so the shape checks behind the digest are reached."""
    if isinstance(entry, dict) and "digest" in entry:
        entry["digest"] = continuation.digest(entry)
    return entry


def test_restore_accepts_extra_fields_on_an_interrupt() -> None:
    entry = store(parked(), owner(), WINDOW)
    entry["data"]["interrupt_state"]["interrupts"][0]["seen_at"] = "later"
    sealed(entry)

    assert restore(entry, owner(), WINDOW).interrupt_state.interrupts == [
        Interrupt("tool:t1:approval", "approval", {"action": "a"})
    ]


Damage = Callable[[dict[str, Any]], Any]


def set_in(path: tuple[str | int, ...], value: Any) -> Damage:
    def damage(entry: dict[str, Any]) -> Any:
        container = entry
        for step in path[:-1]:
            container = container[step]
        container[path[-1]] = value
        return entry

    return damage


def delete(path: tuple[str | int, ...]) -> Damage:
    def damage(entry: dict[str, Any]) -> Any:
        container = entry
        for step in path[:-1]:
            container = container[step]
        del container[path[-1]]
        return entry

    return damage


def previous_shape(entry: dict[str, Any]) -> Any:
    return {key: entry["data"][key] for key in ("messages", "state", "interrupt_state")}


def previous_shape_stateless(entry: dict[str, Any]) -> Any:
    """The previous revision's shape of an agent with no state: just the two keys."""
    return {key: entry["data"][key] for key in ("messages", "interrupt_state")}


def current_shape_with_old_keys(entry: dict[str, Any]) -> Any:
    """A versioned entry that also carries the previous revision's keys: extra fields, not the
    previous shape (it has a schema version)."""
    return {**entry, "messages": [], "interrupt_state": {}}


def truncated(entry: dict[str, Any]) -> Any:
    text = json.dumps(entry)
    return text[: len(text) // 2]


DAMAGES: dict[str, tuple[Damage, str]] = {
    "wrong schema version": (set_in(("schema_version",), "2.0"), "unsupported schema version"),
    "schema version as a number": (set_in(("schema_version",), 1), "unsupported schema version"),
    "missing schema": (delete(("schema_version",)), "fields"),
    "missing data": (delete(("data",)), "fields"),
    "missing owner": (delete(("owner",)), "fields"),
    "missing conversation manager": (delete(("conversation_manager",)), "fields"),
    "extra field": (set_in(("created_at",), "2024-01-01"), "fields"),
    "previous revision's shape": (previous_shape, "previous revision"),
    "previous revision's shape, no state": (previous_shape_stateless, "previous revision"),
    "a versioned entry with the old keys too": (current_shape_with_old_keys, "has fields"),
    "wrong owner": (set_in(("owner", "tool_use_id"), "o2"), "belongs to"),
    "other conversation manager": (set_in(("conversation_manager",), "null"), "conversation"),
    "data not an object": (set_in(("data",), []), "data is not an object"),
    "data field missing": (delete(("data", "model_state")), "lacks"),
    "data field extra": (set_in(("data", "session_id"), "s"), "unexpected fields"),
    "data field wrong type": (set_in(("data", "messages"), "[]"), "not a list"),
    "state wrong type": (set_in(("data", "state"), []), "not a dict"),
    "interrupt_state not an object": (set_in(("data", "interrupt_state"), None), "not a dict"),
    "interrupt_state field missing": (
        delete(("data", "interrupt_state", "context")),
        r"^data\.interrupt_state lacks \['context'\]$",
    ),
    "activated wrong type": (set_in(("data", "interrupt_state", "activated"), 1), "not a bool"),
    "interrupt_state not activated": (
        set_in(("data", "interrupt_state", "activated"), False),
        "^the stored turn is not parked$",
    ),
    "interrupt not an object": (
        set_in(("data", "interrupt_state", "interrupts", 0), "tool:t1:approval"),
        "not an object",
    ),
    "interrupt lacking id": (
        delete(("data", "interrupt_state", "interrupts", 0, "id")),
        r"^data\.interrupt_state\.interrupts\[0\] lacks \['id'\]$",
    ),
    "interrupt id wrong type": (
        set_in(("data", "interrupt_state", "interrupts", 0, "id"), 7),
        "not a str",
    ),
    "interrupt lacking reason": (
        delete(("data", "interrupt_state", "interrupts", 0, "reason")),
        r"^data\.interrupt_state\.interrupts\[0\] lacks reason or response$",
    ),
    "interrupt lacking response": (
        delete(("data", "interrupt_state", "interrupts", 0, "response")),
        "lacks reason or response",
    ),
    "a truncated JSON string": (truncated, "not an object"),
    "null": (lambda entry: None, "not an object"),
}


@pytest.mark.parametrize("damage_name", sorted(DAMAGES))
def test_restore_refuses_each_damage_with_a_message(damage_name: str) -> None:
    damage, message = DAMAGES[damage_name]
    entry = sealed(damage(store(parked(), owner(), WINDOW)))

    with pytest.raises(ContinuationError, match=message):
        restore(entry, owner(), WINDOW)


def test_restore_refuses_an_entry_stored_for_another_call() -> None:
    entry = store(parked(), owner(), WINDOW)

    with pytest.raises(ContinuationError, match="belongs to"):
        restore(entry, owner("o2"), WINDOW)


def test_restore_refuses_a_sub_agent_rebuilt_with_another_conversation_manager() -> None:
    entry = store(parked(), owner(), WINDOW)

    with pytest.raises(ContinuationError, match="'null'"):
        restore(entry, owner(), "null")


def test_a_continuation_error_is_a_value_error() -> None:
    assert issubclass(ContinuationError, ValueError)


@pytest.mark.parametrize("field", sorted(continuation.ENTRY_FIELDS))
def test_restore_refuses_an_entry_missing_any_top_level_field(field: str) -> None:
    entry = store(parked(), owner(), WINDOW)
    del entry[field]

    with pytest.raises(ContinuationError, match="fields"):
        restore(entry, owner(), WINDOW)


@pytest.mark.parametrize("field", sorted(continuation.DATA_FIELDS))
def test_restore_refuses_data_missing_any_field(field: str) -> None:
    entry = store(parked(), owner(), WINDOW)
    del entry["data"][field]
    sealed(entry)

    with pytest.raises(ContinuationError, match=f"data lacks \\['{field}'\\]"):
        restore(entry, owner(), WINDOW)


@pytest.mark.parametrize("field", sorted(continuation.DATA_FIELDS))
def test_restore_refuses_data_with_any_field_of_the_wrong_type(field: str) -> None:
    entry = store(parked(), owner(), WINDOW)
    entry["data"][field] = "0"
    sealed(entry)

    with pytest.raises(ContinuationError, match=f"data.{field} is not a"):
        restore(entry, owner(), WINDOW)


def test_every_key_deleted_or_value_swapped_anywhere_is_refused_by_the_digest() -> None:
    pristine = store(parked(), owner(), WINDOW)
    paths = nodes(pristine)
    assert len(paths) > 20  # the turn has messages, state and interrupts to hit
    for pick in range(len(paths)):
        for damage in ("key_deleted", "value_swapped"):
            entry = json.loads(json.dumps(pristine))
            container = {"turn": entry}
            hit = apply(damage, ReferenceContinuationFormat(), container, ("turn",), [], pick)
            with pytest.raises(ContinuationError) as refused:
                restore(container["turn"], owner(), WINDOW)
            # deep damage is caught by the digest; only the envelope's own fields by their checks
            if hit.count(".") >= 1:
                assert "digest" in str(refused.value), (damage, hit)


def test_the_digest_covers_everything_but_itself() -> None:
    entry = store(parked(), owner(), WINDOW)

    assert entry["digest"] == continuation.digest(entry)
    assert entry["digest"] == continuation.digest({**entry, "digest": "anything"})
    assert entry["digest"] != continuation.digest({**entry, "owner": {"tool_use_id": "o2"}})


def _containers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(part for item in value.values() for part in _containers(item))]
    if isinstance(value, (list, tuple)):
        return [value, *(part for item in value for part in _containers(item))]
    return []


class Label(str):
    """A str subclass (as an enum member is): marshal cannot write it."""


@given(json_values, st.booleans())
def test_copy_json_is_equal_and_shares_no_container(value: Any, odd_leaf: bool) -> None:
    shared = [value, value]  # the same list twice: the copy has two
    if odd_leaf:
        shared.append(Label("x"))
    copied = copy_json(shared)
    assert copied == shared
    assert [type(part) for part in _containers(copied)] == [
        type(part) for part in _containers(shared)
    ]
    originals = {id(part) for part in _containers(shared)}
    copies = _containers(copied)
    assert not originals & {id(part) for part in copies}
    assert len({id(part) for part in copies}) == len(copies)

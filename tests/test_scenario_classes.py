"""The recognised scenario classes a findings class narrows by (``scenarios.classes``), read off
the scenario alone: here ``shared-tool-use-ids``, which tells apart the questions a naming scheme
by toolUseId alone gives one name (strands-agents before 1.59) from ``colliding-ids``, the ones
a local id of tool and toolUseId does."""

from __future__ import annotations

from typing import Any

from scenarios.classes import classes_of
from scenarios.loading import parse_scenario


def asking(name: str, tool: str, tool_use_id: str) -> dict[str, Any]:
    """A sub-agent whose one turn calls its protected action ``tool`` under ``tool_use_id``."""
    return {
        "name": name,
        "actions": [{"tool": tool, "label": f"{name}-act"}],
        "turns": [[{"tool": tool, "id": tool_use_id}]],
    }


def scenario(*sub_agents: dict[str, Any], ids: tuple[str, ...] = ("c1", "c2")) -> Any:
    tree = {
        "name": "orchestrator",
        "sub_agents": list(sub_agents),
        "turns": [[{"tool": sub["name"], "id": ids[n]} for n, sub in enumerate(sub_agents)]],
    }
    data = {"description": "test", "source": "tests", "tree": tree, "steps": [{"run": "p1"}]}
    return parse_scenario(data, "test")


def test_two_agents_asking_under_one_tool_use_id_with_other_tools_share_it_and_do_not_collide() -> (
    None
):
    found = classes_of(scenario(asking("a", "pay", "t1"), asking("b", "mail", "t1")))
    assert "shared-tool-use-ids" in found
    assert "colliding-ids" not in found


def test_the_same_tool_under_one_tool_use_id_is_both_shared_and_colliding() -> None:
    found = classes_of(scenario(asking("a", "pay", "t1"), asking("b", "pay", "t1")))
    assert {"shared-tool-use-ids", "colliding-ids"} <= found


def test_distinct_tool_use_ids_share_nothing() -> None:
    found = classes_of(scenario(asking("a", "pay", "t1"), asking("b", "pay", "t2")))
    assert not {"shared-tool-use-ids", "colliding-ids"} & found


def test_a_call_that_asks_nothing_shares_no_id() -> None:
    # b's tool under t1 is an ordinary tool: it asks nothing, so no question of b is named t1
    quiet = {
        "name": "b",
        "actions": [{"tool": "pay", "label": "b-act"}],
        "effects": [{"tool": "lookup"}],
        "turns": [[{"tool": "lookup", "id": "t1"}, {"tool": "pay", "id": "t2"}]],
    }
    assert "shared-tool-use-ids" not in classes_of(scenario(asking("a", "pay", "t1"), quiet))


def test_one_agent_asking_twice_under_one_tool_use_id_shares_it_with_no_other_agent() -> None:
    again = {
        "name": "a",
        "actions": [{"tool": "pay", "label": "a-act"}],
        "turns": [[{"tool": "pay", "id": "t1"}], [{"tool": "pay", "id": "t1"}]],
    }
    assert "shared-tool-use-ids" not in classes_of(scenario(again, asking("b", "pay", "t2")))


def test_gated_calls_in_two_agents_under_one_tool_use_id_share_it() -> None:
    # the orchestrator asks the gate of its call c1 of a; a asks the gate of its call c1 of b
    inner = {**asking("b", "pay", "t2"), "gate": "b-gate"}
    outer = {
        "name": "a",
        "gate": "a-gate",
        "sub_agents": [inner],
        "turns": [[{"tool": "b", "id": "c1"}]],
    }
    found = classes_of(scenario(outer, ids=("c1",)))
    assert "shared-tool-use-ids" in found
    assert "colliding-ids" not in found

"""I16, a well-formed conversation: each model request judged on its own shape, no control run.

Histories are written by hand: one step per list of requests, each request the shape the
scripted model journals (``fakes.model.sent``).  A good request is quiet; each way of breaking
one (a tool use with no result or two, a stray result, a lost reply or prompt) is named once,
at the step of the first request that shows it.  Then the whole path: the journal records the
shape each target's messages have, and the known-bad reference variant that drops a restored
turn's last result is caught by I16 alone (under ``--isolation process`` too:
``tests/test_isolation.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakes.log import AppendOnlyLog
from fakes.model import AgentScript, Answer, CallTools, ScriptedModel, ToolCall, marker, sent
from harness.checkers import check
from harness.checkers.conversation import (
    ANSWERED,
    NO_STRAY_RESULT,
    NOTHING_LOST,
    well_formed_conversation,
)
from harness.checkers.violation import Violation
from harness.history import History, StepRecord
from harness.runner import run_scenario
from harness.targets.fake_model import conversation_of
from harness.targets.reference import ReferenceTarget
from harness.targets.variants import VARIANTS
from scenarios.loading import load_scenario, regression_files

TREE: dict[str, Any] = {
    "name": "orchestrator",
    "turns": [[{"tool": "worker", "id": "c1"}, {"tool": "worker", "id": "c2"}]],
    "sub_agents": [
        {
            "name": "worker",
            "actions": [{"tool": "act", "label": "act"}],
            "turns": [[{"tool": "act", "id": "t1"}]],
        }
    ],
}


def prompt(text: str = "go") -> dict[str, Any]:
    return {"prompt": text}


def reply(turn: int | None, *uses: str, of: str = "go") -> dict[str, Any]:
    mark = None if turn is None else [of, turn]
    return {"reply": mark} | ({"uses": list(uses)} if uses else {})


def results(*ids: str) -> dict[str, Any]:
    return {"results": list(ids)}


def request(turn: int, *shape: dict[str, Any], agent: str = "orchestrator") -> dict[str, Any]:
    return {
        "agent": agent,
        "prompt": "go",
        "turn": turn,
        "messages": len(shape),
        "sent": list(shape),
    }


def history(*steps: list[dict[str, Any]], tree: dict[str, Any] | None = None) -> History:
    return History(
        scenario_name="by hand",
        scenario={"tree": tree or TREE, "steps": []},
        target={"name": "by hand", "capabilities": []},
        steps=tuple(
            StepRecord(
                index=index,
                kind="run",
                step={},
                expected={},
                observed={},
                answered=[],
                executions=[],
                requests=requests,
                events=[],
                stored=None,
            )
            for index, requests in enumerate(steps)
        ),
    )


def seen(violations: list[Violation]) -> list[tuple[int | None, str, str]]:
    return [(v.step, v.expected, v.seen.split(": ", 1)[1]) for v in violations]


def test_a_whole_conversation_is_well_formed_whatever_the_order_of_one_turns_results() -> None:
    first = request(0, prompt())
    second = request(1, prompt(), reply(0, "c1", "c2"), results("c2"), results("c1"))
    assert well_formed_conversation(history([first], [second])) == []


def test_calls_sent_as_items_of_their_own_are_one_reply() -> None:
    """The OpenAI Responses shape: the marked message, then one item per call."""
    items = request(
        1, prompt(), reply(0), reply(None, "c1"), reply(None, "c2"), results("c1", "c2")
    )
    assert well_formed_conversation(history([items])) == []


def test_a_tool_use_without_its_result_is_named() -> None:
    lost = request(1, prompt(), reply(0, "c1", "c2"), results("c1"))
    assert seen(well_formed_conversation(history([lost]))) == [
        (0, ANSWERED, "tool use 'c2' of reply 0 of 'go' has no result")
    ]


def test_a_request_ending_on_calls_with_no_results_is_named() -> None:
    [violation] = well_formed_conversation(history([request(1, prompt(), reply(0, "c1"))]))
    assert violation.invariant == "I16"
    assert violation.seen.endswith("tool use 'c1' of reply 0 of 'go' has no result")


def test_a_tool_use_answered_twice_is_named() -> None:
    twice = request(1, prompt(), reply(0, "c1"), results("c1"), results("c1"))
    assert seen(well_formed_conversation(history([twice]))) == [
        (0, ANSWERED, "tool use 'c1' of reply 0 of 'go' has 2 results")
    ]


def test_two_uses_of_one_id_in_one_reply_need_two_results() -> None:
    twins = request(1, prompt(), reply(0, "c1", "c1"), results("c1", "c1"))
    assert well_formed_conversation(history([twins])) == []
    one = request(1, prompt(), reply(0, "c1", "c1"), results("c1"))
    assert seen(well_formed_conversation(history([one]))) == [
        (0, ANSWERED, "tool use 'c1' of reply 0 of 'go' has 1 result")
    ]


def test_a_result_without_its_use_is_named() -> None:
    stray = request(1, prompt(), reply(0, "c1"), results("c1", "c9"))
    assert seen(well_formed_conversation(history([stray]))) == [
        (0, NO_STRAY_RESULT, "a result for 'c9' follows reply 0 of 'go', which did not use it")
    ]
    first = request(0, prompt(), results("c1"))
    assert seen(well_formed_conversation(history([first]))) == [
        (0, NO_STRAY_RESULT, "a result for 'c1' follows no reply")
    ]


def test_a_result_moved_past_the_next_reply_is_named_once_as_misplaced() -> None:
    """A result sent after the next reply: one problem (its use's result is misplaced), not a
    lost result and a stray one; a result lost and another stray stay two problems."""
    late = request(2, prompt(), reply(0, "c1"), reply(1, "c2"), results("c2", "c1"))
    assert seen(well_formed_conversation(history([late]))) == [
        (0, ANSWERED, "tool use 'c1' of reply 0 of 'go' has its result after reply 1 of 'go'"),
    ]
    crossed = request(2, prompt(), reply(0, "c1"), reply(1, "c2"), results("c2", "c9"))
    assert seen(well_formed_conversation(history([crossed]))) == [
        (0, ANSWERED, "tool use 'c1' of reply 0 of 'go' has no result"),
        (0, NO_STRAY_RESULT, "a result for 'c9' follows reply 1 of 'go', which did not use it"),
    ]


def test_a_lost_reply_or_prompt_of_the_turn_played_is_named() -> None:
    lost_reply = request(2, prompt(), reply(1, "c2"), results("c2"))
    assert seen(well_formed_conversation(history([lost_reply]))) == [
        (0, NOTHING_LOST, "after its prompt, replies [1] of turns 0 to 1 (missing [0])")
    ]
    lost_prompt = request(1, reply(0, "c1"), results("c1"))
    assert seen(well_formed_conversation(history([lost_prompt]))) == [
        (0, NOTHING_LOST, "its prompt is missing")
    ]
    foreign = request(1, prompt(), reply(0, "c1", of="other"), reply(0, "c1"), results("c1"))
    problems = seen(well_formed_conversation(history([foreign])))
    assert (0, NOTHING_LOST, "after its prompt, replies of ['other']") in problems


def test_an_earlier_call_of_the_same_agent_before_the_prompt_is_kept_history() -> None:
    """A preserve_context sub-agent's earlier call sits before its latest prompt: not lost."""
    earlier = [prompt("before"), reply(0, "c1", of="before"), results("c1"), reply(1, of="before")]
    kept = request(1, *earlier, prompt(), reply(0, "c1"), results("c1"))
    assert well_formed_conversation(history([kept])) == []


def test_a_windowed_agent_may_drop_its_earliest_messages() -> None:
    trimmed = request(2, reply(1, "c2"), results("c2"))
    tree = {**TREE, "window": {"size": 2}}
    assert well_formed_conversation(history([trimmed], tree=tree)) == []
    assert well_formed_conversation(history([trimmed])) != []


def test_a_problem_carried_by_every_later_request_is_named_once_at_its_first_step() -> None:
    broken = [prompt(), reply(0, "c1", "c2"), results("c1")]
    later = request(2, *broken, reply(1, "c3"), results("c3"))
    [violation] = well_formed_conversation(history([request(1, *broken)], [later]))
    assert violation.step == 0


def test_the_journal_records_what_each_request_carried() -> None:
    """The Bedrock-shaped messages of the reference and Strands, read into the journal."""
    messages = [
        {"role": "user", "content": [{"text": "go"}]},
        {
            "role": "assistant",
            "content": [
                {"text": marker("go", 0)},
                {"toolUse": {"toolUseId": "c1", "name": "worker", "input": {}}},
            ],
        },
        {"role": "user", "content": [{"toolResult": {"toolUseId": "c1", "content": []}}]},
    ]
    assert sent(conversation_of(messages)) == [prompt(), reply(0, "c1"), results("c1")]
    journal = AppendOnlyLog()
    script = AgentScript(default=(CallTools((ToolCall("worker", "c1"),)), Answer("done")))
    ScriptedModel("orchestrator", script, journal).next_turn(conversation_of(messages), 3, {})
    assert journal.records()[-1]["sent"] == [prompt(), reply(0, "c1"), results("c1")]


def regression(stem: str) -> tuple[str, Path]:
    return stem, next(path for path in regression_files() if path.stem == stem)


def test_a_restored_turn_sent_without_its_last_result_is_caught_by_i16_alone() -> None:
    """The reference breaks no request; the variant drops, from the turn it resumes, the last
    result it parked with (a lookup's), in the control run as in the run: nothing but I16
    sees it."""
    name, path = regression("lookup-then-ask")
    scenario = load_scenario(path)
    assert check(run_scenario(ReferenceTarget(), scenario, name)) == []
    bad = run_scenario(VARIANTS["drop-restored-result"](), scenario, name)
    violations = check(bad)
    assert {violation.invariant for violation in violations} == {"I16"}
    assert [violation.seen for violation in violations] == [
        "orchestrator/researcher's request for turn 2 of 'find and publish the report': "
        "tool use 'note-1' of reply 1 of 'find and publish the report' has no result"
    ]

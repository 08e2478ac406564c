"""Checkers: each one stays quiet on good histories and names the step of a bad one.

Histories are written by hand with the small builders below: a step says what the root showed
and what ran, and the oracle's expectation defaults to exactly that, so a bad history is a good
one with one observation (or one expectation) changed.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fakes.model import marker
from fakes.protected import question_name
from harness.checkers import CHECKERS, Violation, applicable, check
from harness.checkers.records import pending_texts
from harness.history import History, StepRecord
from harness.runner import run_scenario
from harness.targets.base import CAPABILITIES
from harness.targets.reference import ReferenceTarget
from scenarios.loading import load_scenario

ROOT = Path(__file__).resolve().parent.parent
ANSWER = "done"

Step = dict[str, Any]  # the fields of a StepRecord, except its index
Question = tuple[str, int]


# --- builders -----------------------------------------------------------------------------------


def agent(
    name: str, *sub_agents: dict[str, Any], actions: tuple[str, ...] = (), **options: Any
) -> dict[str, Any]:
    """An agent whose one turn calls each of its actions (tool = label) and sub-agents."""
    tools = [*actions, *(sub["name"] for sub in sub_agents)]
    return {
        "name": name,
        "actions": [{"tool": label, "label": label} for label in actions],
        "sub_agents": list(sub_agents),
        "turns": [[{"tool": tool, "id": f"call-{n}"} for n, tool in enumerate(tools, 1)]],
        **options,
    }


TWO_WORKERS = agent(
    "orchestrator",
    agent("worker_a", actions=("deploy-a",)),
    agent("worker_b", actions=("deploy-b",)),
)
DEEP = agent("orchestrator", agent("planner", agent("executor", actions=("drop-table",))))
MIXED = agent("orchestrator", agent("buyer", actions=("place-order",)), actions=("approve-budget",))
SECRET = agent(
    "orchestrator",
    agent("accountant", actions=("file-taxes",), state={"secret": "canary-7f3a private"}),
)
SECRETARY = agent("orchestrator", agent("secretary", actions=("invite",), preserve_context=True))


def ask(
    label: str,
    question: int = 1,
    *,
    of: int = 1,
    interrupt_id: str | None = None,
    response: Any = None,
) -> dict[str, Any]:
    """A pending interrupt as the root shows it."""
    return {
        "id": interrupt_id or f"sub:{label}:{question}",
        "name": question_name(question),
        "reason": {"action": label, "question": question, "of": max(of, question)},
        "label": label,
        "response": response,
    }


def conversation(
    kind: str,
    *,
    shows: list[dict[str, Any]] | None = None,
    ran: tuple[str, ...] = (),
    stop: str | None = "auto",
    error: str | None = None,
    final: str | None = "auto",
    expect_pending: list[Question] | None = None,
    expect_ran: tuple[str, ...] | None = None,
    expect_stop: str | None = "auto",
    expect_error: str = "forbidden",
    expect_unknown: bool = False,
    answered: tuple[str, ...] = (),
    requests: list[dict[str, Any]] | None = None,
    events: list[dict[str, Any]] | None = None,
    stored: dict[str, Any] | None = None,
) -> Step:
    """A run, answer or resend; every expectation defaults to what was observed."""
    shows = shows or []
    if stop == "auto":
        stop = "interrupt" if shows else "end_turn"
    if expect_stop == "auto":
        expect_stop = stop
    return {
        "kind": kind,
        "step": {},
        "expected": {
            "pending": sorted(
                expect_pending
                if expect_pending is not None
                else [(item["label"], item["reason"]["question"]) for item in shows]
            ),
            "executions": sorted(expect_ran if expect_ran is not None else ran),
            "stop_reason": expect_stop,
            "final_answer": ANSWER if expect_stop == "end_turn" else None,
            "error": expect_error,
            "parked_continuations": 0,
            "unknown_answer": expect_unknown,
        },
        "observed": {
            "stop_reason": stop,
            "pending": shows,
            "final_answer": (ANSWER if stop == "end_turn" else None) if final == "auto" else final,
            "error": error,
        },
        "answered": [
            {"id": f"sub:{label}:1", "label": label, "response": "approve"} for label in answered
        ],
        "executions": [{"action": label, "agent": "?", "tool_use_id": "?"} for label in ran],
        "requests": requests or [],
        "events": events or [],
        "stored": stored,
    }


def run(**fields: Any) -> Step:
    return conversation("run", **fields)


def answer(*labels: str, **fields: Any) -> Step:
    return conversation("answer", answered=labels, **fields)


def resend(*labels: str, **fields: Any) -> Step:
    """Re-sending an answer carried out already: it names no pending question, so it must be
    refused loudly and change nothing (I14)."""
    fields.setdefault("stop", None)
    fields.setdefault("error", "AgentError: no such interrupt")
    fields.setdefault("expect_stop", None)
    fields.setdefault("expect_error", "required")
    fields.setdefault("expect_unknown", True)
    fields.setdefault("expect_ran", ())
    return conversation("resend", answered=labels, **fields)


def restart(
    *,
    expect_pending: list[Question] | None = None,
    ran: tuple[str, ...] = (),
    kind: str = "restart",
    stored: dict[str, Any] | None = None,
) -> Step:
    return {
        "kind": kind,
        "step": {},
        "expected": {
            "pending": sorted(expect_pending or []),
            "executions": [],
            "stop_reason": None,
            "final_answer": None,
            "error": "forbidden" if kind == "restart" else "allowed",
            "parked_continuations": 0,
        },
        "observed": {"error": None} if kind == "restart" else {"note": "damaged", "error": None},
        "answered": [],
        "executions": [{"action": label, "agent": "?", "tool_use_id": "?"} for label in ran],
        "requests": [],
        "events": [],
        "stored": stored,
    }


def request(
    agent_path: str, messages: int, turn: int | None = None, **model_state: Any
) -> dict[str, Any]:
    """A journaled model request; by default a one-message request is a call's first turn.  The
    orchestrator was asked "go", a sub-agent what a call asks by default."""
    return {
        "agent": agent_path,
        "prompt": "go" if "/" not in agent_path else "do your part",
        "turn": turn if turn is not None else (0 if messages == 1 else 1),
        "messages": messages,
        "model_state": model_state,
    }


def stored(record_bytes: int | None, **sizes: int) -> dict[str, Any]:
    """What the stores hold: continuation sizes by owner, and the root's record size."""
    return {
        "continuations": [{"owner": owner, "size": size} for owner, size in sizes.items()],
        "record_bytes": record_bytes,
    }


def history(
    *steps: Step,
    tree: dict[str, Any] = TWO_WORKERS,
    control: History | None = None,
    capabilities: frozenset[str] = frozenset(CAPABILITIES),
    expect: dict[str, Any] | None = None,
) -> History:
    scenario = {"description": "hand-made", "source": "tests", "tree": tree, "steps": []}
    return History(
        scenario_name="hand-made",
        scenario=scenario if expect is None else {**scenario, "expect": expect},
        target={"name": "hand-made", "version": "0", "capabilities": sorted(capabilities)},
        steps=tuple(StepRecord(index=index, **step) for index, step in enumerate(steps)),
        control=control,
    )


def with_control(
    *steps: Step, control: list[Step] | None = None, tree: dict[str, Any] = TWO_WORKERS
) -> History:
    """A run with restarts and its control (by default: the same steps without restarts)."""
    if control is None:
        control = [step for step in steps if step["kind"] != "restart"]
    return history(*steps, tree=tree, control=history(*control, tree=tree))


def violations(checker_id: str, recorded: History) -> list[Violation]:
    return [violation for violation in check(recorded) if violation.invariant == checker_id]


def steps_of(found: list[Violation]) -> list[int | None]:
    return [violation.step for violation in found]


# --- good histories -----------------------------------------------------------------------------


def colliding_ids() -> list[Step]:
    """Two workers ask; the human approves A, restarts, approves B."""
    return [
        run(
            shows=[ask("deploy-a"), ask("deploy-b")],
            requests=[request("orchestrator", 1), request("orchestrator/worker_a", 1)],
            events=[{"type": "interrupt", "agent": "orchestrator", "id": "sub:deploy-a:1"}],
            stored=stored(2000, worker_a=760, worker_b=760),
        ),
        answer(
            "deploy-a",
            shows=[ask("deploy-b")],
            ran=("deploy-a",),
            requests=[request("orchestrator/worker_a", 3)],
            stored=stored(1400, worker_b=760),
        ),
        restart(expect_pending=[("deploy-b", 1)], stored=stored(1400, worker_b=760)),
        answer(
            "deploy-b",
            ran=("deploy-b",),
            requests=[request("orchestrator/worker_b", 3), request("orchestrator", 3)],
            stored=stored(48),
        ),
    ]


GOOD = {
    "colliding ids, with control": with_control(*colliding_ids()),
    "deep nesting": history(
        run(shows=[ask("drop-table")]),
        answer("drop-table", ran=("drop-table",)),
        tree=DEEP,
    ),
    "mixed": history(
        run(shows=[ask("approve-budget"), ask("place-order")]),
        answer("place-order", shows=[ask("approve-budget")], ran=("place-order",)),
        answer("approve-budget", ran=("approve-budget",)),
        tree=MIXED,
    ),
    "re-interrupt": history(
        run(shows=[ask("deploy-a", of=2)]),
        answer("deploy-a", shows=[ask("deploy-a", 2)]),
        resend("deploy-a", shows=[ask("deploy-a", 2)], expect_pending=[("deploy-a", 2)]),
        answer("deploy-a", ran=("deploy-a",)),
    ),
    "loud failure": history(
        run(shows=[ask("deploy-a")]),
        restart(kind="corrupt", expect_pending=[("deploy-a", 1)]),
        answer(
            "deploy-a",
            shows=[ask("deploy-a")],
            stop=None,
            error="ContinuationError: unsupported schema version '2.0'",
            expect_stop=None,
            expect_error="required",
        ),
    ),
    "private continuation": history(
        run(shows=[ask("file-taxes")], events=[{"type": "message", "text": "file taxes"}]),
        answer(
            "file-taxes",
            ran=("file-taxes",),
            requests=[request("orchestrator/accountant", 3, response_id="resp-9e1")],
            events=[{"type": "result", "agent": "orchestrator/accountant", "text": "done"}],
        ),
        tree=SECRET,
    ),
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_every_checker_is_quiet_on_a_good_history(name: str) -> None:
    assert check(GOOD[name]) == []


def test_the_checkers_are_the_seventeen_checked_invariants_then_differential_then_outcome() -> None:
    ids = [checker.id for checker in CHECKERS]

    assert ids == [f"I{n}" for n in range(1, 18)] + ["D", "O"]
    assert len({checker.slug for checker in CHECKERS}) == len(CHECKERS)
    assert all(checker.needs <= set(CAPABILITIES) for checker in CHECKERS)


def test_a_violation_is_plain_json() -> None:
    violation = Violation("I4", "at-most-once", 2, "deploy-a runs once", "deploy-a ran 2 times")

    assert violation.to_json() == {
        "invariant": "I4",
        "slug": "at-most-once",
        "step": 2,
        "expected": "deploy-a runs once",
        "seen": "deploy-a ran 2 times",
    }


def test_checking_is_deterministic_and_survives_a_json_round_trip() -> None:
    bad = history(
        run(
            shows=[ask("deploy-a", interrupt_id="x"), ask("deploy-b", interrupt_id="x")],
            ran=("deploy-b",),
        )
    )

    assert check(bad) == check(bad) == check(History.from_json(bad.to_json()))
    assert check(bad) != []


# --- applicability ------------------------------------------------------------------------------


def test_no_checker_applies_to_a_scenario_the_target_cannot_express() -> None:
    skipped = History(
        "hand-made", {"tree": TWO_WORKERS}, {"capabilities": []}, (), None, ("restart",)
    )

    assert not any(applicable(checker, skipped) for checker in CHECKERS)
    assert check(skipped) == []


def test_a_checker_needing_a_capability_the_target_lacks_is_not_applied() -> None:
    duplicated = [ask("deploy-a", interrupt_id="x"), ask("deploy-b", interrupt_id="x")]
    without_ids = history(
        run(shows=duplicated), capabilities=frozenset(CAPABILITIES) - {"interrupt_ids"}
    )

    assert violations("I1", history(run(shows=duplicated))) != []
    assert violations("I1", without_ids) == []


# --- I1 unique names up -------------------------------------------------------------------------


def test_i1_two_pending_interrupts_under_one_id() -> None:
    bad = history(
        run(shows=[ask("deploy-a"), ask("deploy-b")]),
        answer(
            "deploy-a",
            shows=[
                ask("deploy-b", interrupt_id="tool:1"),
                ask("deploy-b", 2, interrupt_id="tool:1"),
            ],
            expect_pending=[("deploy-b", 1), ("deploy-b", 2)],
        ),
    )

    found = violations("I1", bad)

    assert steps_of(found) == [1]
    assert found[0].slug == "unique-names-up"
    assert found[0].expected == "distinct root-visible ids"
    assert found[0].seen == "'tool:1' shown for deploy-b#1, deploy-b#2"


# --- I2 exact delivery down ---------------------------------------------------------------------


def test_i2_an_approval_runs_a_siblings_action() -> None:
    steps = colliding_ids()
    steps[1] = answer(
        "deploy-a", shows=[ask("deploy-b")], ran=("deploy-b",), expect_ran=("deploy-a",)
    )

    found = violations("I2", history(*steps))

    assert steps_of(found) == [1, 1]
    assert found[0].seen == "deploy-b ran once: a sibling's action ran"
    assert found[1].expected == "deploy-a runs once"
    assert found[1].seen == "deploy-a ran 0 times: approval not delivered"


MAILER = agent("orchestrator", agent("mailer", actions=("send-mail",)))


def twin_calls_answered(
    *, ran_for: str, due_for: str, records_name_calls: bool = True, with_effect: bool = False
) -> History:
    """Twin calls of the mailer (mail Ana, mail Bo) ask send-mail; one answer approves the call
    for ``due_for`` and the ledger says the run served ``ran_for`` (after an ordinary tool's run
    in the same step, ``with_effect``: its record names no prompt)."""
    settle = answer(
        "send-mail", shows=[ask("send-mail", interrupt_id="sub:send-mail:bo")], ran=("send-mail",)
    )
    settle["expected"]["served"] = [["send-mail", "orchestrator/mailer", due_for]]
    record = {"action": "send-mail", "agent": "orchestrator/mailer", "tool_use_id": "call-1"}
    settle["executions"] = [{**record, "prompt": ran_for} if records_name_calls else record]
    if with_effect:
        lookup = {"effect": "lookup", "agent": "orchestrator/mailer", "tool_use_id": "call-2"}
        settle["executions"].insert(0, lookup)
    return history(
        run(shows=[ask("send-mail"), ask("send-mail", interrupt_id="sub:send-mail:bo")]),
        settle,
        tree=MAILER,
    )


def test_i2_an_approval_runs_the_call_it_was_meant_for() -> None:
    assert violations("I2", twin_calls_answered(ran_for="mail Ana", due_for="mail Ana")) == []


def test_i2_an_approval_delivered_to_the_twin_call_names_both_calls() -> None:
    found = violations("I2", twin_calls_answered(ran_for="mail Bo", due_for="mail Ana"))

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (
            1,
            "send-mail runs for orchestrator/mailer 'mail Ana'",
            "send-mail ran for orchestrator/mailer 'mail Bo': the approval reached a twin call",
        )
    ]


def test_i2_per_call_reads_past_an_ordinary_tools_record_in_the_same_step() -> None:
    """An effect's record names no prompt; it is I15's, and must not turn the per-call reading
    of the protected actions' records off."""
    found = violations(
        "I2", twin_calls_answered(ran_for="mail Bo", due_for="mail Ana", with_effect=True)
    )

    assert [v.seen for v in found] == [
        "send-mail ran for orchestrator/mailer 'mail Bo': the approval reached a twin call"
    ]


def test_i2_a_ledger_that_does_not_name_the_call_is_judged_by_label_only() -> None:
    unnamed = twin_calls_answered(ran_for="mail Bo", due_for="mail Ana", records_name_calls=False)

    assert violations("I2", unnamed) == []


TWIN_MAILERS = {
    "name": "orchestrator",
    "sub_agents": [
        {
            "name": "mailer",
            "prompts": {"mail Ana": {"answer": "mailed Ana"}, "mail Bo": {"answer": "mailed Bo"}},
        }
    ],
    "turns": [
        [
            {"tool": "mailer", "id": "call-1", "prompt": "mail Ana"},
            {"tool": "mailer", "id": "call-2", "prompt": "mail Bo"},
        ]
    ],
}


def twin_results(results: dict[str, str] | None) -> History:
    """Twin calls of the mailer (mail Ana, mail Bo) finish after a restart; the orchestrator's
    next request carries ``results`` for them (None: journaled without results)."""
    follow_up = request("orchestrator", 3)
    if results is not None:
        follow_up["results"] = {key: f"{marker('x', 1)} {text}" for key, text in results.items()}
    return history(
        run(shows=[ask("send-a"), ask("send-b")]),
        restart(expect_pending=[("send-a", 1), ("send-b", 1)]),
        answer("send-a", "send-b", requests=[follow_up]),
        tree=TWIN_MAILERS,
    )


def test_i2_each_call_gets_its_own_result() -> None:
    own = twin_results({"call-1": "mailed Ana", "call-2": "mailed Bo"})

    assert violations("I2", own) == []


def test_i2_results_crossed_between_twin_calls_name_both_calls_and_both_texts() -> None:
    found = violations("I2", twin_results({"call-1": "mailed Bo", "call-2": "mailed Ana"}))

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (
            2,
            "orchestrator's model gets the result of orchestrator/mailer 'mail Ana' "
            "(toolUseId 'call-1'): 'mailed Ana'",
            "orchestrator's model got 'mailed Bo' under toolUseId 'call-1': the result of "
            "orchestrator/mailer 'mail Bo' (toolUseId 'call-2'), returned to the wrong call",
        ),
        (
            2,
            "orchestrator's model gets the result of orchestrator/mailer 'mail Bo' "
            "(toolUseId 'call-2'): 'mailed Bo'",
            "orchestrator's model got 'mailed Ana' under toolUseId 'call-2': the result of "
            "orchestrator/mailer 'mail Ana' (toolUseId 'call-1'), returned to the wrong call",
        ),
    ]


def test_i2_one_result_given_to_both_calls_is_the_wrong_result_for_one() -> None:
    found = violations("I2", twin_results({"call-1": "mailed Bo", "call-2": "mailed Bo"}))

    assert [v.seen.split(":")[0] for v in found] == [
        "orchestrator's model got 'mailed Bo' under toolUseId 'call-1'"
    ]


def test_i2_a_call_without_a_result_is_flagged() -> None:
    found = violations("I2", twin_results({"call-1": "mailed Ana"}))

    assert [v.seen for v in found] == [
        "orchestrator's model got no result under toolUseId 'call-2'"
    ]


def test_i2_a_result_that_is_no_calls_answer_is_not_judged_as_delivery() -> None:
    """An error result (a refused call, a failed sub-agent) is no call's answer: other checkers
    and the expected outcome judge the failure; a request journaled without results, none."""
    failed = twin_results({"call-1": "mailed Ana", "call-2": "Agent error: provider down"})

    assert violations("I2", failed) == []
    assert violations("I2", twin_results(None)) == []


# what the oracle records where the twins' caller's turn ends: each call due its answer
RETURNED = [
    ["orchestrator", "go", 1, "call-1", "mailed Ana"],
    ["orchestrator", "go", 1, "call-2", "mailed Bo"],
]


def returned_at(index: int, history_: History, returned: list[list[Any]]) -> History:
    """``history_`` with the oracle's ``returned`` recorded in the expectation of step ``index``."""
    steps = list(history_.steps)
    steps[index] = replace(steps[index], expected={**steps[index].expected, "returned": returned})
    return replace(history_, steps=tuple(steps))


def test_i2_an_error_where_the_call_was_due_its_answer_is_flagged_with_what_it_got() -> None:
    """The oracle says call-2 runs to its answer: an error result in its place (a second call
    turned away by a busy sub-agent) is an answer that never reached its caller."""
    failed = twin_results({"call-1": "mailed Ana", "call-2": "Agent 'mailer' is busy"})

    found = violations("I2", returned_at(2, failed, RETURNED))

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (
            2,
            "orchestrator's model gets the result of orchestrator/mailer 'mail Bo' "
            "(toolUseId 'call-2'): 'mailed Bo'",
            "orchestrator's model got \"Agent 'mailer' is busy\" under toolUseId 'call-2', not "
            "the call's answer",
        )
    ]


def test_i2_an_error_is_judged_whichever_step_the_oracle_ends_the_turn_in() -> None:
    """The target ended the caller's turn a step sooner than the scenario says (the call that
    had to ask was turned away): its result is still judged against the oracle's."""
    failed = twin_results({"call-1": "mailed Ana", "call-2": "Agent 'mailer' is busy"})

    found = violations("I2", returned_at(1, failed, RETURNED))

    assert [v.step for v in found] == [2]


def test_i2_an_error_is_not_judged_where_the_call_may_end_without_its_answer() -> None:
    """None: turned away by its busy preserve_context sub-agent, gated off, or retried; and a
    key the scenario gives both an answer and none (calls alike in all four) is left alone."""
    failed = twin_results({"call-1": "mailed Ana", "call-2": "Agent 'mailer' is busy"})
    refused = [RETURNED[0], ["orchestrator", "go", 1, "call-2", None]]
    both = [*RETURNED, ["orchestrator", "go", 1, "call-2", None]]

    assert violations("I2", returned_at(2, failed, refused)) == []
    assert violations("I2", returned_at(2, failed, both)) == []


def told(result: str | None, outcome: str | None = "ran") -> History:
    """worker_a's action deploy-a (toolUseId t-a) is approved after a restart and ``outcome``
    is what the oracle says it did; worker_a's next request carries ``result`` for it (None:
    none at all)."""
    follow_up = request("orchestrator/worker_a", 3)
    follow_up["results"] = {} if result is None else {"t-a": f"{marker('x', 1)} {result}"}
    acted = [["orchestrator/worker_a", "do your part", 1, "t-a", "deploy-a", outcome]]
    answered = answer("deploy-a", ran=("deploy-a",), requests=[follow_up])
    answered = {**answered, "expected": {**answered["expected"], "acted": acted}}
    return history(
        run(shows=[ask("deploy-a")]), restart(expect_pending=[("deploy-a", 1)]), answered
    )


def test_i2_an_agent_told_its_action_ran_as_it_did_is_right() -> None:
    assert violations("I2", told("deploy-a: done")) == []
    assert violations("I2", told("deploy-a: refused", "refused")) == []
    assert violations("I2", told("denied by the user", "refused")) == []


def test_i2_an_action_that_ran_reported_otherwise_to_its_agent_is_flagged() -> None:
    """What the model is told is all it knows of the action: a run reported as an error (or not
    at all) is one it may do again or report as not done."""
    found = violations("I2", told("Error: tool failed"))
    assert [(v.step, v.expected, v.seen) for v in found] == [
        (
            2,
            "orchestrator/worker_a's model is told deploy-a ran (toolUseId 't-a'): "
            "'deploy-a: done'",
            "orchestrator/worker_a's model got 'Error: tool failed' under toolUseId 't-a'",
        )
    ]
    assert [v.seen for v in violations("I2", told(None))] == [
        "orchestrator/worker_a's model got no result under toolUseId 't-a'"
    ]


def test_i2_a_refused_action_reported_as_done_is_flagged() -> None:
    found = violations("I2", told("deploy-a: done", "refused"))
    assert [(v.expected, v.seen) for v in found] == [
        (
            "orchestrator/worker_a's model is told deploy-a did not run (toolUseId 't-a')",
            "orchestrator/worker_a's model got 'deploy-a: done' under toolUseId 't-a': told it ran",
        )
    ]


def test_i2_an_action_a_retry_may_have_replaced_is_not_judged() -> None:
    assert violations("I2", told("Error: tool failed", None)) == []


def test_i2_what_an_agent_is_told_is_judged_only_where_the_scenario_ends_its_turn() -> None:
    """A target whose steps differ from the scenario's (the turn ends a step sooner, or what ran
    is wrong) has that reported by the runs and the pending questions; the result a request
    carries then says what the target did, not what the scenario would have."""
    early = told("Error: tool failed")
    steps = list(early.steps)
    acted = steps[2].expected.pop("acted")
    steps[1] = replace(steps[1], expected={**steps[1].expected, "acted": acted})
    assert violations("I2", replace(early, steps=tuple(steps))) == []
    wrong_runs = told("deploy-a: done", "refused")
    last = wrong_runs.steps[2]
    steps = [*wrong_runs.steps[:2], replace(last, expected={**last.expected, "executions": []})]
    assert [v.seen for v in violations("I2", replace(wrong_runs, steps=tuple(steps)))] == [
        "deploy-a ran once: a sibling's action ran"
    ]


def test_i2_after_a_deploy_judges_the_kept_call_and_leaves_the_gone_one_alone() -> None:
    """A deploy renamed the mailer call-2 called: the kept call (call-1, same tool and id) must
    still bring its result; the gone call's question must stay pending, which I3 and I9 judge,
    so its missing result is not I2's."""
    deployed = {
        "name": "orchestrator",
        "sub_agents": [
            {"name": "mailer", "prompts": {"mail Ana": {"answer": "mailed Ana"}}},
            {"name": "courier", "prompts": {"mail Bo": {"answer": "couriered Bo"}}},
        ],
        "turns": [
            [
                {"tool": "mailer", "id": "call-1", "prompt": "mail Ana"},
                {"tool": "courier", "id": "call-2", "prompt": "mail Bo"},
            ]
        ],
    }

    def deployed_with(results: dict[str, str]) -> History:
        follow_up = {**request("orchestrator", 3), "results": results}
        deploy = restart(expect_pending=[("send-a", 1), ("send-b", 1)])
        deploy["step"] = {"restart": {"tree": deployed}}
        return history(
            run(shows=[ask("send-a"), ask("send-b")]),
            deploy,
            answer("send-a", requests=[follow_up]),
            tree=TWIN_MAILERS,
        )

    assert violations("I2", deployed_with({"call-1": f"{marker('x', 1)} mailed Ana"})) == []
    assert [v.seen for v in violations("I2", deployed_with({}))] == [
        "orchestrator's model got no result under toolUseId 'call-1'"
    ]


def test_i2_results_are_judged_for_sub_agent_calls_only() -> None:
    """In a turn that calls an action (call-1) and a sub-agent (call-2), only the sub-agent
    call must have its result: the action's is not the journal's to carry."""

    def with_results(results: dict[str, str]) -> History:
        follow_up = {**request("orchestrator", 3), "results": results}
        return history(run(ran=("approve-budget",), requests=[follow_up]), tree=MIXED)

    assert violations("I2", with_results({"call-2": ANSWER})) == []
    assert [v.seen for v in violations("I2", with_results({}))] == [
        "orchestrator's model got no result under toolUseId 'call-2'"
    ]


# --- I3 partial answers -------------------------------------------------------------------------


def test_i1_a_question_shown_without_its_name() -> None:
    unnamed = {**ask("deploy-a"), "name": None}
    bad = history(run(shows=[unnamed, ask("deploy-b")]), answer("deploy-a", shows=[unnamed]))

    found = violations("I1", bad)

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (0, "deploy-a#1 shown as 'approval'", "deploy-a#1 shown as None")
    ]


@pytest.mark.parametrize(
    ("expected", "seen", "said"),
    [
        (["a#1", "b#1"], ["a#1"], "pending a#1 (missing b#1)"),
        (["a#1"], ["a#1", "a#1"], "pending a#1, a#1 (extra a#1)"),
        (["b#1", "a#1"], ["a#2"], "pending a#2 (missing b#1, a#1; extra a#2)"),
        ([], ["a#1"], "pending a#1 (extra a#1)"),
        (["a#1", "a#1"], [], "pending nothing (missing a#1, a#1)"),
        (["a#1"], ["a#1"], "pending a#1"),
    ],
)
def test_what_is_pending_names_what_is_missing_and_what_is_extra(
    expected: list[str], seen: list[str], said: str
) -> None:
    """A witness can then say which way a bug goes: a question lost, or one too many (counted as
    a multiset, in the order each list gives)."""
    assert pending_texts(expected, seen) == ("pending " + (", ".join(expected) or "nothing"), said)


def test_i3_answering_one_settles_the_other_too() -> None:
    steps = colliding_ids()
    steps[1] = answer(
        "deploy-a", ran=("deploy-a",), stop="interrupt", expect_pending=[("deploy-b", 1)]
    )

    found = violations("I3", history(*steps))

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (1, "pending deploy-b#1", "pending nothing (missing deploy-b#1)"),
        (1, "deploy-b#1 stays pending as 'sub:deploy-b:1'", "deploy-b#1 no longer pending"),
    ]


def test_i3_an_unanswered_interrupt_comes_back_under_another_id() -> None:
    steps = colliding_ids()
    steps[1] = answer(
        "deploy-a", shows=[ask("deploy-b", interrupt_id="renamed")], ran=("deploy-a",)
    )

    found = violations("I3", history(*steps))

    assert steps_of(found) == [1]
    assert found[0].seen == "deploy-b#1 now pending as 'renamed'"


# --- I4 at most once ----------------------------------------------------------------------------


def test_i4_an_answer_to_a_finished_turn_runs_the_action_again() -> None:
    bad = history(
        run(shows=[ask("deploy-a")]),
        answer("deploy-a", ran=("deploy-a",)),
        answer("deploy-a", ran=("deploy-a",), expect_ran=(), expect_error="allowed"),
    )

    found = violations("I4", bad)

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (2, "deploy-a runs at most once so far", "deploy-a ran 2 times")
    ]


def test_i4_counts_a_run_of_a_refused_resend_so_a_later_run_is_a_second_one() -> None:
    """The resend that runs the action again is I14's (it had to be refused); I4 counts that
    run all the same, so running it once more later is running it a third time."""
    bad = history(
        run(shows=[ask("deploy-a")]),
        answer("deploy-a", ran=("deploy-a",)),
        resend("deploy-a", ran=("deploy-a",)),
        answer("deploy-a", ran=("deploy-a",), expect_ran=(), expect_error="allowed"),
    )

    assert [(v.invariant, v.step, v.seen) for v in check(bad) if v.invariant in ("I4", "I14")] == [
        ("I4", 3, "deploy-a ran 3 times"),
        ("I14", 2, "ran deploy-a"),
    ]


def test_i4_an_action_runs_during_a_restart() -> None:
    steps = colliding_ids()
    steps[2] = restart(expect_pending=[("deploy-b", 1)], ran=("deploy-b",))

    found = violations("I4", history(*steps))

    assert [(v.step, v.expected) for v in found] == [
        (2, "nothing runs during a restart"),
        (3, "deploy-b runs at most once so far"),
    ]


def test_i4_an_action_never_approved_runs() -> None:
    bad = history(run(shows=[ask("deploy-a")], ran=("deploy-b",), expect_ran=()))

    found = violations("I4", bad)

    assert [(v.step, v.expected) for v in found] == [(0, "deploy-b never runs (never approved)")]


# --- I5 restart transparency --------------------------------------------------------------------


def test_i5_after_a_restart_the_approval_is_lost() -> None:
    steps = colliding_ids()
    control = [step for step in steps if step["kind"] != "restart"]
    steps[3] = answer(
        "deploy-b", shows=[ask("deploy-b")], expect_ran=("deploy-b",), expect_pending=[]
    )

    found = violations("I5", with_control(*steps, control=control))

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (3, "ran: deploy-b (as without restarts)", "ran: nothing")
    ]


def test_i5_a_run_with_fewer_steps_than_its_control() -> None:
    steps = colliding_ids()
    control = [step for step in steps if step["kind"] != "restart"]

    found = violations("I5", with_control(*steps[:3], control=control))

    assert steps_of(found) == [None]
    assert found[0].seen == "2 steps"


# --- I6 continuation fidelity -------------------------------------------------------------------


def test_i6_a_restored_sub_agent_forgets_its_model_state() -> None:
    steps = colliding_ids()
    control = [step for step in steps if step["kind"] != "restart"]
    control[2] = {
        **control[2],
        "requests": [request("orchestrator/worker_b", 3, response_id="resp-1")],
    }

    found = violations("I6", with_control(*steps, control=control))

    assert steps_of(found) == [3]
    assert 'model state {"response_id": "resp-1"} (as without restarts)' in found[0].expected
    assert found[0].seen.endswith("with 3 messages, model state {}")


# --- I7 bounded continuation --------------------------------------------------------------------


def test_i7_a_continuation_is_still_stored_after_the_turn_ends() -> None:
    steps = colliding_ids()
    steps[3] = {**steps[3], "stored": stored(48, worker_b=760)}

    found = violations("I7", history(*steps))

    assert [(v.step, v.seen) for v in found] == [(3, "stored: worker_b (760 B)")]


def test_i7_an_ephemeral_sub_agent_starts_a_later_call_with_earlier_calls_history() -> None:
    def call(messages: int) -> list[Step]:
        return [
            run(
                shows=[ask("deploy-a")],
                requests=[request("orchestrator/worker_a", messages, turn=0)],
            ),
            answer("deploy-a", ran=("deploy-a",), stored=stored(48)),
        ]

    found = violations("I7", history(*call(1), *call(1), *call(5), *call(9)))

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (
            4,
            "orchestrator/worker_a starts each call from its prompt alone (1 message)",
            "orchestrator/worker_a started a call with 5 messages",
        )
    ]


def test_i7_an_ephemeral_sub_agent_starts_a_later_call_with_an_earlier_calls_provider_state() -> (
    None
):
    def call(**model_state: Any) -> list[Step]:
        return [
            run(
                shows=[ask("deploy-a")],
                requests=[request("orchestrator/worker_a", 1, turn=0, **model_state)],
            ),
            answer("deploy-a", ran=("deploy-a",), stored=stored(48)),
        ]

    fresh = history(*call(), *call())
    leaked = history(*call(), *call(response_id="resp-1"), *call(response_id="resp-2"))

    assert violations("I7", fresh) == []
    assert [(v.step, v.expected, v.seen) for v in violations("I7", leaked)] == [
        (
            2,
            'orchestrator/worker_a: the first request of its call "do your part" carries no '
            "provider state from an earlier call",
            'orchestrator/worker_a: the first request of its call "do your part" carried '
            "provider state (response_id) from an earlier call",
        )
    ]


def test_i7_provider_state_on_an_ephemeral_sub_agents_very_first_request_is_named_so() -> None:
    first = request("orchestrator/worker_a", 1, turn=0, response_id="resp-0", region="eu")
    found = violations("I7", history(run(shows=[ask("deploy-a")], requests=[first])))

    assert [v.seen for v in found] == [
        'orchestrator/worker_a: the first request of its call "do your part" carried '
        "provider state (region, response_id) before any call of its own"
    ]


def test_i7_judges_fresh_calls_on_a_target_that_does_not_measure_continuations() -> None:
    """The journal shows what a call started with on any target; the stored sizes only where the
    target measures them (``continuation_bytes``)."""
    steps = colliding_ids()
    steps[3] = {**steps[3], "stored": stored(1500, worker_b=760)}
    leaked = run(
        shows=[ask("deploy-a")],
        requests=[request("orchestrator/worker_a", 1, turn=0, response_id="resp-1")],
    )
    unmeasured = frozenset(CAPABILITIES) - {"continuation_bytes"}

    assert violations("I7", history(*steps)) != []  # measured, the sizes are judged
    assert violations("I7", history(*steps, capabilities=unmeasured)) == []
    assert [v.seen for v in violations("I7", history(leaked, capabilities=unmeasured))] == [
        'orchestrator/worker_a: the first request of its call "do your part" carried '
        "provider state (response_id) before any call of its own"
    ]


def test_i7_a_preserve_context_sub_agent_may_carry_its_history() -> None:
    grows = history(
        run(shows=[ask("invite")], requests=[request("orchestrator/secretary", 1)]),
        answer("invite", ran=("invite",), stored=stored(48)),
        run(shows=[ask("invite")], requests=[request("orchestrator/secretary", 5, turn=0)]),
        tree=SECRETARY,
    )

    assert violations("I7", grows) == []


def test_i7_judges_each_call_by_whether_the_tree_in_force_keeps_its_history() -> None:
    """A deploy that turns preserve_context on lets the sub-agent's later calls carry a history;
    one that turns it off makes them start fresh (the calls before it are judged as they were)."""
    kept = {**SECRETARY, "sub_agents": [{**SECRETARY["sub_agents"][0], "preserve_context": True}]}
    ephemeral = {**kept, "sub_agents": [{**kept["sub_agents"][0], "preserve_context": False}]}

    def deployed(before: dict[str, Any], after: dict[str, Any]) -> History:
        deploy = restart()
        deploy["step"] = {"restart": {"tree": after}}
        return history(
            run(shows=[ask("invite")], requests=[request("orchestrator/secretary", 1)]),
            answer("invite", ran=("invite",), stored=stored(48)),
            deploy,
            run(shows=[ask("invite")], requests=[request("orchestrator/secretary", 5, turn=0)]),
            tree=before,
        )

    assert violations("I7", deployed(ephemeral, kept)) == []
    assert [(v.step, v.seen) for v in violations("I7", deployed(kept, ephemeral))] == [
        (3, "orchestrator/secretary started a call with 5 messages")
    ]


def test_i7_the_root_record_does_not_shrink_back() -> None:
    steps = colliding_ids()
    steps[3] = {**steps[3], "stored": stored(1500)}

    found = violations("I7", history(*steps))

    assert [(v.step, v.expected) for v in found] == [
        (3, "the root's record shrinks back to at most 1400 B")
    ]


# --- I8 private continuation --------------------------------------------------------------------


def test_i8_a_sub_agents_state_appears_in_a_public_event() -> None:
    snapshot = {
        "type": "snapshot",
        "agent": "orchestrator",
        "state": {"secret": "canary-7f3a private"},
    }
    bad = history(
        run(shows=[ask("file-taxes")]),
        answer("file-taxes", ran=("file-taxes",), events=[{"type": "result"}, snapshot]),
        tree=SECRET,
    )

    found = violations("I8", bad)

    assert [(v.step, v.seen) for v in found] == [
        (1, "event 1 (snapshot of orchestrator) carries 'canary-7f3a private'")
    ]


def test_i8_a_sub_agents_model_state_or_a_stored_turn_appears_in_a_public_event() -> None:
    bad = history(
        run(
            shows=[ask("file-taxes")],
            events=[
                {
                    "type": "interrupt",
                    "context": {"sub_agent_turns": {"call-1": {"schema_version": "1.0"}}},
                }
            ],
        ),
        answer(
            "file-taxes",
            ran=("file-taxes",),
            requests=[request("orchestrator/accountant", 3, response_id="resp-9e1")],
            events=[{"type": "result", "previous_response_id": "resp-9e1"}],
        ),
        tree=SECRET,
    )

    found = violations("I8", bad)

    assert [(v.step, v.seen) for v in found] == [
        (0, "event 0 (interrupt of ?) carries key 'schema_version', key 'sub_agent_turns'"),
        (1, "event 0 (result of ?) carries 'resp-9e1'"),
    ]


def test_i8_a_stored_turn_published_again_at_the_resume_is_a_violation_live_streaming_is_not() -> (
    None
):
    asked, final = marker("do your part", 0), marker("do your part", 1)  # tool call, then answer
    first = run(
        shows=[ask("file-taxes")],
        requests=[request("orchestrator/accountant", 1, turn=0)],
        events=[{"type": "stream", "text": asked}],  # live: written in this step
    )

    def resumed(*requests: dict[str, Any]) -> Step:
        return answer(
            "file-taxes",
            ran=("file-taxes",),
            requests=list(requests),
            events=[{"type": "tool_stream", "messages": [asked, "approve", final]}],
        )

    again = history(first, resumed(request("orchestrator/accountant", 3, turn=1)), tree=SECRET)
    replayed = resumed(
        request("orchestrator/accountant", 1, turn=0), request("orchestrator/accountant", 3, turn=1)
    )
    assert [(v.step, v.seen) for v in violations("I8", again)] == [
        (1, f"event 0 (tool_stream of ?) carries stored message {asked!r}")
    ]
    assert violations("I8", history(first, replayed, tree=SECRET)) == []  # the turn played again
    # a sub-agent's final answer is its parent's tool result, not a stored turn of its own
    finished = run(
        requests=[
            request("orchestrator/accountant", 1, turn=0),
            request("orchestrator/accountant", 3, turn=1),
        ]
    )
    quoted = run(events=[{"type": "result", "text": final}])
    assert violations("I8", history(finished, quoted, tree=SECRET)) == []
    # another agent asked the same (prompt, turn) and answered at once: its answer starts with
    # the same marker, but a tool-calling turn's text is the marker alone
    elsewhere = run(events=[{"type": "message", "text": f"{asked} done"}])
    assert violations("I8", history(first, elsewhere, tree=SECRET)) == []


# --- I9 loud, safe failure ----------------------------------------------------------------------


def failing_answer(**fields: Any) -> Step:
    fields.setdefault("shows", [ask("deploy-a")])
    fields.setdefault("stop", None)
    fields.setdefault("error", "ContinuationError: unsupported schema version '2.0'")
    return answer(
        "deploy-a",
        expect_stop=None,
        expect_error="required",
        expect_pending=[("deploy-a", 1)],
        **fields,
    )


def test_i9_a_failure_that_is_silent_and_drops_the_approval() -> None:
    bad = history(
        run(shows=[ask("deploy-a")]),
        restart(kind="corrupt", expect_pending=[("deploy-a", 1)]),
        failing_answer(shows=[], stop="end_turn", error=None),
    )

    found = violations("I9", bad)

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (2, "an error is raised or logged", "failure was silent"),
        (
            2,
            "still pending deploy-a#1 as 'sub:deploy-a:1'",
            "pending nothing (missing deploy-a#1 as 'sub:deploy-a:1')",
        ),
    ]


def test_i9_a_silent_failure_names_why_the_step_had_to_fail() -> None:
    """The oracle's cause is part of the text, so a finding's witness excuses a silent failure
    for its own cause only (a restart that lost a turn is not a corrupted store)."""
    silent = failing_answer(shows=[], stop="end_turn", error=None)
    silent["expected"]["failure_cause"] = "continuation corrupted (foreign)"
    bad = history(run(shows=[ask("deploy-a")]), restart(kind="corrupt"), silent)

    found = [v for v in violations("I9", bad) if v.seen == "failure was silent"]

    assert [v.expected for v in found] == [
        "an error is raised or logged: continuation corrupted (foreign)"
    ]


def test_i9_a_failure_that_half_applies_and_shows_a_stale_response() -> None:
    bad = history(
        run(shows=[ask("deploy-a")]),
        restart(kind="corrupt", expect_pending=[("deploy-a", 1)]),
        failing_answer(
            shows=[ask("deploy-a", response="approve")], ran=("deploy-a",), expect_ran=()
        ),
    )

    found = violations("I9", bad)

    assert [(v.step, v.seen) for v in found] == [(2, "ran deploy-a")]


def test_a_stale_response_on_a_failed_step_is_reported_once_by_i12() -> None:
    bad = history(
        run(shows=[ask("deploy-a")]),
        restart(kind="corrupt", expect_pending=[("deploy-a", 1)]),
        failing_answer(shows=[ask("deploy-a", response="approve")]),
    )

    stale = [v for v in check(bad) if "response 'approve'" in v.seen]

    assert [(v.invariant, v.step, v.seen) for v in stale] == [
        ("I12", 2, "deploy-a#1 shown with response 'approve'")
    ]


# --- I10 isolation ------------------------------------------------------------------------------


def test_i10_a_sub_agent_raises_another_callers_interrupt_again() -> None:
    bad = history(
        run(
            shows=[ask("deploy-a"), ask("deploy-a", interrupt_id="other-caller"), ask("deploy-b")],
            expect_pending=[("deploy-a", 1), ("deploy-b", 1)],
        )
    )

    found = violations("I10", bad)

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (0, "deploy-a pending once", "deploy-a pending 2 times")
    ]


# --- I11 depth ----------------------------------------------------------------------------------


def undelivered(tree: dict[str, Any], label: str) -> History:
    return history(run(shows=[ask(label)]), answer(label, expect_ran=(label,)), tree=tree)


def test_i11_an_approval_at_depth_three_is_not_delivered() -> None:
    found = violations("I11", undelivered(DEEP, "drop-table"))

    assert [(v.step, v.expected, v.seen) for v in found] == [(1, "ran drop-table", "ran nothing")]


def test_i11_an_ordinary_interrupt_mixed_with_nested_ones_is_lost() -> None:
    bad = history(
        run(shows=[ask("place-order")], expect_pending=[("approve-budget", 1), ("place-order", 1)]),
        tree=MIXED,
    )

    found = violations("I11", bad)

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (0, "pending approve-budget#1", "pending nothing (missing approve-budget#1)")
    ]


def test_i11_says_nothing_about_a_shallow_unmixed_tree() -> None:
    shallow = undelivered(TWO_WORKERS, "deploy-a")

    assert violations("I2", shallow) != []
    assert violations("I11", shallow) == []


# --- I12 fresh questions ------------------------------------------------------------------------


def test_i12_a_re_raised_interrupt_keeps_the_earlier_response_and_id() -> None:
    bad = history(
        run(shows=[ask("deploy-a", of=2, interrupt_id="q")]),
        answer("deploy-a", shows=[ask("deploy-a", 2, interrupt_id="q", response="approve")]),
    )

    found = violations("I12", bad)

    assert [(v.step, v.seen) for v in found] == [
        (1, "deploy-a#2 shown with response 'approve'"),
        (1, "deploy-a#2 asked under 'q', the id of deploy-a#1"),
    ]


# --- I13 every step ends visibly ----------------------------------------------------------------


def test_i13_a_step_that_ends_with_nothing_at_all() -> None:
    bad = history(
        run(stop=None, expect_pending=[("deploy-a", 1), ("deploy-b", 1)], expect_stop="interrupt")
    )

    found = violations("I13", bad)

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (
            0,
            "an interrupt with its questions, a final answer, or an error",
            "no stop reason, no error, no final answer, pending nothing",
        )
    ]


def test_i13_a_claimed_ending_with_nothing_behind_it() -> None:
    bad = history(
        run(stop="interrupt", expect_pending=[("deploy-a", 1)]),
        run(stop="end_turn", final=None, expect_error="allowed"),
        run(stop="end_turn", shows=[ask("deploy-a")], expect_error="allowed"),
        resend("deploy-a", error=" "),
        resend("deploy-a", stop="cancelled", error=None),
    )

    found = violations("I13", bad)

    assert [(v.step, v.seen) for v in found] == [
        (0, "stop reason interrupt, no error, no final answer, pending nothing"),
        (1, "stop reason end_turn, no error, no final answer, pending nothing"),
        (
            2,
            "stop reason end_turn, no error, final answer 'done', pending deploy-a#1 as "
            "'sub:deploy-a:1'",
        ),
        (3, "no stop reason, an empty error, no final answer, pending nothing"),
        (4, "stop reason cancelled, no error, no final answer, pending nothing"),
    ]


def test_i13_a_loud_failure_is_a_visible_ending_whatever_it_shows() -> None:
    good = history(
        run(shows=[ask("deploy-a")]),
        run(
            stop=None,
            error="AgentError: answer the pending questions first",
            expect_error="allowed",
            expect_stop=None,
            expect_pending=[("deploy-a", 1)],
        ),
        answer("deploy-a", ran=("deploy-a",)),
        resend("deploy-a"),
        restart(),
    )

    assert violations("I13", good) == []


# --- I14 unknown answers are refused -------------------------------------------------------------


def unknown_answer(**fields: Any) -> Step:
    """An answer naming no pending question (an id nothing showed), as the oracle expects it:
    refused loudly, with the question asked before still pending and nothing run."""
    fields.setdefault("shows", [ask("deploy-a")])
    fields.setdefault("stop", None)
    fields.setdefault("error", "AgentError: agent 'orchestrator' has no pending interrupt ['x']")
    fields.setdefault("expect_pending", [("deploy-a", 1)])
    return conversation(
        "answer",
        expect_stop=None,
        expect_error="required",
        expect_unknown=True,
        expect_ran=(),
        **fields,
    )


ONE_WORKER = agent("orchestrator", agent("worker_a", actions=("deploy-a",)))


def test_i14_an_unknown_answer_taken_as_the_only_questions_answer() -> None:
    """LangGraph's way: the answer becomes the resume value of the one pending question, which
    is settled (here refused, the value not being an approval) with no error."""
    bad = history(
        run(shows=[ask("deploy-a")]),
        unknown_answer(shows=[], stop="end_turn", error=None),
        tree=ONE_WORKER,
    )

    found = violations("I14", bad)

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (
            1,
            "the answer is refused loudly (it names no pending question)",
            "accepted without an error (stop reason end_turn)",
        ),
        (
            1,
            "still pending deploy-a#1 as 'sub:deploy-a:1'",
            "pending nothing (missing deploy-a#1 as 'sub:deploy-a:1')",
        ),
    ]


def test_i14_a_silent_acceptance_names_which_answer_it_was() -> None:
    """The oracle's reason is part of the text, so a finding's witness excuses its own kind of
    answer only (an answer re-sent after it was carried out is not an id never shown)."""
    resent = unknown_answer(stop="interrupt", error=None)
    resent["expected"]["failure_cause"] = "it re-sends the answer to deploy-a, no longer pending"
    bad = history(run(shows=[ask("deploy-a")]), resent, tree=ONE_WORKER)

    assert [v.expected for v in violations("I14", bad)] == [
        "the answer is refused loudly (it re-sends the answer to deploy-a, no longer pending)"
    ]


def test_i14_an_unknown_answer_ignored_silently_is_reported_once() -> None:
    bad = history(
        run(shows=[ask("deploy-a")]),
        unknown_answer(stop="interrupt", error=None),
        tree=ONE_WORKER,
    )

    assert [(v.invariant, v.step, v.seen) for v in check(bad)] == [
        ("I14", 1, "accepted without an error (stop reason interrupt)")
    ]


def test_i14_a_stale_answer_refused_loudly_but_run_again() -> None:
    bad = history(
        run(shows=[ask("deploy-a"), ask("deploy-b")]),
        answer("deploy-a", shows=[ask("deploy-b")], ran=("deploy-a",)),
        resend("deploy-a", shows=[ask("deploy-b")], ran=("deploy-a",)),
    )

    assert [(v.invariant, v.step, v.expected, v.seen) for v in check(bad)] == [
        ("I14", 2, "nothing runs", "ran deploy-a")
    ]


def test_i14_a_question_renamed_by_a_refusal() -> None:
    bad = history(
        run(shows=[ask("deploy-a")]),
        unknown_answer(shows=[ask("deploy-a", interrupt_id="renamed")]),
        tree=ONE_WORKER,
    )

    found = violations("I14", bad)

    assert [(v.step, v.seen) for v in found] == [
        (
            1,
            "pending deploy-a#1 as 'renamed' "
            "(missing deploy-a#1 as 'sub:deploy-a:1'; extra deploy-a#1 as 'renamed')",
        )
    ]


def test_i14_compares_with_what_the_step_before_left_pending_even_a_failed_one() -> None:
    """A question an earlier failure lost (the adapter read the framework's state after it) is
    that step's doing, not the refusal's."""
    lost = run(
        stop=None,
        error="ValueError: Found AIMessages with tool_calls that do not have a ToolMessage",
        expect_error="allowed",
        expect_stop=None,
        expect_pending=[("deploy-a", 1)],
    )
    quiet = history(
        run(shows=[ask("deploy-a")]),
        lost,
        unknown_answer(shows=[], error=lost["observed"]["error"]),
        tree=ONE_WORKER,
    )

    assert violations("I14", quiet) == []


def test_i14_a_loud_refusal_that_changes_nothing_passes_every_checker() -> None:
    good = history(
        run(shows=[ask("deploy-a"), ask("deploy-b")]),
        unknown_answer(shows=[ask("deploy-a"), ask("deploy-b")], expect_pending=None),
        answer("deploy-a", shows=[ask("deploy-b")], ran=("deploy-a",)),
        resend("deploy-a", shows=[ask("deploy-b")]),
        answer("deploy-b", ran=("deploy-b",)),
        resend("deploy-b"),
    )

    assert check(good) == []


def test_i14_judges_only_the_steps_the_oracle_says_name_no_pending_question() -> None:
    """A step the oracle did not mark is not I14's, whatever it shows: an answer to a finished
    turn by label names nothing and may fail or not."""
    quiet = history(
        run(shows=[ask("deploy-a")]),
        answer("deploy-a", ran=("deploy-a",)),
        answer("deploy-a", stop="end_turn", expect_error="allowed"),
        tree=ONE_WORKER,
    )

    assert violations("I14", quiet) == []


# --- D differential -----------------------------------------------------------------------------


def test_d_reports_only_the_first_divergence() -> None:
    steps = colliding_ids()
    control = [step for step in steps if step["kind"] != "restart"]
    steps[1] = {**steps[1], "events": [{"type": "message"}]}
    steps[3] = answer("deploy-b", stop="interrupt", shows=[ask("deploy-b")])

    found = violations("D", with_control(*steps, control=control))

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (1, "public events: 0 (as without restarts)", "public events: 1")
    ]


# --- O expected outcome -------------------------------------------------------------------------


def test_o_an_error_where_none_is_allowed_and_a_wrong_ending() -> None:
    bad = history(
        run(
            shows=[ask("deploy-a")], error="ProviderError: missing previous_response_id\ntraceback"
        ),
        answer(
            "deploy-a", ran=("deploy-a",), stop="interrupt", final="nothing", expect_stop="end_turn"
        ),
    )

    found = violations("O", bad)

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (0, "no error", "ProviderError: missing previous_response_id"),
        (1, "stop reason end_turn", "stop reason interrupt"),
        (1, "final answer 'done'", "final answer 'nothing'"),
    ]


def test_o_a_sub_agent_told_something_its_caller_did_not_ask() -> None:
    tree = {**TWO_WORKERS, "turns": [[{"tool": "worker_a", "id": "c1", "prompt": "ship it"}]]}
    told = {**request("orchestrator/worker_a", 1), "prompt": "None"}
    asked = {**request("orchestrator/worker_a", 1), "prompt": "ship it"}

    found = violations(
        "O", history(run(shows=[ask("deploy-a")], requests=[asked, told]), tree=tree)
    )

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (0, "orchestrator/worker_a asked 'ship it'", "orchestrator/worker_a asked 'None'")
    ]


def test_o_a_step_the_file_expects_to_fail_ends_without_an_error() -> None:
    bad = history(
        run(shows=[ask("deploy-a")]),
        unknown_answer(stop="interrupt", error=None),
        unknown_answer(),
        unknown_answer(error=" "),
        tree=ONE_WORKER,
        expect={"errors": [1, 2, 3]},
    )

    found = violations("O", bad)

    assert [(v.step, v.expected, v.seen) for v in found] == [
        (1, "an error (expect)", "no error (stop reason interrupt)"),
        (3, "an error (expect)", "no error"),
    ]


# --- I15 side effects run once -------------------------------------------------------------------

RESEARCHER = {
    "name": "orchestrator",
    "turns": [[{"tool": "researcher", "id": "call-1"}]],
    "sub_agents": [
        {
            "name": "researcher",
            "effects": [{"tool": "lookup"}],
            "actions": [{"tool": "publish", "label": "publish"}],
            "turns": [[{"tool": "lookup", "id": "look-1"}], [{"tool": "publish", "id": "pub-1"}]],
        }
    ],
}
LOOKUP = ("orchestrator/researcher", "lookup", "look-1")


def effects(step: Step, *, ran: tuple[Any, ...] = (), expect: tuple[Any, ...] = ()) -> Step:
    """``step`` with ordinary tools run (in the ledger) and expected (by the oracle)."""
    records = [{"effect": tool, "agent": agent, "tool_use_id": i} for agent, tool, i in ran]
    step["executions"] = step["executions"] + records
    step["expected"] = {**step["expected"], "effects": [list(run) for run in expect]}
    return step


def test_i15_a_lookup_run_once_before_the_question_passes_every_checker() -> None:
    good = history(
        effects(run(shows=[ask("publish")]), ran=(LOOKUP,), expect=(LOOKUP,)),
        effects(restart()),
        effects(answer("publish", ran=("publish",))),
        tree=RESEARCHER,
    )

    assert check(good) == []


def test_i15_a_resumed_sub_agent_runs_its_lookup_again() -> None:
    bad = history(
        effects(run(shows=[ask("publish")]), ran=(LOOKUP,), expect=(LOOKUP,)),
        effects(restart()),
        effects(answer("publish", ran=("publish",)), ran=(LOOKUP,)),
        tree=RESEARCHER,
    )

    assert [(v.step, v.expected, v.seen) for v in violations("I15", bad)] == [
        (
            2,
            "lookup of orchestrator/researcher (toolUseId 'look-1') runs at most once so far",
            "it ran 2 times",
        )
    ]
    assert violations("I4", bad) == []  # a protected action's checker does not count it


def test_i15_a_lookup_during_a_restart_and_one_never_run() -> None:
    early = history(
        effects(run(shows=[ask("publish")]), ran=(LOOKUP,), expect=(LOOKUP,)),
        effects(restart(), ran=(LOOKUP,)),
        tree=RESEARCHER,
    )
    never = history(
        effects(run(shows=[ask("publish")]), expect=(LOOKUP,)),
        effects(answer("publish", ran=("publish",))),
        tree=RESEARCHER,
    )

    assert [(v.step, v.seen) for v in violations("I15", early)] == [(1, "it ran 2 times")]
    assert [(v.step, v.expected, v.seen) for v in violations("I15", never)] == [
        (
            1,
            "lookup of orchestrator/researcher (toolUseId 'look-1') runs once over the scenario",
            "it never ran",
        )
    ]


def test_i15_a_lookup_that_runs_before_its_turn_is_played() -> None:
    bad = history(
        effects(run(shows=[ask("publish")]), ran=(LOOKUP,)),
        effects(answer("publish", ran=("publish",)), expect=(LOOKUP,)),
        tree=RESEARCHER,
    )

    assert [(v.step, v.expected, v.seen) for v in violations("I15", bad)] == [
        (
            0,
            "lookup of orchestrator/researcher (toolUseId 'look-1') does not run yet",
            "it ran once",
        )
    ]


def test_i15_is_not_applied_to_a_target_without_ordinary_tools() -> None:
    bad = history(
        effects(run(shows=[ask("publish")]), ran=(LOOKUP, LOOKUP), expect=(LOOKUP,)),
        tree=RESEARCHER,
        capabilities=frozenset(CAPABILITIES) - {"ordinary_tools"},
    )

    assert violations("I15", bad) == []


# --- I17 state carried ---------------------------------------------------------------------------

TALLIED = {
    "name": "orchestrator",
    "turns": [[{"tool": "researcher", "id": "call-1"}]],
    "sub_agents": [
        {
            "name": "researcher",
            "effects": [{"tool": "lookup", "tally": True}],
            "actions": [{"tool": "publish", "label": "publish"}],
            "turns": [
                [{"tool": "lookup", "id": "look-1"}],
                [{"tool": "publish", "id": "pub-1"}],
                [{"tool": "lookup", "id": "look-2"}],
            ],
        }
    ],
}
AGENT = "orchestrator/researcher"


def tallied(step: Step, *, read: tuple[Any, ...] = (), expect: tuple[Any, ...] = ()) -> Step:
    """``step`` with tally runs: each read ``(toolUseId, value)`` in the ledger, each expected
    ``(toolUseId, count)`` by the oracle (effects and tallies alike)."""
    records = [
        {"effect": "lookup", "agent": AGENT, "tool_use_id": i}
        | ({} if seen is None else {"seen": seen})
        for i, seen in read
    ]
    step["executions"] = step["executions"] + records
    step["expected"] = {
        **step["expected"],
        "effects": [[AGENT, "lookup", i] for i, _ in expect],
        "tallies": [[AGENT, "lookup", i, count] for i, count in expect],
    }
    return step


def test_i17_state_read_back_after_a_restart_passes_every_checker() -> None:
    good = history(
        tallied(run(shows=[ask("publish")]), read=(("look-1", 0),), expect=(("look-1", 0),)),
        tallied(restart()),
        tallied(
            answer("publish", ran=("publish",)), read=(("look-2", 1),), expect=(("look-2", 1),)
        ),
        tree=TALLIED,
    )

    assert check(good) == []


def test_i17_state_dropped_on_restore_reads_its_initial_count() -> None:
    bad = history(
        tallied(run(shows=[ask("publish")]), read=(("look-1", 0),), expect=(("look-1", 0),)),
        tallied(restart()),
        tallied(
            answer("publish", ran=("publish",)), read=(("look-2", 0),), expect=(("look-2", 1),)
        ),
        tree=TALLIED,
    )

    assert [(v.step, v.expected, v.seen) for v in violations("I17", bad)] == [
        (
            2,
            "lookup of orchestrator/researcher (toolUseId 'look-2') reads 1 from its agent's state",
            "it read 0",
        )
    ]
    assert [v.invariant for v in check(bad)] == ["I17"]


def test_i17_a_run_that_records_no_value_and_runs_left_to_i15() -> None:
    silent = history(
        tallied(run(shows=[ask("publish")]), read=(("look-1", None),), expect=(("look-1", 0),)),
        tree=TALLIED,
    )
    twice = history(
        tallied(
            run(shows=[ask("publish")]),
            read=(("look-1", 0), ("look-1", 1)),
            expect=(("look-1", 0),),
        ),
        tree=TALLIED,
    )
    unpredicted = history(
        tallied(run(shows=[ask("publish")]), read=(("look-1", 5),), expect=(("look-1", None),)),
        tree=TALLIED,
    )

    assert [v.seen for v in violations("I17", silent)] == ["it read nothing"]
    assert violations("I17", twice) == []  # one run too many is I15's
    assert violations("I17", unpredicted) == []  # after a deploy the oracle predicts none


def test_i17_is_not_applied_to_a_target_without_agent_state() -> None:
    bad = history(
        tallied(run(shows=[ask("publish")]), read=(("look-1", 3),), expect=(("look-1", 0),)),
        tree=TALLIED,
        capabilities=frozenset(CAPABILITIES) - {"agent_state"},
    )

    assert violations("I17", bad) == []


# --- a real history -----------------------------------------------------------------------------


def test_the_reference_target_passes_every_checker_on_colliding_ids() -> None:
    path = ROOT / "scenarios" / "regressions" / "colliding-ids.yaml"
    recorded = run_scenario(ReferenceTarget(), load_scenario(path), path.stem)

    assert recorded.control is not None
    assert check(recorded) == []


def test_o_after_a_deploy_a_sub_agent_may_be_asked_what_the_deployed_tree_asks() -> None:
    """A deploy's tree gives a call another prompt: asking it is the deployed caller's doing
    (good); a prompt no tree gives is still told something else (bad)."""
    redeployed = {**TWO_WORKERS, "turns": [[{"tool": "worker_a", "id": "c1", "prompt": "ship v2"}]]}
    deploy = {"restart": {"tree": redeployed}}
    good = {**request("orchestrator/worker_a", 1), "prompt": "ship v2"}
    bad = {**request("orchestrator/worker_a", 1), "prompt": "ship v3"}
    made = history(run(shows=[ask("deploy-a")], requests=[good, bad]))
    scenario = {**made.scenario, "steps": [{"run": "go"}, deploy]}
    found = violations("O", replace(made, scenario=scenario))

    assert [(v.step, v.seen) for v in found] == [(0, "orchestrator/worker_a asked 'ship v3'")]

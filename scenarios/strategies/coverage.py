"""The coverage families: shapes where bugs hide that the other families reach rarely or never.

Each family is built around one shape and plays it against the oracle, so every drawn scenario
has it (``scenarios.classes`` recognises each as a class of ``COVERAGE``):

* ``answered_ids_scenarios``: sibling sub-agent calls under toolUseIds a naming scheme may
  confuse (one the other's percent-escape, NFC/NFD twins, a prefix across a separator, long ids
  alike but at their end), whose sub-agents ask under the same inner toolUseId, so their
  questions differ only by the outer id; the questions are *answered*, one call first, with
  restarts between, and the first answer re-sent (the ids family raises such questions but
  leaves most of them unanswered);
* ``retried_parked_scenarios``: a sub-agent call retried after its result whose first attempt
  parked a turn on a question: the retry is a new call that must ask again, never resume the
  old turn;
* ``refused_restore_scenarios``: one sub-agent call holding several pending questions (two
  actions in one model message, or its own and a nested sub-agent's), its stored turn damaged:
  the answer is refused and every one of them stays pending; sometimes repaired and answered;
* ``retried_gated_scenarios``: the retried-call family's trees with gates on the sub-agents the
  turns call, and on every retried one: a retried call of a gated sub-agent asks its gate again;
* ``state_read_scenarios``: a sub-agent whose tally effect writes its key/value state before
  its question and reads it back after the resume, mostly with a restart between (the stored
  turn must carry the state); sometimes called twice (an ephemeral one starts each call anew, a
  preserve_context one carries its count), sometimes one level further down; half of them with
  a sliding window, whose count of model calls (its conversation-manager state) the tally reads
  too, often one that trims at every call or never has anything to trim (so only that read
  shows a count the restore lost);
* ``two_sessions_scenarios``: two root sessions (two users of one deployment) whose
  orchestrators call the same ephemeral sub-agent tools, mostly under the same toolUseId (so
  under the same call key) and with prompts of their own: both sessions' questions wait at once,
  and are answered one session at a time, with restarts between (of both sessions, or of one
  session's orchestrator alone) and an answer re-sent;
* ``idle_restart_scenarios``: a preserve_context sub-agent with a session store called in one
  prompt and again in a later one, the process restarted between while nothing waits: only its
  stored session carries its history to the next call.

They are drawn within every capability (the coverage sample, ``scenarios.coverage``); a target
that cannot express one finds those scenarios not applicable.
"""

from __future__ import annotations

from itertools import count
from typing import Any, Final

from hypothesis import strategies as st

import scenarios.strategies.drawn as drawn
from scenarios.classes import COVERAGE, classes_of
from scenarios.model import Answer, Corrupt, Repair, Resend, Restart, Run, Scenario, Step
from scenarios.oracle import Oracle
from scenarios.strategies.families import (
    DESCRIPTION,
    GENERATED_CORRUPTIONS,
    LONG_ID,
    SOURCE,
    Capabilities,
    Draw,
    _can,
    _played,
)
from scenarios.strategies.gates import GATE_SUFFIX, _called
from scenarios.strategies.retries import retried_trees

# pairs of distinct toolUseIds a naming or a lookup may take for one: a percent-escape, NFC/NFD
# twins, a prefix across a separator, long ids alike but at their end
CONFUSABLE: Final = (
    ("a:b", "a%3Ab"),
    ("a/b", "a%2Fb"),
    ("\u00e9", "e\u0301"),
    ("a", "a:b"),
    ("a", "a.b"),
    (LONG_ID + "a", LONG_ID + "b"),
)
INNER_IDS: Final = ("t1", "t1", "t2")  # the sub-agents' own toolUseIds: mostly one for all


def _scenario(tree: dict[str, Any], steps: list[Step]) -> Scenario:
    return Scenario.model_validate(
        {"description": DESCRIPTION, "source": SOURCE, "tree": tree, "steps": steps}
    )


class Player:
    """Steps appended one by one, each judged by the oracle as it is chosen."""

    def __init__(self, tree: dict[str, Any]) -> None:
        self.tree = tree
        self.steps: list[Step] = []
        self.oracle = Oracle(_scenario(tree, [Run(run="p0")]))
        self.pending: list[str] = []
        self.parked = 0

    def add(self, step: Step) -> None:
        self.steps.append(step)
        expected = self.oracle.step(len(self.steps) - 1, step)
        self.pending = sorted({label for label, _ in expected.pending})
        self.parked = expected.parked_continuations

    def answers(self) -> list[int]:
        return [i for i, step in enumerate(self.steps) if isinstance(step, Answer)]

    def scenario(self) -> Scenario:
        return _scenario(self.tree, self.steps)


def _responses(draw: Draw, labels: list[str]) -> dict[str, str]:
    return {label: draw(drawn.sampled(("approve", "approve", "deny"))) for label in labels}


@st.composite
def answered_ids_scenarios(draw: Draw, capabilities: Capabilities = None) -> Scenario:
    """Two or three sibling sub-agent calls under confusable toolUseIds, asking under one inner
    toolUseId; answered one call at a time, restarted between, the first answer re-sent."""
    can = _can(capabilities)
    pair = list(draw(drawn.sampled(CONFUSABLE)))
    if draw(drawn.integers(0, 2)) == 0:
        pair.append(draw(drawn.sampled(("a#b", "a", "\u00e9", LONG_ID + ":a"))))
    outer = list(dict.fromkeys(pair))  # a third id equal to one of the pair is dropped
    names = count(1)
    sub_agents = []
    for _ in outer:
        name = f"s{next(names)}"
        inner = draw(drawn.sampled(INNER_IDS))
        sub: dict[str, Any] = {
            "name": name,
            "actions": [{"tool": "act", "label": f"{name}-act"}],
            "turns": [[{"tool": "act", "id": inner}]],
        }
        if can("multi_question") and draw(drawn.integers(0, 3)) == 0:
            sub["actions"][0]["questions"] = 2
        if can("preserve_context") and draw(drawn.integers(0, 4)) == 0:
            sub["preserve_context"] = True
        if draw(drawn.integers(0, 3)) == 0:  # its question asked one level further down
            nested = f"s{next(names)}"
            sub["sub_agents"] = [
                {
                    "name": nested,
                    "actions": [{"tool": "act", "label": f"{nested}-act"}],
                    "turns": [[{"tool": "act", "id": inner}]],
                }
            ]
            sub["turns"] = [[{"tool": nested, "id": draw(drawn.sampled(pair))}]]
            sub["actions"] = []
        sub_agents.append(sub)
    calls = [
        {"tool": sub["name"], "id": tool_use_id}
        for sub, tool_use_id in zip(sub_agents, outer, strict=True)
    ]
    tree = {
        "name": "orchestrator",
        "sub_agents": sub_agents,
        "turns": [draw(st.permutations(calls))],
    }
    player = Player(tree)
    restarts = can("restart")
    if restarts and draw(drawn.integers(0, 3)) == 0:
        player.add(Restart(restart=True))
    player.add(Run(run="p1"))
    while player.pending and len(player.steps) < 10:
        if restarts and draw(drawn.BOOLEANS):
            player.add(Restart(restart=True))
        first = draw(drawn.sampled(player.pending))  # one call's question at a time
        player.add(Answer(answer=_responses(draw, [first])))
        if player.answers() and draw(drawn.BOOLEANS):
            player.add(Resend(resend=player.answers()[0]))
    if not any(isinstance(step, Resend) for step in player.steps):
        player.add(Resend(resend=player.answers()[0]))
    return player.scenario()


def _asking_beside(
    draw: Draw, sub_agents: list[dict[str, Any]], calls: list[dict[str, Any]], inner: str
) -> None:
    """In a third of the draws, a plain (ephemeral) sub-agent ``s2`` asking under the toolUseId
    ``inner``, called beside the others, before or after them."""
    if draw(drawn.integers(0, 2)) == 0:
        sub_agents.append(
            {
                "name": "s2",
                "actions": [{"tool": "act", "label": "s2-act"}],
                "turns": [[{"tool": "act", "id": inner}]],
            }
        )
        calls.insert(draw(drawn.integers(0, 1)), {"tool": "s2", "id": "call-2"})


@st.composite
def retried_parked_scenarios(draw: Draw, capabilities: Capabilities = None) -> Scenario:
    """A sub-agent call retried after its result, whose first attempt parks on a question (one
    or two, sometimes after an ordinary tool): answered, the first attempt ends, the retry asks
    again; restarts between, the first answer re-sent."""
    can = _can(capabilities)
    worker: dict[str, Any] = {
        "name": "s1",
        "retry": {"after": "result", "times": draw(drawn.integers(1, 2))},
        "actions": [{"tool": "act", "label": "s1-act"}],
        "turns": [[{"tool": "act", "id": draw(drawn.sampled(INNER_IDS))}]],
    }
    if can("multi_question") and draw(drawn.integers(0, 3)) == 0:
        worker["actions"][0]["questions"] = 2
    if can("ordinary_tools") and draw(drawn.integers(0, 2)) == 0:
        worker["effects"] = [{"tool": "lookup"}]
        worker["turns"].insert(0, [{"tool": "lookup", "id": "t0"}])
    if can("stateful_provider") and draw(drawn.integers(0, 3)) == 0:
        worker["stateful_provider"] = True
    if can("sliding_window") and draw(drawn.integers(0, 3)) == 0:
        worker["window"] = {"size": draw(drawn.sampled((2, 3))), "per_turn": 2}
    sub_agents = [worker]
    calls = [{"tool": "s1", "id": draw(drawn.sampled(("call-1", "t1", "a:b")))}]
    _asking_beside(draw, sub_agents, calls, "t1")
    tree = {"name": "orchestrator", "sub_agents": sub_agents, "turns": [calls]}
    player = Player(tree)
    restarts = can("restart")
    player.add(Run(run="p1"))
    while player.pending and len(player.steps) < 10:
        if restarts and draw(drawn.BOOLEANS):
            player.add(Restart(restart=True))
        every = draw(drawn.sampled((True, True, False)))
        chosen = player.pending if every else player.pending[:1]
        # the first attempt's approval mostly: a denied action's sub-agent still answers
        player.add(Answer(answer=_responses(draw, chosen)))
        if draw(drawn.integers(0, 2)) == 0:
            player.add(Resend(resend=player.answers()[0]))
    if not any(isinstance(step, Resend) for step in player.steps):
        player.add(Resend(resend=player.answers()[0]))
    return player.scenario()


@st.composite
def refused_restore_scenarios(draw: Draw, capabilities: Capabilities = None) -> Scenario:
    """One ephemeral sub-agent call parked with two or three pending questions, its stored turn
    damaged: the answer is refused and all stay pending; sometimes repaired and answered."""
    can = _can(capabilities)
    damages = [kind for kind in GENERATED_CORRUPTIONS if can(f"corruption:{kind}")]
    shape = draw(drawn.sampled(("two-actions", "own-and-nested", "two-nested")))
    worker: dict[str, Any] = {"name": "s1"}
    if shape == "two-actions":
        worker["actions"] = [
            {"tool": "act0", "label": "s1-0"},
            {"tool": "act1", "label": "s1-1"},
        ]
        worker["turns"] = [[{"tool": "act0", "id": "t1"}, {"tool": "act1", "id": "t2"}]]
    else:
        nested = [
            {
                "name": name,
                "actions": [{"tool": "act", "label": f"{name}-0"}],
                "turns": [[{"tool": "act", "id": "t1"}]],
            }
            for name in (("s2", "s3") if shape == "two-nested" else ("s2",))
        ]
        worker["sub_agents"] = nested
        turn = [{"tool": sub["name"], "id": f"n{i}"} for i, sub in enumerate(nested)]
        if shape == "own-and-nested":
            worker["actions"] = [{"tool": "act", "label": "s1-0"}]
            turn.insert(draw(drawn.integers(0, 1)), {"tool": "act", "id": "t1"})
        worker["turns"] = [turn]
    if can("stateful_provider") and draw(drawn.integers(0, 3)) == 0:
        worker["stateful_provider"] = True
    if can("sliding_window") and draw(drawn.integers(0, 3)) == 0:
        worker["window"] = {"size": draw(drawn.sampled((2, 3))), "per_turn": 2}
    calls = [{"tool": "s1", "id": "call-1"}]
    tree: dict[str, Any] = {"name": "orchestrator", "sub_agents": [worker], "turns": [calls]}
    if draw(drawn.integers(0, 2)) == 0:  # the orchestrator's own question beside the call
        tree["actions"] = [{"tool": "act", "label": "orchestrator-0"}]
        calls.insert(draw(drawn.integers(0, 1)), {"tool": "act", "id": "call-2"})
    player = Player(tree)
    player.add(Run(run="p1"))
    if draw(drawn.integers(0, 2)) == 0 and "orchestrator-0" in player.pending:
        player.add(Answer(answer=_responses(draw, ["orchestrator-0"])))
    if player.parked and damages:
        player.add(Corrupt(corrupt=draw(drawn.sampled(damages)), which=0))
        chosen = draw(drawn.lists_of(player.pending, min_size=1, unique=True))
        player.add(Answer(answer=_responses(draw, sorted(chosen))))  # refused: all stay
        if draw(drawn.BOOLEANS):
            player.add(Resend(resend=player.answers()[-1]))
        if draw(drawn.BOOLEANS):
            player.add(Repair(repair=True))
            if player.pending:
                player.add(Answer(answer=_responses(draw, player.pending)))
    return player.scenario()


@st.composite
def retried_gated_scenarios(draw: Draw, capabilities: Capabilities = None) -> Scenario:
    """The retried-call family's trees with a gate on every retried sub-agent its turns call
    (and on the others with even odds), played as the effects family plays."""
    tree = draw(retried_trees(capabilities=capabilities))
    for sub in _called(tree):
        if "retry" in sub or draw(drawn.BOOLEANS):
            sub["gate"] = sub["name"] + GATE_SUFFIX
    return _played(draw, tree, _can(capabilities))


@st.composite
def state_read_scenarios(draw: Draw, capabilities: Capabilities = None) -> Scenario:
    """A sub-agent's tally effect runs before its question and again after it; answered with a
    restart before the first answer (where the target restarts) and maybe between the others."""
    can = _can(capabilities)
    worker: dict[str, Any] = {
        "name": "s1",
        "effects": [{"tool": "lookup", "tally": True}],
        "actions": [{"tool": "act", "label": "s1-act"}],
    }
    asking = [{"tool": "act", "id": "t1"}]
    if draw(drawn.integers(0, 2)) == 0:  # the lookup in the asking turn, before the question
        worker["turns"] = [
            [{"tool": "lookup", "id": "t0"}, *asking],
            [{"tool": "lookup", "id": "t2"}],
        ]
    else:
        worker["turns"] = [
            [{"tool": "lookup", "id": "t0"}],
            asking,
            [{"tool": "lookup", "id": "t2"}],
        ]
    if can("multi_question") and draw(drawn.integers(0, 3)) == 0:
        worker["actions"][0]["questions"] = 2
    if can("stateful_provider") and draw(drawn.integers(0, 3)) == 0:
        worker["stateful_provider"] = True
    if can("sliding_window") and draw(drawn.BOOLEANS):  # the window's count read back too
        worker["window"] = {
            "size": draw(drawn.sampled((2, 3, 40))),
            "per_turn": draw(drawn.sampled((1, 2))),
        }
    twice = draw(drawn.integers(0, 2)) == 0  # called again in the orchestrator's next turn
    if twice and can("preserve_context") and draw(drawn.BOOLEANS):
        worker["preserve_context"] = True  # its count carries into the second call
    called: dict[str, Any] = worker
    if draw(drawn.integers(0, 3)) == 0:  # one level further down, under a plain sub-agent
        called = {"name": "s0", "sub_agents": [worker], "turns": [[{"tool": "s1", "id": "n1"}]]}
    turns = [[{"tool": called["name"], "id": "call-1"}]]
    if twice:
        turns.append([{"tool": called["name"], "id": draw(drawn.sampled(("call-2", "call-1")))}])
    tree: dict[str, Any] = {"name": "orchestrator", "sub_agents": [called], "turns": turns}
    if draw(drawn.integers(0, 3)) == 0:  # the orchestrator's own tally beside the call
        tree["effects"] = [{"tool": "lookup", "tally": True}]
        turns[0].insert(0, {"tool": "lookup", "id": "call-0"})
    player = Player(tree)
    restarts = can("restart")
    player.add(Run(run="p1"))
    first = True
    while player.pending and len(player.steps) < 12:
        if restarts and (first or draw(drawn.BOOLEANS)):
            player.add(Restart(restart=True))
        first = False
        responses = {
            label: draw(drawn.sampled(("approve", "approve", "approve", "deny")))
            for label in player.pending
        }
        player.add(Answer(answer=responses))
    return player.scenario()


SESSION_PROMPTS: Final = {"a": "pa", "b": "pb"}  # each root session's run


@st.composite
def two_sessions_scenarios(draw: Draw, capabilities: Capabilities = None) -> Scenario:
    """Two root sessions over one tree: each runs a prompt of its own, for which the
    orchestrator calls the same sub-agent (sometimes a second beside it, or one asking a level
    further down), mostly under one toolUseId with a prompt per session; both sessions' questions
    then wait at once, and the sessions are answered in turn, restarted between, an answer
    re-sent in its own session."""
    can = _can(capabilities)
    worker: dict[str, Any] = {
        "name": "s1",
        "actions": [{"tool": "act", "label": "s1-act"}],
        "turns": [[{"tool": "act", "id": draw(drawn.sampled(INNER_IDS))}]],
    }
    if can("multi_question") and draw(drawn.integers(0, 3)) == 0:
        worker["actions"][0]["questions"] = 2
    if can("ordinary_tools") and draw(drawn.integers(0, 2)) == 0:
        worker["effects"] = [{"tool": "lookup", "tally": can("agent_state")}]
        worker["turns"].insert(0, [{"tool": "lookup", "id": "t0"}])
    if can("stateful_provider") and draw(drawn.integers(0, 3)) == 0:
        worker["stateful_provider"] = True
    if can("sliding_window") and draw(drawn.integers(0, 3)) == 0:
        worker["window"] = {"size": draw(drawn.sampled((2, 3))), "per_turn": 2}
    if draw(drawn.integers(0, 3)) == 0:  # its question asked one level further down
        worker["sub_agents"] = [
            {
                "name": "s3",
                "actions": [{"tool": "act", "label": "s3-act"}],
                "turns": [[{"tool": "act", "id": "t1"}]],
            }
        ]
        worker["turns"] = [[{"tool": "s3", "id": "n1"}]]
        worker["actions"] = []
    sub_agents = [worker]
    beside = draw(drawn.integers(0, 2)) == 0  # a second sub-agent asking beside it
    if beside:
        sub_agents.append(
            {
                "name": "s2",
                "actions": [{"tool": "act", "label": "s2-act"}],
                "turns": [[{"tool": "act", "id": "t1"}]],
            }
        )
    same_id = draw(drawn.sampled((True, True, False)))  # one call key in both sessions
    same_prompt = draw(drawn.integers(0, 3)) == 3  # the sub-agent asked the same in both
    prompts: dict[str, Any] = {}
    for session, run in SESSION_PROMPTS.items():
        call_id = "call-1" if same_id else f"call-{session}"
        asked = "do your part" if same_prompt else f"for {session}"
        calls = [{"tool": "s1", "id": call_id, "prompt": asked}]
        if beside:
            calls.insert(draw(drawn.integers(0, 1)), {"tool": "s2", "id": "call-2"})
        prompts[run] = {"turns": [calls], "answer": f"done {session}"}
    tree = {"name": "orchestrator", "sub_agents": sub_agents, "prompts": prompts}
    steps: list[Step] = []
    runs = [Run(run=run, session=session) for session, run in SESSION_PROMPTS.items()]
    oracle = Oracle(_scenario(tree, list(runs)))
    pending: dict[str, list[str]] = {"a": [], "b": []}
    answers: dict[str, list[int]] = {"a": [], "b": []}

    def add(step: Step) -> None:
        steps.append(step)
        expected = oracle.step(len(steps) - 1, step)
        if not isinstance(step, Restart):
            pending[getattr(step, "session", "a")] = sorted({x for x, _ in expected.pending})

    def restart() -> Restart:
        """One session's orchestrator reloaded alone (the agent tools keep what they hold in
        memory), or a restart of both."""
        return Restart(restart=True, session=draw(drawn.sampled(("a", "b", None))))

    restarts = can("restart")
    first = draw(drawn.sampled(("a", "b")))
    for session in (first, "b" if first == "a" else "a"):
        add(Run(run=SESSION_PROMPTS[session], session=session))
        if restarts and draw(drawn.integers(0, 3)) == 3:
            add(restart())
    while any(pending.values()) and len(steps) < 12:
        session = draw(drawn.sampled([name for name in ("a", "b") if pending[name]]))
        if restarts and draw(drawn.BOOLEANS):
            add(restart())
        chosen = pending[session] if draw(drawn.BOOLEANS) else pending[session][:1]
        answers[session].append(len(steps))
        add(Answer(answer=_responses(draw, chosen), session=session))
        if draw(drawn.integers(0, 3)) == 0:
            add(Resend(resend=answers[session][0], session=session))
    return _scenario(tree, steps)


@st.composite
def idle_restart_scenarios(draw: Draw, capabilities: Capabilities = None) -> Scenario:
    """A preserve_context sub-agent with a session store, called in one prompt and again in a
    later one, the process restarted between while nothing waits: its turn ended (asked and
    answered), so only its stored session carries its history to the next call. Sometimes an
    ephemeral sub-agent asks beside it, sometimes it keeps a provider's response id or a window,
    asks twice, or is called one level further down; the later prompts' questions answered with
    restarts between, an answer sometimes re-sent.  Its calls reuse their toolUseIds, as every
    scripted call does; it runs no ordinary tool, whose reused id openai-agents de-duplicates
    out of order (``reused-call-ids-deduplicated``: a capability the harness does not infer yet)."""
    can = _can(capabilities)
    keeper: dict[str, Any] = {
        "name": "s1",
        "preserve_context": True,
        "actions": [{"tool": "act", "label": "s1-act"}],
        "turns": [[{"tool": "act", "id": "t1"}]],
    }
    if can("multi_question") and draw(drawn.integers(0, 3)) == 0:
        keeper["actions"][0]["questions"] = 2
    if can("stateful_provider") and draw(drawn.integers(0, 2)) == 0:
        keeper["stateful_provider"] = True
    if can("sliding_window") and draw(drawn.integers(0, 3)) == 0:
        keeper["window"] = {"size": draw(drawn.sampled((2, 3))), "per_turn": 2}
    top = keeper
    if draw(drawn.integers(0, 3)) == 0:  # called one level further down
        top = {"name": "s0", "sub_agents": [keeper], "turns": [[{"tool": "s1", "id": "t3"}]]}
    sub_agents = [top]
    calls = [{"tool": top["name"], "id": "call-1"}]
    _asking_beside(draw, sub_agents, calls, "t2")
    tree = {"name": "orchestrator", "sub_agents": sub_agents, "turns": [calls]}
    player = Player(tree)
    restarts = can("restart")
    for prompt in ("p1", "p2", "p3")[: draw(drawn.integers(2, 3))]:
        if player.steps and restarts:
            for _ in range(draw(drawn.integers(1, 2))):
                player.add(Restart(restart=True))  # nothing waits: the last turn ended
        player.add(Run(run=prompt))
        while player.pending and len(player.steps) < 14:
            if prompt != "p1" and restarts and draw(drawn.integers(0, 2)) == 0:
                player.add(Restart(restart=True))
            chosen = player.pending if draw(drawn.BOOLEANS) else player.pending[:1]
            player.add(Answer(answer=_responses(draw, chosen)))
        if player.answers() and draw(drawn.integers(0, 3)) == 0:
            player.add(Resend(resend=player.answers()[-1]))
    return player.scenario()


def _has(name: str) -> Any:
    return lambda scenario: name in classes_of(scenario)


def coverage_family(name: str, capabilities: Capabilities = None) -> st.SearchStrategy[Scenario]:
    """The family drawn for the class ``name`` of ``COVERAGE``, kept where the class shows (a
    draw that misses its shape, a retry that never happens, is drawn again)."""
    strategies = {
        "adversarial-ids-answered": answered_ids_scenarios,
        "retried-parked-call": retried_parked_scenarios,
        "refused-restore-of-several": refused_restore_scenarios,
        "retried-gated-call": retried_gated_scenarios,
        "state-read-after-resume": state_read_scenarios,
        "two-root-sessions": two_sessions_scenarios,
        "idle-restart": idle_restart_scenarios,
    }
    assert set(strategies) == set(COVERAGE), "a coverage class without a family"
    return strategies[name](capabilities=capabilities).filter(_has(name))

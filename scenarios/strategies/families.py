"""The families of scenarios ``check --profile`` draws: the general one (any tree, any steps)
and the focused ones, for continuation fidelity (``restore_scenarios``) and for side effects
before a question (``effects_scenarios``), each within what a target can express
(``scenarios.corpus.FAMILIES`` lists them)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import count
from typing import Any, Final

from hypothesis import strategies as st

import scenarios.strategies.drawn as drawn
from scenarios.corruptions import CORRUPTION_CAPABILITY
from scenarios.model import Answer, Corrupt, Resend, Restart, Run, Scenario, Step
from scenarios.oracle import Oracle

TOOL_USE_IDS: Final = ("t1", "t2", "t:1", "t%1", "tü", "")
# the ids family's alphabet: ids that are prefixes of each other across a separator (``:`` ``/``
# ``.`` ``#``), percent-escapes of each other, NFC/NFD twins, and long ids (hundreds of
# characters) that differ only at their end
LONG_ID: Final = "call-" + "0123456789" * 30  # 305 characters
ADVERSARIAL_IDS: Final = (
    "a",
    "a:b",
    "a/b",
    "a.b",
    "a#b",
    "a%3Ab",
    "a%2Fb",
    "\u00e9",  # é, composed (NFC)
    "e\u0301",  # é, decomposed (NFD)
    LONG_ID + "a",
    LONG_ID + "b",
    LONG_ID + ":a",
)
# damage that any target must refuse loudly ("foreign" needs two stored turns: issue 6's campaign)
GENERATED_CORRUPTIONS: Final = (
    "schema_version_other",
    "payload_missing",
    "previous_shape",
    "truncated",
    "deleted",
)
MAX_DEPTH: Final = 4
DESCRIPTION: Final = "generated"  # what every drawn scenario says it is
SOURCE: Final = "scenarios.strategies"  # and where it comes from

Draw = Callable[[st.SearchStrategy[Any]], Any]
# what a target can express (``harness.targets.base.CAPABILITIES``, and ``corruption:<kind>``
# for each damage it can take); None: everything
Capabilities = frozenset[str] | None
# the capabilities the families consult (``gated_sub_agents``, ``retries``, ``changed_tree``:
# whether the gated, the retried-call and the deploy family, in ``scenarios.strategies.gates``,
# ``.retries`` and ``.deploys``, are drawn at all)
DRAWN_CAPABILITIES: Final = frozenset(
    {
        "multi_question",
        "repeated_tool_use_ids",
        "empty_tool_use_ids",
        "preserve_context",
        "storeless_sub_agents",
        "stateful_provider",
        "sliding_window",
        "restart",
        *(f"{CORRUPTION_CAPABILITY}{kind}" for kind in GENERATED_CORRUPTIONS),
        "gated_sub_agents",
        "retries",
        "changed_tree",
    }
)


@st.composite
def trees(
    draw: Draw, max_depth: int = MAX_DEPTH, capabilities: Capabilities = None
) -> dict[str, Any]:
    """An agent tree as scenario data; names and labels are unique, tool names may repeat.
    Only what a target with ``capabilities`` can express is drawn (None: everything)."""
    names = count(1)
    depth_limit = draw(drawn.integers(1, max_depth))
    return _agent(draw, "orchestrator", 1, depth_limit, names, sub=False, can=_can(capabilities))


def _can(capabilities: Capabilities) -> Callable[[str], bool]:
    return lambda capability: capabilities is None or capability in capabilities


def _agent(
    draw: Draw,
    name: str,
    depth: int,
    depth_limit: int,
    names: count[int],
    *,
    sub: bool,
    can: Callable[[str], bool],
) -> dict[str, Any]:
    questions = (1, 1, 1, 2) if can("multi_question") else (1,)
    actions = [
        {
            "tool": draw(drawn.sampled(("act", "deploy"))) + str(index),
            "label": f"{name}-{index}",
            "questions": draw(drawn.sampled(questions)),
        }
        for index in range(draw(drawn.integers(0 if depth < depth_limit else 1, 2)))
    ]
    sub_agents = []
    if depth < depth_limit:
        fan_out = draw(drawn.integers(1, 3))
        sub_agents = [
            _agent(draw, f"s{next(names)}", depth + 1, depth_limit, names, sub=True, can=can)
            for _ in range(fan_out)
        ]
    tools = [action["tool"] for action in actions] + [agent["name"] for agent in sub_agents]
    agent: dict[str, Any] = {
        "name": name,
        "actions": actions,
        "sub_agents": sub_agents,
        "turns": _turns(
            draw,
            tools,
            repeats=can("repeated_tool_use_ids"),
            empty=can("empty_tool_use_ids"),
        ),
    }
    if sub and can("preserve_context") and draw(drawn.integers(0, 3)) == 0:
        agent["preserve_context"] = True
        # rare: a storeless one makes the restart-free control inapplicable to the whole run
        if can("storeless_sub_agents"):
            agent["session_store"] = draw(drawn.sampled((True,) * 5 + (False,)))
    if can("stateful_provider") and draw(drawn.integers(0, 3)) == 0:
        agent["stateful_provider"] = True
    if can("sliding_window") and draw(drawn.integers(0, 3)) == 0:
        # small windows trimming every other call: where a lost call count shows
        agent["window"] = {
            "size": draw(drawn.sampled((2, 2, 3, 4))),
            "per_turn": draw(drawn.sampled((1, 2, 2, 3))),
        }
    return agent


def _turns(
    draw: Draw, tools: list[str], *, repeats: bool = True, empty: bool = True
) -> list[list[dict[str, str]]]:
    """An agent's scripted turns.  With ``repeats``, ids may come back in a later turn; without,
    every id of the agent is distinct (fresh ones once the alphabet runs out).  With ``empty``,
    an id may be empty."""
    if not tools:
        return []
    turns = []
    used: set[str] = set()
    for _ in range(draw(drawn.integers(1, 2))):
        called = draw(drawn.lists_of(tools, min_size=1, max_size=len(tools) + 1))
        alphabet = [i for i in TOOL_USE_IDS if (i or empty) and (repeats or i not in used)]
        fresh = (f"u{n}" for n in count() if f"u{n}" not in used)
        alphabet += [next(fresh) for _ in range(len(called) - len(alphabet))]
        ids = draw(
            drawn.lists_of(alphabet, min_size=len(called), max_size=len(called), unique=True)
        )
        used.update(ids)
        turns.append(
            [
                {"tool": tool, "id": tool_use_id, "prompt": f"part {index}"}
                for index, (tool, tool_use_id) in enumerate(zip(called, ids, strict=True))
            ]
        )
    return turns


@st.composite
def scenarios(draw: Draw, max_steps: int = 6, capabilities: Capabilities = None) -> Scenario:
    """A valid scenario: a tree, a first prompt, then answers, restarts, resends and prompts;
    only what a target with ``capabilities`` can express (None: everything)."""
    can = _can(capabilities)
    tree = draw(trees(capabilities=capabilities))
    steps: list[Step] = []
    restarts = can("restart")
    damages = [kind for kind in GENERATED_CORRUPTIONS if can(f"{CORRUPTION_CAPABILITY}{kind}")]
    if restarts and draw(drawn.BOOLEANS):
        steps.append(Restart(restart=True))
    steps.append(Run(run="p1"))
    base = Scenario.model_validate(
        {"description": DESCRIPTION, "source": SOURCE, "tree": tree, "steps": steps}
    )
    oracle = Oracle(base)
    expected = [oracle.step(index, step) for index, step in enumerate(steps)][-1]
    prompts = count(2)
    corrupted = False
    for _ in range(draw(drawn.integers(1, max_steps))):
        pending = sorted({label for label, _ in expected.pending})
        answers = [i for i, step in enumerate(steps) if isinstance(step, Answer)]
        choices = ["restart", "restart"] if restarts else []
        if pending:
            choices += ["answer", "answer", "answer"]
        else:  # the turn ended: a restart here is one of the boundaries to cover
            choices += ["run", "restart", "restart"] if restarts else ["run"]
        if answers:
            choices += ["resend", "resend"]
        if expected.parked_continuations and not corrupted and damages:
            choices.append("corrupt")
        kind = draw(drawn.sampled(choices))
        step: Step
        if kind == "answer":
            # answering everything ends turns (later calls follow); a subset is a partial answer
            every = draw(drawn.sampled((True, True, False, False, False)))
            chosen = pending if every else draw(drawn.lists_of(pending, min_size=1, unique=True))
            responses = {
                label: draw(drawn.sampled(("approve", "approve", "deny"))) for label in chosen
            }
            step = Answer(answer=responses)
        elif kind == "restart":
            step = Restart(restart=True)
        elif kind == "resend":
            step = Resend(resend=draw(drawn.sampled(answers)))
        elif kind == "corrupt":
            corrupted = True
            step = Corrupt(
                corrupt=draw(drawn.sampled(damages)),
                which=draw(drawn.integers(0, expected.parked_continuations - 1)),
            )
        else:
            step = Run(run=f"p{next(prompts)}")
        steps.append(step)
        expected = oracle.step(len(steps) - 1, step)
    return base.model_copy(update={"steps": tuple(steps)})


@st.composite
def restore_scenarios(draw: Draw, capabilities: Capabilities = None) -> Scenario:
    """A focused family for continuation fidelity: ephemeral sub-agents with windows and
    stateful providers, parked, restarted, then answered, one prompt after another.

    The general family reaches this shape too, but rarely: its restarts land anywhere, and a
    single storeless sub-agent or corruption in a large tree makes the restart-free control
    inapplicable to the whole run.
    """
    can = _can(capabilities)
    names = count(1)
    sub_agents = []
    ids = [i for i in TOOL_USE_IDS if i or can("empty_tool_use_ids")]
    for _ in range(draw(drawn.integers(1, 2))):
        name = f"s{next(names)}"
        sub: dict[str, Any] = {
            "name": name,
            "actions": [{"tool": "act", "label": f"{name}-act"}],
            "turns": [[{"tool": "act", "id": draw(drawn.sampled(ids))}]],
        }
        if can("stateful_provider") and draw(drawn.BOOLEANS):
            sub["stateful_provider"] = True
        if can("sliding_window") and draw(drawn.BOOLEANS):
            sub["window"] = {
                "size": draw(drawn.sampled((2, 3))),
                "per_turn": draw(drawn.sampled((2, 3))),
            }
        sub_agents.append(sub)
    calls = [
        {"tool": sub["name"], "id": tool_use_id}
        for sub, tool_use_id in zip(sub_agents, draw(st.permutations(ids)), strict=False)
    ]
    tree = {"name": "orchestrator", "sub_agents": sub_agents, "turns": [calls]}
    steps: list[Any] = []
    labels = {sub["name"] + "-act": "approve" for sub in sub_agents}
    for prompt in range(draw(drawn.integers(1, 3))):
        steps += [{"run": f"p{prompt + 1}"}, *(["restart"] * can("restart")), {"answer": labels}]
    return Scenario.model_validate(
        {"description": DESCRIPTION, "source": SOURCE, "tree": tree, "steps": steps}
    )


EFFECT_TOOLS: Final = ("lookup", "write")  # the ordinary tools the effects family draws


@st.composite
def effects_scenarios(draw: Draw, capabilities: Capabilities = None) -> Scenario:
    """A focused family for side effects before a question: sub-agents run ordinary tools
    (``effects``) in an earlier model turn than their question, beside it in the same message
    (before or after it), or after it is answered; sometimes the orchestrator runs one beside
    its calls, sometimes the question is a nested sub-agent's.  Asked, restarted, answered (all,
    in part, or denied) and re-sent, one prompt after another.

    Its trees always have ordinary tools (the family exists for them): a target that cannot run
    them (no ``ordinary_tools``) finds the whole family not applicable.
    """
    can = _can(capabilities)
    names = count(1)
    ids = IdDrawer(draw, can("repeated_tool_use_ids"), can("empty_tool_use_ids"))
    workers = [
        _worker(draw, names, ids, can, nested=True) for _ in range(draw(drawn.integers(1, 2)))
    ]
    calls: list[dict[str, Any]] = [{"tool": worker["name"]} for worker in workers]
    tree: dict[str, Any] = {"name": "orchestrator", "sub_agents": workers}
    if draw(drawn.integers(0, 3)) == 0:  # the orchestrator's own effect beside its calls
        tree["effects"] = [{"tool": "lookup"}]
        calls.insert(draw(drawn.integers(0, len(calls))), {"tool": "lookup"})
    tree["turns"] = [ids.turn(calls)]
    return _played(draw, tree, can)


class IdDrawer:
    """The toolUseIds of one agent's turns: unique in a turn; repeated across turns only with
    ``repeats``, empty only with ``empty`` (fresh ``u<n>`` ones once the alphabet runs out)."""

    def __init__(self, draw: Draw, repeats: bool, empty: bool) -> None:
        self.draw = draw
        self.repeats = repeats
        self.empty = empty
        self.used: set[str] = set()

    def agent(self) -> IdDrawer:
        return IdDrawer(self.draw, self.repeats, self.empty)

    def turn(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        alphabet = [
            i for i in TOOL_USE_IDS if (i or self.empty) and (self.repeats or i not in self.used)
        ]
        fresh = (f"u{n}" for n in count() if f"u{n}" not in self.used)
        alphabet += [next(fresh) for _ in range(len(calls) - len(alphabet))]
        chosen = self.draw(
            drawn.lists_of(alphabet, min_size=len(calls), max_size=len(calls), unique=True)
        )
        self.used.update(chosen)
        return [
            {**call, "id": tool_use_id} for call, tool_use_id in zip(calls, chosen, strict=True)
        ]


def _worker(
    draw: Draw, names: count[int], ids: IdDrawer, can: Callable[[str], bool], *, nested: bool
) -> dict[str, Any]:
    """A sub-agent that runs ordinary tools around one question: its own action's, or (when
    ``nested`` allows, rarely) a nested sub-agent's that does the same."""
    name = f"s{next(names)}"
    worker: dict[str, Any] = {"name": name}
    effects = draw(drawn.lists_of(EFFECT_TOOLS, min_size=1, max_size=2, unique=True))
    worker["effects"] = [{"tool": tool} for tool in effects]
    if nested and draw(drawn.integers(0, 4)) == 0:
        inner = _worker(draw, names, ids, can, nested=False)
        worker["sub_agents"] = [inner]
        asker = inner["name"]
    else:
        action: dict[str, Any] = {"tool": "act", "label": f"{name}-0"}
        if can("multi_question") and draw(drawn.integers(0, 3)) == 0:
            action["questions"] = 2
        worker["actions"] = [action]
        asker = "act"
    first, last = effects[0], effects[-1]
    shape = draw(drawn.sampled(("before", "beside", "beside-after", "after", "around")))
    turns = {
        "before": [[first], [asker]],
        "beside": [[first, asker]],
        "beside-after": [[asker, first]],
        "after": [[asker], [first]],
        "around": [[first], [last, asker], [first]],
    }[shape]
    mine = ids.agent()
    worker["turns"] = [mine.turn([{"tool": tool} for tool in turn]) for turn in turns]
    sometimes_keeps_state(draw, worker, can, preserve_context=4)
    return worker


def sometimes_keeps_state(
    draw: Draw, agent: dict[str, Any], can: Callable[[str], bool], *, preserve_context: int | None
) -> None:
    """Give ``agent`` what a target can keep between its calls, as far as ``can`` allows: its
    history (one draw in ``preserve_context + 1``; None: never), a stateful provider (one in
    four), a small window (one in five)."""
    if (
        preserve_context is not None
        and can("preserve_context")
        and draw(drawn.integers(0, preserve_context)) == 0
    ):
        agent["preserve_context"] = True
    if can("stateful_provider") and draw(drawn.integers(0, 3)) == 0:
        agent["stateful_provider"] = True
    if can("sliding_window") and draw(drawn.integers(0, 4)) == 0:
        agent["window"] = {"size": draw(drawn.sampled((2, 3))), "per_turn": 2}


def _played(draw: Draw, tree: dict[str, Any], can: Callable[[str], bool]) -> Scenario:
    """``tree`` run with a first prompt, then restarts, answers (all, in part, denied), resends
    and later prompts, each drawn against the oracle as the general family draws them."""
    steps: list[Step] = []
    restarts = can("restart")
    if restarts and draw(drawn.integers(0, 3)) == 0:
        steps.append(Restart(restart=True))
    steps.append(Run(run="p1"))
    base = Scenario.model_validate(
        {"description": DESCRIPTION, "source": SOURCE, "tree": tree, "steps": steps}
    )
    oracle = Oracle(base)
    expected = [oracle.step(index, step) for index, step in enumerate(steps)][-1]
    prompts = count(2)
    for _ in range(draw(drawn.integers(1, 5))):
        pending = sorted({label for label, _ in expected.pending})
        answers = [i for i, step in enumerate(steps) if isinstance(step, Answer)]
        choices = ["restart", "restart"] if restarts else []
        choices += ["answer"] * 3 if pending else ["run"]
        if answers:
            choices.append("resend")
        kind = draw(drawn.sampled(choices))
        step: Step
        if kind == "answer":
            chosen = draw(drawn.lists_of(pending, min_size=1, unique=True))
            responses = {
                label: draw(drawn.sampled(("approve", "approve", "approve", "deny")))
                for label in chosen
            }
            step = Answer(answer=responses)
        elif kind == "restart":
            step = Restart(restart=True)
        elif kind == "resend":
            step = Resend(resend=draw(drawn.sampled(answers)))
        else:
            step = Run(run=f"p{next(prompts)}")
        steps.append(step)
        expected = oracle.step(len(steps) - 1, step)
    return base.model_copy(update={"steps": tuple(steps)})


@st.composite
def ids_scenarios(draw: Draw, capabilities: Capabilities = None) -> Scenario:
    """A focused family for adversarial toolUseIds: a scenario of the general family whose
    toolUseIds are renamed, one to one, to ids of ``ADVERSARIAL_IDS`` (an empty id stays empty),
    so sibling calls, nested calls and later turns name their calls with ids a naming scheme
    must keep apart.  One to one: ids equal before are equal after, distinct ones stay
    distinct, so the scenario stays valid and what it needs does not change."""
    scenario = draw(scenarios(capabilities=capabilities))
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    used = sorted(_ids_of(data["tree"]) - {""})
    spare = [f"{ADVERSARIAL_IDS[0]}:{n}" for n in range(max(0, len(used) - len(ADVERSARIAL_IDS)))]
    chosen = draw(st.permutations(ADVERSARIAL_IDS + tuple(spare)))
    renamed = dict(zip(used, chosen, strict=False))
    _rename_ids(data["tree"], renamed)
    return Scenario.model_validate(data)


def _ids_of(agent: dict[str, Any]) -> set[str]:
    found = {call.get("id", "") for turn in agent.get("turns", []) for call in turn}
    for sub in agent.get("sub_agents", []):
        found |= _ids_of(sub)
    return found


def _rename_ids(agent: dict[str, Any], renamed: dict[str, str]) -> None:
    for turn in agent.get("turns", []):
        for call in turn:
            if call.get("id", "") in renamed:
                call["id"] = renamed[call["id"]]
    for sub in agent.get("sub_agents", []):
        _rename_ids(sub, renamed)

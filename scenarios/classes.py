"""The scenario classes a scenario belongs to, recognised from the scenario and the oracle alone.

Findings classes narrow by them and the generator statistics count them (``scenarios.statistics``);
this module needs only the scenario model and the oracle, not the generators.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Final
from unicodedata import normalize
from urllib.parse import unquote

from scenarios.model import Agent, Answer, Call, Corrupt, Resend, Restart, Run, Scenario, Step
from scenarios.oracle import Expected, Oracle

CLASSES: Final = (
    "colliding-ids",
    "shared-tool-use-ids",
    "partial-answers",
    "depth-3-or-more",
    "restart-before-a-run",
    "restart-between-answers",
    "restart-after-the-end",
    "re-interrupt",
    "mixed",
    "twin-calls",
    "stateful-provider",
    "sliding-window",
    "resend",
    "side-effects",
    "gated-agent-call",
    "adversarial-ids",
    "retries",
    "deploy-skew",
    "corruption",
)
# classes only a focused family draws on purpose (``scenarios.corpus.FAMILIES``): findings may
# narrow by them, but the statistics, which hold every class of ``CLASSES`` to 5% of the counted
# families, do not count them
FOCUSED: Final = ("twin-prompts",)
# finer cuts of a counted class, for findings to narrow by where a bug needs more than the class
# (``twin-calls`` counts twin calls of any tool; a lock or a shared thread needs a sub-agent's):
# the statistics count the class they cut, not them
# (``uncompared-restart`` cuts ``restart-between-answers`` to the scenarios no restart-free run is
# compared with, where nothing shows what a restart changed; ``questions-asked-together`` cuts
# every family to the scenarios where one step raises two or more questions at once, the calls of
# one model message asking together, which a tool node that stops at its first question shows
# one of)
FINER: Final = (
    "twin-agent-calls",
    "twin-session-calls",
    "uncompared-restart",
    "questions-asked-together",
)
# shapes where bugs hide that the counted families reach rarely or never: each has a family of
# its own in the coverage sample (``scenarios.coverage``), which holds each to 5% of that sample;
# the ci sample's statistics do not count them
COVERAGE: Final = (
    "adversarial-ids-answered",
    "retried-parked-call",
    "refused-restore-of-several",
    "retried-gated-call",
    "state-read-after-resume",
    "two-root-sessions",
    "idle-restart",
)
RECOGNISED: Final = CLASSES + FOCUSED + FINER + COVERAGE
# classes whose every scenario is of others too, by how they are recognised: a deploy while a
# question waits (``deploy-skew``) is a restart between answers, and a scenario that deploys is
# never compared with a restart-free run (``has_control``); ``uncompared-restart`` is a cut of
# ``restart-between-answers``.  A findings class narrowed by the wider class narrows nothing more
# where its witness can name only the narrower one's scenarios (harness.findings.canary)
WITHIN: Final = {
    "deploy-skew": ("restart-between-answers", "uncompared-restart"),
    "uncompared-restart": ("restart-between-answers",),
}

# the coverage sample's families' beginnings (``scenarios.coverage``), after ``generated-``: a
# file of their own, scenarios/corpus/coverage/, never part of a profile's sample
COVERAGE_PREFIXES: Final = (
    "answered-ids-",
    "retried-parked-",
    "refused-restore-",
    "retried-gated-",
    "state-read-",
    "two-sessions-",
    "idle-restart-",
)
_COVERAGE_NAME: Final = re.compile(
    "generated-(?:" + "|".join(re.escape(prefix) for prefix in COVERAGE_PREFIXES) + r")\d{3,}"
)


def in_coverage_sample(name: str) -> bool:
    """Whether the generated scenario ``name`` is one of the coverage sample's
    (``scenarios.coverage``), not of a profile's sample."""
    return _COVERAGE_NAME.fullmatch(name) is not None


def classes_of(scenario: Scenario) -> set[str]:
    found: set[str] = set()
    agents = list(scenario.tree.walk())
    if max(depth for _, depth in agents) >= 3:
        found.add("depth-3-or-more")
    if any(agent.stateful_provider for agent, _ in agents):
        found.add("stateful-provider")
    if any(agent.window is not None for agent, _ in agents):
        found.add("sliding-window")
    if _colliding(scenario):
        found.add("colliding-ids")
    if _shared_tool_use_ids(scenario):
        found.add("shared-tool-use-ids")
    if any(_effect_before_a_question(agent) for agent, _ in agents):
        found.add("side-effects")
    if _calls_a_gated_sub_agent(scenario.tree):
        found.add("gated-agent-call")
    if _adversarial_ids(scenario):
        found.add("adversarial-ids")
    if _twin_session_calls(scenario.tree):
        found.add("twin-session-calls")
    for agent, _ in agents:
        for turn in (turn for _, turns in agent.scripts() for turn in turns):
            tools = [call.tool for call in turn]
            if len(tools) != len(set(tools)):
                found.add("twin-calls")
                found |= _twin_agent_calls(agent, tools)
            if _twin_prompts(agent, turn):
                found.add("twin-prompts")
            subs = {sub.tool for sub in agent.sub_agents}
            if any(tool in subs for tool in tools) and any(tool not in subs for tool in tools):
                found.add("mixed")
    found |= _step_classes(scenario)
    found |= _coverage_classes(scenario, found)
    return found


def _twin_agent_calls(agent: Agent, tools: list[str]) -> set[str]:
    """``twin-agent-calls`` when a turn's tools (``tools``) call one sub-agent twice or more."""
    twins = any(tools.count(sub.tool) >= 2 for sub in agent.sub_agents)
    return {"twin-agent-calls"} if twins else set()


def _twin_session_calls(agent: Agent, twice: bool = False) -> bool:
    """Whether a sub-agent that keeps its context across calls (``preserve_context``) can serve
    two calls at once below ``agent``: called twice or more in one of its caller's turns, or
    called at all by a caller that itself runs twice at once (``twice``: twin calls of it, or of
    an agent above it). One agent object, one history or one session then serves both."""
    for sub in agent.sub_agents:
        counts = [
            sum(call.tool == sub.tool for call in turn)
            for _, turns in agent.scripts()
            for turn in turns
        ]
        at_once = max(counts, default=0) >= 2 or (twice and any(counts))
        if (at_once and sub.preserve_context) or _twin_session_calls(sub, at_once):
            return True
    return False


def _twin_prompts(agent: Agent, turn: tuple[Call, ...]) -> bool:
    """The turn calls one sub-agent two or more times with different prompts, at least one of
    which it has a script of its own for (its ``prompts``): twins that act and answer apart."""
    subs = {sub.tool: sub for sub in agent.sub_agents}
    for name, sub in subs.items():
        prompts = {call.prompt for call in turn if call.tool == name}
        if len(prompts) >= 2 and prompts & set(sub.prompts):
            return True
    return False


def _colliding(scenario: Scenario) -> bool:
    """Two protected-action calls in different agents with the same toolUseId and tool name."""
    seen: dict[tuple[str, str], str] = {}
    for agent, _ in scenario.tree.walk():
        actions = {action.tool for action in agent.actions}
        for turn in (turn for _, turns in agent.scripts() for turn in turns):
            for call in turn:
                if call.tool in actions:
                    owner = seen.setdefault((call.tool, call.id), agent.name)
                    if owner != agent.name:
                        return True
    return False


def _shared_tool_use_ids(scenario: Scenario) -> bool:
    """Two calls that ask, in different agents, under one toolUseId, whatever their tools: a
    protected action's call, or the call of a gated sub-agent (its caller asks for the gate).
    A naming scheme that names a question by its toolUseId alone gives both one name, as
    strands-agents before 1.59 does; ``colliding-ids`` asks for the same tool as well, as a
    local id made of the tool and the toolUseId would."""
    seen: dict[str, str] = {}
    for agent, _ in scenario.tree.walk():
        asking = {action.tool for action in agent.actions}
        asking |= {sub.tool for sub in agent.sub_agents if sub.gate is not None}
        for turn in (turn for _, turns in agent.scripts() for turn in turns):
            for call in turn:
                if call.tool in asking:
                    owner = seen.setdefault(call.id, agent.name)
                    if owner != agent.name:
                        return True
    return False


def _effect_before_a_question(agent: Agent) -> bool:
    """An ordinary tool called in a turn no later than one that may ask (calls an action or a
    sub-agent): what its agent must not run again when it resumes."""
    effects = {effect.tool for effect in agent.effects}
    asking = {action.tool for action in agent.actions} | {sub.tool for sub in agent.sub_agents}
    for _, turns in agent.scripts():
        ran = False
        for turn in turns:
            tools = {call.tool for call in turn}
            ran = ran or bool(tools & effects)
            if ran and tools & asking:
                return True
    return False


def _calls_a_gated_sub_agent(agent: Agent) -> bool:
    """A turn calls a sub-agent with a gate, in an agent its callers' turns reach from the root:
    a caller that asks before the call, whose sub-agent may then ask in the same call."""
    subs = {sub.tool: sub for sub in agent.sub_agents}
    called = {call.tool for _, turns in agent.scripts() for turn in turns for call in turn}
    reached = [subs[name] for name in sorted(called & set(subs))]
    return any(sub.gate is not None or _calls_a_gated_sub_agent(sub) for sub in reached)


SEPARATORS: Final = ":/.#"
LONG: Final = 100  # characters: an id this long is a long id


def _adversarial_ids(scenario: Scenario) -> bool:
    """A long toolUseId, or two distinct ones of the scenario that a naming scheme may confuse:
    one the other's prefix up to a separator, one the other percent-escaped, or NFC/NFD
    twins."""
    ids = {
        call.id
        for agent, _ in scenario.tree.walk()
        for _, turns in agent.scripts()
        for turn in turns
        for call in turn
    }
    if any(len(tool_use_id) >= LONG for tool_use_id in ids):
        return True
    for one in ids:
        for other in ids - {one}:
            if one and other.startswith(one) and other[len(one)] in SEPARATORS:
                return True
            if unquote(one) == other:
                return True
            if normalize("NFC", one) == normalize("NFC", other):
                return True
    return False


def _step_classes(scenario: Scenario) -> set[str]:
    """The classes read off the steps and what the oracle expects of each.  With two root
    sessions each step is read against its own session's step before it (the oracle judges each
    session's steps as if the other's were not there), and a restart against each session it
    rebuilds: a restart of `b` while `a`'s question waits rebuilds nothing that waits."""
    found: set[str] = set()
    oracle = Oracle(scenario)
    started: set[str] = set()  # the sessions a run started
    previous: dict[str, Expected] = {}  # each session's last step's expectation
    for index, step in enumerate(scenario.steps):
        expected = oracle.step(index, step)
        if isinstance(step, Restart):
            for session in _rebuilt(step, scenario):
                before = previous.get(session)
                if step.tree is not None and before is not None and before.pending:
                    found.add("deploy-skew")
                if session not in started:
                    found.add("restart-before-a-run")
                elif before is not None and before.stop_reason == "end_turn":
                    found.add("restart-after-the-end")
                elif before is not None and before.pending:
                    found.add("restart-between-answers")
                # what the restart leaves: the same questions waiting, no turn just ended (the
                # oracle answers for the session a restart names, or for `a`)
                if session == _session_of(step):
                    previous[session] = expected
                elif before is not None:
                    previous[session] = replace(before, stop_reason=None)
            continue
        session = _session_of(step)
        before = previous.get(session)
        if isinstance(step, Run):
            started.add(session)
        if isinstance(step, Resend):
            found.add("resend")
        if isinstance(step, Corrupt):
            found.add("corruption")
        if _asks_together(step, before.pending if before else (), expected.pending):
            found.add("questions-asked-together")
        if isinstance(step, Answer) and before is not None:
            pending_labels = {label for label, _ in before.pending}
            if set(step.answer) < pending_labels:
                found.add("partial-answers")
            approved = {label for label, response in step.answer.items() if response == "approve"}
            if any(label in approved for label, _ in expected.pending):
                found.add("re-interrupt")
            # ... and an action's later question, however its earlier one was approved (by
            # call, by id, without an id): it asks only once an answer approved the one before
            if any(number >= 2 for _, number in set(expected.pending) - set(before.pending)):
                found.add("re-interrupt")
        previous[session] = expected
    if oracle.retried:
        found.add("retries")
    if "restart-between-answers" in found and not has_control(scenario):
        found.add("uncompared-restart")
    return found


def _session_of(step: Step) -> str:
    """The root session a step talks to: its own, or `a` (a restart of both, a corruption and a
    repair rebuild every session; the oracle answers for `a` there)."""
    session = getattr(step, "session", None)
    return session if isinstance(session, str) else "a"


def _rebuilt(restart: Restart, scenario: Scenario) -> tuple[str, ...]:
    """The root sessions ``restart`` rebuilds: the one it names, else every one the scenario's
    steps talk to."""
    if restart.session is not None:
        return (restart.session,)
    return tuple(sorted({_session_of(step) for step in scenario.steps}))


def _asks_together(
    step: Step, before: tuple[tuple[str, int], ...], after: tuple[tuple[str, int], ...]
) -> bool:
    """Whether ``step`` raises two or more questions at once: pending after it and not waiting
    before it, counting a question the step answers that its action asks again (the same label
    and number) as raised anew (an answer by id or without one may answer any of them)."""
    answered: set[str] = set()
    if isinstance(step, Answer):
        answered = set(step.answer) | set(step.answer_calls)
        if step.answer_ids or step.resume is not None:
            answered |= {label for label, _ in before}
    waiting = Counter(question for question in before if question[0] not in answered)
    return (Counter(after) - waiting).total() >= 2


def has_control(scenario: Scenario) -> bool:
    """Whether a restart-free run must look the same, so that the run is compared with it (its
    control: I5, I6, D): there are restarts, and none of them may legitimately change the
    outcome (no corruption, no deploy of a changed tree, no preserve_context sub-agent without a
    session store)."""
    restarts = any(isinstance(step, Restart) for step in scenario.steps)
    corrupts = any(isinstance(step, Corrupt) for step in scenario.steps)
    deploys = any(isinstance(step, Restart) and step.tree is not None for step in scenario.steps)
    storeless = any(
        agent.preserve_context and not agent.session_store for agent, _ in scenario.tree.walk()
    )
    return restarts and not corrupts and not deploys and not storeless


def retries_happen(scenario: Scenario) -> bool:
    """Whether the oracle makes a call again in ``scenario``: a call of a tool with a retry
    ends the way its retry names (a retry configured on a call that never ends so, or is never
    made, changes nothing)."""
    oracle = Oracle(scenario)
    for index, step in enumerate(scenario.steps):
        oracle.step(index, step)
    return oracle.retried > 0


def _coverage_classes(scenario: Scenario, found: set[str]) -> set[str]:
    """The classes of ``COVERAGE`` ``scenario`` belongs to, given its other classes ``found``."""
    shapes: set[str] = set()
    if "adversarial-ids" in found and _answers_something(scenario):
        shapes.add("adversarial-ids-answered")
    if "retries" in found and any(_retried_after_parking(sub) for sub, _ in scenario.tree.walk()):
        shapes.add("retried-parked-call")
    if "retries" in found and _retried_gated_call(scenario.tree):
        shapes.add("retried-gated-call")
    if "corruption" in found and _refused_restore_of_several(scenario):
        shapes.add("refused-restore-of-several")
    if _state_read_after_resume(scenario):
        shapes.add("state-read-after-resume")
    if scenario.two_sessions and _both_sessions_waiting(scenario):
        shapes.add("two-root-sessions")
    if _idle_restart(scenario):
        shapes.add("idle-restart")
    return shapes


def _idle_restart(scenario: Scenario) -> bool:
    """A preserve_context sub-agent with a session store, and a run after a restart that came
    while nothing waited (the turn before it had ended): if that run calls the sub-agent, only
    its stored session carries its history (a restart while a question waits restores a parked
    turn instead)."""
    keeps = any(agent.preserve_context and agent.session_store for agent, _ in scenario.tree.walk())
    if not keeps:
        return False
    oracle = Oracle(scenario)
    idle: set[str] = set()  # the sessions a restart rebuilt while nothing waited in them
    previous: dict[str, Expected] = {}  # each session's last step's expectation (as above)
    for index, step in enumerate(scenario.steps):
        expected = oracle.step(index, step)
        if isinstance(step, Restart):
            idle.update(
                session
                for session in _rebuilt(step, scenario)
                if session in previous and previous[session].stop_reason == "end_turn"
            )
        elif isinstance(step, Run) and _session_of(step) in idle:
            return True
        previous[_session_of(step)] = expected
    return False


def _both_sessions_waiting(scenario: Scenario) -> bool:
    """Two root sessions whose questions wait at once, and an answer given in one of them while
    the other's wait: one agent tool serving both must keep them apart."""
    oracle = Oracle(scenario)
    pending = {"a": False, "b": False}
    for index, step in enumerate(scenario.steps):
        session = getattr(step, "session", "a")
        expected = oracle.step(index, step)
        if isinstance(step, Answer) and all(pending.values()):
            return True
        if not isinstance(step, Restart):
            pending[session] = bool(expected.pending)
    return False


def _state_read_after_resume(scenario: Scenario) -> bool:
    """A sub-agent's tally effect runs in a turn no later than one that asks and again in a
    later turn (its state written before its question is read after the resume), and the
    scenario answers something with a restart before it: the stored turn must carry the
    state."""
    restarted = False
    answered = False
    for step in scenario.steps:
        restarted = restarted or isinstance(step, Restart)
        answered = answered or (restarted and isinstance(step, Answer))
    if not answered:
        return False
    return any(
        _tally_around_a_question(agent) for agent, depth in scenario.tree.walk() if depth > 1
    )


def _tally_around_a_question(agent: Agent) -> bool:
    tallies = {effect.tool for effect in agent.effects if effect.tally}
    asking = {action.tool for action in agent.actions} | {sub.name for sub in agent.sub_agents}
    for _, turns in agent.scripts():
        wrote = asked = False
        for turn in turns:
            tools = {call.tool for call in turn}
            if asked and tools & tallies:
                return True
            wrote = wrote or bool(tools & tallies)
            asked = asked or (wrote and bool(tools & asking))
    return False


def _answers_something(scenario: Scenario) -> bool:
    """An answer step names a question the oracle says is pending then (it is carried out, or
    refused only by a damaged store)."""
    oracle = Oracle(scenario)
    pending: dict[str, set[str]] = {}  # what waits in each session (its own steps' word)
    for index, step in enumerate(scenario.steps):
        session = _session_of(step)
        if isinstance(step, Answer) and set(step.answer) & pending.get(session, set()):
            return True
        pending[session] = {label for label, _ in oracle.step(index, step).pending}
    return False


def _retried_after_parking(agent: Agent) -> bool:
    """A sub-agent of ``agent`` its turns call, retried after its result, whose own turns ask (an
    action, or a sub-agent): every attempt of its call parks on a question before it ends."""
    called = {call.tool for _, turns in agent.scripts() for turn in turns for call in turn}
    for sub in agent.sub_agents:
        asks = {action.tool for action in sub.actions} | {inner.name for inner in sub.sub_agents}
        script = {call.tool for _, turns in sub.scripts() for turn in turns for call in turn}
        retried = sub.retry is not None and sub.retry.after == "result"
        if sub.name in called and retried and script & asks:
            return True
    return False


def _retried_gated_call(agent: Agent) -> bool:
    """A gated sub-agent with a retry, called by its caller's turns from the root."""
    called = {call.tool for _, turns in agent.scripts() for turn in turns for call in turn}
    reached = [sub for sub in agent.sub_agents if sub.name in called]
    return any(
        (sub.gate is not None and sub.retry is not None) or _retried_gated_call(sub)
        for sub in reached
    )


def _refused_restore_of_several(scenario: Scenario) -> bool:
    """A corruption while two or more questions (of different actions) wait under one call of
    one of the root's sub-agents: its stored turn is refused with all of them pending."""
    owner: dict[str, str] = {}  # action label -> the root's sub-agent it sits under
    for sub in scenario.tree.sub_agents:
        for agent, _ in sub.walk():
            owner.update({action.label: sub.name for action in agent.actions})
    oracle = Oracle(scenario)
    pending: set[str] = set()
    for index, step in enumerate(scenario.steps):
        if isinstance(step, Corrupt):
            under = [owner[label] for label in pending if label in owner]
            if any(under.count(name) >= 2 for name in under):
                return True
        pending = {label for label, _ in oracle.step(index, step).pending}
    return False

"""I16: every request a model is sent is a well-formed conversation on its own.

Judged on the run's own model requests alone, never against the restart-free control: a
framework that restores a parked conversation wrongly does so in the control as well when the
control restores at the same points (``--isolation process``), and then D and I6 compare two
equally broken runs.  What each request carried is journaled as its shape (``sent``,
``fakes.model.sent``): the prompts, each reply with its marker (prompt and turn) and the
toolUseIds it calls, each results message with the toolUseIds it answers.  A request is
well-formed when

* every tool use of a reply is answered by exactly one result in the results that follow that
  reply, before the next reply or prompt (a marked reply followed by unmarked items, each call an
  item of its own, is one reply; results may come in any order among themselves, as the
  providers accept);
* no result answers a toolUseId its reply did not use (or follows no reply at all);
* nothing of the turn it plays is lost: a request for turn ``t`` of prompt ``p`` carries the
  prompt ``p`` and after it the replies of turns 0 to ``t - 1`` of ``p``, in order, and no
  other prompt's reply (a parked sub-agent turn, once resumed, is sent with every message it
  had before its question).  An agent with a sliding window keeps only its last messages, so
  this last rule is not applied to it.

A malformed message travels in every later request of its conversation: each problem is
reported once per agent, at the step of the first request that shows it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Final

from harness.checkers.records import sub_agent_paths
from harness.checkers.violation import Invariant, Violation
from harness.history import History
from scenarios.tree import Agent

WELL_FORMED_CONVERSATION: Final = Invariant("I16", "well-formed-conversation")

ANSWERED: Final = "each tool use answered by exactly one result right after its reply"
NO_STRAY_RESULT: Final = "every tool result answers a tool use of the reply it follows"
NOTHING_LOST: Final = "the request carries its prompt and every earlier reply of that prompt"


def well_formed_conversation(history: History) -> list[Violation]:
    windowed = _windowed(history)
    seen: set[tuple[str, str, str]] = set()
    violations: list[Violation] = []
    for step in history.steps:
        for request in step.requests:
            shape = request.get("sent")
            if not isinstance(shape, list):  # a history recorded before requests had shapes
                continue
            agent = str(request.get("agent"))
            problems = _pairing(shape)
            if agent not in windowed:
                problems += _lost(shape, str(request.get("prompt")), int(request.get("turn", 0)))
            for expected, problem in problems:
                if (agent, expected, problem) in seen:
                    continue
                seen.add((agent, expected, problem))
                where = (
                    f"{agent}'s request for turn {request.get('turn')} of {request.get('prompt')!r}"
                )
                violations.append(
                    WELL_FORMED_CONVERSATION.violation(step.index, expected, f"{where}: {problem}")
                )
    return violations


def _pairing(shape: list[Any]) -> list[tuple[str, str]]:
    """What breaks the pairing of tool uses and results in one request: (rule, problem).  A
    use whose result stands after a later reply instead is one problem, not two (a use with no
    result, a stray result): the result is misplaced."""
    unanswered: list[tuple[str, str, int]] = []  # (tool use id, its reply, results it has)
    strays: list[tuple[str, str]] = []  # (tool use id, the reply its result follows)
    uses: list[str] = []  # the tool uses of the reply the results that follow answer
    results: list[str] = []
    reply = "no reply"  # how the current reply is named
    in_reply = False  # the previous entry was part of a reply (one reply may be several items)

    def settle() -> None:
        wanted, got = Counter(uses), Counter(results)
        for tool_use_id in dict.fromkeys(uses):
            if got[tool_use_id] != wanted[tool_use_id]:
                unanswered.append((tool_use_id, reply, got[tool_use_id]))
        for tool_use_id in dict.fromkeys(results):
            if not wanted[tool_use_id]:
                strays.append((tool_use_id, reply))

    for entry in shape:
        entry = entry if isinstance(entry, dict) else {}
        if "reply" in entry:
            if not in_reply or _marker(entry["reply"]):  # an unmarked item continues a reply
                settle()
                uses, results, reply = [], [], _reply_name(entry["reply"])
            uses += [str(tool_use_id) for tool_use_id in entry.get("uses", [])]
            in_reply = True
            continue
        in_reply = False
        if "results" in entry:
            results += [str(tool_use_id) for tool_use_id in entry["results"]]
        elif "prompt" in entry:
            settle()
            uses, results, reply = [], [], "the prompt"
    settle()
    problems: list[tuple[str, str]] = []
    placed = {tool_use_id: where for tool_use_id, where in strays}
    for tool_use_id, used_by, count in unanswered:
        where = placed.pop(tool_use_id, None) if count == 0 else None
        if where is not None:
            problems.append(
                (ANSWERED, f"tool use {tool_use_id!r} of {used_by} has its result after {where}")
            )
        else:
            problems.append(
                (ANSWERED, f"tool use {tool_use_id!r} of {used_by} has {_results(count)}")
            )
    problems += [
        (NO_STRAY_RESULT, f"a result for {tool_use_id!r} follows {_no_use(where)}")
        for tool_use_id, where in strays
        if tool_use_id in placed
    ]
    return problems


def _lost(shape: list[Any], prompt: str, turn: int) -> list[tuple[str, str]]:
    """What a request for ``turn`` of ``prompt`` lost of its own conversation: (rule, problem)."""
    entries = [entry if isinstance(entry, dict) else {} for entry in shape]
    starts = [i for i, entry in enumerate(entries) if entry.get("prompt") == prompt]
    if not starts:
        return [(NOTHING_LOST, "its prompt is missing")]
    replies = [
        entry["reply"] for entry in entries[starts[-1] + 1 :] if entry.get("reply") is not None
    ]
    played = [(str(mark[0]), int(mark[1])) for mark in replies if _marker(mark)]
    problems: list[tuple[str, str]] = []
    foreign = sorted({p for p, _ in played if p != prompt})
    if foreign:
        problems.append((NOTHING_LOST, f"after its prompt, replies of {foreign}"))
    own = [index for p, index in played if p == prompt]
    if own != list(range(turn)):
        missing = sorted(set(range(turn)) - set(own))
        shown = f"replies {own}" if own else "no reply"
        lost = f" (missing {missing})" if missing else ""
        problems.append((NOTHING_LOST, f"after its prompt, {shown} of turns 0 to {turn - 1}{lost}"))
    return problems


def _marker(mark: Any) -> bool:
    return isinstance(mark, list) and len(mark) == 2 and isinstance(mark[1], int)


def _reply_name(mark: Any) -> str:
    if _marker(mark):
        return f"reply {mark[1]} of {mark[0]!r}"
    return "an unmarked reply"


def _no_use(reply: str) -> str:
    return "no reply" if reply in ("no reply", "the prompt") else f"{reply}, which did not use it"


def _results(count: int) -> str:
    return "no result" if count == 0 else ("1 result" if count == 1 else f"{count} results")


def _windowed(history: History) -> frozenset[str]:
    """Journal paths of the agents with a sliding window, in the tree or any deploy's tree."""
    trees = [history.scenario["tree"]] + [
        step["restart"]["tree"]
        for step in history.scenario.get("steps", [])
        if isinstance(step, dict)
        and isinstance(step.get("restart"), dict)
        and "tree" in step["restart"]
    ]
    paths: set[str] = set()
    for data in trees:
        tree = Agent.model_validate(data)
        if tree.window is not None:
            paths.add(tree.name)
        paths |= {path for path, agent in sub_agent_paths(tree) if agent.window is not None}
    return frozenset(paths)

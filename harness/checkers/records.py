"""Read-only views of recorded steps, shared by the checkers, and how to say them in a sentence.

A pending interrupt is read as ``(label, question, root-visible id)``: the label and question
number come from its reason (``{"action": label, "question": n, "of": total}``), so checkers
never depend on how a target spells ids.  Every list returned here is sorted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, Final

from fakes.effects import EFFECT, is_effect
from harness.history import History, StepRecord
from scenarios.tree import Agent

CONVERSATION: Final = frozenset({"run", "answer", "resend"})  # steps that talk to the root
UNLABELLED: Final = "?"  # a pending interrupt whose reason names no protected action

Question = tuple[str, int]  # (action label, question number)
Shown = tuple[str, int, str]  # (action label, question number, root-visible id)
Run = tuple[str, str, str]  # an ordinary tool's run: (agent path, tool, toolUseId)
Served = tuple[str, str, str]  # (action label, its agent's path, the prompt of the call it served)


def is_conversation(step: StepRecord) -> bool:
    return step.kind in CONVERSATION


def succeeded(step: StepRecord) -> bool:
    """A run, answer or resend that ended with a stop reason (did not fail)."""
    return is_conversation(step) and step.observed.get("stop_reason") is not None


def label_of(pending: dict[str, Any]) -> str:
    label = pending.get("label")
    return label if isinstance(label, str) else UNLABELLED


def question_of(pending: dict[str, Any]) -> int:
    reason = pending.get("reason")
    number = reason.get("question") if isinstance(reason, dict) else None
    return number if isinstance(number, int) else 0


def shown(step: StepRecord) -> list[Shown]:
    """The pending interrupts the root showed after ``step``."""
    return sorted(
        (label_of(pending), question_of(pending), str(pending.get("id")))
        for pending in step.pending
    )


def shown_questions(step: StepRecord) -> list[Question]:
    return sorted((label, question) for label, question, _ in shown(step))


def expected_questions(step: StepRecord) -> list[Question]:
    return sorted((str(label), int(question)) for label, question in step.expected["pending"])


def executed(step: StepRecord) -> list[str]:
    """Labels of the protected actions the ledger gained during ``step``."""
    return sorted(str(record.get("action")) for record in step.executions if not is_effect(record))


def effects_run(step: StepRecord) -> list[Run]:
    """The ordinary tools' runs the ledger gained during ``step``."""
    return sorted(
        (str(record.get("agent")), str(record[EFFECT]), str(record.get("tool_use_id")))
        for record in step.executions
        if is_effect(record)
    )


def expected_effects(step: StepRecord) -> list[Run]:
    """The ordinary tools' runs the oracle says ``step`` makes (none recorded: none)."""
    return sorted(
        (str(agent), str(tool), str(tool_use_id))
        for agent, tool, tool_use_id in step.expected.get("effects", ())
    )


def run_text(run: Run) -> str:
    agent, tool, tool_use_id = run
    return f"{tool} of {agent} (toolUseId {tool_use_id!r})"


def expected_executed(step: StepRecord) -> list[str]:
    return sorted(str(label) for label in step.expected["executions"])


def served(step: StepRecord) -> list[Served] | None:
    """The call each protected action's execution of ``step`` served, from the ledger; None
    when a record does not name its call (its agent's path and prompt).  Ordinary tools' runs
    are I15's, not read here."""
    calls: list[Served] = []
    for record in step.executions:
        if is_effect(record):
            continue
        agent, prompt = record.get("agent"), record.get("prompt")
        if not isinstance(agent, str) or not isinstance(prompt, str):
            return None
        calls.append((str(record.get("action")), agent, prompt))
    return sorted(calls)


def expected_served(step: StepRecord) -> list[Served] | None:
    """The call each expected execution serves; None for a history recorded without them."""
    calls = step.expected.get("served")
    if calls is None:
        return None
    return sorted((str(label), str(path), str(prompt)) for label, path, prompt in calls)


def call_text(call: Served) -> str:
    """A call as a sentence names it: its call chain and its prompt."""
    return f"{call[1]} {call[2]!r}"


def error_of(step: StepRecord) -> str | None:
    error = step.observed.get("error")
    return None if error is None else str(error)


def without_restarts(steps: Iterable[StepRecord]) -> list[StepRecord]:
    """The steps a restart-free control run has counterparts for, in order."""
    return [step for step in steps if step.kind != "restart"]


def tree_of(history: History) -> Agent:
    return Agent.model_validate(history.scenario["tree"])


def question_text(question: Question) -> str:
    label, number = question
    return f"{label}#{number}"


def shown_text(item: Shown) -> str:
    label, number, interrupt_id = item
    return f"{label}#{number} as {interrupt_id!r}"


def changed_by(step: StepRecord, before: list[Shown]) -> list[tuple[str, str]]:
    """What a step that had to be refused changed, as (expected, seen) pairs: what ran, and what
    is pending unlike what was shown before it (I9 and I14 both require nothing)."""
    found: list[tuple[str, str]] = []
    if executed(step):  # an ordinary tool's run is I15's to report
        found.append(("nothing runs", "ran " + listing(executed(step))))
    now = shown(step)
    if now != before:
        kept, pending = pending_texts(map(shown_text, before), map(shown_text, now))
        found.append(("still " + kept, pending))
    return found


def pending_texts(expected: Iterable[str], seen: Iterable[str]) -> tuple[str, str]:
    """What should be pending and what is, as a violation says them: ``pending A#1, B#1`` and
    ``pending A#1, C#1 (missing B#1; extra C#1)``.  The seen sentence names the difference, so
    a recorded witness can say which way a bug goes (a question lost, or one asked that should
    not be) instead of excusing any difference in what is pending."""
    wanted, shown_now = list(expected), list(seen)
    missing, extra = _without(wanted, shown_now), _without(shown_now, wanted)
    parts = [
        f"{word} {', '.join(items)}"
        for word, items in (("missing", missing), ("extra", extra))
        if items
    ]
    difference = f" ({'; '.join(parts)})" if parts else ""
    return "pending " + listing(wanted), "pending " + listing(shown_now) + difference


def _without(items: list[str], taken: list[str]) -> list[str]:
    """``items`` less one of each of ``taken`` (a multiset difference), in ``items``' order."""
    left = Counter(taken)
    kept = []
    for item in items:
        if left[item]:
            left[item] -= 1
        else:
            kept.append(item)
    return kept


def listing(items: Iterable[str]) -> str:
    text = ", ".join(items)
    return text or "nothing"


def times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def brief(text: str, limit: int = 120) -> str:
    """The first line of an error message, cut to ``limit`` characters."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def sub_agent_paths(tree: Agent, path: str = "") -> Iterator[tuple[str, Agent]]:
    """Every sub-agent (not the root) with its journal path: the names from the root down,
    joined by "/" ("orchestrator/worker")."""
    here = f"{path}/{tree.tool}" if path else tree.name
    if path:
        yield here, tree
    for sub in tree.sub_agents:
        yield from sub_agent_paths(sub, here)

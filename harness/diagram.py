"""A recorded history drawn as a Mermaid sequence diagram: a picture of a bug.

Lifelines: the human, the orchestrator, each sub-agent (by its path) and each protected action
(by its label).  Each step reads as the human sees it: a prompt or an answer going down (an
answer under the root-visible id it names, down the call path to the action that asked), the
sub-agent calls the step's model requests show (a sub-agent's first turn for a prompt), each
execution the ledger recorded, each question going up when it is first shown (under the
root-visible id the human is shown), the final answer and any error.  A restart (or a deploy, a
corruption, a repair) is a note across every lifeline, as a separator; the steps where expected
and seen part (the given violations) are shaded, each with a note naming the first violation
there.

Only what the history recorded is drawn, so the same history gives the same text, and GitHub
renders it in Markdown files and pull-request comments (a ```mermaid block).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import Final

from harness.checkers.violation import Violation
from harness.history import History, StepRecord
from scenarios.model import Agent

HUMAN: Final = "H"
WIDTH: Final = 90  # characters of a message or note kept; the rest elided
PARTED: Final = "rect rgb(255, 228, 228)"  # where expected and seen part
ENTITIES: Final = {"#": "#35;", ";": "#59;", "<": "#60;", ">": "#62;"}


def text(value: object) -> str:
    """``value`` as Mermaid message text: one line, elided, with the characters Mermaid reads
    as syntax (``;`` ends a statement, ``#`` starts an entity, ``<`` ``>`` are markup) written as
    entities."""
    flat = " ".join(str(value).split())
    if len(flat) > WIDTH:
        flat = flat[: WIDTH - 1] + "…"
    return "".join(ENTITIES.get(character, character) for character in flat)


class Lifelines:
    """The participants of one tree: the human, every agent by path, every action by label."""

    def __init__(self, tree: Agent) -> None:
        self.agents: dict[str, str] = {}  # path -> participant id
        self.actions: dict[str, tuple[str, str]] = {}  # label -> (participant id, agent path)
        self.names: dict[str, str] = {}  # participant id -> what it shows
        self._add(tree, tree.name)

    def _add(self, agent: Agent, path: str) -> None:
        self.agents[path] = f"A{len(self.agents)}"
        self.names[self.agents[path]] = path
        for action in agent.actions:
            participant = f"X{len(self.actions)}"
            self.actions.setdefault(action.label, (participant, path))
            self.names.setdefault(participant, f"{action.label} (action)")
        for sub in agent.sub_agents:
            if sub.gate is not None:  # its caller asks the gate: drawn at the caller
                self.actions.setdefault(sub.gate, (self.agents[path], path))
            self._add(sub, f"{path}/{sub.tool}")

    def declarations(self) -> list[str]:
        lines = [f"    actor {HUMAN} as human"]
        lines += [f"    participant {key} as {text(name)}" for key, name in self.names.items()]
        return lines

    def last(self) -> str:
        return list(self.names)[-1]

    def chain(self, label: str | None) -> list[str]:
        """The participants from the root down to the one that asks ``label``."""
        participant, path = self.actions.get(str(label), ("", ""))
        parts = path.split("/") if path else []
        ids = [self.agents["/".join(parts[: n + 1])] for n in range(len(parts))]
        return ids + ([participant] if participant and participant not in ids else [])


def diagram(history: History, violations: Sequence[Violation] = ()) -> str:
    """The history as a ``sequenceDiagram``, the steps of ``violations`` shaded."""
    lines = Lifelines(Agent.model_validate(history.scenario["tree"]))
    parted: dict[int, Violation] = {}
    for violation in violations:
        if violation.step is not None:
            parted.setdefault(violation.step, violation)
    out = ["sequenceDiagram", *lines.declarations()]
    shown: set[str] = set()  # the ids the human was shown: a question goes up once
    for step in history.steps:
        drawn = list(_step(step, lines, shown))
        first = parted.get(step.index)
        if first is not None:
            note = f"{first.invariant}: expected {first.expected}, seen {first.seen}"
            drawn = [
                f"    {PARTED}",
                *(f"    {line}" for line in drawn),
                f"        Note over {HUMAN},{lines.last()}: step {step.index}: {text(note)}",
                "    end",
            ]
        out += drawn
    return "\n".join(out) + "\n"


def _step(step: StepRecord, lines: Lifelines, shown: set[str]) -> Iterator[str]:
    across = f"{HUMAN},{lines.last()}"
    root = lines.agents[next(iter(lines.agents))]
    if step.kind not in {"run", "answer", "resend"}:
        what = "deploy" if isinstance(step.step.get("restart"), dict) else step.kind
        note = f"{what}: every object rebuilt from storage"
        if step.kind in {"corrupt", "repair"}:
            note = f"{what} {step.step.get(step.kind, '')}, then a restart"
        yield f"    Note over {across}: {text(note)}"
        return
    if step.kind == "run":
        yield f"    {HUMAN}->>{root}: {text(step.step.get('run'))}"
    for answered in step.answered:
        chain = lines.chain(answered.get("label"))
        sent = f"{answered.get('label')}: {answered.get('response')} (id {answered.get('id')})"
        yield f"    {HUMAN}->>{root}: {text(('re-sent ' if step.kind == 'resend' else '') + sent)}"
        for upper, lower in pairwise(chain):
            yield f"    {upper}->>{lower}: {text(answered.get('response'))}"
    called: set[tuple[str, str]] = set()
    for request in step.requests:
        path = str(request.get("agent", ""))
        prompt = str(request.get("prompt", ""))
        if "/" in path and request.get("turn") == 0 and (path, prompt) not in called:
            called.add((path, prompt))
            parent = lines.agents.get(path.rsplit("/", 1)[0])
            if parent is not None and path in lines.agents:
                yield f"    {parent}->>{lines.agents[path]}: call: {text(prompt)}"
    for record in step.executions:
        if "action" in record:
            participant = lines.actions.get(str(record["action"]), ("", ""))[0]
            if participant:
                yield f"    Note over {participant}: {text('ran ' + str(record['action']))}"
    for item in step.pending:
        if str(item.get("id")) in shown:
            continue
        shown.add(str(item.get("id")))
        chain = lines.chain(item.get("label"))
        question = (
            item.get("reason", {}).get("question", "?")
            if isinstance(item.get("reason"), dict)
            else "?"
        )
        asked = f"{item.get('label')}#{question}"
        for lower, upper in pairwise(chain[::-1]):
            yield f"    {lower}-->>{upper}: {text('asks ' + asked)}"
        yield f"    {root}-->>{HUMAN}: {text(asked + ' as ' + str(item.get('id')))}"
    final = step.observed.get("final_answer")
    if final is not None:
        yield f"    {root}-->>{HUMAN}: {text('final answer: ' + str(final))}"
    error = step.observed.get("error")
    if error is not None:
        yield f"    Note over {HUMAN},{root}: {text('error: ' + str(error))}"

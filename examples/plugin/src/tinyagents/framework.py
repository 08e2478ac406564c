"""The framework: an agent that calls tools, a tool that asks a human, a sub-agent as a tool.

An agent's whole state is one JSON-able dict (``Agent.state``): its messages, and the turn it
parked while tools wait for answers.  A sub-agent called as a tool keeps its state inside its
caller's parked turn, so storing the root's state stores the whole tree.

Known bug of 0.1.0 (recorded in ``findings/tinyagents-0.1.0.yaml``): a sub-agent's questions are
shown to the caller under the sub-agent's own ids, not renamed per call (see ``shown_id``).  Two
sub-agents whose models used the same toolUseId therefore ask under the same id, and one answer
reaches both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import quote

Message = dict[str, Any]
Model = Callable[[list[Message]], Message]  # the conversation so far -> the assistant's reply


class TinyError(RuntimeError):
    """A call the agent cannot make (a prompt while questions wait, an unknown tool)."""


@dataclass(frozen=True)
class Question:
    id: str
    name: str
    reason: Any
    response: Any = None  # never filled in: answers go to ``Agent.resume``


class Interrupted(Exception):
    def __init__(self, questions: tuple[Question, ...]) -> None:
        super().__init__(questions)
        self.questions = questions


@dataclass(frozen=True)
class Result:
    stop_reason: str  # "interrupt" or "end_turn"
    interrupts: tuple[Question, ...] = ()
    text: str | None = None


class Call:
    """What a tool sees of one call: its id, and a slot of the parked turn that outlives it."""

    def __init__(self, use_id: str, slot: dict[str, Any]) -> None:
        self.use_id = use_id
        self.slot = slot

    def ask(self, name: str, reason: Any) -> Any:
        """The human's answer to this question, or an interrupt asking it."""
        question_id = f"{quote(self.use_id, safe='')}:{name}"
        if question_id in self.slot["answers"]:
            return self.slot["answers"][question_id]
        raise Interrupted((Question(question_id, name, reason),))


Tool = Callable[[dict[str, Any], Call], str]


class Agent:
    def __init__(
        self, model: Model, tools: Mapping[str, Tool], state: dict[str, Any] | None = None
    ) -> None:
        self.model = model
        self.tools = tools
        self.state = state if state is not None else {"messages": [], "parked": None}

    def invoke(self, prompt: str) -> Result:
        if self.state["parked"] is not None:
            raise TinyError("questions are waiting: resume with their answers first")
        self.state["messages"].append({"role": "user", "content": [{"text": prompt}]})
        return self._loop()

    def resume(self, answers: Mapping[str, Any]) -> Result:
        parked = self.state["parked"]
        if parked is None:
            raise TinyError("no question is waiting")
        for slot in parked["waiting"].values():
            for question in slot["questions"]:
                if question["id"] in answers:
                    slot["answers"][question["id"]] = answers[question["id"]]
        return self._loop()

    def pending(self) -> tuple[Question, ...]:
        parked = self.state["parked"] or {"waiting": {}}
        return tuple(
            Question(**question)
            for slot in parked["waiting"].values()
            for question in slot["questions"]
        )

    def _loop(self) -> Result:
        while True:
            if self.state["parked"] is None:
                reply = self.model(self.state["messages"])
                self.state["messages"].append(reply)
                uses = [block["toolUse"] for block in reply["content"] if "toolUse" in block]
                if not uses:
                    return Result("end_turn", text=reply["content"][0]["text"])
                self.state["parked"] = {"uses": uses, "results": {}, "waiting": {}}
            parked = self.state["parked"]
            asked: list[Question] = []
            for position, use in enumerate(parked["uses"]):
                key = str(position)
                if key in parked["results"]:
                    continue
                if use["name"] not in self.tools:
                    raise TinyError(f"no tool named {use['name']!r}")
                empty: dict[str, Any] = {"answers": {}, "questions": [], "memory": {}}
                slot = parked["waiting"].setdefault(key, empty)
                try:
                    parked["results"][key] = self.tools[use["name"]](
                        use["input"], Call(use["toolUseId"], slot)
                    )
                except Interrupted as stop:
                    slot["questions"] = [asdict(question) for question in stop.questions]
                    asked += stop.questions
                else:
                    del parked["waiting"][key]
            if asked:
                return Result("interrupt", tuple(asked))
            self.state["messages"].append({"role": "user", "content": _results(parked)})
            self.state["parked"] = None


def _results(parked: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "toolResult": {
                "toolUseId": use["toolUseId"],
                "content": [{"text": parked["results"][str(position)]}],
            }
        }
        for position, use in enumerate(parked["uses"])
    ]


def shown_id(use_id: str, inner_id: str) -> str:
    """The id a caller shows for its sub-agent's question ``inner_id``, asked in call ``use_id``.

    The bug of 0.1.0: ``inner_id`` as it is.  The fix: ``f"{quote(use_id, safe='')}/{inner_id}"``.
    """
    return inner_id


def agent_tool(make: Callable[[dict[str, Any] | None], Agent]) -> Tool:
    """A sub-agent as a tool: ``make(state)`` builds it, fresh (None) or from its parked state;
    its questions become the call's, and the answers to them resume it."""

    def call(tool_input: dict[str, Any], here: Call) -> str:
        memory = here.slot["memory"]
        if "state" not in memory:
            agent = make(None)
            memory["state"], memory["inner"] = agent.state, {}
            result = agent.invoke(tool_input["prompt"])
        else:
            agent = make(memory["state"])
            answers = here.slot["answers"]
            result = agent.resume({memory["inner"][shown]: answers[shown] for shown in answers})
        if result.stop_reason == "interrupt":
            shown = tuple(
                Question(shown_id(here.use_id, q.id), q.name, q.reason) for q in result.interrupts
            )
            memory["inner"].update(
                {s.id: q.id for s, q in zip(shown, result.interrupts, strict=True)}
            )
            raise Interrupted(shown)
        return result.text or ""

    return call

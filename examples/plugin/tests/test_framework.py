"""tinyagents on its own, without the harness: an interrupt asked three levels down and resumed."""

from __future__ import annotations

from typing import Any

from tinyagents.framework import Agent, Call, Message, agent_tool


def scripted(*replies: Message) -> Any:
    """A model that plays ``replies`` in order, one per request."""
    queue = list(replies)
    return lambda messages: queue.pop(0)


def calls(tool: str, use_id: str, **tool_input: Any) -> Message:
    use = {"toolUseId": use_id, "name": tool, "input": tool_input}
    return {"role": "assistant", "content": [{"text": "calling"}, {"toolUse": use}]}


def says(text: str) -> Message:
    return {"role": "assistant", "content": [{"text": text}]}


def test_a_sub_agents_question_reaches_the_root_and_its_answer_resumes_it() -> None:
    ran: list[str] = []

    def deploy(tool_input: dict[str, Any], call: Call) -> str:
        if call.ask("approval", {"action": "deploy"}) == "approve":
            ran.append("deploy")
        return "deployed"

    worker_model = scripted(calls("deploy", "t1"), says("worker done"))
    worker = agent_tool(lambda state: Agent(worker_model, {"deploy": deploy}, state))
    root = Agent(
        scripted(calls("worker", "c1", prompt="ship it"), says("all done")), {"worker": worker}
    )

    asked = root.invoke("release")
    assert asked.stop_reason == "interrupt"
    assert [question.reason for question in asked.interrupts] == [{"action": "deploy"}]
    assert ran == []
    done = root.resume({asked.interrupts[0].id: "approve"})
    assert (done.stop_reason, done.text, ran) == ("end_turn", "all done", ["deploy"])
    assert root.pending() == ()

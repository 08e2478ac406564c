"""tinyagents' reproducer hook, found through the ``nested_interrupt_harness.repro`` entry point:
``python -m harness repro FILE --target tinyagents`` writes a script that imports only tinyagents
and the standard library, for this framework's tracker.

The section (``SECTION``, pasted into the script) builds the tree with tinyagents' public API: a
model is a function from the conversation to the assistant's reply, a protected action a tool
asking through ``Call.ask``, a sub-agent ``agent_tool``.  The root's state (the whole tree's) is
written to a file in the script's storage directory after every step, and a restart (the script
going on in a new process) builds the tree again from that file, as the adapter
(``harness_target``) keeps it.  tinyagents has no public events and no sessions: a sub-agent
keeps its state in its caller's parked turn, so a scenario with a ``preserve_context`` sub-agent
is refused.
"""

from __future__ import annotations

from typing import Final

from harness.repro import Hook

IMPORTS: Final = """\
import json
import re
import subprocess  #?restart
import sys  #?restart
import tempfile
from collections import namedtuple
from functools import partial
from pathlib import Path

from tinyagents.framework import Agent, TinyError, agent_tool
"""

SECTION: Final = r'''
def scripted(spec: dict, path: str):  # the LLM's stand-in: it answers the turn its script has
    def reply(messages: list) -> dict:
        said = [(m["role"], b["text"]) for m in messages for b in m["content"] if "text" in b]
        text, calls = next_turn(spec, path, said)
        uses = [{"toolUse": {"toolUseId": use_id, "name": name,
                             "input": {"prompt": given["input"]} if "input" in given else given}}
                for name, use_id, given in calls]
        return {"role": "assistant", "content": [{"text": text}, *uses]}

    return reply


def action(label: str, questions: int = 1):
    def run(tool_input: dict, call) -> str:
        """A protected action: it runs only with a human's approval."""
        for number in range(1, questions + 1):
            reason = {"action": label, "question": number, "prompt": tool_input.get("call")}
            if call.ask(f"approval-{number}", reason) != "approve":
                return f"{label}: refused"
        RAN.append(label)
        return f"{label}: done"

    return run


def agent(spec: dict, path: str, state: dict | None) -> Agent:
    actions, asks = spec.get("actions", {}), spec.get("questions", {})
    tools = {name: action(label, asks.get(label, 1)) for name, label in actions.items()}
    for sub in spec.get("subs", []):  # a sub-agent's tool builds it fresh, or from its state
        tools[sub["name"]] = agent_tool(partial(agent, sub, f"{path}/{sub['name']}"))
    return Agent(scripted(spec, path), tools, state)


def build(store: str) -> dict:
    """The tree, from the root's stored state if a step stored one."""
    saved = Path(store, "root.json")
    state = json.loads(saved.read_text()) if saved.exists() else None
    return {"root": agent(TREE, TREE["name"], state), "saved": saved}


def advance(app: dict, given: str | list) -> tuple:
    """One step: (stop reason, questions pending, final answer, error, public events)."""
    root = app["root"]
    try:
        result = root.invoke(given) if isinstance(given, str) else root.resume(dict(given))
    except TinyError as failure:
        pending = [Pending(q.id, **q.reason) for q in root.pending()]
        return None, pending, None, f"TinyError: {failure}", []
    finally:
        app["saved"].write_text(json.dumps(root.state))
    pending = [Pending(q.id, **q.reason) for q in result.interrupts]
    final = result.text if result.stop_reason == "end_turn" else None
    return result.stop_reason, pending, final, None, []
'''

HOOK: Final = Hook(
    distribution="tinyagents",
    imports=IMPORTS,
    section=SECTION,
    # a sub-agent keeps its turn in its caller's parked turn: no session of its own
    cannot={"preserve_context": lambda agent: agent.preserve_context},
    events=False,
    refuses={"resume": "Agent.resume takes answers keyed by question id only"},
)

"""The reproducer's text, shared by every SDK: the header, the step records, the scripted
model's choice of turn, and the steps with their plain checks.

An SDK's section (``harness.repro.sdks``) sits between them and defines ``build(store)`` (the
whole tree, restored from the directory ``store`` where the SDK's storage keeps it) and
``advance(app, given)`` (one run or answer: ``given`` is the prompt, or a list of ``(interrupt
id, response)``) returning ``Seen``.  Placeholders are ``@NAME@`` (replaced, never formatted, so
the script's own braces stay as written).
"""

from __future__ import annotations

from typing import Final

HEADER: Final = '''\
"""Reproducer: @NAME@ on @SDK@.

@SYMPTOM@

Written against @SDK@ @RELEASE@ (pip install @PIP@);
it imports only the SDK and the standard library. A scripted model stands in for the LLM; each
restart drops every object and rebuilds the agents from storage in a temporary directory. It
prints what it saw and exits 1 while the bug is there, 0 once it is fixed.
"""
'''

RECORDS: Final = r'''
RAN: list[str] = []  # the protected actions that ran, in order (outlives restarts)
PLAYED: list[tuple] = []  # each model turn: (step, agent path, prompt, turn, calls tools)
STEP = [0]
MARK = re.compile(r'^\[\[turn (\d+) of ("(?:[^"\\]|\\.)*")\]\]')
Pending = namedtuple("Pending", "id action question prompt")
Seen = namedtuple("Seen", "stop pending final error events")


def next_turn(agent: dict, path: str, said: list) -> tuple[str, str, list | str]:
    """(marker, prompt, turn) read off the conversation ((role, text) pairs), never off a
    counter: the latest prompt's first turn, or the turn after the latest marked reply."""
    prompt, index = None, 0
    for role, text in said:
        found = MARK.match(text) if role == "assistant" else None
        if role == "user":
            prompt, index = text, 0
        elif found:
            prompt, index = json.loads(found.group(2)), int(found.group(1)) + 1
    turns = agent["turns"]
    turns = turns.get(prompt, turns["*"]) if isinstance(turns, dict) else turns
    PLAYED.append((STEP[0], path, prompt, index, index < len(turns) - 1))
    return f"[[turn {index} of {json.dumps(prompt)}]]", prompt, turns[min(index, len(turns) - 1)]
'''

CHECKS: Final = r'''
def judge(index: int, want: list, seen: Seen, ran: list[str]) -> list[str]:
    pending, ran_, final, error = want
    problems = [f"expected {ran_} to run; ran {ran}"] if sorted(ran) != ran_ else []
    if error == "required" and seen.error is None:
        problems.append("expected the step to be refused loudly; it was not")
    if error == "forbidden" and seen.error is not None:
        problems.append(f"expected no error; saw {seen.error}")
    if seen.stop is not None and shown(seen) != pending:
        problems.append(f"expected pending {pending}; saw {shown(seen)}")
    if final is not None and seen.final != final:
        problems.append(f"expected final answer {final!r}; saw {seen.final!r}")
    # a sub-agent's turn from an earlier step (not played again now) in this step's events
    now = {(path, prompt, turn) for step, path, prompt, turn, _ in PLAYED if step == index}
    stored = {json.dumps(f"[[turn {turn} of {json.dumps(prompt)}]]")
              for step, path, prompt, turn, calls in PLAYED
              if step < index and calls and "/" in path and (path, prompt, turn) not in now}
    texts = [json.dumps(event, default=repr) for event in seen.events]
    leaked = sorted({mark for mark in stored for text in texts if mark in text})
    return problems + [f"a public event carries the stored turn {mark}" for mark in leaked]


def shown(seen: Seen) -> list[str]:
    return sorted(f"{p.action}#{p.question}" for p in seen.pending)


def main() -> int:
    failures, asked, sent = 0, [], {}
    with tempfile.TemporaryDirectory() as store:
        app = build(store)
        for index, (step, want) in enumerate(STEPS):
            STEP[0], given, before = index, step[-1], len(RAN)
            if step[0] == "restart":
                app = build(store)  # every object dropped: the tree rebuilt from storage
                print(f"[{index}] restart")
                continue
            if step[0] == "resend":
                given = sent[step[1]]
            elif step[0] == "answer":  # by label, by id, by label and the call's prompt
                labels, ids, calls = [*step[1:], [], [], []][:3]
                given = [(p.id, r) for at, r in labels for p in asked if p.action == at]
                given += [(p.id, r) for at, prompt, r in calls for p in asked
                          if (p.action, p.prompt) == (at, prompt)] + [tuple(i) for i in ids]
            sent[index] = given
            seen = advance(app, given)
            asked = seen.pending if seen.stop is not None else asked
            print(f"[{index}] {step[0]} {json.dumps(step[1:])}: stop {seen.stop}, pending "
                  f"{shown(seen)}, ran {RAN[before:]}, final {seen.final!r}, error {seen.error}")
            for problem in judge(index, want, seen, RAN[before:]):
                print(f"    FAIL: {problem}")
                failures += 1
    print(f"{failures} check(s) failed: the bug is there" if failures else "every check holds")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
'''

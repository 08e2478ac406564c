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

Written against @SDK@ @RELEASE@ (pip install @PIP@); it needs nothing else.
A scripted model stands in for the LLM; each restart rebuilds the agents from storage in a temporary
directory. It prints what it saw; exit 1 while the bug is there, 0 once it is fixed.
"""
'''

RECORDS: Final = r'''
RAN: list[str] = []  # the protected actions that ran, in order (outlives restarts)
PLAYED: list[tuple] = []  # each model turn: (step, agent path, prompt, turn, calls tools)
STEP = [0]
MARK = re.compile(r'^\[\[turn (\d+) of ("(?:[^"\\]|\\.)*")\]\]')
Pending = namedtuple("Pending", "id action question prompt")


def next_turn(agent: dict, path: str, said: list) -> tuple[str, str, list | str]:
    """The latest prompt's first turn, or the turn after the latest marked reply (no counter)."""
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

CHECKS: Final = r"""
def plain(value: object) -> object:  # an event's objects, as JSON can hold them
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else repr(value)


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
            pending, ran, final, error = want
            if step[0] == "resend":
                given = sent[step[1]]
            elif step[0] == "answer":  # by label, by label and the call's prompt, by id
                labels, ids, calls = [*step[1:], [], [], []][:3]
                given = [(p.id, r) for at, r in labels for p in asked if p.action == at]
                given += [(p.id, r) for at, prompt, r in calls for p in asked
                          if (p.action, p.prompt) == (at, prompt)] + [tuple(i) for i in ids]
            sent[index] = given
            stop, shown, said, seen_error, events = advance(app, given)
            asked, now = shown if stop is not None else asked, RAN[before:]
            labels = sorted(f"{p.action}#{p.question}" for p in shown)
            print(f"[{index}] {step[0]} {json.dumps(step[1:])}: stop {stop}, pending {labels}, "
                  f"ran {now}, final {said!r}, error {seen_error}")
            problems = [f"expected {ran} to run; ran {now}"] if sorted(now) != ran else []
            if error == "required" and seen_error is None:
                problems.append("expected the step to be refused loudly; it was not")
            if error == "forbidden" and seen_error is not None:
                problems.append(f"expected no error; saw {seen_error}")
            if stop is not None and labels != pending:
                problems.append(f"expected pending {pending}; saw {labels}")
            if final is not None and said != final:
                problems.append(f"expected final answer {final!r}; saw {said!r}")
            # a sub-agent's turn from an earlier step (not played again now) in a public event
            played = {(path, prompt, turn) for at, path, prompt, turn, _ in PLAYED if at == index}
            stored = {json.dumps(f"[[turn {turn} of {json.dumps(prompt)}]]")
                      for at, path, prompt, turn, calls in PLAYED if at < index and calls
                      and "/" in path and (path, prompt, turn) not in played}
            texts = [json.dumps(event, default=plain) for event in events]
            leaked = sorted({mark for mark in stored for text in texts if mark in text})
            problems += [f"a public event carries the stored turn {mark}" for mark in leaked]
            for problem in problems:
                print(f"    FAIL: {problem}")
            failures += len(problems)
    print(f"{failures} check(s) failed: the bug is there" if failures else "every check holds")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
"""

"""The reproducer's text, shared by every SDK: the header, the step records, the scripted
model's choice of turn, and the steps with their plain checks.

An SDK's section (``harness.repro.sdks``) sits between them and defines ``build(store)`` (the
whole tree, restored from the directory ``store`` where the SDK's storage keeps it) and
``advance(app, given)`` (one run or answer: ``given`` is the prompt, or a list of ``(interrupt
id, response)``) returning ``Seen``.  Placeholders are ``@NAME@`` (replaced, never formatted, so
the script's own braces stay as written).

A script holds only the parts its scenario uses (``select``): a line ending in ``#?feature`` is
kept where the plan has that feature (``#?!feature``: where it has not), and so are the lines
between ``#?feature{`` and ``#?}``; the markers themselves are dropped.  A scenario with no
restart gets no restart branch, one whose SDK reads no public events no privacy check, and so on
(``features``), which keeps every regression file's script under 200 lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

MARKER: Final = re.compile(r"\s*#\?(!?)([a-z_]+)(\{?)$")
CLOSE: Final = re.compile(r"^\s*#\?\}$")


def select(text: str, features: Iterable[str]) -> str:
    """``text`` with the lines of the features not in ``features`` left out, markers dropped."""
    have, kept, blocks = set(features), [], [True]
    for line in text.split("\n"):
        if CLOSE.match(line):
            blocks.pop()
            continue
        marker = MARKER.search(line)
        wanted = marker is None or (marker.group(2) in have) != bool(marker.group(1))
        if marker is not None and marker.group(3):  # a block opens
            blocks.append(blocks[-1] and wanted)
            continue
        if blocks[-1] and wanted:
            kept.append(line[: marker.start()] if marker else line)
    if len(blocks) != 1:
        raise ValueError("a template's #?feature{ block is not closed")
    return "\n".join(kept)


HEADER: Final = '''\
"""Reproducer: @NAME@ on @SDK@ @RELEASE@.

@SYMPTOM@

@NEEDS@
"""
'''
NEEDS: Final = (
    "Needs only pip install @PIP@ (the release it was written against): a scripted model stands in "
    "for the LLM. It prints what it saw; exit 1 while the bug is there, 0 once it is fixed."
)

RECORDS: Final = r'''
RAN: list[str] = []  # the protected actions that ran in this process, in order
PLAYED: list[tuple] = []  # each model turn: (step, agent path, its mark, calls tools)  #?stores
STEP = [0]  #?stores
MARK = re.compile(r'^\[\[turn (\d+) of ("(?:[^"\\]|\\.)*")\]\]')
Pending = namedtuple("Pending", "id action question prompt")


def next_turn(agent: dict, path: str, said: list) -> tuple[str, list]:
    """The turn after the latest marked one (a turn calling tools), or the latest prompt's first."""
    prompt, index = None, 0
    for role, text in said:
        found = MARK.match(text) if role == "assistant" else None
        if role == "user":
            prompt, index = text, 0
        elif found:
            prompt, index = json.loads(found.group(2)), int(found.group(1)) + 1
    turns = agent["turns"]
    turns = turns.get(prompt, turns["*"]) if isinstance(turns, dict) else turns  #?prompts
    mark, turn = f"[[turn {index} of {json.dumps(prompt)}]]", turns[min(index, len(turns) - 1)]
    PLAYED.append((STEP[0], path, mark, isinstance(turn, list)))  #?stores
    if not isinstance(turn, list):
        return turn, []
    subs = [sub["name"] for sub in agent.get("subs", [])]
    return mark, [(name, use_id, {"input": (task or ["do your part"])[0]} if name in subs
                   else {"call": prompt}) for name, use_id, *task in turn]
'''

CHECKS: Final = r"""
def main(store: str) -> int:  #?!restart
#?restart{
def main(store: str, start: int = 0, failures: int = 0, asked: tuple = (), **seen: object) -> int:
    asked, sent = [Pending(*p) for p in asked], seen.get("sent", {})  #?resend
    asked = [Pending(*p) for p in asked]  #?!resend
    PLAYED[:] = seen.get("played", [])  #?stores
#?}
#?!restart{
    failures, asked, sent = 0, [], {}  #?resend
    failures, asked = 0, []  #?!resend
#?}
    app = build(store)
    for index, (step, want) in enumerate(STEPS[start:], start):  #?restart
    for index, (step, want) in enumerate(STEPS):  #?!restart
        STEP[0], given, before = index, step[-1], len(RAN)  #?stores
        given, before = step[-1], len(RAN)  #?!stores
        #?restart{
        if step[0] == "restart":  # this process ends: a new one rebuilds the tree from storage
            seen = dict(start=index + 1, failures=failures, asked=asked, played=PLAYED)  #?stores
            seen = dict(start=index + 1, failures=failures, asked=asked)  #?!stores
            seen["sent"] = sent  #?resend
            print(f"[{index}] restart: the steps go on in a new process", flush=True)
            return subprocess.run([sys.executable, __file__, store, json.dumps(seen)]).returncode
        #?}
        pending, ran, final, error = want
        if step[0] == "resend":  #?resend
            given = sent[str(step[1])]  #?resend
        if step[0] == "answer":  # by label (by label and the call's prompt, by id)
            answers = [*step[1:], [], []]  #?by_any
            given = [(p.id, r) for at, r in step[1] for p in asked if p.action == at]
            #?by_call{
            given += [(p.id, r) for at, prompt, r in answers[2] for p in asked
                      if (p.action, p.prompt) == (at, prompt)]
            #?}
            given += [tuple(i) for i in answers[1]]  #?by_id
        given = (step[1],) if step[0] == "resume" else given  # one answer, keyed by no id  #?resume
        sent[str(index)] = given  #?resend
        stop, shown, said, seen_error, events = advance(app, given)  #?stores
        stop, shown, said, seen_error, _ = advance(app, given)  #?!stores
        asked, now = shown if stop is not None else asked, RAN[before:]
        labels = sorted(f"{p.action}#{p.question}" for p in shown)
        print(f"[{index}] {step[0]} {json.dumps(step[1:])}: stop {stop}, pending {labels}, "
              f"ran {now}, final {said!r}, error {seen_error}")
        problems = [problem for failed, problem in [
            (sorted(now) != ran, f"expected {ran} to run; ran {now}"),
            #?error_required{
            (error == "required" and not seen_error, "expected a loud refusal; saw none"),
            #?}
            #?error_forbidden{
            (error == "forbidden" and seen_error, f"expected no error; saw {seen_error}"),
            #?}
            (stop and labels != pending, f"expected pending {pending}; saw {labels}"),
            (final is not None and said != final, f"expected answer {final!r}; saw {said!r}"),
        ] if failed]
        #?stores{
        # a sub-agent's turn stored at an earlier step (not played again now) in a public event
        played = {(path, mark) for at, path, mark, _ in PLAYED if at == index}
        stored = {json.dumps(mark) for at, path, mark, calls in PLAYED
                  if at < index and calls and "/" in path and (path, mark) not in played}
        texts = json.dumps(events, default=lambda v: getattr(v, "model_dump", lambda: repr(v))())
        problems += [f"a public event carries the stored turn {mark}"
                     for mark in sorted(stored) if mark in texts]
        #?}
        for problem in problems:
            print(f"    FAIL: {problem}")
        failures += len(problems)
    print(f"{failures} check(s) failed: the bug is there" if failures else "every check holds")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) > 2:  # a new process after a restart: it goes on where it is told  #?restart
        raise SystemExit(main(sys.argv[1], **json.loads(sys.argv[2])))  #?restart
    with tempfile.TemporaryDirectory() as store:  # the directory the SDK stores in
        raise SystemExit(main(store))
"""

"""The patterns of a witness: anchored regular expressions, each naming what one violation (or one
recorded error) says and never any text."""

from __future__ import annotations

import re


def anchored(pattern: str) -> str:
    """``pattern`` if it is an anchored regular expression, else a ``ValueError`` saying why."""
    if not (pattern.startswith("^") and pattern.endswith("$") and not _escaped_end(pattern)):
        raise ValueError(f"expected an anchored pattern (^...$), got {pattern!r}")
    try:
        re.compile(pattern)
    except re.error as failure:
        raise ValueError(f"not a regular expression ({failure}): {pattern!r}") from None
    if _top_level_bar(pattern):
        raise ValueError(
            f"a top-level | splits the anchors; group the alternatives, ^(a|b)$: {pattern!r}"
        )
    if names_nothing(pattern):
        raise ValueError(f"matches any text; name what the violation or error says: {pattern!r}")
    return pattern


# Texts of every shape a sentence, an error or a result can take: empty, one character, long,
# several lines, other scripts, and sentences of every kind a checker writes.  A pattern that
# matches all the texts of one line, or all the texts of one or more characters, names nothing:
# ``^.*$`` and ``^.+$`` (which ``.`` keeps off a newline) are as wide as no pattern at all.
ONE_LINE = (
    "",
    "x",
    "an unrelated sentence",
    "Ünïcödé 名前 «quoted» ✓",
    " leading and trailing blanks ",
    "the action 'file_form' of call-1 ran once " * 40,
    "1 pending question: approve_send (call-2); 0 executions",
    "nothing pending; ran send_mail once (approved); final answer 'done'",
    "ValueError: failed to restore the stored turn: 'data'",
    "mailer: Agent 'mailer' is already processing a request",
    "{'interruptResponse': {'interruptId': 'v1:agent_as_tool:call%3A1:q'}}",
)
SEVERAL_LINES = ("x\ny", "Traceback (most recent call last):\n  File \"<x>\"\nKeyError: 'data'")


def names_nothing(pattern: str) -> bool:
    """Whether ``pattern`` matches every text of one line (or every one but the empty one), or
    every text at all: then it names no violation, error or result."""
    compiled = re.compile(pattern)
    lines = [compiled.fullmatch(probe) is not None for probe in ONE_LINE]
    if all(lines) or all(lines[1:]):
        return True
    return all(compiled.fullmatch(probe) for probe in ONE_LINE + SEVERAL_LINES)


def _escaped_end(pattern: str) -> bool:
    """Whether the final ``$`` is a literal (an odd number of backslashes before it)."""
    body = pattern[:-1]
    return (len(body) - len(body.rstrip("\\"))) % 2 == 1


def _top_level_bar(pattern: str) -> bool:
    depth, escaped = 0, False
    opened = -1  # where the character class being read opened, or -1
    for position, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif opened >= 0:
            first = opened + (2 if pattern[opened + 1 : opened + 2] == "^" else 1)
            if char == "]" and position > first:
                opened = -1
        elif char == "[":
            opened = position
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
    return False


def full(pattern: str | None, text: str) -> bool:
    """Whether ``pattern`` matches all of ``text`` (no pattern: it asks nothing)."""
    return pattern is None or re.fullmatch(pattern, text) is not None


# characters that, unescaped, end a literal run: a class, a group, any character, the anchors
_BREAKS = frozenset("[(.^$|")
# quantifiers that allow none of what they follow: the run's last character may be absent
_OPTIONAL = frozenset("*?{")


def required_literals(pattern: str) -> tuple[str, ...]:
    """Texts every match of ``pattern`` contains: its runs of literal characters outside any group
    or class, each cut where a quantifier may leave its last character out.  Conservative: a
    literal inside a group or after an optional quantifier is not counted, so what is returned is
    in every match (``scenarios.oracle.CAUSE_CLASSES`` reads a witness's sentence by them)."""
    runs: list[str] = []
    current: list[str] = []
    depth, position = 0, 0

    def close() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    while position < len(pattern):
        char = pattern[position]
        if char == "\\" and position + 1 < len(pattern):
            escaped = pattern[position + 1]
            position += 2
            if depth == 0 and not escaped.isalnum():
                current.append(escaped)
            elif depth == 0:
                close()  # \d, \w, \S...: a class of characters, not one
            continue
        if char == "[":  # a character class, whatever it holds, is not a literal
            close()
            end = position + (2 if pattern[position + 1 : position + 2] == "^" else 1) + 1
            while end < len(pattern) and pattern[end] != "]":
                end += 2 if pattern[end] == "\\" else 1
            position = end + 1
            continue
        if char == "(":
            close()
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0 and char in _OPTIONAL:
            if current:
                current.pop()
            close()
            if char == "{":  # its bounds are not literals (a brace left open: read no further)
                position = pattern.find("}", position)
                if position < 0:
                    break
        elif depth == 0 and char == "+":
            close()  # at least one: the character stays, but what follows is not adjacent
        elif depth == 0 and char in _BREAKS:
            close()
        elif depth == 0:
            current.append(char)
        position += 1
    close()
    return tuple(runs)

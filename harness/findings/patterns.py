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
    if all(re.fullmatch(pattern, probe) for probe in ANY_TEXT):
        raise ValueError(f"matches any text; name what the violation or error says: {pattern!r}")
    return pattern


ANY_TEXT = ("", "an unrelated sentence", "x\ny")  # a pattern matching all of these names nothing


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

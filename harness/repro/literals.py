"""The plan's data as Python literals a reader can scan: a list or dict that fits the line stays
on it; one that does not has its items packed into as few lines as fit, hung after its opening
bracket or from the next line (so a step's expectations sit under the step), and a long string
made of one repeated run (an adversarial 305-character id) is written as that run times its
count.

Invariant: ``eval(literal(value)) == value`` for the plan's values (strings, numbers, None,
lists, dicts of them); the text is only a layout of the value.
"""

from __future__ import annotations

from typing import Final

WIDTH: Final = 99  # the scripts' longest line (ruff's line length is 100)
LONG: Final = 40  # a string at least this long is searched for a repeated run
MOST_REPEATED: Final = 16  # the longest run searched for


def literal(value: object, column: int = 0, indent: int = 0, tail: int = 0) -> str:
    """``value`` as a Python literal starting at ``column`` of a line indented ``indent``: flat
    where it fits; else its items hung after the opening bracket, or (where that takes fewer
    lines) starting on the next line, four columns in; ``tail`` characters follow it."""
    flat = text_of(value)
    if column + len(flat) + tail <= WIDTH or not isinstance(value, dict | list) or not value:
        return flat
    hung = _items(value, column + 1, "", tail)
    below = _items(value, indent + 4, "\n" + " " * (indent + 4), tail)
    return below if below.count("\n") < hung.count("\n") else hung


def _items(value: dict[object, object] | list[object], start: int, first: str, tail: int) -> str:
    """The items of ``value`` packed into lines starting at column ``start`` (``first``: what
    comes between the opening bracket and the first item)."""
    opening, closing = "{}" if isinstance(value, dict) else "[]"
    pairs = (
        [(f"{text_of(key)}: ", item) for key, item in value.items()]
        if isinstance(value, dict)
        else [("", item) for item in value]
    )
    out, at = opening + first, start
    for number, (prefix, item) in enumerate(pairs):
        last = number == len(pairs) - 1
        end, room = (closing, tail) if last else (",", 0)
        text = prefix + text_of(item) + end
        if number and at + 1 + len(text) + room > WIDTH:
            out, at = out + "\n" + " " * start, start
        elif number:
            out, at = out + " ", at + 1
        if at + len(text) + room > WIDTH:
            text = prefix + literal(item, at + len(prefix), start, len(end) + room) + end
        out += text
        at = at + len(text) if "\n" not in text else len(text.rsplit("\n", 1)[1])
    return out


def text_of(value: object) -> str:
    """``value`` on one line: Python's own repr but for long strings with a repeated run."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{text_of(k)}: {text_of(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(text_of(item) for item in value) + "]"
    if isinstance(value, str) and len(value) >= LONG:
        return repeated(value)
    return repr(value)


def repeated(text: str) -> str:
    """``text`` as ``'head' + 'run' * n + 'tail'`` where that is shorter than its repr."""
    best, shortest = repr(text), len(repr(text))
    for size in range(1, MOST_REPEATED + 1):
        for start in range(len(text) - 3 * size + 1):
            run, count = text[start : start + size], 1
            while text.startswith(run, start + count * size):
                count += 1
            if count < 3:
                continue
            head, tail = text[:start], text[start + count * size :]
            parts = [repr(head)] if head else []
            parts += [f"{run!r} * {count}"] + ([repr(tail)] if tail else [])
            written = " + ".join(parts)
            if len(written) < shortest:
                best, shortest = written, len(written)
    return best

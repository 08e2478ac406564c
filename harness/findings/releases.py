"""Which releases a findings file, and each finding, class and witness in it, apply to.

A findings file covers the releases from its ``version`` to its ``through`` (both included; no
``through``: its version alone).  Most of what an SDK does wrong stays the same from one release to
the next, so one file holds the findings of a run of releases, and an item that applies to some of
them only says which with ``releases``: clauses joined by commas, each a comparison with a plain
release (``==``, ``!=``, ``>=``, ``<=``), all of which must hold::

    releases: '>=1.62.0'            # from 1.62.0 on
    releases: '<=1.61.1,!=1.60.0'   # up to 1.61.1, but not on 1.60.0

A release is judged by the file's *view* as of that release (``FindingsFile.as_of``): the items
whose ``releases`` admit it (a witness, only if its finding or class does too).  An item must
apply to at least one release the file names (its ``version``, its ``through``, or a release a
``releases`` names within them): a witness no checked release shows is a witness nobody saw.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from harness.findings.search import release

OPERATORS: Final = ("==", "!=", ">=", "<=")
CLAUSE: Final = re.compile(r"^(==|!=|>=|<=)\s*([0-9]+(?:\.[0-9]+)*)$")


def clauses(specifier: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The (operator, release) clauses of ``specifier``, or a ``ValueError`` saying what is
    expected."""
    found = []
    for part in specifier.split(","):
        matched = CLAUSE.fullmatch(part.strip())
        if matched is None:
            raise ValueError(
                "expected comparisons with plain releases joined by ',' "
                f"({', '.join(f'{op}1.62.0' for op in OPERATORS)}), got {specifier!r}"
            )
        numbers = release(matched[2])
        assert numbers is not None  # the pattern admits only dotted numbers
        found.append((matched[1], numbers))
    return tuple(found)


def specifier(value: str | None) -> str | None:
    """``value`` if it is a valid specifier (None stays None: every release)."""
    if value is not None:
        clauses(value)
    return value


def admits(value: str | None, version: str) -> bool:
    """Whether the specifier ``value`` (None: every release) admits ``version``; a version that
    is no plain release (a local build, a pre-release) is admitted only by no specifier."""
    if value is None:
        return True
    numbers = release(version)
    if numbers is None:
        return False
    return all(_holds(op, numbers, bound) for op, bound in clauses(value))


def _holds(op: str, numbers: tuple[int, ...], bound: tuple[int, ...]) -> bool:
    if op == "==":
        return numbers == bound
    if op == "!=":
        return numbers != bound
    if op == ">=":
        return numbers >= bound
    return numbers <= bound


def bounds(value: str | None) -> tuple[str, ...]:
    """The releases ``value`` names, as written."""
    if value is None:
        return ()
    return tuple(".".join(map(str, bound)) for _, bound in clauses(value))


def within(version: str, first: str, last: str) -> bool:
    """Whether ``version`` is a plain release from ``first`` to ``last``, both included."""
    numbers, low, high = release(version), release(first), release(last)
    return None not in (numbers, low, high) and low <= numbers <= high  # type: ignore[operator]


def named(first: str, last: str, specifiers: Iterable[str | None]) -> tuple[str, ...]:
    """The releases a file covering ``first`` to ``last`` names: those two and every release a
    specifier names within them, oldest first, each once."""
    found = {first, last} | {
        bound for value in specifiers for bound in bounds(value) if within(bound, first, last)
    }
    return tuple(sorted(found, key=lambda text: release(text) or ()))


def narrowed(value: str | None, version: str) -> str:
    """``value`` no longer admitting ``version``."""
    return f"{value},!={version}" if value is not None else f"!={version}"

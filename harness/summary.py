"""The summary of a conformance report: Markdown that always fits a pull-request comment.

GitHub refuses a comment over 65,536 characters; the full ``conformance.md`` passes that with
enough targets and generated scenarios.  The summary is rendered from the same JSON document
within ``BUDGET`` characters, whatever its size: its headline; a line per target with its
verdict and counts; then what needs a person (adapter errors, new violations, recorded witnesses
that vanished, findings recorded for another content, class witnesses not demonstrated), each
list cut to whole lines with a count of what it left out; and the invariant x target matrix only
when the rest leaves room for all of it.  It is pure, like the report: the same document gives
the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from harness.report import (
    Document,
    adapter_errors,
    column,
    headline,
    matrix,
    new_violations,
    stale,
    undemonstrated,
    vanished,
)

LIMIT: Final = 65_536  # the characters a GitHub pull-request comment holds
BUDGET: Final = LIMIT - 4_096  # what the summary uses: room for what a bot adds around it
LONG_LINE: Final = 400  # a new violation longer than this is named without its sentences
SECTION: Final = 600  # kept for each later section (its heading, a line, a count)
NOTE: Final = 200  # kept for the line that says where the matrix is, when it does not fit
FULL: Final = "conformance.md"


def summary(document: Document) -> str:
    """``document`` in at most ``BUDGET`` characters (see the module's docstring)."""
    columns = [column(target) for target in document["targets"]]
    head = ["# Conformance (summary)", "", headline(document), ""]
    sections = _sections(document, columns)
    remaining = BUDGET - _size(head)
    later = len(sections)
    table = _fitted(
        [
            "| target | verdict | violated | new | vanished | stale | undemonstrated "
            "| adapter errors | expected |"
        ],
        ["|---" * 9 + "|"],
        [_target_row(document, name) for name in columns],
        min(remaining // 2, remaining - later * SECTION - NOTE),
        lambda left: f"| … {left} more targets: see {FULL} | | | | | | | | |",
    )
    remaining -= _size(table)
    body: list[str] = []
    for title, items in sections:
        later -= 1
        if not items:
            continue
        kept = _fitted(
            [f"## {title}", ""],
            [],
            items,
            remaining - later * SECTION - NOTE,
            lambda left: f"- … and {left} more: see {FULL}",
        )
        body += kept
        remaining -= _size(kept)
    grid = [*matrix(document)]
    if _size(grid) > remaining:
        grid = [f"The invariant x target matrix ({len(columns)} targets) is in {FULL}.", ""]
    return "\n".join([*head, *table, *grid, *body])


def _sections(document: Document, columns: list[str]) -> list[tuple[str, list[str]]]:
    """What needs a person, most urgent first, a list item per line (targets in order)."""
    errors: list[str] = []
    new: list[str] = []
    gone: list[str] = []
    old: list[str] = []
    unshown: list[str] = []
    for name in columns:
        errors += [f"- {name}: {item[2:]}" for item in adapter_errors(document, name)]
        verdict = document["findings"].get(name)
        if verdict is None:
            continue
        pairs = zip(new_violations(verdict), new_violations(verdict, sentences=False), strict=True)
        new += [f"- {name}: {whole if len(whole) <= LONG_LINE else bare}" for whole, bare in pairs]
        gone += [f"- {name}: {item}" for item in vanished(verdict)]
        old += [f"- {name}: {item}" for item in stale(verdict)]
        unshown += [f"- {name}: {item}" for item in undemonstrated(verdict)]
    return [
        ("Adapter errors (the adapter broke its contract: not judged)", errors),
        ("New violations (no recorded witness matches them)", new),
        ("Recorded witnesses that no longer show", gone),
        ("Findings recorded for another content", old),
        ("Class witnesses no shown_by file shows", unshown),
    ]


def _target_row(document: Document, name: str) -> str:
    verdict: dict[str, Any] = document["findings"].get(name) or {}
    errors = len(document.get("adapter_errors", {}).get(name, []))
    new, gone, old, unshown = (
        len(verdict.get(key, [])) for key in ("new", "disappeared", "stale", "undemonstrated")
    )
    violated = [
        checker["id"]
        for checker in document["checkers"]
        if document["cells"][name][checker["id"]]["status"] == "violated"
    ]
    fails = errors or new or gone or old or unshown
    return (
        f"| {name} | {'**fails**' if fails else 'passes'} | {', '.join(violated) or '—'} | "
        f"{new} | {gone} | {old} | {unshown} | {errors} | {len(verdict.get('expected', []))} |"
    )


def _fitted(
    head: list[str],
    under: list[str],
    items: list[str],
    allowance: int,
    more: Callable[[int], str],
) -> list[str]:
    """``head``, ``under`` and as many whole ``items`` as fit in ``allowance`` characters, then
    a line saying how many were left out; followed by an empty line."""
    kept = [*head, *under]
    used = _size(kept) + 1
    room = len(more(len(items))) + 1  # the count line, at its longest
    for position, item in enumerate(items):
        last = position == len(items) - 1
        if used + len(item) + 1 + (0 if last else room) > allowance:
            return [*kept, more(len(items) - position), ""]
        kept.append(item)
        used += len(item) + 1
    return [*kept, ""]


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)

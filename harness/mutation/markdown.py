"""The pieces both mutation reports are written from: a section's heading, a mutant's diff, a
list of names, the verdict."""

from __future__ import annotations

from collections.abc import Iterable


def heading(title: str, count: int) -> list[str]:
    return [f"## {title} ({count})", ""]


def diff_block(diff: str) -> list[str]:
    return ["```diff", diff.strip(), "```", ""]


def names(items: Iterable[str]) -> list[str]:
    """A bulleted list of names in code type, and the blank line after it."""
    return [f"- `{name}`" for name in items] + [""]


def verdict(problems: list[str]) -> str:
    """The report's last line: it passes, or why it fails."""
    return "Verdict: " + ("passes" if not problems else "fails: " + "; ".join(problems))


def document(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"

"""The progress line a long command shows on a terminal (never in CI, never in a pipe)."""

from __future__ import annotations

import os
import sys


def interactive() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


class Progress:
    def __call__(self, done: int, total: int, violations: int) -> None:
        print(f"\r{done}/{total} scenario runs, {violations} violations", end="", file=sys.stderr)

    def note(self, text: str) -> None:
        print(f"\r{text}", end="", file=sys.stderr)

    def finish(self) -> None:
        print(file=sys.stderr)

"""The progress a long command shows: on a terminal a bar with an ETA (``rich``, the ``progress``
extra), elsewhere (CI, a pipe, or without rich) plain lines, never carriage returns."""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import Any


def interactive() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


class Progress:
    def __call__(self, done: int, total: int, violations: int) -> None:
        print(f"\r{done}/{total} scenario runs, {violations} violations", end="", file=sys.stderr)

    def note(self, text: str) -> None:
        print(f"\r{text}", end="", file=sys.stderr)

    def finish(self) -> None:
        print(file=sys.stderr)


class Bar:
    """``total`` units of work, advanced one at a time with a line saying what was done: a bar
    with the time left on a terminal, one plain line per unit otherwise."""

    def __init__(self, total: int, unit: str) -> None:
        self.total = total
        self.unit = unit
        self.done = 0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Bar:
        if interactive():
            try:
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    TextColumn,
                    TimeElapsedColumn,
                    TimeRemainingColumn,
                )
                from rich.progress import Progress as RichProgress
            except ImportError:  # the progress extra is not installed: plain lines
                return self
            self._bar = RichProgress(
                TextColumn(f"[bold]{self.unit}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                TextColumn("{task.description}"),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("", total=self.total)
        return self

    def advance(self, what: str) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1, description=what)
        else:
            print(f"[{self.done}/{self.total}] {what}", file=sys.stderr, flush=True)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

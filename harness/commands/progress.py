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
    """The progress of ``check``, ``record`` and ``faults`` on a terminal (they make one only
    there): a bar with the time left when ``rich`` is installed, else a line rewritten in place."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, done: int, total: int, violations: int) -> None:
        what = f"{violations} violations"
        if self._bar is None and not self._start(total):
            print(f"\r{done}/{total} scenario runs, {what}", end="", file=sys.stderr)
            return
        self._bar.update(self._task, completed=done, total=total, description=what)

    def note(self, text: str) -> None:
        if self._bar is not None:
            self._bar.update(self._task, description=text)
        else:
            print(f"\r{text}", end="", file=sys.stderr)

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        else:
            print(file=sys.stderr)

    def _start(self, total: int) -> bool:
        self._bar = _rich_bar("scenario runs")
        if self._bar is None:
            return False
        self._bar.start()
        self._task = self._bar.add_task("", total=total)
        return True


def _rich_bar(unit: str) -> Any:
    """A rich progress bar (done of total, elapsed, time left, a description), or None without
    the progress extra."""
    try:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress
    except ImportError:
        return None
    return RichProgress(
        TextColumn(f"[bold]{unit}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.description}"),
        transient=True,
    )


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
            self._bar = _rich_bar(self.unit)  # None without the progress extra: plain lines
            if self._bar is not None:
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

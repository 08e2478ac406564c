"""An append-only log of JSON records, in memory or as JSON lines in a file.

The file form is what lets the ledger and the request journal outlive a restart: a rebuilt
object opens the same path and sees every earlier record.  Another writer of the same file (a
child process under ``--isolation process``) is seen too: ``records`` always reads the file, but
only the lines added since its last read, so a session that reads its logs after every step reads
each record from the file once, not once per step; and ``records(start)`` parses only the records
from the ``start``-th on, so a reader that asks only for what was added since it last asked
parses each record once too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

Record = dict[str, Any]
# json.dumps(record, sort_keys=True, ensure_ascii=False), without building an encoder per record
_LINE = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode


class AppendOnlyLog:
    def __init__(
        self,
        path: Path | None = None,
        *,
        before_append: Callable[[], None] | None = None,
        after_append: Callable[[], None] | None = None,
        buffered: bool = False,
    ) -> None:
        """The hooks run before and after each record is appended (crash points).  A
        ``buffered`` log keeps appended records in memory until it is read (``records``) or
        ``flush``-ed: for a log nothing else reads in the meantime, never for one whose records
        must be on file when a crash point fires."""
        if buffered and (before_append or after_append):
            raise ValueError("a log with crash points writes every record through")
        self.path = path
        self.before_append = before_append
        self.after_append = after_append
        self._unwritten: list[str] | None = [] if buffered and path is not None else None
        self._lines: list[str] = []  # the records as JSON text: in memory, or the file's so far
        self._offset = 0  # bytes of the file read so far: always the end of a whole line

    def append(self, record: Record) -> None:
        self.append_json(_LINE(record))

    def append_json(self, line: str) -> None:
        """Append a record its writer already serialised: one JSON object on one line, as
        ``json.dumps(record, sort_keys=True, ensure_ascii=False)`` writes it (an adapter that
        had to serialise an event to scrub it saves a parse and a serialisation per event)."""
        if self.before_append is not None:
            self.before_append()
        if self.path is None:
            self._lines.append(line)
        elif self._unwritten is not None:
            self._unwritten.append(line)
        else:
            self._write([line])
        if self.after_append is not None:
            self.after_append()

    def flush(self) -> None:
        """Write what a buffered log holds."""
        if self._unwritten:
            self._write(self._unwritten)
            self._unwritten = []

    def _write(self, lines: list[str]) -> None:
        assert self.path is not None
        text = "".join(line + "\n" for line in lines)
        try:
            handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (closed below)
        except FileNotFoundError:  # its folder is not there yet: the first record
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        with handle:
            handle.write(text)

    def records(self, start: int = 0) -> list[Record]:
        """Every record so far from the ``start``-th on, in order, as fresh objects: changing
        them changes no log."""
        self.flush()
        lines = self._lines if self.path is None else self._file_lines(self.path)
        return json.loads(f"[{','.join(lines[start:])}]")  # type: ignore[no-any-return]

    def _file_lines(self, path: Path) -> list[str]:
        try:
            with path.open("rb") as handle:
                if handle.seek(0, 2) < self._offset:  # replaced by a shorter file: read anew
                    self._lines, self._offset = [], 0
                handle.seek(self._offset)
                added = handle.read()
        except FileNotFoundError:
            self._lines, self._offset = [], 0
            return self._lines
        complete = added[: added.rfind(b"\n") + 1]  # a line still being written waits
        self._lines.extend(line for line in complete.decode("utf-8").splitlines() if line)
        self._offset += len(complete)
        return self._lines

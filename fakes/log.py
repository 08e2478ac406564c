"""An append-only log of JSON records, in memory or as JSON lines in a file.

The file form is what lets the ledger and the request journal outlive a restart: a rebuilt
object opens the same path and sees every earlier record.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

Record = dict[str, Any]


class AppendOnlyLog:
    def __init__(
        self,
        path: Path | None = None,
        *,
        before_append: Callable[[], None] | None = None,
        after_append: Callable[[], None] | None = None,
    ) -> None:
        """The hooks run before and after each record is appended (crash points)."""
        self.path = path
        self._memory: list[Record] = []
        self.before_append = before_append
        self.after_append = after_append

    def append(self, record: Record) -> None:
        if self.before_append is not None:
            self.before_append()
        line = json.dumps(record, sort_keys=True, ensure_ascii=False)
        if self.path is None:
            self._memory.append(json.loads(line))
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        if self.after_append is not None:
            self.after_append()

    def records(self) -> list[Record]:
        if self.path is None:
            return json.loads(json.dumps(self._memory))  # type: ignore[no-any-return]
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line]

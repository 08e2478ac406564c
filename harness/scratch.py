"""Where a run's work directory lives: scratch space, thrown away when the run ends.

A scenario's session keeps everything a restart may read back (stores, session files, sqlite
checkpoints, the ledger and the journal) as files in its work directory, and a restart rebuilds
every object from those files alone.  Whether the files sit on a disk or in memory changes
nothing a restart can tell; it changes how long each write takes, and a run writes on every
step.  So the directory is made in the machine's shared-memory file system where it has one,
unless the user chose a place with ``TMPDIR``.

What the harness's own fakes record for a session (the ledger, the journal, the public events,
and a store the harness chose, such as the reference's) needs no file at all while every step of
a run happens in one process: the session object holds them across its restarts, as bytes and
JSON lines exactly as a file would, and a run writes no file it never reads.  A step run in a
fresh process (``harness.isolation``) starts its session ``kept_on_file()``: there they are
files in the work directory, for the next step's process to read back.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Final

IN_MEMORY: Final = Path("/dev/shm")
RUN: Final = "nested-interrupt-"  # how a run's work directory is named
BENCH: Final = f"{RUN}bench-"  # and a measurement's
_ON_FILE: ContextVar[bool] = ContextVar("on_file", default=False)


def scratch_directory(prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A fresh temporary directory (a context manager), removed with everything in it."""
    return tempfile.TemporaryDirectory(prefix=prefix, dir=_root())


@cache
def _root() -> str | None:
    if os.environ.get("TMPDIR"):
        return None  # the user's choice, which tempfile honours
    if IN_MEMORY.is_dir() and os.access(IN_MEMORY, os.W_OK | os.X_OK):
        return str(IN_MEMORY)
    return None  # tempfile's own choice


@contextmanager
def kept_on_file() -> Iterator[None]:
    """Sessions started inside keep what the fakes record in files of their work directory."""
    token = _ON_FILE.set(True)
    try:
        yield
    finally:
        _ON_FILE.reset(token)


def on_file() -> bool:
    """Whether a session started now keeps what the fakes record on file (``kept_on_file``)."""
    return _ON_FILE.get()

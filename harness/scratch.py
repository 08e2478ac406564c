"""Where a run's work directory lives: scratch space, thrown away when the run ends.

A scenario's session keeps everything a restart may read back (stores, session files, sqlite
checkpoints, the ledger and the journal) as files in its work directory, and a restart rebuilds
every object from those files alone.  Whether the files sit on a disk or in memory changes
nothing a restart can tell; it changes how long each write takes, and a run writes on every
step.  So the directory is made in the machine's shared-memory file system where it has one,
unless the user chose a place with ``TMPDIR``.
"""

from __future__ import annotations

import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Final

IN_MEMORY: Final = Path("/dev/shm")
RUN: Final = "nested-interrupt-"  # how a run's work directory is named
BENCH: Final = f"{RUN}bench-"  # and a measurement's


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

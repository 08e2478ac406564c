"""Key/value stores for persisted agent data: in memory, in files, and one that corrupts.

A target persists whatever it persists (a whole tree, a session, a snapshot) as bytes under keys
in one of these.  ``FileStore`` writes atomically (a temporary file, then a rename), so a crash
never leaves half a value.  ``CorruptingStore`` wraps another store and, on request, applies a
named corruption (``fakes.corruption``) to one stored continuation.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, unquote

from fakes.corruption import ContinuationFormat, Corruption, CorruptionNotApplicable, apply

KEY_PREFIX = "key-"


@dataclass(frozen=True)
class StoredContinuation:
    """One continuation found in a store: under which key, where inside it, and its value."""

    key: str
    path: tuple[Any, ...]
    value: Any

    @property
    def size(self) -> int:
        """Bytes of its canonical compact JSON."""
        text = json.dumps(self.value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return len(text.encode())


class Store(Protocol):
    def get(self, key: str) -> bytes | None: ...

    def put(self, key: str, value: bytes) -> None: ...

    def delete(self, key: str) -> None: ...

    def keys(self) -> list[str]: ...


class MemoryStore:
    def __init__(self) -> None:
        self._values: dict[str, bytes] = {}

    def get(self, key: str) -> bytes | None:
        return self._values.get(key)

    def put(self, key: str, value: bytes) -> None:
        self._values[key] = bytes(value)

    def delete(self, key: str) -> None:
        self._values.pop(key, None)

    def keys(self) -> list[str]:
        return sorted(self._values)


class FileStore:
    """One file per key under ``directory``; keys are percent-quoted into file names behind a
    prefix, so no key ("", ".", "..", ".hidden") can clash with a path or a temporary file."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.directory / (KEY_PREFIX + quote(key, safe=""))

    def get(self, key: str) -> bytes | None:
        path = self._path(key)
        return path.read_bytes() if path.exists() else None

    def put(self, key: str, value: bytes) -> None:
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(value)
            os.replace(temporary, self._path(key))
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def keys(self) -> list[str]:
        return sorted(
            unquote(path.name.removeprefix(KEY_PREFIX))
            for path in self.directory.iterdir()
            if path.name.startswith(KEY_PREFIX)
        )


class CorruptingStore:
    """A store that passes everything through, until asked to corrupt a stored continuation."""

    def __init__(self, inner: Store, continuation_format: ContinuationFormat) -> None:
        self.inner = inner
        self.format = continuation_format

    def get(self, key: str) -> bytes | None:
        return self.inner.get(key)

    def put(self, key: str, value: bytes) -> None:
        self.inner.put(key, value)

    def delete(self, key: str) -> None:
        self.inner.delete(key)

    def keys(self) -> list[str]:
        return self.inner.keys()

    def continuations(self) -> list[StoredContinuation]:
        """Every stored continuation, in stable order (by key, then by path)."""
        found: list[StoredContinuation] = []
        for key in self.keys():
            value = self.inner.get(key)
            if value is None:
                continue
            try:
                document = json.loads(value)
            except ValueError:
                continue
            for path in self.format.locate(document):
                entry = document
                for step in path:
                    entry = entry[step]
                found.append(StoredContinuation(key, path, entry))
        return found

    def corrupt(self, corruption: Corruption, which: int = 0) -> str:
        """Apply ``corruption`` to the ``which``-th stored continuation; say what was done."""
        found = self.continuations()
        if which >= len(found):
            raise CorruptionNotApplicable(
                f"{corruption}: there are {len(found)} stored continuations, not {which + 1}"
            )
        key, path = found[which].key, found[which].path
        documents = {k: json.loads(self.inner.get(k) or b"null") for k in {e.key for e in found}}
        others = [(documents[e.key], e.path) for e in found if (e.key, e.path) != (key, path)]
        apply(corruption, self.format, documents[key], path, others)
        self.inner.put(key, json.dumps(documents[key], sort_keys=True).encode())
        return f"{corruption} applied to the continuation at {key}:{list(path)}"

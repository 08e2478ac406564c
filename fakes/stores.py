"""Key/value stores for persisted agent data: in memory, in files, and one that corrupts.

A target persists whatever it persists (a whole tree, a session, a snapshot) as bytes under keys
in one of these.  ``FileStore`` writes atomically (a temporary file, then a rename), so a crash
never leaves half a value.  ``CorruptingStore`` wraps another store and, on request, applies a
named corruption (``fakes.corruption``) to one stored continuation, and later repairs it (puts
the turn, or a document damaged as bytes, back as it was) as an operator restoring a backup
would, but only while it is still as damaged: what a target rewrote since is never overwritten.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, unquote

from fakes.corruption import ContinuationFormat, CorruptionNotApplicable, apply
from scenarios.corruptions import Corruption

KEY_PREFIX = "key-"
TEMPORARY = ".tmp-"  # how a value being written is named, until it is renamed to its key's file


@functools.cache
def _file_name(key: str) -> str:
    return KEY_PREFIX + quote(key, safe="")


@dataclass(frozen=True)
class StoredContinuation:
    """One continuation found in a store: under which key, where inside it, and its value."""

    key: str
    path: tuple[Any, ...]
    value: Any

    @functools.cached_property
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

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, _file_name(key))

    def get(self, key: str) -> bytes | None:
        try:
            with open(self._path(key), "rb") as stream:
                return stream.read()
        except FileNotFoundError:
            return None

    def put(self, key: str, value: bytes) -> None:
        # the temporary file is this writer's own (process and thread in its name), so no other
        # writer can open it, and the rename replaces the value whole
        path = self._path(key)
        temporary = f"{self.directory}/{TEMPORARY}{os.getpid()}-{threading.get_ident()}"
        try:
            with open(temporary, "wb") as stream:
                stream.write(value)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def delete(self, key: str) -> None:
        Path(self._path(key)).unlink(missing_ok=True)

    def keys(self) -> list[str]:
        return sorted(
            unquote(path.name.removeprefix(KEY_PREFIX))
            for path in self.directory.iterdir()
            if path.name.startswith(KEY_PREFIX)
        )


@dataclass(frozen=True)
class Damage:
    """One damaged continuation: where it is, and its JSON text before and right after the
    damage (``damaged`` None: it was deleted).  ``path`` None: the whole document was damaged
    as bytes, and both are the document's bytes in base64."""

    key: str
    path: tuple[Any, ...] | None
    original: str
    damaged: str | None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class CorruptingStore:
    """A store that passes everything through, until asked to corrupt a stored continuation."""

    def __init__(
        self,
        inner: Store,
        continuation_format: ContinuationFormat,
        damages_file: Path | None = None,
    ) -> None:
        """``damages_file`` keeps what was damaged (to repair it) across processes."""
        self.inner = inner
        self.format = continuation_format
        self.damages_file = damages_file
        self._damages: list[Damage] = []
        # what continuations() last found under each key, with the bytes it was found in
        self._located: dict[str, tuple[bytes, list[StoredContinuation]]] = {}
        self._parsed: dict[str, tuple[bytes, Any]] = {}  # each key's value as JSON, as last read
        self.before_put: Callable[[], None] | None = None  # a crash point: called before a write

    def get(self, key: str) -> bytes | None:
        return self.inner.get(key)

    def put(self, key: str, value: bytes) -> None:
        if self.before_put is not None:
            self.before_put()
        self.inner.put(key, value)

    def delete(self, key: str) -> None:
        self.inner.delete(key)

    def keys(self) -> list[str]:
        return self.inner.keys()

    def continuations(self) -> list[StoredContinuation]:
        """Every stored continuation, in stable order (by key, then by path).  Their values are
        shared with later calls while the bytes they were read from stay the same: read them,
        never change them."""
        found: list[StoredContinuation] = []
        located: dict[str, tuple[bytes, list[StoredContinuation]]] = {}
        for key in self.keys():
            value = self.inner.get(key)
            if value is None:
                continue
            earlier = self._located.get(key)
            if earlier is not None and earlier[0] == value:  # unchanged: read and measured once
                entries = earlier[1]
            else:
                entries = self._locate(key, value)
            located[key] = (value, entries)
            found.extend(entries)
        self._located = located
        return found

    def document(self, key: str) -> Any:
        """The JSON document stored under ``key`` (None if nothing is), parsed once for as long
        as its bytes stay the same and shared with ``continuations``: read it, never change it.
        Raises ValueError if the bytes are not JSON."""
        value = self.inner.get(key)
        return None if value is None else self._parse(key, value)

    def _parse(self, key: str, value: bytes) -> Any:
        earlier = self._parsed.get(key)
        if earlier is not None and earlier[0] == value:
            return earlier[1]
        document = json.loads(value)
        self._parsed[key] = (value, document)
        return document

    def _locate(self, key: str, value: bytes) -> list[StoredContinuation]:
        try:
            document = self._parse(key, value)
        except ValueError:
            return []
        entries = []
        for path in self.format.locate(document):
            entry = document
            for step in path:
                entry = entry[step]
            entries.append(StoredContinuation(key, path, entry))
        return entries

    def corrupt(self, corruption: Corruption, which: int = 0, pick: int = 0) -> str:
        """Apply ``corruption`` to the ``which``-th stored continuation (``pick`` chooses the
        node or byte the fuzzing damages hit); say what was done."""
        found = self.continuations()
        if which >= len(found):
            raise CorruptionNotApplicable(
                f"{corruption}: there are {len(found)} stored continuations, not {which + 1}"
            )
        key, path = found[which].key, found[which].path
        original = self.inner.get(key) or b""
        where = f"the continuation at {key}:{list(path)}"
        if corruption == "document_truncated":
            cut = pick % max(len(original), 1)
            self.inner.put(key, original[:cut])
            encoded = [base64.b64encode(raw).decode() for raw in (original, original[:cut])]
            self.damages = [*self.damages, Damage(key, None, *encoded)]
            return f"{corruption} applied to {key}: {cut} of {len(original)} bytes kept"
        documents = {k: json.loads(self.inner.get(k) or b"null") for k in {e.key for e in found}}
        others = [(documents[e.key], e.path) for e in found if (e.key, e.path) != (key, path)]
        hit = apply(corruption, self.format, documents[key], path, others, pick)
        self.inner.put(key, json.dumps(documents[key], sort_keys=True).encode())
        after = _at(documents[key], path)
        damaged = None if after is _MISSING else _canonical(after)
        self.damages = [*self.damages, Damage(key, path, _canonical(found[which].value), damaged)]
        return f"{corruption} applied to {where}" + (f" at {hit}" if hit else "")

    def repair(self) -> str:
        """Put every damaged continuation back as it was, unless it changed since it was
        damaged; say what was done.  The latest damage is undone first: each is put back only
        where the turn still holds what it left, so two damages of one turn are undone back to
        what it held before the first."""
        said = [f"{damage.key} {self._put_back(damage)}" for damage in reversed(self.damages)]
        self.damages = []
        return "; ".join(said) if said else "nothing to repair"

    def _put_back(self, damage: Damage) -> str:
        current = self.inner.get(damage.key)
        if damage.path is None:
            if current is None or base64.b64encode(current).decode() != damage.damaged:
                return "not put back: rewritten since it was damaged"
            self.inner.put(damage.key, base64.b64decode(damage.original))
            return "put back"
        try:
            document = json.loads(current or b"")
        except ValueError:
            return "not put back: the document no longer parses"
        now = _at(document, damage.path)
        unchanged = (
            now is _MISSING
            if damage.damaged is None
            else (now is not _MISSING and _canonical(now) == damage.damaged)
        )
        parent = _at(document, damage.path[:-1])
        if not unchanged or not isinstance(parent, dict | list):
            return "not put back: the stored turn changed since it was damaged"
        parent[damage.path[-1]] = json.loads(damage.original)
        self.inner.put(damage.key, json.dumps(document, sort_keys=True).encode())
        return "put back"

    @property
    def damages(self) -> list[Damage]:
        """The damaged documents not yet repaired, oldest first."""
        if self.damages_file is None:
            return self._damages
        if not self.damages_file.exists():
            return []
        return [
            Damage(
                item["key"],
                None if item["path"] is None else tuple(item["path"]),
                item["original"],
                item["damaged"],
            )
            for item in json.loads(self.damages_file.read_text(encoding="utf-8"))
        ]

    @damages.setter
    def damages(self, damages: list[Damage]) -> None:
        self._damages = damages
        if self.damages_file is not None:
            encoded = [asdict(damage) for damage in damages]
            self.damages_file.write_text(json.dumps(encoded), encoding="utf-8")


_MISSING: Any = object()


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    """The value at ``path`` in ``document``, or ``_MISSING``."""
    value = document
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return value

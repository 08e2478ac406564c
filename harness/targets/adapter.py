"""What every adapter needs, whatever its framework (docs/adapters.md starts a new one here).

``RecordedSession`` is what every session driven with the fakes records: the ledger, the
model-request journal and the public events are append-only logs that outlive a restart, kept
by the session, and as files in its work directory when the next step runs in a fresh process
(``--isolation process``: ``harness.scratch``, ``work_log`` and ``work_store``); the stored
data sits behind a ``CorruptingStore`` that knows the target's continuation format.  Beside
it: the interrupts as the root shows them to the human, an SDK's logs, a restart's rebuild
(``RebuildingSession``, of the same tree or a deploy's) with what a failed one leaves, an
SDK's own files as a store and crash points on its writes, and what events and stored sizes
are recorded as.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from fakes.corruption import ContinuationFormat, CorruptionNotApplicable
from fakes.crash import CrashPlan
from fakes.log import AppendOnlyLog
from fakes.protected import Ledger, label_of
from fakes.stores import CorruptingStore, FileStore, MemoryStore, Store
from harness.scratch import on_file
from harness.targets.base import Logged, PendingInterrupt
from scenarios.deploys import agents_at
from scenarios.model import Agent, Scenario

# a UUID in SDK output (ids the SDK draws itself), replaced before anything is recorded
UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

NOT_REBUILT = "the agents could not be rebuilt from storage at the last restart"


def work_log(
    path: Path,
    *,
    before_append: Callable[[], None] | None = None,
    after_append: Callable[[], None] | None = None,
    buffered: bool = False,
) -> AppendOnlyLog:
    """A session's append-only log: the file ``path`` when the session is started
    ``kept_on_file()`` (``harness.scratch``), else in memory, with the session."""
    return AppendOnlyLog(
        path if on_file() else None,
        before_append=before_append,
        after_append=after_append,
        buffered=buffered and on_file(),
    )


def work_store(directory: Path) -> Store:
    """A store the adapter chose for its stored data: files under ``directory`` when the
    session is started ``kept_on_file()``, else in memory, with the session (the same bytes
    under the same keys either way)."""
    return FileStore(directory) if on_file() else MemoryStore()


class RecordedSession:
    def __init__(
        self, workdir: Path, store: Store, continuation_format: ContinuationFormat
    ) -> None:
        self.crash_plan = CrashPlan()
        alive = self.crash_plan.alive
        self.journal = work_log(
            workdir / "journal.jsonl", before_append=alive, after_append=self._reached("model")
        )
        self.ledger = Ledger(
            work_log(
                workdir / "ledger.jsonl", before_append=alive, after_append=self._reached("action")
            )
        )
        # read after every step (and by a process-isolated step before it reports): nothing
        # reads it in between, so on file it is written once a step, not once an event
        self.public_events = work_log(workdir / "events.jsonl", buffered=True)
        damages = workdir / "damages.json" if on_file() else None  # kept by the store, if None
        self.store = CorruptingStore(store, continuation_format, damages)
        self.store.before_put = self._reached("persist")
        self.format = continuation_format

    def _reached(self, boundary: str) -> Callable[[], None]:
        return lambda: self.crash_plan.reached(boundary)

    def arm_crash(self, boundary: str, occurrence: int) -> None:
        self.crash_plan.arm(boundary, occurrence)

    def boundaries_reached(self) -> dict[str, int]:
        """Crash boundaries passed since the last ``arm_crash`` or ``count_boundaries``."""
        return dict(self.crash_plan.reached_so_far)

    def crashed(self) -> str | None:
        """Where the armed crash fired (even if the code under test swallowed it)."""
        return self.crash_plan.fired

    def count_boundaries(self) -> None:
        """Disarm, revive (a restart follows) and count boundaries from zero."""
        self.crash_plan.reset()

    def corrupt(self, corruption: str, which: int, pick: int = 0) -> str:
        return self.store.corrupt(corruption, which, pick)  # type: ignore[arg-type]

    def repair(self) -> str:
        return self.store.repair()

    def store_bytes(self) -> int:
        """Bytes of everything stored (every key's value): what a restart reads back."""
        stored = (self.store.get(key) for key in self.store.keys())  # noqa: SIM118 - a Store
        return sum(len(value or b"") for value in stored)

    def executions(self, start: int = 0) -> list[dict[str, Any]]:
        return self.ledger.executions(start)

    def requests(self, start: int = 0) -> list[dict[str, Any]]:
        return self.journal.records(start)

    def events(self, start: int = 0) -> list[dict[str, Any]]:
        return self.public_events.records(start)


class RebuildingSession(RecordedSession):
    """A recorded session whose agent tree is one object, ``root``, built (``_build``) from the
    work directory: a restart drops it and builds it again.  A rebuild that fails leaves no root
    (its steps answer ``NOT_REBUILT``) until a restart succeeds."""

    root: Any
    scenario: Scenario
    sdk_loggers: tuple[str, ...] = ()  # the SDK's loggers, read during a rebuild (``ErrorLog``)
    rebuild_log = Logged()  # what they received during the last one
    agents: dict[str, Agent]  # the scenario's agents, by path

    def _build(self) -> Any:
        raise NotImplementedError

    def deploy(self, tree: Agent) -> str | None:
        """A restart into a changed tree: from now on the agents are built from ``tree``, over
        the same stored data."""
        self.scenario = self.scenario.model_copy(update={"tree": tree})
        self.agents = agents_at(tree)
        return self.restart()

    def restart(self) -> str | None:
        """``_rebuild``, with what the SDK logged meanwhile kept for ``logged_at_rebuild``."""
        errors = ErrorLog()
        with errors.reading(*self.sdk_loggers):
            rebuilt = self._rebuild()
        self.rebuild_log = errors.logged()
        return rebuilt

    def _rebuild(self) -> str | None:
        try:
            self.root = self._build()
        except Exception as failure:
            self.root = None  # nothing survives a failed rebuild
            return f"{type(failure).__name__}: {failure}"
        return None

    def logged_at_rebuild(self) -> Logged:
        """What the SDK's loggers (``sdk_loggers``) received at WARNING and ERROR during the
        last ``restart()`` or ``deploy()``."""
        return self.rebuild_log


class DirectoryStore:
    """A directory the SDK writes its own files in (its sessions), seen as a store keyed by
    relative path, so the stored data can sit behind a ``CorruptingStore``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def get(self, key: str) -> bytes | None:
        path = self.root / key
        return path.read_bytes() if path.is_file() else None

    def put(self, key: str, value: bytes) -> None:
        (self.root / key).write_bytes(value)

    def delete(self, key: str) -> None:
        (self.root / key).unlink(missing_ok=True)

    def keys(self) -> list[str]:
        if not self.root.exists():
            return []
        return sorted(
            str(path.relative_to(self.root)) for path in self.root.rglob("*") if path.is_file()
        )


def writing_through(cls: type, writes: Sequence[str], before_write: Callable[[], None]) -> type:
    """A subclass of the SDK's ``cls`` whose public write methods (``writes``) first pass
    ``before_write`` (a crash point, such as ``RecordedSession._reached("persist")``); nothing
    else changes."""

    def passing(name: str) -> Callable[..., Any]:
        inherited = getattr(cls, name)

        def write(self: Any, *args: Any, **kwargs: Any) -> Any:
            before_write()
            return inherited(self, *args, **kwargs)

        return write

    return type(
        cls.__name__, (cls,), {name: passing(name) for name in writes if hasattr(cls, name)}
    )


class AnInterrupt(Protocol):
    """The fields an SDK's interrupt object shows (the reference's and Strands' both do)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def reason(self) -> Any: ...

    @property
    def response(self) -> Any: ...


def shown_to_the_human(interrupts: Iterable[AnInterrupt]) -> tuple[PendingInterrupt, ...]:
    """Interrupts as the root shows them, matched to actions by the label in their reason."""
    return tuple(
        PendingInterrupt(
            id=interrupt.id,
            name=interrupt.name,
            reason=interrupt.reason,
            label=label_of(interrupt.reason),
            response=interrupt.response,
        )
        for interrupt in interrupts
    )


def quiet_sdk_logs(*names: str) -> None:
    """Keep an SDK's warnings off the terminal (Python prints a library's records when it has no
    handler); its WARNING and ERROR records are still read during every step (``ErrorLog``)."""
    for name in names:
        sdk_logger = logging.getLogger(name)
        if not any(isinstance(handler, logging.NullHandler) for handler in sdk_logger.handlers):
            sdk_logger.addHandler(logging.NullHandler())


class ErrorLog(logging.Handler):
    """Collects what an SDK logs during one step: at ERROR or above (``messages``), and at
    WARNING (``warnings``: what it skipped or turned away without failing), every record, in
    the order logged."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []
        self.warnings: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        logged = self.messages if record.levelno >= logging.ERROR else self.warnings
        logged.append(record.getMessage())

    @contextlib.contextmanager
    def reading(self, *names: str) -> Iterator[None]:
        """Collect what the loggers ``names`` (and their children) receive meanwhile."""
        loggers = [logging.getLogger(name) for name in names]
        for sdk_logger in loggers:
            sdk_logger.addHandler(self)
        try:
            yield
        finally:
            for sdk_logger in loggers:
                sdk_logger.removeHandler(self)

    def logged(self) -> Logged:
        """Everything collected, as a rebuild reports it: no error was raised, every record
        logged at ERROR is one of its ``errors``."""
        return Logged(tuple(self.messages), tuple(self.warnings))

    def observed(self, raised: str | None = None) -> dict[str, Any]:
        """The observation's error fields for a step that logged what this collected and raised
        ``raised`` (None: it did not): its ``error`` is what it raised, else the first record
        logged at ERROR; ``more_errors`` every other ERROR record, ``warnings`` every WARNING
        record, in order.  A step with at most one error shows it as before, nothing more."""
        logged = tuple(self.messages)
        if raised is None:
            error, more = (logged[0], logged[1:]) if logged else (None, ())
        else:
            error, more = raised, logged
        return {"error": error, "more_errors": more, "warnings": tuple(self.warnings)}


class NoContinuations:
    """The continuation format of a target that locates no stored continuation (and so claims
    no ``corruption``)."""

    def locate(self, document: Any) -> list[tuple[Any, ...]]:
        del document
        return []

    def damage(self, corruption: str, entry: Any) -> Any:
        del entry
        raise CorruptionNotApplicable(f"{corruption}: this target locates no stored continuation")


def opaque(value: Any) -> str:
    """What a recorded event shows of a value JSON cannot hold (``json.dumps(default=...)``)."""
    return f"<{type(value).__name__}>"


def canonical_json(value: Any) -> bytes:
    """``value``'s canonical compact JSON: what a stored turn's size is measured in."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

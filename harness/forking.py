"""Real restarts at the cost of a fork: each segment of a scenario in a process of its own.

A restart must forget everything a new process would: whatever an SDK keeps at module level
(caches, registries, weak references, class attributes, context variables) dies with the process
that ran the steps before it.  ``--isolation process`` (``harness.isolation``) gets that by
starting an interpreter for every step, which imports the SDK again each time.  Here one *fork
server* per target (``python -m harness.forking NAME SOCKET``) imports the harness and the
target's SDK once, builds the target by name, and then only forks: it never starts a session or
runs a step, so it holds no scenario's state and no thread (it refuses to serve if importing
the target started one, since a fork copies no thread).

A scenario is cut into *segments* at its restarts.  Each segment runs in one child forked from
the server, which starts the target's session ``kept_on_file()`` (``harness.scratch``) on the
scenario's work directory and performs every step until the next restart; the harness holds a
``ForkedSession``, which forwards each call to the child.  A restart ends the child and forks a
new one, which starts the session from the work directory (a resume: docs/adapters.md) and
restarts it there, so the rebuild is the target's own ``restart()``, with its own error (and
what it logged meanwhile, ``logged_at_rebuild``, sent back with the child's first reply), in a
process that has seen nothing but files.  The restart-free control run is one segment.

What crosses from one segment to the next is what the target wrote in the work directory: its
stores, and the fakes' ledger, journal and events, which sessions started ``kept_on_file()``
keep as files.  A child that fails to start its session reports the failure as the restart's
error, and each later step until the next restart reports ``NOT_REBUILT``, as a session whose
rebuild failed does.  A call the child's session raises in is raised here as ``SegmentFailed``,
whose text is what the runner would have said of it in-process (``runner._problem``).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final

from harness.scratch import kept_on_file
from harness.targets.adapter import NOT_REBUILT, ErrorLog
from harness.targets.base import (
    Logged,
    Observation,
    PendingInterrupt,
    SaidAlready,
    Stored,
    Target,
    TargetInfo,
    logged_at_rebuild,
    sdk_loggers,
)
from scenarios.model import Agent, Scenario

ROOT: Final = Path(__file__).resolve().parent.parent
READY: Final = "ready"
LOGS: Final = ("executions", "requests", "events")  # what a session keeps, append-only


class ServerFailed(RuntimeError):
    """The fork server could not start or stopped answering (a harness bug, never hidden)."""


class SegmentFailed(SaidAlready):
    """A session call raised in the segment's process: ``problem`` is the one line the runner
    shows for it (the exception and the innermost frame it came from)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


class ForkIsolated:
    """``target`` with every segment between restarts in a process forked for it."""

    def __init__(self, name: str, target: Target) -> None:
        self.name = name
        self.info: TargetInfo = replace(
            target.info,
            isolation="fork",
            description=f"{target.info.description} (each segment between restarts in a "
            "process of its own)",
        )

    def start(self, scenario: Scenario, workdir: Path) -> ForkedSession:
        return ForkedSession(server(self.name), scenario, workdir)


class ForkedSession:
    """The harness's side of a session whose current segment runs in a forked child."""

    ends_its_process = True  # the runner closes it when a run ends (harness.runner)

    def __init__(self, fork_server: ForkServer, scenario: Scenario, workdir: Path) -> None:
        self.fork_server = fork_server
        self.scenario = scenario.model_dump_json()
        self.tree: str | None = None  # the tree of the last deploy, if any, as JSON
        self.workdir = workdir
        self.child: Connection | None = None
        # the ledger's, the journal's and the events' records handed out so far, and what the
        # last step added (sent with its reply: one round trip a step, not five)
        self.seen = {log: 0 for log in LOGS}
        self.gained: dict[str, tuple[int, Any]] = {}
        self.rebuild_log = Logged()
        error = self._segment(resume=False)
        if error is not None:  # the first start failed: the adapter's, as in-process
            raise SegmentFailed(error)

    # -- a segment ------------------------------------------------------------------------

    def _segment(self, *, resume: bool) -> str | None:
        """Fork the next segment's child; the error its start (or rebuild) reported."""
        self._end()
        child = self.fork_server.fork()
        child.send((self.scenario, self.tree, str(self.workdir), resume, self.seen))
        started, error, gained, self.rebuild_log = _reply(child)
        self.gained = gained
        if started:
            self.child = child
        else:  # no session in this segment: nothing until the next restart
            child.close()
        return error  # type: ignore[no-any-return]

    def _end(self) -> None:
        if self.child is not None:
            child, self.child = self.child, None
            with contextlib.suppress(OSError):  # the child exits when it reads this
                child.send(None)
            child.close()

    def close(self) -> None:
        self._end()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at exit: the child ends with its pipe anyway
            self._end()

    def _call(self, method: str, *arguments: Any) -> Any:
        if self.child is None:
            return None
        self.gained = {}
        self.child.send((method, arguments, None))
        return _reply(self.child)

    def _step(self, method: str, *arguments: Any) -> Any:
        """``_call``, and what the step added to the logs, and the stores after it."""
        assert self.child is not None
        self.child.send((method, arguments, self.seen))
        value, self.gained = _reply(self.child)
        return value

    def _log(self, log: str, start: int) -> list[dict[str, Any]]:
        cached = self.gained.pop(log, None)
        if cached is not None and cached[0] == start:
            records: list[dict[str, Any]] = cached[1]
        else:
            records = list(self._call(log, start) or [])
        self.seen[log] = start + len(records)
        return records

    # -- the session's methods ------------------------------------------------------------

    def run(self, prompt: str) -> Observation:
        if self.child is None:
            return Observation(stop_reason=None, error=NOT_REBUILT)
        observation: Observation = self._step("run", prompt)
        return observation

    def answer(self, responses: Sequence[tuple[PendingInterrupt, Any]]) -> Observation:
        if self.child is None:
            return Observation(stop_reason=None, error=NOT_REBUILT)
        observation: Observation = self._step("answer", list(responses))
        return observation

    def resume(self, response: Any) -> Observation:
        if self.child is None:
            return Observation(stop_reason=None, error=NOT_REBUILT)
        observation: Observation = self._step("resume", response)
        return observation

    def restart(self) -> str | None:
        return self._segment(resume=True)

    def logged_at_rebuild(self) -> Logged:
        """What the session logged as it restarted at the start of the current segment (sent
        with the child's first reply): the records of its own ``restart()`` or ``deploy()``,
        not those of its start."""
        return self.rebuild_log

    def use_root_session(self, name: str) -> None:
        """Tell the segment's session (asked before every step: a new segment starts in `a`)."""
        self._call("use_root_session", name)

    def restart_root_session(self, name: str) -> str | None:
        """One session's orchestrator rebuilt in the segment's process (not a new process: the
        agent tools and the other session stay, as in a live deployment)."""
        error: str | None = self._call("restart_root_session", name)
        self.rebuild_log = self._call("logged_at_rebuild")  # the child's session's, or nothing
        return error

    def deploy(self, tree: Agent) -> str | None:
        """The next segments build ``tree`` in place of the scenario's."""
        self.tree = tree.model_dump_json()
        return self.restart()

    def corrupt(self, corruption: str, which: int, pick: int = 0) -> str:
        note: str = self._call("corrupt", corruption, which, pick)
        return note

    def repair(self) -> str:
        note: str = self._call("repair")
        return note

    def executions(self, start: int = 0) -> list[dict[str, Any]]:
        return self._log("executions", start)

    def requests(self, start: int = 0) -> list[dict[str, Any]]:
        return self._log("requests", start)

    def events(self, start: int = 0) -> list[dict[str, Any]]:
        return self._log("events", start)

    def stored(self) -> Stored:
        cached = self.gained.pop("stored", None)
        stored: Stored | None = cached[1] if cached is not None else self._call("stored")
        return Stored() if stored is None else stored


def _reply(child: Connection) -> Any:
    try:
        outcome, value = child.recv()
    except (EOFError, OSError) as gone:
        raise ServerFailed(f"the segment's process ended without replying ({gone!r})") from None
    if outcome == "raised":
        if isinstance(value, BaseException):
            raise value
        raise SegmentFailed(value)
    return value


# -- the server, seen from the harness -------------------------------------------------------


class ForkServer:
    """A ``python -m harness.forking`` process for one target, and how to reach it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.forks = 0  # the segments started so far
        # the server's CPU seconds (its own and its warm-up child's) when it said READY: what
        # starting it cost, told apart from what serving segments costs (``children_cpu``)
        self.startup_cpu = 0.0
        self.directory = tempfile.TemporaryDirectory(prefix="nested-interrupt-forks-")
        self.address = str(Path(self.directory.name) / "server")
        # what the server and its children write to stderr (an SDK's last-resort log lines): a
        # file, which never fills up as an unread pipe would
        self._errors = open(Path(self.directory.name) / "stderr", "w+b")  # noqa: SIM115
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "harness.forking", name, self.address],
            stdin=subprocess.PIPE,  # closed when this process ends: the server ends with it
            stdout=subprocess.PIPE,  # says READY, then nothing: the server points it at /dev/null
            stderr=self._errors,
            text=True,
            env={**os.environ, "PYTHONPATH": path},
        )
        assert self.process.stdout is not None
        said = self.process.stdout.readline().split()
        if said[:1] == [READY] and len(said) == 2:
            self.startup_cpu = float(said[1])
        else:
            self.process.wait()
            self._errors.seek(0)
            text = self._errors.read().decode(errors="replace")
            lines = text.strip().splitlines() or ["(no output)"]
            raise ServerFailed(f"the fork server of {name} did not start: {lines[-1]}")

    def fork(self) -> Connection:
        """A new child of the server, connected to this process (``forks`` counts them)."""
        self.forks += 1
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(self.address)
        except OSError as failure:
            connection.close()
            raise ServerFailed(f"the fork server of {self.name} is gone: {failure}") from None
        return Connection(connection.detach())

    def stop(self) -> None:
        """End the server, which first reaps every child it forked: once this returns, the CPU
        of the server and of every segment's process is in this process's
        ``resource.getrusage(RUSAGE_CHILDREN)`` (``children_cpu``)."""
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._errors.close()
        self.directory.cleanup()


_SERVERS: dict[str, ForkServer] = {}
_SERVERS_OF = os.getpid()  # a forked copy of this module owns none of its parent's servers


def server(name: str) -> ForkServer:
    """This process's fork server of target ``name``, started when first needed."""
    global _SERVERS_OF
    if os.getpid() != _SERVERS_OF:
        _SERVERS.clear()
        _SERVERS_OF = os.getpid()
    found = _SERVERS.get(name)
    if found is None or found.process.poll() is not None:
        found = _SERVERS[name] = ForkServer(name)
    return found


def stop_server(name: str) -> None:
    """Stop this process's fork server of ``name``, if it has one (the next ``server(name)``
    starts another)."""
    running = _SERVERS.pop(name, None) if os.getpid() == _SERVERS_OF else None
    if running is not None:
        running.stop()


def children_cpu() -> float:
    """CPU seconds (user and system) of every process this one started and has waited for,
    their own waited-for children included: a stopped fork server, its segments with it."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _own_cpu() -> float:
    """CPU seconds of this process and of the children it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + children_cpu()


@atexit.register
def stop_servers() -> None:
    if os.getpid() == _SERVERS_OF:
        for running in _SERVERS.values():
            running.stop()
    _SERVERS.clear()


# -- the server itself -----------------------------------------------------------------------


def serve(name: str, address: str) -> int:
    """Import and build target ``name``, then keep one child forked ahead, waiting for the next
    segment, until the harness closes standard input.

    The spare child is forked while the harness is still busy with the segment before, so a
    restart waits for neither the fork nor the child's first scheduling; it tells the server
    when it has taken a segment (a byte on a pipe), and the server forks the next spare.  The
    server reaps its children itself, so their CPU time is counted with its own; before it
    exits it ends and reaps those still running, so none of it is lost.  READY carries the CPU
    seconds the server has used so far (``ForkServer.startup_cpu``)."""
    import fakes.corruption  # noqa: F401 - what every child uses, imported once, here
    import harness.runner  # noqa: F401
    from harness.targets import registry

    target = registry.get(name)
    _import_what_a_session_imports(target)
    if threading.active_count() > 1:  # a fork would copy the memory, not the threads
        names = ", ".join(sorted(thread.name for thread in threading.enumerate()))
        print(f"building target {name} started threads ({names}): cannot fork", file=sys.stderr)
        return 1
    gc.collect()
    gc.freeze()  # a child's collections never walk (so never copy) what the server imported
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(64)
    print(READY, f"{_own_cpu():.6f}", flush=True)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, sys.stdout.fileno())  # nobody reads it any more: it must never fill up
    os.close(quiet)
    stdin = sys.stdin.fileno()
    taken, took = os.pipe()
    forked: set[int] = set()  # the children not reaped yet
    while True:
        spare = os.fork()
        forked.add(spare)
        if spare == 0:  # the spare: the next segment's process
            os.close(taken)
            accepted, _ = listener.accept()
            listener.close()
            os.write(took, b".")
            os.close(took)
            os._exit(_child(target, Connection(accepted.detach())))
        while True:
            readable, _, _ = select.select([taken, stdin], [], [])
            forked -= _reap()
            if stdin in readable and not os.read(stdin, 1024):
                _end_all(forked)  # the harness is done: no segment will come
                return 0
            if taken in readable and os.read(taken, 1):
                break  # the spare took a segment: fork the next


# what the server's throwaway child runs to learn what a session imports: one nested question,
# asked and approved, which every target can express
WARM_UP: Final = {
    "description": "warm-up",
    "source": "harness.forking",
    "tree": {
        "name": "root",
        "turns": [[{"tool": "helper", "id": "call-1"}]],
        "sub_agents": [
            {
                "name": "helper",
                "actions": [{"tool": "act", "label": "act"}],
                "turns": [[{"tool": "act", "id": "use-1"}]],
            }
        ],
    },
    "steps": [{"run": "go"}, {"answer": {"act": "approve"}}],
}


def _import_what_a_session_imports(target: Target) -> None:
    """Import here the modules a session of ``target`` imports as it runs (an SDK imports much
    lazily), so no segment's process pays for them again; and build the pydantic models whose
    schemas it builds lazily (a model with a deferred build, as openai's response types are, is
    built on first use, in every segment's process again: more than half of what a segment of
    openai-agents cost).  Neither holds a scenario's state: they are what importing the SDK would
    do if it did not defer them.  A throwaway child runs the warm-up scenario and names them; the
    server only imports and builds them, and never runs a session itself."""
    import importlib

    with tempfile.TemporaryDirectory(prefix="nested-interrupt-warm-up-") as directory:
        named = Path(directory)
        pid = os.fork()
        if pid == 0:
            os._exit(_warm_up(target, named))
        os.waitpid(pid, 0)
        imported = _names(named / "modules")
        built = _names(named / "models")
    for module in imported:
        with contextlib.suppress(Exception):  # one that imports only inside a session
            importlib.import_module(module)
    for name in built:
        with contextlib.suppress(Exception):  # one defined inside a function, or generic
            _build_model(name)


def _names(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split() if path.exists() else []


def _warm_up(target: Target, directory: Path) -> int:
    from harness.runner import run_scenario
    from scenarios.loading import parse_scenario

    before = set(sys.modules)
    deferred, ready = set(_models(built=False)), set(_models(built=True))
    with contextlib.suppress(Exception):
        run_scenario(target, parse_scenario(WARM_UP, "warm-up"), "warm-up")
    modules = sorted(set(sys.modules) - before)
    (directory / "modules").write_text("\n".join(modules), encoding="utf-8")
    # deferred before, or defined by a module the session imported (deferred there, or not)
    built = sorted(
        f"{model.__module__}:{model.__qualname__}"
        for model in _models(built=True)
        if model in deferred or model not in ready
    )
    (directory / "models").write_text("\n".join(built), encoding="utf-8")
    return 0


def _models(*, built: bool) -> list[type]:
    """Every pydantic model class defined so far whose schema is (``built``) or is not built."""
    from pydantic import BaseModel

    found: list[type] = []
    seen: set[type] = set()
    waiting: list[type] = [BaseModel]
    while waiting:
        subclasses: list[type] = waiting.pop().__subclasses__()
        for subclass in subclasses:
            if subclass not in seen:
                seen.add(subclass)
                waiting.append(subclass)
                if _built(subclass) == built:
                    found.append(subclass)
    return found


def _built(model: type) -> bool:
    return bool(model.__dict__.get("__pydantic_complete__", False))


def _build_model(name: str) -> None:
    """Build the schema of the model named ``module:qualname``, if it is deferred still."""
    import importlib

    from pydantic import BaseModel

    module, qualname = name.split(":", 1)
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    if isinstance(found, type) and issubclass(found, BaseModel) and not _built(found):
        found.model_rebuild(raise_errors=False)


def _reap() -> set[int]:
    """Collect the children that have ended (a segment's, once the harness let it go)."""
    reaped: set[int] = set()
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped.add(pid)


def _end_all(children: set[int]) -> None:
    """End and reap every child still running (the spare, and a segment whose session the
    harness never closed), so their CPU is counted with the server's."""
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for pid in children:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _child(target: Target, parent: Connection) -> int:
    """One segment: start the session, then perform each call the harness sends."""
    from fakes.corruption import CorruptionNotApplicable
    from harness.runner import _problem

    try:
        scenario_json, tree, workdir, resume, seen = parent.recv()
        scenario = Scenario.model_validate_json(scenario_json)
        at_start = ErrorLog()  # a rebuild's start: what the SDK logs as it reads its files
        try:
            with kept_on_file(), at_start.reading(*sdk_loggers(target) if resume else ()):
                session: Any = target.start(scenario, Path(workdir))
            logged = Logged()
            if tree is not None:  # the last deploy's tree, into the session as in-process
                error = session.deploy(Agent.model_validate_json(tree))
                logged = logged_at_rebuild(session)
            elif resume:
                error = session.restart()
                logged = logged_at_rebuild(session)
            else:
                error = None
        except Exception as failure:  # a rebuild that fails: the restart's error, and what
            # the SDK logged as it failed (in-process, restart() reads it around the same build)
            parent.send(("returned", (False, _failed(failure, resume), {}, at_start.logged())))
            return 0
        parent.send(("returned", (True, error, _gained(session, seen), logged)))
        while (request := parent.recv()) is not None:
            method, arguments, seen = request
            try:
                value: Any = (  # a session without logged_at_rebuild logged nothing
                    logged_at_rebuild(session)
                    if method == "logged_at_rebuild"
                    else getattr(session, method)(*arguments)
                )
                if seen is not None:  # a step: with what it added
                    value = (value, _gained(session, seen))
            except CorruptionNotApplicable as nothing:  # the runner's to note
                parent.send(("raised", nothing))
            except Exception as failure:
                parent.send(("raised", _problem(failure)))
            else:
                parent.send(("returned", value))
    except (EOFError, OSError):  # the harness closed its end: the segment is over
        return 0
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _gained(session: Any, seen: dict[str, int]) -> dict[str, tuple[int, Any]]:
    """What the runner asks after every step, read now: each log's records from what it has
    seen on, and the stores."""
    gained: dict[str, tuple[int, Any]] = {
        log: (seen[log], getattr(session, log)(seen[log])) for log in LOGS
    }
    gained["stored"] = (0, session.stored())
    return gained


def _failed(failure: Exception, resume: bool) -> str:
    """What a start that raised reports: a rebuild's error, as ``restart()`` words it; the
    adapter's failure (``runner._problem``) on the first start, which is no rebuild."""
    from harness.runner import _problem

    return f"{type(failure).__name__}: {failure}" if resume else _problem(failure)


def main(argv: Sequence[str]) -> int:
    name, address = argv
    return serve(name, address)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

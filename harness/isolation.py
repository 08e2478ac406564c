"""Process isolation: every step of a scenario in a fresh Python process.

This is what a stateless function host does: each invocation starts from nothing but what was
persisted.  ``ProcessIsolated(name, target)`` wraps any target whose sessions rebuild themselves
from their work directory (docs/adapters.md: every shipped target does): each step runs
``python -m harness.isolation NAME WORKDIR`` with the step on standard input, which builds the
target's session from the work directory, performs the one step, and prints what it observed
together with the ledger, journal, events and stored sizes.  Nothing survives between steps but
files; a restart step's process starts the session and restarts it, so the rebuild, its error
and what it logged (``logged_at_rebuild``) are the target's own ``restart()``'s.  The step's
session is started ``kept_on_file()`` (``harness.scratch``), so what the fakes record is on file
too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Final

from harness.scratch import kept_on_file
from harness.targets.adapter import ErrorLog
from harness.targets.base import (
    Logged,
    Observation,
    PendingInterrupt,
    Stored,
    StoredContinuation,
    Target,
    TargetInfo,
    logged_at_rebuild,
    resume_without_id,
    sdk_loggers,
    use_root_session,
)
from scenarios.model import Agent, Scenario

SCENARIO_FILE: Final = "scenario.json"
DEPLOYED_FILE: Final = "deployed-tree.json"  # the tree of the last deploy, if any
ROOT: Final = Path(__file__).resolve().parent.parent


class WorkerFailed(RuntimeError):
    """The step's process crashed instead of reporting (a harness or SDK bug, never hidden)."""


class ProcessIsolated:
    def __init__(self, name: str, target: Target) -> None:
        self.name = name
        self.info: TargetInfo = replace(
            target.info,
            isolation="process",
            description=f"{target.info.description} (each step in a fresh process)",
        )

    def start(self, scenario: Scenario, workdir: Path) -> ProcessSession:
        return ProcessSession(self.name, scenario, workdir)


class ProcessSession:
    def __init__(self, name: str, scenario: Scenario, workdir: Path) -> None:
        self.name = name
        self.workdir = workdir
        self.root_session = "a"  # the root session each step's process talks to
        self.rebuild_log = Logged()
        (workdir / SCENARIO_FILE).write_text(scenario.model_dump_json(), encoding="utf-8")
        self.last: dict[str, Any] = self._call({"op": "start"})

    def run(self, prompt: str) -> Observation:
        return _observation(self._call({"op": "run", "prompt": prompt})["observation"])

    def answer(self, responses: Sequence[tuple[PendingInterrupt, Any]]) -> Observation:
        sent = [[asdict(pending), response] for pending, response in responses]
        return _observation(self._call({"op": "answer", "responses": sent})["observation"])

    def resume(self, response: Any) -> Observation:
        return _observation(self._call({"op": "resume", "response": response})["observation"])

    def restart(self) -> str | None:
        reply = self._call({"op": "restart"})
        logged = reply.get("logged") or {}  # none from a process whose start failed
        self.rebuild_log = Logged(
            tuple(logged.get("errors", ())), tuple(logged.get("warnings", ()))
        )
        error: str | None = reply["error"]
        return error

    def logged_at_rebuild(self) -> Logged:
        """What the last restart step's process logged during its ``restart()`` (not during
        its start, which every step's process does)."""
        return self.rebuild_log

    def use_root_session(self, name: str) -> None:
        """The next steps' processes talk to root session ``name`` (``worker``)."""
        self.root_session = name

    def restart_root_session(self, name: str) -> str | None:
        """A restart: every step's process starts from files, so nothing of either session, nor
        of the agent tools, is left in memory to keep."""
        self.root_session = name
        return self.restart()

    def deploy(self, tree: Agent) -> str | None:
        """The next steps' processes build ``tree`` in place of the scenario's (``worker``)."""
        (self.workdir / DEPLOYED_FILE).write_text(tree.model_dump_json(), encoding="utf-8")
        return self.restart()

    def corrupt(self, corruption: str, which: int, pick: int = 0) -> str:
        request = {"op": "corrupt", "corruption": corruption, "which": which, "pick": pick}
        note: str = self._call(request)["note"]
        return note

    def repair(self) -> str:
        note: str = self._call({"op": "repair"})["note"]
        return note

    def executions(self, start: int = 0) -> list[dict[str, Any]]:
        return list(self.last["executions"][start:])

    def requests(self, start: int = 0) -> list[dict[str, Any]]:
        return list(self.last["requests"][start:])

    def events(self, start: int = 0) -> list[dict[str, Any]]:
        return list(self.last["events"][start:])

    def stored(self) -> Stored:
        stored = self.last["stored"]
        return Stored(
            continuations=tuple(StoredContinuation(**item) for item in stored["continuations"]),
            record_bytes=stored["record_bytes"],
        )

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        finished = subprocess.run(
            [sys.executable, "-m", "harness.isolation", self.name, str(self.workdir)],
            input=json.dumps({**request, "session": self.root_session}),
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": path},
            check=False,
        )
        if finished.returncode != 0:
            lines = finished.stderr.strip().splitlines() or ["(no output)"]
            raise WorkerFailed(f"step process exited {finished.returncode}: {lines[-1]}")
        reply: dict[str, Any] = json.loads(finished.stdout)
        self.last = reply
        return reply


def _observation(data: dict[str, Any]) -> Observation:
    return Observation(
        stop_reason=data["stop_reason"],
        pending=tuple(PendingInterrupt(**item) for item in data["pending"]),
        final_answer=data["final_answer"],
        error=data["error"],
        more_errors=tuple(data.get("more_errors", ())),
        warnings=tuple(data.get("warnings", ())),
    )


def worker(name: str, workdir: Path, request: dict[str, Any]) -> dict[str, Any]:
    """One step in this process: build the session from ``workdir``, act, report."""
    from fakes.corruption import CorruptionNotApplicable
    from harness.targets import registry

    scenario = Scenario.model_validate_json((workdir / SCENARIO_FILE).read_text(encoding="utf-8"))
    deployed = workdir / DEPLOYED_FILE
    # the tree the last deploy brought: deployed into the session started from the scenario, as
    # a forked segment does, so what the session knows of the tree a question was asked in (its
    # label, say) is what it knows in-process
    tree = Agent.model_validate_json(deployed.read_text("utf-8")) if deployed.exists() else None
    reply: dict[str, Any] = {"error": None, "note": None, "observation": None}
    target = registry.get(name)
    at_start = ErrorLog()  # a restart's start: what the SDK logs as it reads its files
    rebuilds = request["op"] == "restart"
    try:
        with kept_on_file(), at_start.reading(*sdk_loggers(target) if rebuilds else ()):
            session = target.start(scenario, workdir)  # the next step's process reads its files
            if tree is not None:
                session.deploy(tree)  # failed, it leaves no tree: the step says so, in-process too
    except Exception as failure:  # a rebuild that fails is what the step observed
        error = f"{type(failure).__name__}: {failure}"
        reply["error"] = error
        if rebuilds:  # what the SDK logged as it failed (in-process restart() reads it too)
            reply["logged"] = asdict(at_start.logged())
        reply["observation"] = asdict(Observation(stop_reason=None, error=error))
        reply.update(executions=[], requests=[], events=[], stored=asdict(Stored()))
        return reply
    if request.get("session", "a") != "a":
        use_root_session(session, request["session"])
    op = request["op"]
    if op == "restart":  # the session's own rebuild, in a process that has seen only files
        reply["error"] = session.restart()
        reply["logged"] = asdict(logged_at_rebuild(session))
    elif op == "run":
        reply["observation"] = asdict(session.run(request["prompt"]))
    elif op == "answer":
        responses = [
            (PendingInterrupt(**pending), answer) for pending, answer in request["responses"]
        ]
        reply["observation"] = asdict(session.answer(responses))
    elif op == "resume":
        reply["observation"] = asdict(resume_without_id(session, request["response"]))
    elif op == "corrupt":
        try:
            reply["note"] = session.corrupt(
                request["corruption"], request["which"], request["pick"]
            )
        except CorruptionNotApplicable as nothing:
            reply["note"] = f"nothing corrupted: {nothing}"
    elif op == "repair":
        reply["note"] = session.repair()
    reply.update(
        executions=session.executions(),
        requests=session.requests(),
        events=session.events(),
        stored=asdict(session.stored()),
    )
    return reply


def main(argv: Sequence[str]) -> int:
    name, workdir = argv
    request = json.loads(sys.stdin.read())
    json.dump(worker(name, Path(workdir), request), sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

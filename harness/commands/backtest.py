"""``backtest``: the SDKs' own public bugs as a benchmark: "caught N of M".

For each bug of the catalogue (``scenarios/upstream/``, :mod:`harness.upstream`) its regression
file runs on its last affected release and on its first fixed one, each in an environment of its
own (:mod:`harness.releases`), with real restarts (``--isolation fork``: each stretch between
restarts in a process of its own, so a bug that lives in an SDK's module state, as
openai-agents #2487 does, is not certified away by a restart that keeps that state), and is
judged by the bug's own invariants: caught when it is red
on the affected release (a violation of one of them) and green for them on the fixed one (an
open bug has no fixed release: red on the newest is caught).  The runs are the tasks of the
execution seam, so ``--workers`` and ``--scheduler`` spread them; each result depends on its task
alone, so reports/backtest.md and .json are the same bytes however they were made.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, Literal

from harness.commands.inputs import EXIT_HOLDS, EXIT_VIOLATIONS, BadInput, connect
from harness.commands.options import Commands, add_command, execution_options, shown
from harness.commands.progress import Bar
from harness.releases import ENVIRONMENTS, ReleaseUnavailable, environment, run_in
from harness.report import write_atomically
from harness.targets import registry
from harness.targets.base import Target
from harness.upstream import ROOT, Bug, CatalogueError, catalogue, tracker_url

Role = Literal["affected", "fixed"]
Verdict = Literal["red", "green", "unavailable"]
CARRIER: Final = "reference"  # the target a task travels with: every worker has it
ISOLATION: Final = "fork"  # a restart is a new process, as production's is (harness.forking)


def add_parser(commands: Commands) -> None:
    backtest = add_command(
        commands,
        "backtest",
        run,
        help="run each catalogued upstream bug on its last affected and first fixed release",
        description="Run each bug of scenarios/upstream/ on the release it lived in and the one "
        "that fixed it, each in its own environment; write reports/backtest.md and .json.",
    )
    backtest.add_argument(
        "--bug",
        action="append",
        metavar="ID",
        help="a catalogued bug (repeatable; default: every one)",
    )
    backtest.add_argument(
        "--environments",
        type=Path,
        default=ENVIRONMENTS,
        metavar="DIR",
        help=f"where the environment of each release is built and kept (default: "
        f"{shown(ENVIRONMENTS)})",
    )
    backtest.add_argument(
        "--reports",
        type=Path,
        default=Path("reports"),
        metavar="DIR",
        help="where to write backtest.md and backtest.json (default: reports)",
    )
    execution_options(backtest, "each bug on each of its releases")


@dataclass(frozen=True)
class ReleaseTask:
    """One run: a bug's regression file on one release, in that release's environment."""

    bug: str
    sdk: str
    release: str
    role: Role
    target: str
    scenario: str  # from the checkout's root
    invariants: tuple[str, ...]
    checkout: str
    environments: str


@dataclass(frozen=True)
class ReleaseRun:
    """What a run showed: the invariants violated, and the verdict by the bug's own."""

    bug: str
    release: str
    role: Role
    verdict: Verdict
    violated: tuple[str, ...]
    note: str


def run_release(carrier: Target, task: ReleaseTask) -> ReleaseRun:
    """One task (in a worker, or here): build or reuse the release's environment, run the file
    there with this checkout's harness, and judge it by the bug's invariants."""
    del carrier  # the task carries everything; the carrier only gets it to a worker
    try:
        folder = environment(task.sdk, task.release, Path(task.environments))
    except ReleaseUnavailable as problem:
        return ReleaseRun(task.bug, task.release, task.role, "unavailable", (), str(problem))
    ran = (EXIT_HOLDS, EXIT_VIOLATIONS)  # the exit codes of a run that printed its history
    command = ["run", task.scenario, "--target", task.target, "--isolation", ISOLATION, "--json"]
    done = run_in(folder, command, Path(task.checkout))
    try:
        document = json.loads(done.stdout) if done.returncode in ran else None
    except ValueError:  # a run that died before it printed its history
        document = None
    if document is None:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        why = lines[-1].strip() if lines else f"exit {done.returncode}"
        return ReleaseRun(task.bug, task.release, task.role, "unavailable", (), why)
    missing = document["history"]["not_applicable"]
    if missing:
        why = f"not applicable on {task.target} {task.release}: needs {', '.join(missing)}"
        return ReleaseRun(task.bug, task.release, task.role, "unavailable", (), why)
    violated = tuple(sorted(name for name, found in document["verdicts"].items() if found))
    own = [name for name in task.invariants if name in violated]
    verdict: Verdict = "red" if own else "green"
    note = f"violates {', '.join(own)}" if own else "holds " + ", ".join(task.invariants)
    return ReleaseRun(task.bug, task.release, task.role, verdict, violated, note)


def tasks_of(bugs: Sequence[Bug], environments: Path) -> list[ReleaseTask]:
    tasks = []
    for bug in bugs:
        if bug.gap is not None or bug.scenario is None:
            continue
        roles: list[tuple[str | None, Role]] = [
            (bug.last_affected, "affected"),
            (bug.first_fixed, "fixed"),
        ]
        for release, role in roles:
            if release is None:
                continue
            tasks.append(
                ReleaseTask(
                    bug.id,
                    bug.sdk,
                    release,
                    role,
                    bug.target,
                    bug.scenario,
                    bug.invariants,
                    str(ROOT),
                    str(environments.resolve()),
                )
            )
    return tasks


def caught(bug: Bug, runs: Sequence[ReleaseRun]) -> bool:
    """Red where it lived and, once fixed, green where it was fixed."""
    verdicts = {run.role: run.verdict for run in runs}
    if verdicts.get("affected") != "red":
        return False
    return bug.is_open or verdicts.get("fixed") == "green"


def run(arguments: argparse.Namespace) -> int:
    try:
        bugs = catalogue()
    except CatalogueError as problem:
        raise BadInput(str(problem)) from None
    if arguments.bug:
        known = {bug.id for bug in bugs}
        unknown = [name for name in arguments.bug if name not in known]
        if unknown:
            raise BadInput(f"--bug: no catalogued bug {unknown[0]!r} (see scenarios/upstream/)")
        bugs = [bug for bug in bugs if bug.id in arguments.bug]
    tasks = tasks_of(bugs, arguments.environments)
    carrier = registry.get(CARRIER)
    started = time.monotonic()
    runs: list[ReleaseRun] = []
    with connect(arguments) as where, Bar(len(tasks), "release runs") as bar:
        for task, result in zip(
            tasks, where.map(run_release, [(carrier, task) for task in tasks]), strict=True
        ):
            runs.append(result)
            bar.advance(f"{task.bug} on {task.target} {task.release}: {result.verdict}")
    by_bug: dict[str, list[ReleaseRun]] = {}
    for result in runs:
        by_bug.setdefault(result.bug, []).append(result)
    document = backtest_document(bugs, by_bug)
    write_atomically(arguments.reports / "backtest.json", json.dumps(document, indent=2) + "\n")
    write_atomically(arguments.reports / "backtest.md", backtest_markdown(document))
    print(
        f"caught {document['caught']} of {document['catalogued']} catalogued bugs "
        f"({document['gaps']} gaps) in {time.monotonic() - started:.1f} s "
        f"{where.where}: {shown(arguments.reports / 'backtest.md')}",
        file=sys.stderr,
    )
    expressible = [bug for bug in bugs if bug.gap is None]
    return (
        EXIT_HOLDS
        if all(caught(bug, by_bug.get(bug.id, [])) for bug in expressible)
        else (EXIT_VIOLATIONS)
    )


def backtest_document(bugs: Sequence[Bug], runs: Mapping[str, Sequence[ReleaseRun]]) -> Any:
    """The JSON report: each bug with its runs and whether it was caught; no timing in it."""
    entries = []
    for bug in bugs:
        own = runs.get(bug.id, [])
        entries.append(
            {
                "id": bug.id,
                "sdk": bug.sdk,
                "tracker": bug.tracker,
                "title": bug.title,
                "target": bug.target,
                "invariants": list(bug.invariants),
                "last_affected": bug.last_affected,
                "first_fixed": bug.first_fixed,
                "gap": bug.gap,
                "runs": [
                    {key: value for key, value in asdict(result).items() if key != "bug"}
                    for result in own
                ],
                "caught": bug.gap is None and caught(bug, own),
            }
        )
    return {
        "caught": sum(entry["caught"] for entry in entries),
        "catalogued": len(entries),
        "gaps": sum(entry["gap"] is not None for entry in entries),
        "bugs": entries,
    }


def backtest_markdown(document: Any) -> str:
    lines = [
        "# Backtest: the SDKs' own nested-interrupt bugs",
        "",
        f"**Caught {document['caught']} of {document['catalogued']}** catalogued public "
        f"upstream bugs ({document['gaps']} of them gaps the harness cannot express yet). A bug "
        "is caught when its regression file is red on its last affected release by the bug's "
        "own invariants and green for them on its first fixed one (an open bug: red on the "
        "newest release). Every run has real restarts (`--isolation fork`: a new process at "
        "each restart). Written by `python -m harness backtest` from scenarios/upstream/ "
        "(docs/backtest.md).",
        "",
        "| bug | tracker | target | invariants | last affected | first fixed | caught |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in document["bugs"]:
        if entry["gap"] is not None:
            continue
        by_role = {result["role"]: result for result in entry["runs"]}
        cells = []
        for role, release in (
            ("affected", entry["last_affected"]),
            ("fixed", entry["first_fixed"]),
        ):
            result = by_role.get(role)
            if release is None:
                cells.append("open")
            elif result is None:
                cells.append(f"{release}: not run")
            else:
                cells.append(f"{release}: **{result['verdict']}** ({result['note']})")
        link = f"[{entry['tracker']}]({_url(entry['tracker'])})"
        lines.append(
            f"| {entry['id']} | {link} | {entry['target']} | {', '.join(entry['invariants'])} "
            f"| {cells[0]} | {cells[1]} | {'yes' if entry['caught'] else '**no**'} |"
        )
    gaps = [entry for entry in document["bugs"] if entry["gap"] is not None]
    if gaps:
        lines += ["", "## Gaps: catalogued, not yet expressible", ""]
        for entry in gaps:
            link = f"[{entry['tracker']}]({_url(entry['tracker'])})"
            lines.append(f"- **{entry['id']}** ({link}, {entry['title']}): {entry['gap']}")
    return "\n".join(lines) + "\n"


def _url(tracker: str) -> str:
    repository, number = tracker.split("#")
    return f"https://github.com/{repository}/issues/{number}"


__all__ = ["ReleaseRun", "ReleaseTask", "backtest_document", "caught", "run_release", "tracker_url"]

"""Continuation-size benchmarks: what each target stores, measured side by side, and a gate.

Every figure here is a byte count read from a target's own stores while a scenario runs, so the
document is the same on every run (no timing in it; throughput lives in the pytest-benchmark
suite, ``benchmarks/``).  Per target:

* ``earlier_calls``: the stored continuation of one interrupted ephemeral sub-agent after 0, 1,
  3, 6 and 10 earlier completed calls, and the turn a ``preserve_context=True`` sub-agent
  without a session store would have to keep (its live snapshot), with the slope (bytes per
  earlier call) of each;
* ``depth`` and ``fan_out``: all stored continuations while pending, for chains of 1 to 4
  sub-agents and 1 to 4 sibling sub-agents;
* ``record``: the orchestrator's interrupt record while pending and after the resume;
* ``store_cycles``: everything stored after each of five prompts that each call, interrupt,
  resume and end (a message-log session store against a snapshot store: ``strands`` against
  ``strands-snapshot``);
* ``floor_ratio``: the continuation against the information floor, the compact JSON of what must
  be kept (the pending tool call, the turn's messages, state and model state).

``gate`` compares a document with a committed baseline: a size more than 5% larger fails, and so
does an ephemeral continuation more than 5% larger after 10 earlier calls than after none
(invariant 7; a call counter gaining a digit is not growth).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from harness.report import target_column
from harness.runner import Recorder
from harness.scratch import BENCH, scratch_directory
from harness.targets.base import Target, missing_capabilities
from scenarios.loading import parse_scenario
from scenarios.model import Scenario

EARLIER_CALLS: Final = (0, 1, 3, 6, 10)
SHAPES: Final = (1, 2, 3, 4)
CYCLES: Final = 5
TOLERANCE: Final = 0.05
Document = dict[str, Any]
SessionProbe = Callable[[Any], int | None]


def calls_scenario(earlier: int, *, preserve_context: bool = False) -> Scenario:
    """A clerk sub-agent called in ``earlier + 1`` consecutive orchestrator turns; every call asks
    once, and the first ``earlier`` are approved: the last one is left pending."""
    clerk: dict[str, Any] = {
        "name": "clerk",
        "actions": [{"tool": "file_form", "label": "file"}],
        "turns": [[{"tool": "file_form", "id": "t1"}]],
        "state": {"desk": "front office"},
    }
    if preserve_context:
        clerk.update(preserve_context=True, session_store=False)
    # ids and prompts of one length, so only what a target keeps can change a size
    turns = [
        [{"tool": "clerk", "id": f"c{n:02d}", "prompt": f"form {n:02d}"}]
        for n in range(earlier + 1)
    ]
    steps: list[Any] = [{"run": "file the forms"}]
    steps += [{"answer": {"file": "approve"}} for _ in range(earlier)]
    return _scenario(
        f"{earlier} earlier calls",
        {"name": "orchestrator", "sub_agents": [clerk], "turns": turns},
        steps,
    )


def shape_scenario(depth: int, fan_out: int) -> Scenario:
    """``fan_out`` sibling chains of ``depth`` sub-agents, each leaf asking once: all pending."""

    def chain(index: int, level: int) -> dict[str, Any]:
        name = f"a{index}l{level}"
        agent: dict[str, Any] = {"name": name}
        if level == depth:
            agent["actions"] = [{"tool": "act", "label": f"{name}-act"}]
            agent["turns"] = [[{"tool": "act", "id": "t1"}]]
        else:
            below = chain(index, level + 1)
            agent["sub_agents"] = [below]
            agent["turns"] = [[{"tool": below["name"], "id": "t1"}]]
        return agent

    subs = [chain(index, 1) for index in range(fan_out)]
    turn = [{"tool": sub["name"], "id": f"c{index}"} for index, sub in enumerate(subs)]
    tree = {"name": "orchestrator", "sub_agents": subs, "turns": [turn]}
    return _scenario(f"depth {depth}, fan-out {fan_out}", tree, [{"run": "go"}])


def _scenario(description: str, tree: dict[str, Any], steps: list[Any]) -> Scenario:
    data = {"description": description, "source": "harness.bench", "tree": tree, "steps": steps}
    return parse_scenario(data, description)


def measure(target: Target) -> dict[str, Any]:
    """Every size figure of ``target`` (a figure its sessions cannot give is None)."""
    ephemeral = {str(n): _pending_continuation(target, calls_scenario(n)) for n in EARLIER_CALLS}
    kept = {
        str(n): _after(target, calls_scenario(n, preserve_context=True), _live_clerk)
        for n in EARLIER_CALLS
    }
    record_pending = _after(target, calls_scenario(0), _record)
    finished = calls_scenario(0).model_copy(
        update={"steps": (*calls_scenario(0).steps, calls_scenario(1).steps[1])}
    )
    floor = _floor(calls_scenario(0))
    figures: dict[str, Any] = {
        "earlier_calls": {"ephemeral": ephemeral, "preserve_context_no_store": kept},
        "slope": {"ephemeral": _slope(ephemeral), "preserve_context_no_store": _slope(kept)},
        "depth": {str(d): _after(target, shape_scenario(d, 1), _continuations) for d in SHAPES},
        "fan_out": {str(f): _after(target, shape_scenario(1, f), _continuations) for f in SHAPES},
        "record": {"pending": record_pending, "after_resume": _after(target, finished, _record)},
        "store_cycles": _store_cycles(target),
        "floor": floor,
    }
    first = ephemeral["0"]
    figures["floor_ratio"] = None if first is None else round(first / floor, 2)
    return figures


def _pending_continuation(target: Target, scenario: Scenario) -> int | None:
    return _after(target, scenario, _continuations)


def _continuations(session: Any) -> int | None:
    stored = session.stored()
    return sum(entry.size for entry in stored.continuations) if stored.continuations else None


def _record(session: Any) -> int | None:
    record: int | None = session.stored().record_bytes
    return record


def _live_clerk(session: Any) -> int | None:
    probe = getattr(session, "live_turn_bytes", None)
    return None if probe is None else probe("orchestrator/clerk")


def _after(target: Target, scenario: Scenario, probe: SessionProbe) -> int | None:
    """``probe`` of the session once every step of ``scenario`` ran on ``target``."""
    if missing_capabilities(target.info, scenario):
        return None
    with scratch_directory(BENCH) as workdir:
        session = target.start(scenario, Path(workdir))
        Recorder(session, scenario).steps()
        return probe(session)


def _store_cycles(target: Target) -> list[int] | None:
    """Everything stored after each of ``CYCLES`` prompts, each of which calls the clerk once,
    is interrupted, and is approved (call, interrupt, resume, end)."""
    scenario = calls_scenario(0)
    steps = [
        step
        for cycle in range(CYCLES)
        for step in ({"run": f"prompt {cycle}"}, {"answer": {"file": "approve"}})
    ]
    scenario = parse_scenario(
        scenario.model_dump(mode="json", exclude_defaults=True) | {"steps": steps}, "cycles"
    )
    with scratch_directory(BENCH) as workdir:
        session: Any = target.start(scenario, Path(workdir))
        if not hasattr(session, "store_bytes"):
            return None
        recorder = Recorder(session, scenario)
        sizes = []
        for index, step in enumerate(scenario.steps):
            recorder.step(index, step)
            if index % 2:  # a cycle ended
                sizes.append(session.store_bytes())
        return sizes


def _floor(scenario: Scenario) -> int:
    """The compact JSON of what must be kept of the interrupted turn: the pending tool call, the
    turn's messages, its state and model state, as the reference has them (the smallest shape
    that holds it all)."""
    from harness.targets.reference import ReferenceTarget

    with scratch_directory(BENCH) as workdir:
        session = ReferenceTarget().start(scenario, Path(workdir))
        Recorder(session, scenario).steps()
        [entry] = session.store.continuations()
        data = entry.value["data"]
        kept = {
            "pending_tool_call": data["interrupt_state"]["context"],
            "messages": data["messages"],
            "state": data["state"],
            "model_state": data["model_state"],
        }
        return len(json.dumps(kept, sort_keys=True, separators=(",", ":")).encode())


def _slope(sizes: dict[str, int | None]) -> float | None:
    """Bytes per earlier call, from the first to the last measurement."""
    first, last = sizes[str(EARLIER_CALLS[0])], sizes[str(EARLIER_CALLS[-1])]
    if first is None or last is None:
        return None
    return round((last - first) / (EARLIER_CALLS[-1] - EARLIER_CALLS[0]), 1)


def size_document(targets: Sequence[Target]) -> Document:
    columns = {}
    for target in targets:
        name = target_column(target.info)
        columns[name] = {"name": target.info.name, "version": target.info.version}
        columns[name].update(measure(target))
    return {"targets": columns}


def gate(document: Document, baseline: Document | None) -> list[str]:
    """Why ``document`` fails the gate (empty: it passes)."""
    problems = []
    for name, figures in document["targets"].items():
        sizes = figures["earlier_calls"]["ephemeral"]
        first, last = sizes[str(EARLIER_CALLS[0])], sizes[str(EARLIER_CALLS[-1])]
        if first and last is not None and last > first * (1 + TOLERANCE):
            problems.append(
                f"{name}: the ephemeral continuation grows with earlier calls ({first} B "
                f"after {EARLIER_CALLS[0]}, {last} B after {EARLIER_CALLS[-1]}; invariant 7 "
                "wants it flat)"
            )
        before = (baseline or {}).get("targets", {}).get(name)
        if before is None:
            continue
        for path, old, new in _pairs(before, figures):
            if old and new is not None and new > old * (1 + TOLERANCE):
                growth = round(100 * (new - old) / old, 1)
                problems.append(f"{name}: {path} grew {growth}% ({old} B -> {new} B)")
    return problems


def updated(baseline: Document | None, document: Document) -> Document:
    """``baseline`` with the columns ``document`` measured replaced by its figures: a run of
    some targets keeps the columns of every target it did not measure (the ADK columns come from
    another environment than strands', say)."""
    columns = dict((baseline or {}).get("targets", {}))
    columns.update(document["targets"])
    return {"targets": dict(sorted(columns.items()))}


def _pairs(old: Any, new: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, baseline value, current value) for every byte count in both documents."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in sorted(set(old) & set(new)):
            if key in ("slope", "floor_ratio", "name", "version"):
                continue
            found += _pairs(old[key], new[key], f"{path}.{key}" if path else key)
        return found
    if isinstance(old, list) and isinstance(new, list):
        return [(f"{path}[{i}]", a, b) for i, (a, b) in enumerate(zip(old, new, strict=False))]
    if isinstance(old, int) and isinstance(new, int):
        return [(path, old, new)]
    return []


def dumps(document: Document) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def markdown(document: Document, problems: list[str]) -> str:
    entries = list(document["targets"].items())
    lines = ["# Continuation size", ""]
    lines += [
        "Bytes each target stores (canonical compact JSON of a stored turn; whole files for the "
        "store). `-`: the target cannot say. Written by `python -m harness bench`.",
        "",
        "## One interrupted sub-agent after earlier completed calls",
        "",
        "| target | kind | " + " | ".join(str(n) for n in EARLIER_CALLS) + " | B per call |",
        "|---|---|" + "---:|" * (len(EARLIER_CALLS) + 1),
    ]
    for name, figures in entries:
        for kind, label in (
            ("ephemeral", "ephemeral (stored)"),
            ("preserve_context_no_store", "preserve_context, no store (live turn)"),
        ):
            row = figures["earlier_calls"][kind]
            cells = [_cell(row[str(n)]) for n in EARLIER_CALLS]
            lines.append(
                f"| {name} | {label} | "
                + " | ".join(cells)
                + f" | {_cell(figures['slope'][kind])} |"
            )
    lines += ["", "## Stored continuations while pending, by depth and by fan-out", ""]
    lines += ["| target | by | " + " | ".join(str(n) for n in SHAPES) + " |"]
    lines += ["|---|---|" + "---:|" * len(SHAPES)]
    for name, figures in entries:
        for by in ("depth", "fan_out"):
            cells = [_cell(figures[by][str(n)]) for n in SHAPES]
            lines.append(f"| {name} | {by.replace('_', '-')} | " + " | ".join(cells) + " |")
    lines += ["", "## The orchestrator's record, and the information floor", ""]
    lines += ["| target | record pending | record after resume | floor | continuation / floor |"]
    lines += ["|---|---:|---:|---:|---:|"]
    for name, figures in entries:
        record = figures["record"]
        lines.append(
            f"| {name} | {_cell(record['pending'])} | {_cell(record['after_resume'])} | "
            f"{figures['floor']} | {_cell(figures['floor_ratio'])} |"
        )
    lines += [
        "",
        f"## Everything stored after each of {CYCLES} prompts (call, interrupt, resume)",
        "",
    ]
    lines += ["| target | " + " | ".join(str(n) for n in range(1, CYCLES + 1)) + " |"]
    lines += ["|---|" + "---:|" * CYCLES]
    for name, figures in entries:
        cycles = figures["store_cycles"] or [None] * CYCLES
        lines.append(f"| {name} | " + " | ".join(_cell(size) for size in cycles) + " |")
    lines += ["", "## Gate", ""]
    lines += [f"- {problem}" for problem in problems] or [
        "passes: no size grew more than 5% against the baseline, and no ephemeral continuation "
        "grows with earlier calls"
    ]
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def plot(document: Document, path: Path) -> bool:
    """A PNG of bytes against earlier calls per target; False if matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        return False
    figure, axes = pyplot.subplots(figsize=(7, 4.5))
    for name, figures in document["targets"].items():
        for kind, style in (("ephemeral", "-o"), ("preserve_context_no_store", "--s")):
            row = figures["earlier_calls"][kind]
            points = [(n, row[str(n)]) for n in EARLIER_CALLS if row[str(n)] is not None]
            if points:
                xs, ys = zip(*points, strict=True)
                label = f"{name}: {'ephemeral' if kind == 'ephemeral' else 'preserve_context'}"
                axes.plot(xs, ys, style, label=label)
    axes.set_xlabel("earlier completed calls")
    axes.set_ylabel("bytes of the interrupted turn")
    axes.set_title("Continuation size")
    axes.legend(fontsize="small")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100, metadata={"Software": None})
    pyplot.close(figure)
    return True

"""The runner: drive one scenario on one target and record its history.

For each step it asks the oracle what must happen (from the scenario alone), performs the step on
the target, and records what the user could see plus what the ledger, the journal, the event
stream and the stores gained.  A scenario with restarts is run a second time without them, on a
fresh target session: that restart-free run is the control the history is compared against.

An adapter that breaks the contract (``start`` or a session method raises, or ``run``/``answer``
return something other than an ``Observation``) yields no history: ``run_scenario`` raises
``AdapterError`` naming the target, the scenario and the step.  That is a verdict on the adapter,
not on the implementation: it is never a violation and no finding excuses it.
"""

from __future__ import annotations

import marshal
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from fakes.corruption import CorruptionNotApplicable
from harness.history import History, StepRecord
from harness.scratch import RUN, scratch_directory
from harness.targets.base import (
    Logged,
    Observation,
    PendingInterrupt,
    SaidAlready,
    Session,
    Target,
    logged_at_rebuild,
    missing_capabilities,
    restart_root_session,
    resume_without_id,
    use_root_session,
)
from scenarios.classes import has_control
from scenarios.model import Answer, Corrupt, Repair, Resend, Restart, Run, Scenario, Step
from scenarios.oracle import Expected, Oracle


@dataclass(eq=False)
class AdapterError(Exception):
    """A target's adapter broke its contract during a scenario (see the module's docstring)."""

    target: str
    scenario: str
    step: int | None  # the step's index, None when ``start`` failed
    kind: str  # the step's kind (run, answer, ...), or "start"
    problem: str  # one line: what was raised (and where), or what was returned
    control: bool = False  # in the restart-free control run

    def __str__(self) -> str:
        where = "at start()" if self.step is None else f"step {self.step} ({self.kind})"
        run = " of the restart-free control run" if self.control else ""
        return (
            f"adapter error: target {self.target}, scenario {self.scenario}, {where}{run}: "
            f"{self.problem}"
        )

    def __reduce__(self) -> tuple[type[AdapterError], tuple[Any, ...]]:
        """The same error in another process (a task's result): every field, by name."""
        fields = (self.target, self.scenario, self.step, self.kind, self.problem, self.control)
        return AdapterError, fields

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "step": self.step,
            "kind": self.kind,
            "control": self.control,
            "problem": self.problem,
        }


class ContractBroken(TypeError):
    """A session method returned what the target contract does not allow."""


def run_scenario(
    target: Target, scenario: Scenario, name: str, *, with_control: bool = True
) -> History:
    """The history of ``scenario`` on ``target``, with its restart-free control where it has one
    (and ``with_control``: a campaign whose checker never looks at the control skips it);
    ``AdapterError`` when the adapter breaks the contract."""
    plan = RunPlan(target, [(name, scenario)], with_control=with_control)
    # in this process the plan's own scenarios are run: their JSON is for tasks sent elsewhere
    recorded = (
        _recorded(target, plan.parsed[run], name, control) for name, run, control in plan.tasks
    )
    outcome = next(plan.histories(recorded))
    if isinstance(outcome, AdapterError):
        raise outcome
    return outcome


RunTask = tuple[str, str, bool]  # a scenario's name, the JSON of what is run, whether a control
Recorded = tuple[StepRecord, ...] | AdapterError


def record_run(target: Target, task: RunTask) -> Recorded:
    """One recorded run as a task (``harness.execution``): a scenario (or a restart-free control)
    as JSON in; its steps out, or the adapter error the run raised, returned as a result."""
    name, scenario, control = task
    return _recorded(target, Scenario.model_validate_json(scenario), name, control)


def _recorded(target: Target, scenario: Scenario, name: str, control: bool) -> Recorded:
    try:
        return _record(target, scenario, name, control=control)
    except AdapterError as error:
        return error


class RunPlan:
    """The runs a list of scenarios needs on one target, each distinct run once.

    Every scenario is run, and one with a control (``has_control``) is run again without its
    restarts.  The same run is often needed more than once: a scenario drawn twice under two
    names, or scenarios that differ only in where they restart, which share one restart-free
    control.  A run depends on the scenario and the target alone (the determinism check holds
    every history to the same bytes, run after run, quiet or under load), so each distinct run is
    recorded once and serves every history that needs it."""

    def __init__(
        self,
        target: Target,
        scenarios: Sequence[tuple[str, Scenario]],
        *,
        with_control: bool = True,
    ) -> None:
        info = target.info
        self.target_json = {
            "name": info.name,
            "version": info.version,
            "capabilities": sorted(info.capabilities),
        }
        self.target = target
        self.scenarios = scenarios
        self.tasks: list[RunTask] = []  # each distinct run, in the order scenarios first need it
        self.parsed: dict[str, Scenario] = {}  # the scenario each task's JSON is of
        self._needs: list[_Needs] = []
        for name, scenario in scenarios:
            missing = tuple(missing_capabilities(info, scenario))
            if missing:
                self._needs.append(_Needs(None, None, missing))
                continue
            control = (
                scenario.without_restarts() if with_control and has_control(scenario) else None
            )
            needs = _Needs(
                scenario.model_dump_json(), None if control is None else control.model_dump_json()
            )
            self._needs.append(needs)
            for run, run_json, is_control in (
                (scenario, needs.run, False),
                (control, needs.control, True),
            ):
                if run is not None and run_json is not None and run_json not in self.parsed:
                    self.parsed[run_json] = run
                    self.tasks.append((name, run_json, is_control))

    def histories(self, recorded: Iterator[Recorded]) -> Iterator[History | AdapterError]:
        """Each scenario's history, or the adapter error that kept it from having one, in the
        scenarios' order, from the results of ``tasks`` in their order: read as needed, and all
        of them by the time the last scenario's comes (plans may share one iterator, one after
        the other)."""
        tasks = iter(self.tasks)
        results: dict[str, Recorded] = {}

        def result(run: str) -> Recorded:
            while run not in results:
                results[next(tasks)[1]] = next(recorded)
            return results[run]

        last = len(self.scenarios) - 1
        for index, ((name, scenario), needs) in enumerate(
            zip(self.scenarios, self._needs, strict=True)
        ):
            history = self._history(name, scenario, needs, result)
            if index == last:  # a run no scenario asked for in the end (after an adapter error)
                for _ in tasks:
                    next(recorded)
            yield history

    def _history(
        self, name: str, scenario: Scenario, needs: _Needs, result: Callable[[str], Recorded]
    ) -> History | AdapterError:
        scenario_json = scenario.model_dump(mode="json", exclude_defaults=True)
        if needs.run is None:
            return History(name, scenario_json, self.target_json, (), None, needs.missing)
        steps = result(needs.run)
        if isinstance(steps, AdapterError):
            return _of(steps, name, control=False)
        if needs.control is None:
            return History(name, scenario_json, self.target_json, steps)
        control_steps = result(needs.control)
        if isinstance(control_steps, AdapterError):
            return _of(control_steps, name, control=True)
        control_json = self.parsed[needs.control].model_dump(mode="json", exclude_defaults=True)
        control = History(name, control_json, self.target_json, control_steps)
        return History(name, scenario_json, self.target_json, steps, control)


def _of(error: AdapterError, scenario: str, *, control: bool) -> AdapterError:
    """A run's adapter error as the error of one scenario that needed the run."""
    if (error.scenario, error.control) == (scenario, control):
        return error
    named = replace(error, scenario=scenario, control=control)
    named.__cause__ = error.__cause__
    return named


@dataclass(frozen=True)
class _Needs:
    """What one scenario needs run: its run and its control, as JSON (None: not run)."""

    run: str | None
    control: str | None
    missing: tuple[str, ...] = ()  # the capabilities it needs and the target lacks


def _record(
    target: Target, scenario: Scenario, name: str, *, control: bool = False
) -> tuple[StepRecord, ...]:
    with scratch_directory(RUN) as workdir:
        recorder = None
        try:
            session = target.start(scenario, Path(workdir))
            recorder = Recorder(session, scenario)
            return tuple(recorder.steps())
        except Exception as failure:  # the adapter's bug: named, and the run goes on without it
            step = None if recorder is None else recorder.at
            raise AdapterError(
                target.info.name,
                name,
                step,
                "start" if step is None else _kind(scenario.steps[step]),
                _problem(failure),
                control,
            ) from failure
        finally:  # a session whose segment runs in a process of its own ends it here
            if recorder is not None and getattr(recorder.session, "ends_its_process", False):
                recorder.session.close()  # type: ignore[attr-defined]


def _problem(failure: Exception) -> str:
    """What the adapter did, in one line: the exception and the innermost frame it came from
    (file name and line, no directory: the report holds no paths)."""
    if isinstance(failure, ContractBroken | SaidAlready):  # worded already (another process)
        return str(failure)
    lines = str(failure).strip().splitlines()
    text = f"{type(failure).__name__}: {lines[-1]}" if lines else type(failure).__name__
    frames = traceback.extract_tb(failure.__traceback__)
    if frames:
        frame = frames[-1]
        text += f" (raised at {Path(frame.filename).name}:{frame.lineno} in {frame.name})"
    return text


class Recorder:
    """Records one session step by step; the oracle judges each step as it comes."""

    def __init__(self, session: Session, scenario: Scenario) -> None:
        self.session = session
        self.scenario = scenario
        self.oracle = Oracle(scenario)
        self.has_effects = any(agent.effects for agent, _ in scenario.tree.walk())
        self.shown: tuple[PendingInterrupt, ...] = ()  # what the human was last shown
        # with two root sessions, what each session's human was last shown (``shown`` is the
        # session of the step being recorded)
        self.two_sessions = scenario.two_sessions
        self.shown_in: dict[str, tuple[PendingInterrupt, ...]] = {}
        self.sent: dict[int, list[tuple[PendingInterrupt, Any]]] = {}
        self.seen = (0, 0, 0)
        self.at = 0  # the step being recorded
        self.judged: dict[int, Expected] = {}  # the oracle's expectation of each step, by index

    def steps(self) -> list[StepRecord]:
        return [self.step(index, step) for index, step in enumerate(self.scenario.steps)]

    def step(self, index: int, step: Step) -> StepRecord:
        self.at = index
        if self.two_sessions:
            return self._in_session(index, step, getattr(step, "session", None) or "a")
        return self._step(index, step)

    def _in_session(self, index: int, step: Step, session: str) -> StepRecord:
        """``step`` in root session ``session`` (a restart, of both, is recorded in `a`): the
        target is told which session the step talks to, and each session's human sees only
        what it was shown."""
        use_root_session(self.session, session)
        self.shown = self.shown_in.get(session, ())
        try:
            return self._step(index, step)
        finally:
            self.shown_in[session] = self.shown

    def _step(self, index: int, step: Step) -> StepRecord:
        answered: list[tuple[PendingInterrupt, Any]] = []
        observed: dict[str, Any]
        if isinstance(step, Run):
            expected = self.oracle.step(index, step)
            observed = self._observe(self.session.run(step.run), "run()")
        elif isinstance(step, Answer) and step.resume is not None:
            expected = self.oracle.step(index, step)
            self.judged[index] = expected  # before the target acts: a crash may cut it short
            resumed = resume_without_id(self.session, step.resume)
            observed = self._observe(resumed, "resume()")
        elif isinstance(step, Answer):
            answered = self._responses(step)
            questions = {
                pending.id: (pending.label, _prompt_shown(pending.reason))
                for pending in self.shown
                if pending.label is not None
            }
            shown = {interrupt_id: questions.get(interrupt_id) for interrupt_id in step.answer_ids}
            expected = self.oracle.step(index, step, shown)
            self.judged[index] = expected  # before the target acts: a crash may cut it short
            self.sent[index] = answered
            observed = self._observe(self.session.answer(answered), "answer()")
        elif isinstance(step, Resend):
            expected = self.oracle.step(index, step)
            answered = self.sent.get(step.resend, [])
            observed = self._observe(self.session.answer(answered), "answer()")
        elif isinstance(step, Restart):
            expected = self.oracle.step(index, step)
            if step.session is not None:  # one root session's orchestrator
                rebuilt = restart_root_session(self.session, step.session)
                observed = self._rebuilt({}, rebuilt)
            else:
                rebuilt = (
                    self.session.restart() if step.tree is None else self.session.deploy(step.tree)
                )
                observed = self._rebuilt({}, rebuilt)
        elif isinstance(step, Corrupt):
            expected = self.oracle.step(index, step)
            try:
                note = self.session.corrupt(step.corrupt, step.which, step.pick)
            except CorruptionNotApplicable as nothing:
                # the scenario says a continuation is stored here; the target has none
                note = f"nothing corrupted: {nothing}"
            observed = self._rebuilt({"note": note}, self.session.restart())
        elif isinstance(step, Repair):
            expected = self.oracle.step(index, step)
            note = self.session.repair()
            observed = self._rebuilt({"note": note}, self.session.restart())
        else:  # pragma: no cover - the scenario model admits no other step
            raise AssertionError(step)
        return StepRecord(
            index=index,
            kind=_kind(step),
            step=step.model_dump(mode="json", exclude_defaults=True),
            expected=self._expected(expected),
            observed=observed,
            answered=[
                {"id": pending.id, "label": pending.label, "response": response}
                for pending, response in answered
            ],
            **self._gained(),
        )

    def _expected(self, expected: Expected) -> dict[str, Any]:
        """The oracle's expectation as recorded: its ``effects`` only for a tree that has
        ordinary tools, its ``failure_cause`` only for a step that must fail, and its
        ``returned`` and ``acted`` only for a step in which a sub-agent's or a protected
        action's call returns, so the histories of every other scenario and step read as before
        they existed."""
        recorded = _immutable_fields(expected)
        if not self.has_effects:
            del recorded["effects"]
        if recorded["failure_cause"] is None:  # recorded where a step must fail, as I9 names it
            del recorded["failure_cause"]
        if not recorded["tallies"]:  # recorded where a tally effect runs
            del recorded["tallies"]
        if not recorded["window_calls"]:  # and where it runs in an agent with a window
            del recorded["window_calls"]
        if not recorded["returned"]:  # recorded where a sub-agent call returns to its caller
            del recorded["returned"]
        if not recorded["acted"]:  # and where a protected action's call does
            del recorded["acted"]
        return recorded

    def retry(self, index: int) -> Observation:
        """Send again what answer or resend step ``index`` sent, as a client does when the
        server died before replying (a crash cut the step short, then a restart)."""
        step = self.scenario.steps[index]
        if self.two_sessions:
            use_root_session(self.session, getattr(step, "session", None) or "a")
        if isinstance(step, Answer) and step.resume is not None:  # the same answer without an id
            observation = resume_without_id(self.session, step.resume)
            self._observe(observation, "resume()")
            return observation
        sent = self.sent.get(step.resend if isinstance(step, Resend) else index, [])
        observation = self.session.answer(sent)
        self._observe(observation, "answer()")
        return observation

    def _responses(self, step: Answer) -> list[tuple[PendingInterrupt, Any]]:
        """What an answer step sends, in the order the file writes it: each label's questions
        (in the order the root shows them), then each id; never re-sorted, so the order a
        person answers in reaches the target."""
        chosen = [
            (pending, response)
            for label, response in step.answer.items()
            for pending in self.shown
            if pending.label == label
        ]
        chosen.extend(
            (pending, response)
            for label, by_prompt in step.answer_calls.items()
            for prompt, response in by_prompt.items()
            for pending in self.shown
            if pending.label == label and _prompt_shown(pending.reason) == prompt
        )
        shown_ids = {pending.id: pending for pending in self.shown}
        for interrupt_id, response in step.answer_ids.items():
            pending = shown_ids.get(interrupt_id) or PendingInterrupt(interrupt_id, "", None, None)
            chosen.append((pending, response))
        return chosen

    def _observe(self, observation: Observation, method: str) -> dict[str, Any]:
        if not isinstance(observation, Observation):  # an adapter's bug, named as such
            raise ContractBroken(
                f"{method} returned {_shown(observation)}, expected an Observation"
            )
        if observation.stop_reason is not None:
            self.shown = observation.pending
        observed: dict[str, Any] = {
            "stop_reason": observation.stop_reason,
            "pending": [_pending_record(pending) for pending in observation.pending],
            "final_answer": observation.final_answer,
            "error": observation.error,
        }
        if observation.more_errors:  # recorded where there are some: most steps log one at most
            observed["more_errors"] = [str(error) for error in observation.more_errors]
        if observation.warnings:  # recorded where there are some: most steps log none
            observed["warnings"] = [str(warning) for warning in observation.warnings]
        return observed

    def _rebuilt(self, observed: dict[str, Any], error: str | None) -> dict[str, Any]:
        """A rebuild step's observation: ``observed`` and the rebuild's ``error``, then what
        the implementation logged meanwhile (``logged_at_rebuild``): every ERROR record in
        ``more_errors`` (the ``error`` stays what the rebuild returned) and every WARNING
        record in ``warnings``, each recorded only where there are some."""
        observed["error"] = error
        logged = logged_at_rebuild(self.session)
        if not isinstance(logged, Logged):  # an adapter's bug, named as such
            raise ContractBroken(
                f"logged_at_rebuild() returned {_shown(logged)}, expected a Logged"
            )
        if logged.errors:
            observed["more_errors"] = [str(error) for error in logged.errors]
        if logged.warnings:
            observed["warnings"] = [str(warning) for warning in logged.warnings]
        return observed

    def _gained(self) -> dict[str, Any]:
        before = self.seen
        executions = self.session.executions(before[0])
        requests = self.session.requests(before[1])
        events = self.session.events(before[2])
        self.seen = (
            before[0] + len(executions),
            before[1] + len(requests),
            before[2] + len(events),
        )
        stored = self.session.stored()
        return {
            "executions": executions,
            "requests": requests,
            "events": events,
            "stored": {
                "continuations": [_immutable_fields(entry) for entry in stored.continuations],
                "record_bytes": stored.record_bytes,
            },
        }


def _pending_record(pending: PendingInterrupt) -> dict[str, Any]:
    """``asdict(pending)``, a copy sharing nothing with what the target holds, made by marshal
    (in C) when it can write every part: a reason of plain dicts, lists, strings and numbers, as
    every target gives.  Anything else (a dataclass, a subclass of dict) goes through asdict."""
    record = {
        "id": pending.id,
        "name": pending.name,
        "reason": pending.reason,
        "label": pending.label,
        "response": pending.response,
    }
    try:
        return marshal.loads(marshal.dumps(record, 2))  # type: ignore[no-any-return]
    except ValueError:  # marshal writes exact built-in types only
        return asdict(pending)


def _immutable_fields(value: Any) -> dict[str, Any]:
    """``asdict`` of a dataclass whose values are immutable (strings, numbers, None, tuples of
    them), so nothing needs its deep copy: the same dict, at a fraction of the cost."""
    return {field.name: getattr(value, field.name) for field in fields(value)}


def _shown(value: object) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def _prompt_shown(reason: Any) -> str | None:
    """The prompt of the call a question says it serves (its reason's ``prompt``), or None."""
    prompt = reason.get("prompt") if isinstance(reason, dict) else None
    return prompt if isinstance(prompt, str) else None


def _kind(step: Step) -> str:
    for kind, cls in (
        ("run", Run),
        ("answer", Answer),
        ("restart", Restart),
        ("corrupt", Corrupt),
        ("repair", Repair),
        ("resend", Resend),
    ):
        if isinstance(step, cls):
            return kind
    raise AssertionError(step)  # pragma: no cover

"""Checkers: pure functions from a recorded history to the violations it contains.

One checker per checked invariant of docs/invariants.md (I1 to I17), plus the differential
comparison with the restart-free control (D) and the expected outcome of each step (O).  A
checker never trusts the target: what must happen comes from the oracle's expectations recorded
in the history and from the control run.  A checker that needs a capability the target lacks is
not applied.  A history of two root sessions is judged as one history per session
(``harness.checkers.sessions``).  Each defect is reported by one checker: a stale response on a
pending question is I12's, at every step, never I9's too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.checkers import (
    continuations,
    conversation,
    delivery,
    depth,
    effects,
    endings,
    executions,
    failures,
    naming,
    outcomes,
    privacy,
    refusals,
    restarts,
    tallies,
)
from harness.checkers.sessions import per_session
from harness.checkers.violation import Invariant, Violation
from harness.history import History

__all__ = ["CHECKERS", "Checker", "Violation", "applicable", "check"]


@dataclass(frozen=True)
class Checker:
    id: str  # "I1" to "I17", "D", "O"
    slug: str
    title: str  # the invariant in one line
    needs: frozenset[str]  # target capabilities (harness.targets.base.CAPABILITIES) it relies on
    function: Callable[[History], list[Violation]]


def _checker(
    invariant: Invariant,
    title: str,
    function: Callable[[History], list[Violation]],
    needs: frozenset[str] = frozenset(),
) -> Checker:
    return Checker(invariant.id, invariant.slug, title, needs, per_session(function))


CHECKERS: tuple[Checker, ...] = (
    _checker(
        naming.UNIQUE_NAMES_UP,
        "Distinct pending interrupts never share a root-visible id.",
        naming.unique_names_up,
        frozenset({"interrupt_ids"}),
    ),
    _checker(
        delivery.EXACT_DELIVERY_DOWN,
        "One approval executes exactly one protected action, never a sibling's.",
        delivery.exact_delivery_down,
    ),
    _checker(
        delivery.PARTIAL_ANSWERS,
        "Answering a subset executes exactly that subset; every unanswered interrupt is raised "
        "again with the same root-visible id.",
        delivery.partial_answers,
    ),
    _checker(
        executions.AT_MOST_ONCE,
        "No protected action runs without an approval, and none runs twice for one approval.",
        executions.at_most_once,
    ),
    _checker(
        restarts.RESTART_TRANSPARENCY,
        "Inserting restarts at interrupt boundaries changes nothing observable.",
        restarts.restart_transparency,
    ),
    _checker(
        continuations.CONTINUATION_FIDELITY,
        "A restored sub-agent equals the in-memory control.",
        continuations.continuation_fidelity,
    ),
    _checker(
        continuations.BOUNDED_CONTINUATION,
        "An ephemeral sub-agent starts each call from its prompt alone, with no provider state "
        "of an earlier call; its continuation does not grow with its earlier completed calls, "
        "and the orchestrator's record shrinks back once the interrupt resolves.",
        continuations.bounded_continuation,
    ),
    _checker(
        privacy.PRIVATE_CONTINUATION,
        "The stored continuation never appears in public event payloads, stream events or "
        "callbacks.",
        privacy.private_continuation,
        frozenset({"public_events"}),
    ),
    _checker(
        failures.LOUD_SAFE_FAILURE,
        "A continuation that cannot be restored fails loudly: the interrupt stays pending, "
        "nothing runs, no stale response is shown.",
        failures.loud_safe_failure,
    ),
    _checker(
        delivery.ISOLATION,
        "A sub-agent never picks up an interrupt or response that belongs to another caller.",
        delivery.isolation,
    ),
    _checker(
        depth.DEPTH,
        "All of the above hold at depth 3 and beyond, and with nested and ordinary interrupts "
        "mixed in one turn.",
        depth.depth,
    ),
    _checker(
        naming.FRESH_QUESTIONS,
        "A sub-agent that interrupts again after being resumed raises a new question; an earlier "
        "answer is never reused as a standing approval.",
        naming.fresh_questions,
    ),
    _checker(
        endings.EVERY_STEP_ENDS_VISIBLY,
        "Every run, answer and resend ends in an interrupt with its pending questions, a final "
        "answer, or a loud error.",
        endings.every_step_ends_visibly,
    ),
    _checker(
        refusals.UNKNOWN_ANSWERS_REFUSED,
        "An answer naming no pending question is refused loudly and changes nothing: nothing "
        "runs, every pending question stays pending under its id.",
        refusals.unknown_answers_refused,
    ),
    _checker(
        effects.SIDE_EFFECTS_ONCE,
        "Every scripted call of an ordinary tool with a side effect runs exactly once: never "
        "again when its agent resumes, nor after a restart.",
        effects.side_effects_run_once,
        frozenset({"ordinary_tools"}),
    ),
    _checker(
        conversation.WELL_FORMED_CONVERSATION,
        "Every request a model is sent is well-formed on its own: each tool use has exactly one "
        "result, right after it, no result is without its use, and nothing of the turn it plays "
        "(a restored turn included) is lost.",
        conversation.well_formed_conversation,
    ),
    _checker(
        tallies.STATE_CARRIED,
        "An agent's key/value state written before a question is read back after the resume, a "
        "restart between them included: each call of an ephemeral sub-agent starts from its "
        "initial state, a preserve_context sub-agent's carries across its calls.",
        tallies.state_carried,
        frozenset({"ordinary_tools", "agent_state"}),
    ),
    _checker(
        restarts.DIFFERENTIAL,
        "The run with restarts shows, step for step, what the run without restarts shows.",
        restarts.differential,
    ),
    _checker(
        outcomes.EXPECTED_OUTCOME,
        "Every step ends as the scenario says: stop reason, final answer, no forbidden error.",
        outcomes.expected_outcome,
    ),
)


def applicable(checker: Checker, history: History) -> bool:
    """Whether ``checker`` says anything about ``history``: the scenario ran on the target, and
    the target has every capability the checker relies on."""
    if history.not_applicable:
        return False
    capabilities = frozenset(history.target.get("capabilities", ()))
    return checker.needs <= capabilities


def check(history: History) -> list[Violation]:
    """Every violation in ``history``, in checker order, then in step order."""
    return [
        violation
        for checker in CHECKERS
        if applicable(checker, history)
        for violation in checker.function(history)
    ]

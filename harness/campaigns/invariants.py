"""Invariant campaigns: one invariant's checker over many generated scenarios on one target.

Privacy (invariant 8) runs ``scenarios.strategies.privacy_cases``: canaries in every sub-agent's
state and the stateful providers' response ids, restarted, approved.  Isolation (invariant 10)
runs ``shared_session_cases``: a preserve_context sub-agent called by two tool calls of one turn,
answered in parts.  A case whose scenario needs a capability the target lacks is counted as not
applicable, never as passed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.strategies import SearchStrategy

from harness.checkers import privacy
from harness.checkers.delivery import isolation
from harness.checkers.violation import Violation
from harness.execution import IN_PROCESS, Execution
from harness.history import History
from harness.runner import run_scenario
from harness.targets.base import Target, missing_capabilities
from scenarios.model import Scenario
from scenarios.strategies import privacy_cases, shared_session_cases

Family = Callable[[], SearchStrategy[Scenario]]


@dataclass(frozen=True)
class InvariantCampaign:
    name: str  # "privacy", "isolation"
    invariant: str  # "I8", "I10"
    family: Family
    checker: Callable[[History], list[Violation]]


CAMPAIGNS = (
    InvariantCampaign("privacy", "I8", privacy_cases, privacy.private_continuation),
    InvariantCampaign("isolation", "I10", shared_session_cases, isolation),
)


@dataclass
class InvariantResult:
    cases: int = 0
    not_applicable: int = 0
    violating: list[tuple[Scenario, list[Violation]]] = field(default_factory=list)


def generated(family: Family, examples: int, seed: int) -> list[Scenario]:
    """The first ``examples`` distinct scenarios hypothesis draws from ``family`` with ``seed``."""
    drawn: dict[str, Scenario] = {}

    @settings(
        max_examples=examples * 2,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @hypothesis.seed(seed)
    @given(family())
    def collect(case: Scenario) -> None:
        if len(drawn) < examples:
            drawn.setdefault(case.model_dump_json(exclude_defaults=True), case)

    collect()
    return list(drawn.values())


def violations_of(campaign: InvariantCampaign, target: Target, case: Scenario) -> list[Violation]:
    return campaign.checker(run_scenario(target, case, campaign.name, with_control=False))


def case_violations(target: Target, case: tuple[str, str]) -> list[Violation]:
    """One case as a task (``harness.execution``): the campaign's name and the scenario's JSON
    in, its violations out."""
    name, scenario = case
    (campaign,) = [known for known in CAMPAIGNS if known.name == name]
    return violations_of(campaign, target, Scenario.model_validate_json(scenario))


def run_campaign(
    campaign: InvariantCampaign,
    target: Target,
    examples: int,
    seed: int,
    execution: Execution = IN_PROCESS,
) -> InvariantResult:
    """``examples`` generated cases of ``campaign`` on ``target`` (each case a task)."""
    cases = generated(campaign.family, examples, seed)
    applicable = [case for case in cases if not missing_capabilities(target.info, case)]
    result = InvariantResult(cases=len(cases), not_applicable=len(cases) - len(applicable))
    found = execution.map(
        case_violations,
        [(target, (campaign.name, case.model_dump_json())) for case in applicable],
    )
    for case, violations in zip(applicable, found, strict=True):
        if violations:
            result.violating.append((case, violations))
    return result

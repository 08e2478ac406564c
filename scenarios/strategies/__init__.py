"""Hypothesis strategies for scenarios: agent trees and what a human does to them.

Trees are recursive (depth 1 to 4, fan-out 1 to 3), with protected actions at any level,
sub-agents ephemeral or preserve_context, sliding windows and stateful providers.  Model-issued
toolUseIds come from a tiny alphabet (with ``:``, ``%``, unicode and the empty string), so
collisions across siblings, levels and turns are the rule, not the exception.

Steps are drawn against the oracle as they are chosen: an answer names only questions the
oracle says are pending, a resend names an earlier answer, a new prompt comes only once the
previous one finished, a corruption (at most one) only while a continuation is stored.  So
every drawn scenario is valid, and every step means something.  Failures shrink toward a small
tree and few steps (hypothesis shrinks the draws).
The package: ``families`` (the general and the focused families ``check --profile`` draws,
and what a target must be able to express for them) and ``cases`` (the fault campaigns' cases).
"""

from __future__ import annotations

from scenarios.strategies.cases import (
    corruption_case,
    corruption_cases,
    parked_trees,
    privacy_cases,
    shared_session_cases,
)
from scenarios.strategies.families import (
    ADVERSARIAL_IDS,
    DRAWN_CAPABILITIES,
    GENERATED_CORRUPTIONS,
    MAX_DEPTH,
    TOOL_USE_IDS,
    Capabilities,
    Draw,
    effects_scenarios,
    ids_scenarios,
    restore_scenarios,
    scenarios,
    trees,
)

__all__ = [
    "ADVERSARIAL_IDS",
    "DRAWN_CAPABILITIES",
    "GENERATED_CORRUPTIONS",
    "MAX_DEPTH",
    "TOOL_USE_IDS",
    "Capabilities",
    "Draw",
    "corruption_case",
    "corruption_cases",
    "effects_scenarios",
    "ids_scenarios",
    "parked_trees",
    "privacy_cases",
    "restore_scenarios",
    "scenarios",
    "shared_session_cases",
    "trees",
]

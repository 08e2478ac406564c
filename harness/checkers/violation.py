"""A violation: one place where a recorded history breaks one invariant.

A violation names the invariant (its checker id and slug), the step where it showed (``None``
when it belongs to the run as a whole), and two short sentences a person can compare: what the
invariant required there and what the target did.  Checkers return violations in step order and
``check`` in checker order, so the same history always yields the same list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Violation:
    invariant: str  # checker id, e.g. "I1"
    slug: str  # e.g. "unique-names-up"
    step: int | None  # index of the step in the scenario, None for the run as a whole
    expected: str  # e.g. "deploy-a runs once"
    seen: str  # e.g. "deploy-a ran 2 times"

    def to_json(self) -> dict[str, Any]:
        return {
            "invariant": self.invariant,
            "slug": self.slug,
            "step": self.step,
            "expected": self.expected,
            "seen": self.seen,
        }


@dataclass(frozen=True)
class Invariant:
    """The name a checker signs its violations with."""

    id: str
    slug: str

    def violation(self, step: int | None, expected: str, seen: str) -> Violation:
        return Violation(self.id, self.slug, step, expected, seen)

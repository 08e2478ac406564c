"""Shrunk counterexamples as ready-to-commit regression files.

When a generated scenario violates an invariant, hypothesis shrinks it; the last failing example
it replays is the minimal one, so writing a file on every failure leaves the shrunk scenario on
disk.  The file is a regression case like any under ``scenarios/regressions/``: copy it there,
edit its description, and ``python -m harness run FILE`` reproduces it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from scenarios.model import Scenario

COUNTEREXAMPLES = Path("reports") / "counterexamples"


def write_counterexample(
    scenario: Scenario,
    target: str,
    violations: Sequence[Any],
    directory: Path = COUNTEREXAMPLES,
) -> Path:
    """Write the scenario with a description of what it broke; return the file's path."""
    first = violations[0]
    broken = sorted({f"{v.invariant} {v.slug}" for v in violations})
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    data["description"] = (
        f"Generated counterexample on {target}: breaks {', '.join(broken)}. First: step "
        f"{first.step}, expected {first.expected}; seen {first.seen}."
    )
    data["source"] = f"hypothesis (scenarios.strategies), shrunk, on target {target}"
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{first.invariant}-{target}-{digest}.yaml"
    path.write_text(text, encoding="utf-8")
    return path

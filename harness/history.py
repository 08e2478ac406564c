"""The recorded history of one scenario on one target: plain JSON-shaped data, stable order.

Everything a checker may look at is here, and nothing else: what each step asked, what the oracle
expected of it (derived from the scenario, see ``scenarios.oracle``), what the root showed, and
what the ledger, the model-request journal, the public event stream and the stores gained during
the step.  ``control`` is the same scenario without restarts, on the same target.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StepRecord:
    index: int
    kind: str  # run | answer | restart | corrupt | resend
    step: dict[str, Any]
    expected: dict[str, Any]
    observed: dict[str, Any]  # stop_reason, pending, final_answer, error, note
    answered: list[dict[str, Any]]  # what was sent: id, label, response
    executions: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    events: list[dict[str, Any]]
    stored: dict[str, Any] | None

    @property
    def pending(self) -> list[dict[str, Any]]:
        return list(self.observed.get("pending", []))

    @property
    def errors(self) -> list[str]:
        """Every error this step observed, in order: its ``error`` (what it raised, else the
        first record logged at ERROR), then every other record logged at ERROR."""
        first = self.observed.get("error")
        more = self.observed.get("more_errors", [])
        return ([] if first is None else [str(first)]) + [str(error) for error in more]


@dataclass(frozen=True)
class History:
    scenario_name: str
    scenario: dict[str, Any]
    target: dict[str, Any]
    steps: tuple[StepRecord, ...]
    control: History | None = None
    not_applicable: tuple[str, ...] = ()  # missing capabilities; then there are no steps

    @property
    def errors(self) -> list[str]:
        """The errors and notes the steps observed (the control run's too), in order."""
        own = [
            text
            for step in self.steps
            for text in step.errors
            + ([] if step.observed.get("note") is None else [str(step.observed["note"])])
        ]
        return own + ([] if self.control is None else self.control.errors)

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario_name": self.scenario_name,
            "scenario": self.scenario,
            "target": self.target,
            "not_applicable": list(self.not_applicable),
            "steps": [step.__dict__ for step in self.steps],
            "control": None if self.control is None else self.control.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> History:
        control = data.get("control")
        return cls(
            scenario_name=data["scenario_name"],
            scenario=data["scenario"],
            target=data["target"],
            steps=tuple(StepRecord(**step) for step in data["steps"]),
            control=None if control is None else cls.from_json(control),
            not_applicable=tuple(data.get("not_applicable", ())),
        )

    def dumps(self) -> str:
        """The canonical JSON text: sorted keys, no whitespace (json's C encoder writes it; an
        indented dump goes through the pure-Python one, six times slower on these histories)."""
        return json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))

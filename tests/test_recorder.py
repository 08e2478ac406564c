"""What the recorder keeps of a step's questions: each as ``asdict`` gives it, a copy that shares
nothing with what the target still holds, whatever the target put in its reason."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import asdict, dataclass, fields
from typing import Any

import pytest

from harness.runner import _pending_record
from harness.targets.base import PendingInterrupt


@dataclass(frozen=True)
class Reason:
    label: str


@pytest.mark.parametrize(
    "reason",
    [
        {"label": "deploy-a", "nested": [{"prompt": "x"}, (1, 2.5, None, True)]},
        {"wrapped": Reason("deploy-a")},  # marshal cannot write a dataclass: asdict's way
        OrderedDict(label="deploy-a"),  # nor a subclass of dict
        "deploy-a",
    ],
)
def test_a_shown_question_is_recorded_as_asdict_records_it_sharing_nothing(reason: Any) -> None:
    pending = PendingInterrupt("orchestrator/a#q1", "approval", reason, "deploy-a", {"r": [1]})
    record = _pending_record(pending)
    assert record == asdict(pending)
    assert list(record) == [field.name for field in fields(PendingInterrupt)]
    assert record["response"] is not pending.response
    if not isinstance(reason, str):
        assert record["reason"] is not reason

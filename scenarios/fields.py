"""What every part of the scenario model shares: its strict base model, its names, and how an
error names the field it is about."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field

NAME_PATTERN: Final = r"^[A-Za-z0-9_\-]+$"
Name = Annotated[str, Field(min_length=1, pattern=NAME_PATTERN)]

Location = tuple[str | int, ...]  # a field inside a scenario: ("steps", 1, "answer")


def field_path(location: Location) -> str:
    """How every error names a field: ``steps[1].answer``, ``tree.sub_agents[0].window.size``,
    ``answer_ids["v1:x"]`` (a key that is not a plain name is quoted); empty for the top."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.fullmatch(NAME_PATTERN, part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text


class FieldError(ValueError):
    """A problem a validator found in one field below the model it validates.  ``location`` is
    relative to that model, so the error line names the field itself, not the model around it."""

    def __init__(self, location: Location, problem: str) -> None:
        super().__init__(problem)
        self.location = location
        self.problem = problem

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.location, self.problem))


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

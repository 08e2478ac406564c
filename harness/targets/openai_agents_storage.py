"""Where the OpenAI Agents SDK's ``RunState`` keeps a pending agent tool's nested run, and how
the corruption campaigns damage it (``harness.targets.openai_agents`` stores and restores it)."""

from __future__ import annotations

import json
from typing import Any, Final

from fakes.corruption import GENERIC, CorruptionNotApplicable, newer_version

NESTED_KEY: Final = "agent_run_state"  # where a pending agent tool's run state is kept
# the generic damages, and the schema-level ones this format can take (RunStateFormat.damage)
CORRUPTIONS: Final = GENERIC | {
    "schema_version_other",
    "schema_version_missing",
    "schema_version_newer",
    "field_missing",
    "type_swap",
}


# -- where the run state keeps a pending agent tool's run, and how it is damaged -----------------


class RunStateFormat:
    """A pending agent tool's nested run state: ``agent_run_state`` on its entry among the
    parent run state's ``last_processed_response.functions`` (nested ones inside, at depth)."""

    def locate(self, document: Any) -> list[tuple[Any, ...]]:
        found: list[tuple[Any, ...]] = []
        find_nested(document, (), found)
        return found

    def damage(self, corruption: str, entry: Any) -> Any:
        if not isinstance(entry, dict) or "$schemaVersion" not in entry:
            raise CorruptionNotApplicable(f"{corruption}: the stored run is already damaged")
        if corruption == "schema_version_other":
            entry["$schemaVersion"] = "2.0"
        elif corruption == "schema_version_missing":
            del entry["$schemaVersion"]
        elif corruption == "schema_version_newer":
            entry["$schemaVersion"] = newer_version(entry["$schemaVersion"])
        elif corruption == "field_missing":
            entry.pop("current_agent", None)
        elif corruption == "type_swap":
            entry["generated_items"] = json.dumps(entry.get("generated_items"))
        else:
            raise CorruptionNotApplicable(f"{corruption!r} has no counterpart in a RunState")
        return entry


def find_nested(value: Any, path: tuple[Any, ...], found: list[tuple[Any, ...]]) -> None:
    if isinstance(value, dict):
        for key in sorted(value):
            here = (*path, key)
            if key == NESTED_KEY:
                found.append(here)
            find_nested(value[key], here, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            find_nested(item, (*path, index), found)


def owner_of(document: Any, path: tuple[Any, ...]) -> str:
    """The agent tool whose function entry holds the nested run at ``path``."""
    entry = document
    for step in path[:-1]:
        entry = entry[step]
    call = entry.get("tool_call", {}) if isinstance(entry, dict) else {}
    name = call.get("name") if isinstance(call, dict) else None
    return str(name) if name else f"entry {list(path[:-1])}"

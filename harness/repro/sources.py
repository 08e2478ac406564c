"""What ``repro`` is asked for: a scenario file, a regression file by name, or a bug by the name
of a recorded findings class (its first ``shown_by`` regression file, its explanation as the
symptom), each resolved to ``(name, scenario, symptom)`` or refused in one line."""

from __future__ import annotations

import re
from pathlib import Path

from harness.findings.search import BUNDLED
from scenarios.loading import load_scenario, read_yaml, regression_file
from scenarios.model import Scenario


class UnknownSource(LookupError):
    """Neither a file, a regression file's name, nor a findings class of the target."""


def findings_files(target: str, folder: Path = BUNDLED) -> list[tuple[tuple[int, ...], Path]]:
    """The target's findings files in ``folder``, oldest release first."""
    pattern = re.compile(rf"^{re.escape(target)}-(\d+(?:\.\d+)*)\.yaml$")
    found = [
        (tuple(int(part) for part in matched.group(1).split(".")), path)
        for path in folder.glob("*.yaml")
        if (matched := pattern.match(path.name))
    ]
    return sorted(found)


def resolve(source: str, target: str) -> tuple[str, Scenario, str | None]:
    """(name, scenario, symptom or None for the scenario's own description)."""
    path = Path(source)
    if path.is_file():
        return path.stem, load_scenario(path), None
    regression = regression_file(source)
    if regression.is_file():
        return source, load_scenario(regression), None
    for _, findings in reversed(findings_files(target)):
        document = read_yaml(findings.read_text(encoding="utf-8")) or {}
        for entry in document.get("classes") or []:
            if entry.get("class") == source and entry.get("shown_by"):
                shown_by = regression_file(entry["shown_by"][0])
                symptom = " ".join(str(entry.get("explanation", "")).split()) or None
                return source, load_scenario(shown_by), symptom
    raise UnknownSource(
        f"{source}: neither a scenario file, a regression file's name, nor a findings class of "
        f"{target}"
    )

"""What the commands that judge conformance (check, report) write: the conformance reports."""

from __future__ import annotations

from pathlib import Path

from harness.report import dumps, markdown, write_atomically
from harness.summary import summary

SUMMARY = "conformance-summary.md"  # what --summary writes beside conformance.md


def write_reports(reports: Path, document: dict[str, object], *, summarised: bool) -> None:
    """conformance.json and .md (with ``summarised`` the summary too) into ``reports``; the
    markdown is printed."""
    text = markdown(document)
    write_atomically(reports / "conformance.json", dumps(document))
    write_atomically(reports / "conformance.md", text)
    if summarised:
        write_atomically(reports / SUMMARY, summary(document))
    print(text)

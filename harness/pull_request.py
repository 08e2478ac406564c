"""What ``check --baseline`` adds to a check (pull-request mode, ``harness.review``): its options,
the baseline findings file chosen before anything runs, and, after, the review written beside
the reports (review.json, and with ``--summary`` review.md: the pull-request comment), each new
violation's scenario with its counterexample file and a reproducer script where its target has
the hook."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.counterexamples import Written
from harness.diagram import diagram
from harness.findings import FindingsFile, FindingsFileError, load_document
from harness.findings.loading import read_findings_file
from harness.history import History
from harness.report import write_atomically
from harness.repro import HOOKS, NotExpressible, reproducer
from harness.review import Review, comment
from harness.targets.base import Target
from scenarios.model import Scenario

REVIEW = "review.md"  # the pull-request comment, beside conformance.md
REPRO = "repro"  # the reproducers of new violations, a folder beside counterexamples/


class BaselineError(ValueError):
    """A baseline that cannot be used; the message is one line."""


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--baseline",
        metavar="VERSION",
        help="pull-request mode: judge the installed build (any version) against the findings "
        "of this release of each target: matched is still open, a witness that no longer shows "
        "is fixed (never a failure), anything else is new and fails; writes review.json (and "
        "with --summary review.md, a pull-request comment)",
    )
    parser.add_argument(
        "--baseline-findings",
        type=Path,
        metavar="FILE",
        help="pull-request mode with this findings file as the baseline (its target's)",
    )


def baselines(
    arguments: argparse.Namespace, targets: Sequence[Target], folders: Sequence[Path]
) -> dict[str, FindingsFile]:
    """The baseline findings file of each target (none without --baseline*); refused in one
    line, before anything runs, when it is missing or cannot be read."""
    if arguments.baseline_findings is not None:
        try:
            document = read_findings_file(arguments.baseline_findings)
            document = document.as_of(document.last)  # a file of a range: its newest release
        except FindingsFileError as problem:
            raise BaselineError(f"--baseline-findings: {problem}") from None
        names = [t.info.findings_name for t in targets]
        if document.target not in names:
            raise BaselineError(
                f"--baseline-findings: {arguments.baseline_findings} is {document.target}'s, "
                f"not one of the targets checked ({', '.join(names)})"
            )
        return {t.info.name: document for t in targets if t.info.findings_name == document.target}
    if arguments.baseline is None:
        return {}
    chosen = {}
    for target in targets:
        name = target.info.findings_name
        try:
            found = load_document(name, arguments.baseline, folders)
        except FindingsFileError as problem:
            raise BaselineError(f"--baseline: {problem}") from None
        if found is None:
            raise BaselineError(f"--baseline {arguments.baseline}: no findings file of {name}")
        chosen[target.info.name] = found
    return chosen


def write_review(
    reports: Path,
    reviews: Mapping[str, Review],
    written: Mapping[str, Written],
    scenarios: Mapping[str, Sequence[tuple[str, Scenario]]],
    histories: Mapping[str, Mapping[str, History]],
    *,
    summarised: bool,
) -> None:
    """review.json, each new violation's reproducer, and with ``summarised`` review.md, where
    each scenario with new violations is drawn (``harness.diagram``)."""
    evidence: dict[tuple[str, str], list[Path]] = {}
    drawn: dict[tuple[str, str], str] = {}
    for target, review in reviews.items():
        by_name = dict(scenarios.get(target, ()))
        for name in sorted({scenario for scenario, _ in review.new}):
            history = histories.get(target, {}).get(name)
            if history is not None:
                parted = [violation for scenario, violation in review.new if scenario == name]
                drawn[(target, name)] = diagram(history, parted)
            files = evidence.setdefault((target, name), [])
            counterexample = written.get(target, Written()).files.get(name)
            if counterexample is not None:
                files.append(reports / counterexample)
            if target in HOOKS and name in by_name:
                try:
                    script = reproducer(target, name, by_name[name])
                except NotExpressible:
                    continue
                path = reports / REPRO / f"{name}@{target}.py"
                write_atomically(path, script)
                files.append(path)
    document = [review.to_json() for review in reviews.values()]
    write_atomically(reports / "review.json", json.dumps(document, indent=2) + "\n")
    if summarised:
        text = comment(list(reviews.values()), evidence, drawn)
        write_atomically(reports / REVIEW, text)
        print(text)

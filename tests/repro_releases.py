"""Reproducers across releases (``tox -e repro-releases``; outside CI: it builds an environment
per SDK release): for every bug of the upstream catalogue (``scenarios/upstream/``) that a
reproducer expresses, the script written for its regression file, run in an environment holding
that SDK release and no harness (``python -I`` in an empty directory: nothing of the checkout is
importable), exits 1 on the bug's last affected release and 0 on its first fixed one (an open
bug: 1 on its newest).  The environments are the backtest's (``harness.releases``, cached in
``.backtest-envs/``): only the SDK, its compat pins and what the harness would need (pydantic,
PyYAML, hypothesis), never the harness.

What the exits must be comes from the catalogue, which the backtest holds to the harness's own
verdicts, never from running the script.  Its name keeps it out of the default collection
(``test_*.py``), so CI does not run it; CI's part is ``tests/test_repro.py`` in each SDK's
environment.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.releases import ReleaseUnavailable, environment, python_of
from harness.repro import HOOKS, NotExpressible, reproducer
from harness.upstream import ROOT, Bug, catalogue
from scenarios.loading import load_scenario

BUGS = [bug for bug in catalogue() if bug.gap is None and bug.scenario is not None]


def script_of(bug: Bug, release: str) -> str | None:
    """The reproducer of ``bug``'s regression file on its target, written against ``release``,
    checking what the bug breaks: the privacy check only for a bug of I8, as the backtest judges
    a release by the bug's own invariants (None where no reproducer expresses the file)."""
    path = ROOT / str(bug.scenario)
    try:
        scenario = load_scenario(path)
        own = frozenset(bug.invariants)
        return reproducer(bug.target, path.stem, scenario, bug.symptom, release, own)
    except NotExpressible:
        return None


def runs() -> list[tuple[Bug, str, int]]:
    """(bug, release, the exit due) for every expressible bug: 1 where it lives, 0 where fixed."""
    due = []
    for bug in BUGS:
        if bug.target not in HOOKS or script_of(bug, "0") is None:
            continue
        due.append((bug, str(bug.last_affected), 1))
        if bug.first_fixed is not None:
            due.append((bug, bug.first_fixed, 0))
    return due


def test_the_catalogue_has_bugs_a_reproducer_expresses_and_names_the_rest() -> None:
    expressed = {bug.id for bug, _, _ in runs()}
    assert len(expressed) >= 5
    for bug in BUGS:
        if bug.id not in expressed:  # why not, in the run's output (-s)
            print(f"{bug.id}: no reproducer for {bug.scenario} on {bug.target}")


@pytest.mark.parametrize(
    ("bug", "release", "due"),
    runs(),
    ids=[f"{bug.id}@{release}" for bug, release, _ in runs()],
)
def test_the_script_exits_1_where_the_bug_lives_and_0_where_it_is_fixed(
    bug: Bug, release: str, due: int, tmp_path: Path
) -> None:
    try:
        folder = environment(bug.sdk, release)
    except ReleaseUnavailable as problem:
        pytest.fail(f"{bug.id}: {problem}")
    script = script_of(bug, release)
    assert script is not None
    (tmp_path / "repro.py").write_text(script, encoding="utf-8")
    ran = subprocess.run(
        [str(python_of(folder)), "-I", "repro.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    role = "its last affected release" if due else "its first fixed release"
    assert ran.returncode == due, (
        f"{bug.id} on {bug.sdk} {release} ({role}): exit {ran.returncode}, expected {due}\n"
        + ran.stdout
        + ran.stderr[-2000:]
    )

"""The exemption canary's runs and report: every known-bad variant of the reference run once on a
part of the ci sample, and on the regression files its questions read (``asked_runs``), then every
shipped findings file judged on them, per run and per witness (``harness.findings.canary`` says
what is asked and why); a part of the coverage sample too, whose runs only challenge class
witnesses (a class narrowed to one of its shapes meets its challengers there).

``python -m harness.canary [--reports DIR] [--baseline] [--whole] [--workers N | --scheduler
ADDRESS] [--variant NAME ...]`` writes
``DIR/exemption-canary.md`` and ``.json``: each findings file's variant runs it excuses whole and
its class witnesses' broadenings no variant challenges.  ``--baseline`` also writes
``reports/baselines/exemption-canary.json``, which ``tests/test_exemption_canary.py`` holds the
shipped files to: what is measured there today may shrink, by narrowing a class, and the baseline
with it; it may not grow.  ``--variant NAME`` runs that known-bad variant alone and writes
nothing: it prints which of its runs the shipped files excuse whole, and which broadenings the
baseline leaves unchallenged its runs challenge (``against``), a new variant's or shape's worth in
about a minute where the whole canary takes an hour.

CI asks a part of each sample, which is cheaper but finds less: a variant run the shipped files
excuse whole is found only if the part holds its scenario, and a broadening is challenged only by
the runs the part holds.  ``--whole`` asks the whole ci sample, the canary sample (a second draw
of its families that only the variants run: ``scenarios.canary_sample``) and the whole coverage
sample, and challenges the witnesses on the canary shapes too (the samples' scenarios with steps
appended, or rewritten, in shapes no family draws: ``scenarios.canary_shapes``)
(``exemption-canary-whole.*``, ``reports/baselines/exemption-canary-whole.json``), what the main
job's ``canary-whole`` environment holds the shipped files to, with the same tests.

The variant runs are the tasks of the execution seam (``harness.execution``): ``--workers`` and
``--scheduler`` spread them as they spread ``check``'s, and the tests' runs where
``WORKERS_VARIABLE`` names a number of local processes (tox -e canary-whole).  Each run depends on
its scenario alone and the runs come back in the order given, so the report is the same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NoReturn

from harness import execution
from harness.checkers import check
from harness.findings import FINDINGS, FindingsFile, judge_findings, observe, read_findings_file
from harness.findings.canary import (
    Broadening,
    Hidden,
    Sample,
    VariantRun,
    challenged,
    hidden_runs,
    nearest,
    unchallenged,
)
from harness.findings.loading import release_views
from harness.forking import ForkIsolated
from harness.report import write_atomically
from harness.runner import run_scenario
from harness.targets import registry
from harness.targets.base import Target, expressible_needs
from harness.targets.variants import REAL_RESTART_ONLY
from scenarios import canary_sample, canary_shapes, corpus, coverage
from scenarios.loading import REGRESSIONS, load_all, regression_files
from scenarios.model import Scenario

ROOT: Final = Path(__file__).resolve().parent.parent
COVERAGE_REGRESSIONS: Final = REGRESSIONS / "coverage"
BASELINE: Final = ROOT / "reports" / "baselines" / "exemption-canary.json"
# what the whole samples show (--whole), which the tests hold the files to where the environment
# names it (WHOLE_VARIABLE=whole: tox -e canary-whole)
WHOLE_BASELINE: Final = ROOT / "reports" / "baselines" / "exemption-canary-whole.json"
WHOLE_VARIABLE: Final = "HARNESS_CANARY"
# the local processes the tests' variant runs are spread over, where the environment names a
# number (tox -e canary-whole); else they run in the test's process, or on the Dask cluster that
# DASK_SCHEDULER_ADDRESS names
WORKERS_VARIABLE: Final = "HARNESS_CANARY_WORKERS"
# Every EVERY-th scenario of each family of the ci sample: cheaper than the whole, and it finds a
# part of what the whole finds (a variant run excused whole only if the part holds it, and a
# broadening the part leaves unchallenged may meet its challenger in the whole); CI asks the part,
# the main job the whole (--whole)
EVERY: Final = 4
# ... but every FAMILY_EVERY-th of these: each family of 25 focused on one shape (effects, gates,
# ids, retries, deploys, twins) every second, as a fourth of the deploy family held six scenarios
# and none answered a deployed-away call, so no class of a gone call met a challenger (on the part,
# 372 broadenings unchallenged; with these steps 292 for about as many scenarios); the restore
# family (200 draws of one shape, by design) every sixteenth, which challenges no fewer
FAMILY_EVERY: Final = {corpus.RESTORE: 16} | {
    family: 2
    for family in (
        corpus.EFFECTS,
        corpus.GATED,
        corpus.IDS,
        corpus.RETRIED,
        corpus.DEPLOY,
        corpus.TWINS,
    )
}
# Every COVERAGE_EVERY-th scenario of the coverage sample (scenarios.coverage): where a class
# narrowed to one of its shapes meets its look-alikes (the ci sample rarely has those shapes)
COVERAGE_EVERY: Final = 10
# ... and of these families a second tenth, from the sixth of the family on: the two-sessions
# family's shapes each show in a quarter of its draws at most (a stateful provider, a window, a
# restart between the two sessions' calls), so the classes narrowed to a pair of them (strands'
# window count and provider state crossing the sessions, a restart between hiding the latter)
# would meet no look-alike in one tenth alone
SECOND_TENTH: Final = {"two-sessions-": 6}
# variants whose bug no scenario here can show (a crash inside an answer): the crash campaign
# catches them (tests/test_variants.py), and no findings file can hide what never shows
CAUGHT_ELSEWHERE: Final = {
    "bad-no-write-ahead": "needs a crash inside an answer: the crash campaign catches it "
    "(tests/test_variants.py)",
}


def part(drawn: Sequence[tuple[str, Scenario]]) -> list[tuple[str, Scenario]]:
    """Of each family of ``drawn`` (a sample, by name) every ``EVERY``-th scenario, or every
    ``FAMILY_EVERY``-th of the families it names, in the sample's order."""
    families: dict[str, list[str]] = {}
    for name, _ in drawn:
        named = corpus.NAME.fullmatch(name)
        families.setdefault(named[1] if named else "", []).append(name)
    chosen = {
        name
        for family, names in families.items()
        for name in names[:: FAMILY_EVERY.get(family, EVERY)]
    }
    return [each for each in drawn if each[0] in chosen]


def canary_scenarios(whole: bool = False) -> list[tuple[str, Scenario, bool]]:
    """The regression files (the coverage ones too) and a ``part`` of the ci sample (``whole``:
    every scenario, then the canary sample's), as (name, scenario, whether it is generated), in
    that order."""
    # the coverage regression files too: the only scenarios here that show the coverage variants
    regressions = load_all(regression_files()) + load_all(regression_files(COVERAGE_REGRESSIONS))
    committed = corpus.find("ci", None)  # the committed sample that check --profile ci runs
    assert committed is not None, "the ci sample is committed (scenarios/corpus/ci/)"
    drawn = corpus.read(committed, "ci")
    generated = drawn + canary_sample.read() if whole else part(drawn)
    return [(name, scenario, False) for name, scenario in regressions] + [
        (name, scenario, True) for name, scenario in generated
    ]


def challenger_scenarios(whole: bool = False) -> list[tuple[str, Scenario, bool]]:
    """The scenarios whose runs only challenge witnesses: every ``COVERAGE_EVERY``-th scenario
    of the coverage sample (all generated), and a second tenth of the families ``SECOND_TENTH``
    names, for the look-alikes of the classes narrowed to one of its shapes (``whole``: every
    scenario of it, then the canary shapes of the ci sample and the coverage sample,
    ``scenarios.canary_shapes``).  No profile draws a canary shape, so no findings class ever
    judges an SDK's run of one: a variant's run a class excuses whole there is a bug no SDK run
    could hide, and only the second question is asked of them."""
    drawn = coverage.read()
    if whole:
        committed = corpus.find("ci", None)
        assert committed is not None, "the ci sample is committed (scenarios/corpus/ci/)"
        shapes = canary_shapes.made(corpus.read(committed, "ci") + drawn)
        return [(name, scenario, True) for name, scenario in drawn + shapes]
    chosen = drawn[::COVERAGE_EVERY]
    for prefix, start in SECOND_TENTH.items():
        family = [each for each in drawn if each[0].startswith(f"generated-{prefix}")]
        chosen += family[start::COVERAGE_EVERY]
    return [(name, scenario, True) for name, scenario in chosen]


def variant_runs(
    variants: Iterable[str],
    scenarios: Sequence[tuple[str, Scenario, bool]],
    where: execution.Execution = execution.IN_PROCESS,
) -> list[VariantRun]:
    """Each variant's run of each scenario, as the findings judge it (a variant whose bug is
    module state, ``REAL_RESTART_ONLY``, restarts for real: a new process), run ``where`` (in
    this process unless told), in the order of the variants, then of the scenarios."""
    targets = {variant: _target(variant) for variant in variants}  # one each, as a worker keeps
    tasks = [(targets[variant], each) for variant in variants for each in scenarios]
    return list(where.map(_variant_run, tasks))


def asked_runs(
    views: Mapping[str, FindingsFile],
    variants: Sequence[str],
    whole: bool = False,
    where: execution.Execution = execution.IN_PROCESS,
) -> list[VariantRun]:
    """Each variant's runs the canary's questions read, of ``canary_scenarios(whole)``, in its
    order: every generated one, and of the regression files only those a question reads, made
    afterwards.  A variant no generated run shows on some view (no violation of it unexcused)
    runs them all, for whether any file hides it; a variant with a generated run some view's
    classes excuse whole runs those classes' ``shown_by`` files, for whether it is their bug
    (``hidden_runs``: ``same_bug``).  No other question reads a regression file's run, and those
    runs were half of the variants' runs (``regressions_asked``)."""
    scenarios = canary_scenarios(whole)
    generated = variant_runs(variants, [each for each in scenarios if each[2]], where)
    regressions = [each for each in scenarios if not each[2]]
    asked = regressions_asked(views, variants, generated, [name for name, _, _ in regressions])
    tasks = [
        (variant, each) for variant in variants for each in regressions if each[0] in asked[variant]
    ]
    targets = {variant: _target(variant) for variant in variants}
    made = iter(where.map(_variant_run, [(targets[variant], each) for variant, each in tasks]))
    mine: dict[str, list[VariantRun]] = {variant: [] for variant in variants}
    for variant, _ in tasks:
        mine[variant].append(next(made))
    for each in generated:
        mine[each.variant].append(each)
    return [each for variant in variants for each in mine[variant]]


def regressions_asked(
    views: Mapping[str, FindingsFile],
    variants: Sequence[str],
    generated: Sequence[VariantRun],
    regressions: Sequence[str],
) -> dict[str, frozenset[str]]:
    """Per variant, the regression files (of ``regressions``, by name) whose runs a question of
    the canary reads, given its ``generated`` runs (``asked_runs``): every one where on some view
    no generated run has a violation left unexcused, else the ``shown_by`` files of the classes
    that excuse one of its generated runs whole."""
    of: dict[str, list[VariantRun]] = {variant: [] for variant in variants}
    for each in generated:
        of[each.variant].append(each)
    asked: dict[str, frozenset[str]] = {}
    for variant in variants:
        runs = of[variant]
        if not all(
            any(judge_findings(view, [each.run]).new for each in runs) for view in views.values()
        ):
            asked[variant] = frozenset(regressions)
            continue
        shown: set[str] = set()
        for stem, view in sorted(views.items()):
            classes = {found.name: found for found in view.classes}
            for hidden in hidden_runs(stem, view, runs, expressible_of(stem, view)):
                for name in hidden.excused_by:
                    shown.update(classes[name].shown_by if name in classes else ())
        asked[variant] = frozenset(shown)
    return asked


def _target(variant: str) -> Target:
    """The variant's target, as the canary runs it (a module-state bug with real restarts)."""
    target = registry.get(variant)
    return ForkIsolated(variant, target) if variant in REAL_RESTART_ONLY else target


def _variant_run(target: Target, item: tuple[str, Scenario, bool]) -> VariantRun:
    """One task: a variant's run of one scenario, observed as the findings judge it."""
    name, scenario, generated = item
    history = run_scenario(target, scenario, name)
    observed = observe(history, scenario, check(history), generated=generated)
    return VariantRun(target.info.name, observed, expressible_needs(scenario))


def where_the_tests_run(environ: Mapping[str, str] = os.environ) -> execution.Execution:
    """Where the tests' variant runs go: ``WORKERS_VARIABLE`` local processes where it names
    some (anything but a whole number above 0 there is refused, naming it), else as ``check``
    would without options (this process, or the Dask cluster ``DASK_SCHEDULER_ADDRESS`` names)."""
    named = environ.get(WORKERS_VARIABLE)
    try:
        workers = processes(named) if named else None
    except argparse.ArgumentTypeError as wrong:
        raise ValueError(f"{WORKERS_VARIABLE}: {wrong}") from None
    return execution.connect(workers, None, environ)


def processes(text: str) -> int:
    """A number of local processes, as ``check --workers`` takes it."""
    if not (text.isdigit() and int(text) > 0):
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def shipped_views(folder: Path = FINDINGS) -> dict[str, FindingsFile]:
    """Every shipped findings file, a file of a range as its view per release it names."""
    return {
        stem: view
        for path in sorted(folder.glob("*.yaml"))
        for stem, view in release_views(read_findings_file(path)).items()
    }


@dataclass(frozen=True)
class Measured:
    """What the canary finds on the shipped files."""

    hidden: tuple[Hidden, ...]
    unchallenged: tuple[Broadening, ...]
    tried: Mapping[str, int]  # broadenings tried, per file
    # the runs it was measured on, for the report's reasons (``reasons``)
    sample: Sample | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "hidden": [item.to_json() for item in self.hidden],
            "unchallenged": [item.to_json() for item in self.unchallenged],
            "tried": dict(sorted(self.tried.items())),
        }


def expressible_of(stem: str, view: FindingsFile) -> frozenset[str] | None:
    """What the target of a findings file's view (``<target>-<release>``) can express on that
    release, read off the adapters' constants (no SDK needed); None for a target not built in."""
    release = stem.removeprefix(f"{view.target}-")
    minor = ".".join(release.split(".")[:2])
    older = registry.older_releases_expressible().get(f"{view.target}-{minor}")
    return older if older is not None else registry.built_in_expressible().get(view.target)


def measure(
    views: Mapping[str, FindingsFile],
    runs: Sequence[VariantRun],
    challengers: Sequence[VariantRun] = (),
) -> Measured:
    """Which of ``runs`` each view excuses whole, and which broadenings of its class witnesses
    no run challenges, ``challengers`` too (the coverage sample's part: a class narrowed to one
    of its shapes is challenged there, and nowhere else)."""
    sample = Sample([*runs, *challengers])
    hidden: list[Hidden] = []
    left: list[Broadening] = []
    tried: dict[str, int] = {}
    for stem, view in sorted(views.items()):
        hidden += hidden_runs(stem, view, runs, expressible_of(stem, view))
        mine, tried[stem] = unchallenged(stem, view, sample)
        left += mine
    return Measured(tuple(hidden), tuple(left), tried, sample)


Reasons = Mapping[Broadening, tuple[tuple[str, int], ...]]


def reasons(views: Mapping[str, FindingsFile], measured: Measured) -> Reasons:
    """For each broadening ``measured`` leaves unchallenged, what keeps the variants' violations
    nearest it out (``harness.findings.canary.nearest``): where a new variant or a new shape
    would have to write what, for the triage of the files.  It reads every candidate violation
    again, so only the report asks it, never the tests."""
    if measured.sample is None:
        return {}
    found: dict[Broadening, tuple[tuple[str, int], ...]] = {}
    for item in measured.unchallenged:
        recorded = next(c for c in views[item.file].classes if c.name == item.recorded_class)
        position = next(i for i, w in enumerate(recorded.witnesses) if w.describe() == item.witness)
        found[item] = nearest(recorded, position, item.how, measured.sample)
    return found


def dumped(measured: Measured) -> str:
    """``measured`` as JSON, an item a line (a baseline's diff shows what changed, line by
    line)."""
    data = measured.to_json()
    parts = []
    for key in ("hidden", "unchallenged"):
        items = ",\n".join("  " + json.dumps(item, sort_keys=True) for item in data[key])
        parts.append(f'"{key}": [\n{items}\n ]' if items else f'"{key}": []')
    parts.append(f'"tried": {json.dumps(data["tried"], sort_keys=True)}')
    return "{\n " + ",\n ".join(parts) + "\n}\n"


def render(measured: Measured, whole: bool = False, why: Reasons | None = None) -> str:
    """The report, for the triage of the findings files: per file, each variant run it excuses
    whole (with the classes that do) and each broadening no variant challenges, with what keeps
    the nearest variant violations out where ``why`` says (``reasons``)."""
    lines = [
        "# The exemption canary, per run and per witness",
        "",
        "Each shipped findings file judged on the known-bad variants of the reference "
        + (
            "(the regression files, the whole ci sample, the canary sample and the whole "
            "coverage sample): "
            if whole
            else f"(the regression files, a part of the ci sample (every {EVERY}th scenario of "
            "each family, of the focused ones every second, of the restore family every "
            f"{FAMILY_EVERY[corpus.RESTORE]}th) and every "
            f"{COVERAGE_EVERY}th of the coverage sample): "
        )
        + "the variant "
        "runs it excuses whole (every violation matched by a witness: a run where a new bug of "
        "that shape would pass unseen), and the broadenings of its class witnesses (pattern to "
        "`^\\S.*$`, anchor dropped, `beside` dropped, scenario classes dropped) that no variant "
        "run, nor any logging one, challenges. `python -m harness.canary` writes it "
        '(docs/findings.md, "The exemption canary").',
        "",
        "A run is marked *the same bug* where, for every class that excused it, the variant "
        "fails on one of the class's own demonstrations (`shown_by`) only as the SDK's recorded "
        "finding there says, the class's bug among it: there the class excuses the bug it "
        "records, and no witness could tell the variant from the SDK.",
        "",
        "| findings file | variant runs excused whole | of them the same bug "
        "| broadenings unchallenged |",
        "|---|---|---|---|",
    ]
    files = sorted(measured.tried)
    for stem in files:
        hidden = [item for item in measured.hidden if item.file == stem]
        same = sum(1 for item in hidden if item.same_bug)
        left = sum(1 for item in measured.unchallenged if item.file == stem)
        lines.append(f"| {stem} | {len(hidden)} | {same} | {left} of {measured.tried[stem]} |")
    for stem in files:
        mine = [item for item in measured.hidden if item.file == stem]
        broad = [item for item in measured.unchallenged if item.file == stem]
        if not (mine or broad):
            continue
        lines += ["", f"## {stem}", ""]
        if mine:
            lines.append("Variant runs excused whole:")
            lines.append("")
            lines += [
                f"- `{item.variant}` `{item.scenario}`: {', '.join(item.excused_by)}"
                + (f" (the same bug: shows {', '.join(item.same_bug)})" if item.same_bug else "")
                for item in mine
            ]
            lines.append("")
        if broad:
            lines.append(
                "Broadenings no variant challenges (class: how; the witness; the variants' "
                "violations of its invariant at its step kind, their logging and speaking "
                "copies counted too, by the parts of the broadened witness they fail, or named "
                "by the shipped witness too):"
            )
            lines.append("")
            lines += [
                f"- `{item.recorded_class}`: {item.how}; {item.witness}"
                + ("" if why is None else _reasons(why[item]))
                for item in broad
            ]
    return "\n".join(lines) + "\n"


def against(
    views: Mapping[str, FindingsFile], sample: Sample, items: Iterable[Mapping[str, str]]
) -> list[tuple[Mapping[str, str], bool | None]]:
    """Each broadening of ``items`` (a baseline's unchallenged list) asked again of ``sample``:
    whether some run of it challenges that broadening (``challenged``); None where the file has
    that class witness no longer, or that broadening no longer changes it."""
    asked: list[tuple[Mapping[str, str], bool | None]] = []
    for item in items:
        view = views.get(item["file"])
        found = next((c for c in view.classes if c.name == item["class"]), None) if view else None
        position = (
            next(
                (i for i, w in enumerate(found.witnesses) if w.describe() == item["witness"]),
                None,
            )
            if found
            else None
        )
        verdict = None
        if found is not None and position is not None:
            verdict = challenged(found, position, item["broadened"], sample)
        asked.append((item, verdict))
    return asked


def told_of_variants(
    variants: Sequence[str],
    hidden: Sequence[Hidden],
    asked: Sequence[tuple[Mapping[str, str], bool | None]],
    baseline: Path,
) -> str:
    """What ``--variant`` prints: the runs of ``variants`` the shipped files excuse whole (a
    look-alike unless the same bug), then the broadenings ``baseline`` leaves unchallenged that
    their runs challenge, and those it names that no longer apply."""
    lines = []
    same = sum(1 for item in hidden if item.same_bug)
    lines.append(
        f"{', '.join(variants)}: {len(hidden)} runs excused whole ({same} of them the same bug)"
    )
    lines += [f"  {item.describe()}" for item in hidden]
    met = [item for item, verdict in asked if verdict]
    gone = [item for item, verdict in asked if verdict is None]
    where = baseline.relative_to(ROOT) if baseline.is_relative_to(ROOT) else baseline
    lines.append(
        f"challenges {len(met)} of the {len(asked)} broadenings {where} leaves unchallenged"
    )
    lines += [f"  {_broadening(item)}" for item in met]
    if gone:
        lines.append(f"{len(gone)} of them no longer apply (the class witness changed or is gone)")
        lines += [f"  {_broadening(item)}" for item in gone]
    return "\n".join(lines) + "\n"


def _broadening(item: Mapping[str, str]) -> str:
    return f"{item['file']}: class {item['class']}: {item['witness']} ({item['broadened']})"


def _reasons(tally: tuple[tuple[str, int], ...]) -> str:
    if not tally:
        return "; no variant's violation there at all"
    return "; " + ", ".join(f"{count} {reason}" for reason, count in tally)


class _Parser(argparse.ArgumentParser):
    """A parser whose mistakes are one line and exit 2, as the harness's commands' are."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="python -m harness.canary", description=__doc__)
    parser.add_argument("--reports", type=Path, default=Path("reports"), metavar="DIR")
    parser.add_argument(
        "--baseline",
        action="store_true",
        help=f"also write {BASELINE.relative_to(ROOT)} (with --whole: "
        f"{WHOLE_BASELINE.relative_to(ROOT)})",
    )
    parser.add_argument(
        "--whole",
        action="store_true",
        help="the whole ci and coverage samples, the canary sample and shapes, not a part",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=processes,
        metavar="N",
        help="run the variants' runs in N local processes; the report is the same bytes",
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run them on the Dask cluster whose scheduler is at ADDRESS (as check does)",
    )
    parser.add_argument(
        "--variant",
        action="append",
        metavar="NAME",
        help="run only this known-bad variant (bad-<slug>; again for more) and print which of "
        "the baseline's unchallenged broadenings its runs challenge and which of its runs the "
        "shipped files excuse whole; writes no file (a minute for one variant on the whole "
        "samples, where the whole canary takes an hour)",
    )
    arguments = parser.parse_args(argv)
    whole = arguments.whole
    known = [name for name in sorted(registry.variants()) if name not in CAUGHT_ELSEWHERE]
    if arguments.variant and arguments.baseline:
        parser.error("--variant writes no baseline: leave out --baseline")
    for name in arguments.variant or ():
        if name not in known:
            parser.error(
                f"--variant: unknown variant {name!r}; expected one of: {', '.join(known)}"
            )
    variants = arguments.variant or known
    views = shipped_views()
    try:
        with execution.connect(arguments.workers, arguments.scheduler) as spread:
            runs = asked_runs(views, variants, whole, spread)
            challengers = variant_runs(variants, challenger_scenarios(whole), spread)
    except (execution.Unavailable, execution.Lost, execution.WorkerMismatch) as problem:
        print(problem, file=sys.stderr)
        return 2
    if arguments.variant:
        baseline = WHOLE_BASELINE if whole else BASELINE
        items = json.loads(baseline.read_text())["unchallenged"]
        hidden = [
            item
            for stem, view in sorted(views.items())
            for item in hidden_runs(stem, view, runs, expressible_of(stem, view))
        ]
        asked = against(views, Sample([*runs, *challengers]), items)
        print(told_of_variants(variants, hidden, asked, baseline), end="")
        return 0
    measured = measure(views, runs, challengers)
    text = dumped(measured)
    stem = "exemption-canary-whole" if whole else "exemption-canary"
    write_atomically(arguments.reports / f"{stem}.json", text)
    write_atomically(
        arguments.reports / f"{stem}.md", render(measured, whole, reasons(views, measured))
    )
    if arguments.baseline:
        write_atomically(WHOLE_BASELINE if whole else BASELINE, text)
    same = sum(1 for item in measured.hidden if item.same_bug)
    print(
        f"{arguments.reports / f'{stem}.md'}: {len(measured.hidden)} variant runs "
        f"excused whole ({same} of them the same bug), {len(measured.unchallenged)} of "
        f"{sum(measured.tried.values())} broadenings unchallenged"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``generate``: draw the ci sample of generated scenarios and write it to scenarios/corpus/."""

from __future__ import annotations

import argparse
from pathlib import Path

from hypothesis import __version__ as hypothesis_version

from harness.commands.inputs import EXIT_HOLDS
from harness.commands.options import Commands, add_command, shown
from harness.report import write_atomically
from harness.targets import registry
from scenarios import canary_sample, corpus, coverage
from scenarios.strategies import Capabilities


def add_parser(commands: Commands) -> None:
    generate = add_command(
        commands,
        "generate",
        run,
        help="draw the ci sample of generated scenarios and write it to scenarios/corpus/",
        description="Draw the sample that check --profile ci runs, with the installed "
        "hypothesis: the shared one, and one for each narrower set of capabilities a built-in "
        "target draws its own within (on any SDK release tox checks); write each as JSON lines "
        "under CORPUS/PROFILE/ (and remove the folder's other .jsonl files).  The files are "
        "committed: a new sample is a reviewed change, and the findings files' classes must be "
        "triaged again against it.",
    )
    generate.add_argument(
        "--profile", choices=corpus.COMMITTED, default="ci", help="the profile (default: ci)"
    )
    sample = generate.add_mutually_exclusive_group()
    sample.add_argument(
        "--coverage",
        action="store_true",
        help="write the coverage sample instead (scenarios/corpus/coverage/: the shapes where "
        "bugs hide, one family each; check --coverage runs it)",
    )
    sample.add_argument(
        "--canary",
        action="store_true",
        help="write the canary sample instead (scenarios/corpus/canary/: a second, seeded draw "
        "of the ci sample's families that only the exemption canary's variants run)",
    )
    generate.add_argument(
        "--corpus",
        type=Path,
        default=corpus.CORPUS,
        metavar="CORPUS",
        help=f"where to write (default: {shown(corpus.CORPUS)})",
    )


def run(arguments: argparse.Namespace) -> int:
    if arguments.coverage:
        return _coverage(arguments.corpus)
    if arguments.canary:
        return _canary(arguments.corpus)
    profile, folder = arguments.profile, corpus.folder(arguments.profile, arguments.corpus)
    stems: dict[Capabilities, str] = {None: corpus.SHARED}
    expressible_sets = registry.built_in_expressible() | registry.older_releases_expressible()
    for name, expressible in expressible_sets.items():
        stems.setdefault(corpus.drawn_within(expressible), f"{corpus.SHARED}-{name}")
    written = []
    for capabilities, stem in stems.items():
        drawn = corpus.draw(profile, capabilities)
        path = folder / f"{stem}.jsonl"
        write_atomically(path, corpus.render(profile, capabilities, drawn))
        written.append(path)
        within = "every capability" if capabilities is None else ", ".join(sorted(capabilities))
        print(f"{shown(path)}: {len(drawn)} scenarios drawn within {within}")
    for stale in sorted(set(corpus.files(profile, arguments.corpus)) - set(written)):
        stale.unlink()
        print(f"{shown(stale)}: removed (no built-in target draws within its capabilities)")
    print(
        f"drawn with hypothesis {hypothesis_version}: review the diff, then run check --profile "
        f"{profile} on every target and triage its findings again"
    )
    return EXIT_HOLDS


def _coverage(root: Path) -> int:
    next_step = "run check --coverage on the reference (it must be clean)"
    return _written(root, coverage.FILE, coverage.render(coverage.draw()), next_step)


def _canary(root: Path) -> int:
    next_step = (
        "run the exemption canary on the whole samples (python -m harness.canary --whole "
        "--baseline)"
    )
    return _written(root, canary_sample.FILE, canary_sample.render(canary_sample.draw()), next_step)


def _written(root: Path, file: Path, text: str, next_step: str) -> int:
    """Write ``text``, a sample drawn within every capability, as ``file`` under ``root``."""
    path = root / file.relative_to(corpus.CORPUS)
    write_atomically(path, text)
    drawn = text.count("\n") - 1  # a header line, then one line per scenario
    print(f"{shown(path)}: {drawn} scenarios drawn within every capability")
    print(f"drawn with hypothesis {hypothesis_version}: review the diff, then {next_step}")
    return EXIT_HOLDS

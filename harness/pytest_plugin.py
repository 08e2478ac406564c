"""A pytest plugin: scenario files become test items, so a project can run them in its own suite.

    pytest --harness-target reference path/to/scenarios/

collects every ``.yaml``/``.yml`` scenario file under the given paths (files whose top level has
``tree`` or ``steps`` and another field of a scenario, or misspellings of them) as one test item
per target.  Each item is judged as ``check`` judges
it, against the findings files on the findings path (``harness.findings.search``; add folders
with ``--harness-findings DIR``):

- no violation: it passes;
- every violation matched by the recorded finding of that scenario: it is an expected failure,
  a *strict* xfail whose reason is the finding's explanation (a finding whose witnesses are all
  ``sometimes`` is a non-strict one: it may not show);
- a violation no witness matches, a recorded witness that no longer shows, or a finding recorded
  for another content of the file: it fails, saying which;
- a scenario the target cannot express is skipped, the reason and the location naming the
  scenario file; an adapter error or a target that cannot be loaded fails it in one line.

A file that looks like a scenario but cannot be read, parsed or validated (a misspelt key
included) is a collection error, a line per problem as ``check`` says it, never silently left
out.
``--harness-regressions`` adds the harness's own regression files to the run, wherever the
harness is installed (a virtual environment inside the project too).

``--harness-profile ci`` adds the profile's committed sample of generated scenarios
(``scenarios/corpus/ci/``), one item per scenario and target: each target runs the file ``check
--profile ci`` runs on it (the one drawn within its capabilities; when none is committed, the
sample is drawn here, under the shared file).  A generated item is judged by the findings'
classes: a violation no class's witness matches fails it; one they all match makes it an expected
failure (non-strict: whether a drawn scenario shows a class is known only once it ran).  Whether
each class still shows *somewhere* in the sample is a verdict on the whole sample, left to
``python -m harness check --profile ci``.

Without ``--harness-target`` the plugin collects nothing.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator, Sequence
from difflib import get_close_matches
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.checkers import check
from harness.findings import (
    FindingEntry,
    FindingsFile,
    FindingsFileError,
    judge_findings,
    load_document,
    observe,
    scenario_digest,
)
from harness.findings.search import search_path
from harness.runner import AdapterError, run_scenario
from harness.targets import registry
from harness.targets.base import TargetInfo
from scenarios import corpus
from scenarios.loading import (
    REGRESSIONS,
    ScenarioFileError,
    load_scenario,
    read_yaml,
    regression_files,
)
from scenarios.model import Scenario
from scenarios.schema import fields_at

FOLDERS = pytest.StashKey[tuple[Path, ...]]()  # the findings path of this session
INFOS = pytest.StashKey[dict[str, TargetInfo | None]]()  # each target's info, None: not loadable
# each target's findings file as first read this session, or why it cannot be used
DOCUMENTS = pytest.StashKey[dict[tuple[str, str], FindingsFile | str | None]]()
BUNDLED = pytest.StashKey[tuple[Path, ...]]()  # the bundled paths the options add (resolved)
SCENARIO_KEYS = re.compile(r"^(tree|steps)\s*:", re.MULTILINE)
SCENARIO_FIELDS = fields_at(())  # a scenario file's top-level keys
MISSPELT = 0.8  # how close (difflib's ratio) a key must be to a field to be taken for it


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nested-interrupt-harness")
    group.addoption(
        "--harness-target",
        action="append",
        default=[],
        metavar="T",
        help="run scenario files found in the collected paths on target T (repeatable)",
    )
    group.addoption(
        "--harness-regressions",
        action="store_true",
        help="also collect the harness's own regression scenarios",
    )
    group.addoption(
        "--harness-profile",
        metavar="NAME",
        help="also run the committed sample of generated scenarios of this hypothesis profile "
        f"({', '.join(corpus.COMMITTED)}: scenarios/corpus/NAME/), as check --profile does",
    )
    group.addoption(
        "--harness-findings",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="a folder of findings files to judge by, besides the bundled one and the "
        "plugins' (repeatable, as check --findings)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("--harness-target"):
        return
    bundled = [REGRESSIONS.resolve()] if config.getoption("--harness-regressions") else []
    profile = config.getoption("--harness-profile")
    if profile is not None:
        if profile not in corpus.COMMITTED:
            raise pytest.UsageError(
                f"--harness-profile: expected one of {', '.join(corpus.COMMITTED)} (a sample "
                f"committed in scenarios/corpus/), got {profile!r}"
            )
        bundled += [path.resolve() for path in corpus.files(profile)]
    config.stash[BUNDLED] = tuple(bundled)
    given: list[Path] = config.getoption("--harness-findings")
    for folder in given:
        if not folder.is_dir():
            raise pytest.UsageError(f"--harness-findings: {folder} is not a folder")
    try:
        config.stash[FOLDERS] = search_path(given)
    except FindingsFileError as problem:
        raise pytest.UsageError(str(problem)) from None
    config.stash[INFOS] = {}
    config.stash[DOCUMENTS] = {}


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """The bundled files the options ask for (the regression folder, a profile's sample) are
    collected by the session itself, each once, wherever the harness is installed.  Given as
    arguments they were not: pytest drops an argument that lies inside another (a virtual
    environment inside the project, under the project's folder), and its walk from there skips
    the environment (``norecursedirs``: ``.*``, ``venv``; any folder with a ``pyvenv.cfg``)."""
    report = yield
    if isinstance(collector, pytest.Session) and report.passed:
        for path in collector.config.stash.get(BUNDLED, ()):
            if collector.isinitpath(path):  # named on the command line: collected as such
                continue
            kind = BundledFolder if path.is_dir() else CorpusFile
            bundled = kind.from_parent(collector, path=path, nodeid=_bundled_id(collector, path))
            report.result.append(bundled)
    return report


def _bundled_id(session: pytest.Session, path: Path, root: Path | None = None) -> str:
    """A bundled path's node id, as pytest names a path it is given: relative to the project
    (the rootdir), else to the bundled ``root`` it is in (itself: the empty id)."""
    try:
        return path.relative_to(session.config.rootpath.resolve()).as_posix()
    except ValueError:
        return "" if root is None else path.relative_to(root).as_posix()


class BundledFolder(pytest.Directory):
    """The harness's regression folder (``--harness-regressions``): its scenario files."""

    def collect(self) -> Iterator[ScenarioFile]:
        for path in regression_files(self.path):
            if path.suffix in {".yaml", ".yml"}:
                nodeid = _bundled_id(self.session, path, self.path)
                yield ScenarioFile.from_parent(self, path=path, nodeid=nodeid)


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A bundled path a walk reaches (a project inside which the harness is installed, or the
    harness's own checkout) is left to the session's own collector of it."""
    bundled = config.stash.get(BUNDLED, ())
    return True if bundled and collection_path.resolve() in bundled else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not parent.config.getoption("--harness-target"):
        return None
    if file_path.suffix == ".jsonl" and _in_profile(parent.config, file_path):
        sample: CorpusFile = CorpusFile.from_parent(parent, path=file_path)
        return sample
    if file_path.suffix not in {".yaml", ".yml"} or not _looks_like_scenario(file_path):
        return None
    collected: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
    return collected


def _in_profile(config: pytest.Config, path: Path) -> bool:
    profile = config.getoption("--harness-profile")
    return profile is not None and path.resolve().parent == corpus.folder(profile).resolve()


def _looks_like_scenario(path: Path) -> bool:
    """A mapping that names ``tree`` or ``steps`` and another field of a scenario, any of them
    possibly misspelt (so a scenario with a misspelt key is reported, not left out); or, when
    it does not parse, a text with ``tree`` or ``steps`` at its top level (so a broken scenario
    is reported).  Other YAML files are left alone."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return False
    try:
        data = read_yaml(text)
    except yaml.YAMLError:
        return SCENARIO_KEYS.search(text) is not None
    if isinstance(data, dict):
        fields = [key for key in data if _close(key, SCENARIO_FIELDS)]
        return len(fields) >= 2 and any(_close(key, ("tree", "steps")) for key in fields)
    return SCENARIO_KEYS.search(text) is not None


def _close(key: Any, fields: Sequence[str]) -> bool:
    """Whether ``key`` is one of ``fields`` or a misspelling of one."""
    return isinstance(key, str) and bool(get_close_matches(key, fields, n=1, cutoff=MISSPELT))


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[ScenarioItem]:
        try:
            scenario = load_scenario(self.path)
        except ScenarioFileError as problem:
            raise self.CollectError(str(problem)) from None
        for target in self.config.getoption("--harness-target"):
            item = ScenarioItem.from_parent(
                self, name=f"{self.path.stem}[{target}]", target=target, scenario=scenario
            )
            expected = _recorded_finding(self.config, target, self.path.stem, scenario)
            if expected is not None:
                item.add_marker(
                    pytest.mark.xfail(
                        reason=f"recorded finding: {expected.explanation}",
                        raises=RecordedFindingShown,
                        strict=any(not witness.sometimes for witness in expected.witnesses),
                    )
                )
            yield item


class CorpusFile(pytest.File):
    """A committed sample of generated scenarios: the items of each target that runs it."""

    def collect(self) -> Iterator[ScenarioItem]:
        profile = self.config.getoption("--harness-profile")
        for target in self.config.getoption("--harness-target"):
            info = _info(self.config, target)
            if info is None:  # said once, on the shared file (its scenario files' items fail too)
                if self.path.stem == corpus.SHARED:
                    raise self.CollectError(_refusal(target))
                continue
            drawn = self._sample(profile, info)
            if drawn is not None:
                prefix = "" if corpus.drawn_within(info.expressible) is None else f"{target}-"
                yield from self._items(target, corpus.named(drawn, prefix))

    def _sample(self, profile: str, info: TargetInfo) -> corpus.Named | None:
        """The sample ``info``'s target runs, if this file holds it (or, when no file does,
        drawn here, on the shared file)."""
        try:
            found = corpus.find(profile, info.expressible)
            if found is not None:
                same = found.resolve() == self.path.resolve()
                return corpus.read(self.path, profile) if same else None
        except corpus.CorpusError as problem:
            raise self.CollectError(str(problem)) from None
        if self.path.stem != corpus.SHARED:
            return None
        return corpus.draw(profile, info.expressible)

    def _items(self, target: str, named: corpus.Named) -> Iterator[ScenarioItem]:
        for name, scenario in named:
            yield ScenarioItem.from_parent(
                self, name=f"{name}[{target}]", target=target, scenario=scenario, generated=True
            )


def _refusal(target: str) -> str:
    """Why ``target`` cannot be loaded, in one line."""
    try:
        registry.get(target)
    except registry.UnknownTarget as unknown:
        return str(unknown)
    except registry.BrokenTarget as broken:
        return broken.refusal
    return f"target {target} cannot be loaded"


def _info(config: pytest.Config, target: str) -> TargetInfo | None:
    infos = config.stash[INFOS]
    if target not in infos:
        try:
            infos[target] = registry.get(target).info
        except (registry.UnknownTarget, registry.BrokenTarget):
            infos[target] = None
    return infos[target]


def _document(config: pytest.Config, info: TargetInfo) -> FindingsFile | None:
    """The findings file of ``info``'s target, read once a session: the marks given at
    collection and every item's verdict rest on the same reading, so a file edited during the
    session changes none of them (``FindingsFileError`` each time, when it cannot be used)."""
    documents = config.stash[DOCUMENTS]
    key = (info.findings_name, info.version)
    if key not in documents:
        try:
            documents[key] = load_document(*key, config.stash[FOLDERS])
        except FindingsFileError as problem:
            documents[key] = str(problem)
    found = documents[key]
    if isinstance(found, str):
        raise FindingsFileError(found)
    return found


def _recorded_finding(
    config: pytest.Config, target: str, name: str, scenario: Scenario
) -> FindingEntry | None:
    """The finding recorded for this scenario (this content) on ``target``, if any; a target
    or findings file that cannot be used is left to the item, which fails saying why."""
    info = _info(config, target)
    if info is None:
        return None
    try:
        document = _document(config, info)
    except FindingsFileError:
        return None
    entry = None if document is None else document.entry(name)
    if entry is None or entry.digest != scenario_digest(scenario):
        return None
    return entry


class ScenarioItem(pytest.Item):
    def __init__(
        self, *, target: str, scenario: Scenario, generated: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.target = target
        self.scenario = scenario
        self.generated = generated  # a drawn scenario, which the findings' classes judge
        # a scenario file's name is its stem; a drawn one's, its name in the sample
        self.scenario_name = self.name.rsplit("[", 1)[0] if generated else self.path.stem

    def runtest(self) -> None:
        try:
            target = registry.get(self.target)
        except registry.UnknownTarget as unknown:
            raise ScenarioFailure(str(unknown)) from None
        except registry.BrokenTarget as broken:
            raise ScenarioFailure(broken.refusal) from None
        name = self.scenario_name
        try:
            history = run_scenario(target, self.scenario, name)
        except AdapterError as error:  # the adapter's bug, not a verdict on the implementation
            raise ScenarioFailure(str(error)) from None
        if history.not_applicable:
            # the target cannot express this scenario: reported as such, never as a pass
            raise pytest.skip.Exception(
                f"{name}: not applicable on {self.target}: needs "
                + ", ".join(history.not_applicable),
                _use_item_location=True,
            )
        info = target.info
        try:
            document = _document(self.config, info)
        except FindingsFileError as problem:
            raise ScenarioFailure(str(problem)) from None
        violations = check(history)
        verdict = judge_findings(
            document, [observe(history, self.scenario, violations, generated=self.generated)]
        )
        problems = [
            f"{v.invariant} {v.slug} at step {v.step}: expected {v.expected}; seen {v.seen}"
            for _, v in verdict.new
        ]
        problems += [
            f"recorded finding no longer shows: {missing.witness.describe()} (update the "
            f"findings file of {info.findings_name} {info.version})"
            for missing in verdict.disappeared
            if missing.recorded_class is None  # a class is judged on the whole sample
        ]
        problems += [f"recorded finding does not apply: {why}" for _, why in verdict.stale]
        problems += [
            f"class `{missing.recorded_class}` witness not shown by its shown_by files: "
            f"{missing.witness.describe()}"
            for missing in verdict.undemonstrated
        ]
        if problems:
            raise ScenarioFailure("\n".join(problems))
        if verdict.expected and self.generated:  # known only now: a non-strict expected failure
            pytest.xfail(f"recorded finding: {verdict.expected[0].explanation}")
        if verdict.expected:
            raise RecordedFindingShown(verdict.expected[0].explanation)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        if isinstance(excinfo.value, ScenarioFailure | RecordedFindingShown):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.scenario_name} on {self.target}"


class ScenarioFailure(Exception):
    """A scenario's violations (or why it could not be judged), shown as the item's failure."""


class RecordedFindingShown(Exception):
    """Every violation of the scenario is its recorded finding: the item's expected failure."""

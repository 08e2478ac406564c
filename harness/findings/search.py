"""Where findings files are found: a search path of folders.

A target's findings for one version are ``<target>-<version>.yaml`` in one folder of the path:

1. the bundled folder, ``scenarios/findings/`` (package data: it ships in the wheel);
2. each folder a plugin declares under the entry-point group ``nested_interrupt_harness.findings``,
   in the order of the entry points' names: the entry point names a callable that takes no
   argument and returns the folder (a ``str`` or a ``Path``), so a plugin keeps its findings
   beside its adapter, in its own repository::

       [project.entry-points."nested_interrupt_harness.findings"]
       my-sdk = "my_package.harness_target:findings_folder"

3. each ``--findings DIR`` given on the command line, in the order given.

The order decides nothing: two files for the same target and version on the path are refused
(one line naming both), so which file judges a run never depends on what else is installed.  A
folder named twice (the bundled one given again with ``--findings``) is searched once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Final

import scenarios

BUNDLED: Final = Path(scenarios.__file__).resolve().parent / "findings"
ENTRY_POINT_GROUP: Final = "nested_interrupt_harness.findings"


class FindingsFileError(ValueError):
    """A findings file (or a folder of the search path) that cannot be used; the message is one
    line."""


def file_name(target: str, version: str) -> str:
    return f"{target}-{version}.yaml"


def plugin_folders() -> tuple[Path, ...]:
    """The folders installed plugins declare, by entry-point name; a declaration that cannot be
    used is refused in one line (``FindingsFileError``): a verdict must not rest on part of the
    findings."""
    folders = []
    for entry_point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        where = f"findings entry point {entry_point.name!r} ({entry_point.value})"
        try:
            declare = entry_point.load()
            if not callable(declare):
                raise FindingsFileError(f"{where}: expected a callable returning a folder")
            folder = declare()
        except FindingsFileError:
            raise
        except Exception as failure:  # a plugin's bug, shown as the one line it is
            raise FindingsFileError(f"{where}: cannot load: {_last_line(failure)}") from None
        if not isinstance(folder, str | os.PathLike):
            raise FindingsFileError(f"{where}: expected a folder path, got {folder!r}")
        path = Path(folder)
        if not path.is_dir():
            raise FindingsFileError(f"{where}: {path} is not a folder")
        folders.append(path)
    return tuple(folders)


def search_path(given: Iterable[Path] = ()) -> tuple[Path, ...]:
    """The bundled folder, the plugins' folders, then ``given`` (``--findings``), each once."""
    return unique((BUNDLED, *plugin_folders(), *given))


def unique(folders: Iterable[Path]) -> tuple[Path, ...]:
    """``folders`` without repeats (by resolved path), in order."""
    seen: dict[Path, Path] = {}
    for folder in folders:
        seen.setdefault(folder.resolve(), folder)
    return tuple(seen.values())


def locate(target: str, version: str, folders: Sequence[Path]) -> Path | None:
    """The findings file of ``target`` ``version`` on the path, None when there is none;
    refused in one line when two folders hold one."""
    found = [folder / file_name(target, version) for folder in unique(folders)]
    found = [path for path in found if path.exists()]
    if len(found) > 1:
        raise FindingsFileError(
            f"{found[1]}: a second findings file for {target} {version} on the findings path "
            f"(the first is {found[0]}): keep one"
        )
    return found[0] if found else None


def release(version: str) -> tuple[int, ...] | None:
    """A release's numbers (``1.62.0`` -> (1, 62, 0)), or None for a version that is not a
    plain dotted release (a local build such as ``1.62.0+pr123``, a pre-release): those never
    stand in for another."""
    parts = version.split(".")
    return tuple(int(part) for part in parts) if all(p.isdigit() for p in parts) else None


def inherited(target: str, version: str, folders: Sequence[Path]) -> str | None:
    """The newest release before ``version`` that has a findings file of ``target`` on the path,
    whose findings judge a release with none of its own (a release between two pinned ones):
    None when ``version`` has its own, is no plain release, or no earlier one has a file."""
    wanted = release(version)
    if wanted is None or locate(target, version, folders) is not None:
        return None
    prefix = f"{target}-"
    earlier = {
        found: numbers
        for folder in unique(folders)
        if folder.is_dir()
        for path in folder.glob(f"{prefix}*.yaml")
        for found in [path.name.removeprefix(prefix).removesuffix(".yaml")]
        for numbers in [release(found)]
        if numbers is not None and numbers < wanted
    }
    return max(earlier, key=earlier.__getitem__) if earlier else None


def _last_line(failure: BaseException) -> str:
    text = f"{type(failure).__name__}: {failure}".strip()
    return text.splitlines()[-1] if text else type(failure).__name__

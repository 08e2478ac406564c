"""An environment per SDK release, for the backtest: ``uv venv`` plus ``uv pip install`` of the
release and of what the harness itself needs, cached under ``.backtest-envs/`` (git-ignored).

The harness is not installed into it: a run puts this checkout first on ``PYTHONPATH``, so every
release is driven by the same adapters.  What a release needs besides the SDK (an older ``openai``
for an older openai-agents) is said by its adapter's compat module, the one place that knows the
releases apart.  An environment is built once, under a lock (two workers that need the same
release wait for one build), and is reused while its recorded requirements stay the same.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from harness.targets import langgraph_compat, openai_agents_compat

ENVIRONMENTS: Final = Path(".backtest-envs")
# what the harness needs in every environment (pyproject's dependencies); hypothesis as tox pins it
HARNESS_NEEDS: Final = ("pydantic>=2.6", "PyYAML>=6.0", "hypothesis==6.170.17")
STAMP: Final = "requirements.txt"  # what the environment was built with


class ReleaseUnavailable(Exception):
    """A release's environment cannot be built (not on the registry, uv missing, a resolver
    conflict); the message is one line."""


def requirements(sdk: str, release: str) -> tuple[str, ...]:
    """What to install for ``release`` of ``sdk`` (its PyPI name), the harness's needs included."""
    if sdk == "langgraph":
        own = langgraph_compat.requirements(release)
    elif sdk == "openai-agents":
        own = openai_agents_compat.requirements(release)
    else:
        own = (f"{sdk}=={release}",)
    return (*own, *HARNESS_NEEDS)


def python_of(environment: Path) -> Path:
    return environment / "bin" / "python"


def environment(sdk: str, release: str, root: Path = ENVIRONMENTS) -> Path:
    """The environment for ``release`` of ``sdk``, built here unless it is built already."""
    folder = root.resolve() / f"{sdk}-{release}"
    wanted = "\n".join(requirements(sdk, release)) + "\n"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.parent / f".{folder.name}.lock"):
        stamp = folder / STAMP
        if stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        uv = _uv()
        _run([*uv, "venv", "--quiet", "--python", sys.executable, str(folder)], sdk, release)
        python = str(python_of(folder))
        _run([*uv, "pip", "install", "--quiet", "--python", python, *wanted.split()], sdk, release)
        _check_version(python, sdk, release)
        stamp.write_text(wanted, encoding="utf-8")
    return folder


def _check_version(python: str, sdk: str, release: str) -> None:
    """The environment runs the release asked for (a resolver that swapped it is refused)."""
    asked = f"import importlib.metadata as m; print(m.version({sdk!r}))"
    done = subprocess.run([python, "-c", asked], capture_output=True, text=True, check=False)
    if done.stdout.strip() != release:
        raise ReleaseUnavailable(
            f"{sdk} {release}: its environment has {done.stdout.strip() or 'no'} {sdk}"
        )


def _uv() -> list[str]:
    """uv: on the PATH, else the one installed beside this Python (the ``backtest`` extra)."""
    found = shutil.which("uv")
    if found is not None:
        return [found]
    beside = Path(sys.executable).parent / "uv"
    if beside.exists():
        return [str(beside)]
    try:
        from uv import find_uv_bin
    except ImportError:
        raise ReleaseUnavailable(
            "uv is needed to build an environment per release: "
            "pip install 'nested-interrupt-harness[backtest]'"
        ) from None
    return [find_uv_bin()]


def _run(command: list[str], sdk: str, release: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        last = lines[-1].strip() if lines else f"exit {done.returncode}"
        raise ReleaseUnavailable(f"{sdk} {release}: cannot build its environment: {last}")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_in(
    environment: Path, arguments: list[str], checkout: Path
) -> subprocess.CompletedProcess[str]:
    """``python -m harness ARGUMENTS`` in ``environment``, on this checkout's harness."""
    variables = dict(os.environ)
    variables["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(checkout), variables.get("PYTHONPATH", "")) if part
    )
    variables.pop("DASK_SCHEDULER_ADDRESS", None)  # the inner run is one process
    return subprocess.run(
        [str(python_of(environment)), "-m", "harness", *arguments],
        capture_output=True,
        text=True,
        check=False,
        cwd=checkout,
        env=variables,
    )

"""The harness as an adopter gets it: a wheel built from this checkout, installed with the
tinyagents example into a fresh virtual environment, and run in an empty directory
outside the checkout.

    python examples/plugin/run_from_wheel.py

Each step must succeed (exit 0), else this stops with the step's name and exits 1; the temporary
directory is removed either way.  Only the standard library is imported; uv builds the wheel and
installs when it is installed beside this interpreter (``tox -e example`` installs it: its cache
makes the fresh environment quick), else the new environment's pip does.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent
CHECKOUT = EXAMPLE.parent.parent
TARGET = "tinyagents"
PACKAGES = ("harness", "scenarios", "fakes")  # the wheel's packages (pyproject.toml)
LEFT_OUT = shutil.ignore_patterns("*.egg-info", "__pycache__", "build")


class StepFailed(Exception):
    pass


def step(name: str, command: list[str], cwd: Path) -> str:
    print(f"--- {name}: {' '.join(command)}", flush=True)
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    print(done.stdout + done.stderr, end="", flush=True)
    if done.returncode != 0:
        raise StepFailed(f"{name}: exit {done.returncode}")
    return done.stdout


def main() -> int:
    temporary = Path(tempfile.mkdtemp(prefix="harness-example-"))
    try:
        run(temporary)
    except StepFailed as failure:
        print(f"run_from_wheel: FAILED at {failure}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    print("run_from_wheel: every step passed")
    return 0


def run(temporary: Path) -> None:
    venv, wheels, example, empty = (
        temporary / name for name in ("venv", "wheels", "tinyagents", "run")
    )
    empty.mkdir()
    shutil.copytree(EXAMPLE, example, ignore=LEFT_OUT)
    python = str(venv / "bin" / "python")
    uv = [sys.executable, "-m", "uv"] if importlib.util.find_spec("uv") else None
    if uv:
        step("venv", [*uv, "venv", "--quiet", "--python", sys.executable, str(venv)], temporary)
    else:
        step("venv", [sys.executable, "-m", "venv", str(venv)], temporary)
    pip = [python, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    # built from a copy of what the wheel is made of, so setuptools' build/ stays out of the
    # checkout (and a stale one cannot slip deleted files into the wheel)
    sources = temporary / "harness"
    sources.mkdir()
    shutil.copy2(CHECKOUT / "pyproject.toml", sources)
    shutil.copy2(CHECKOUT / "README.md", sources)
    for package in PACKAGES:
        shutil.copytree(CHECKOUT / package, sources / package, ignore=LEFT_OUT)
    if uv:
        build = [*uv, "build", "--quiet", "--wheel", "--out-dir", str(wheels), str(sources)]
    else:
        build = [*pip, "wheel", "--no-deps", str(sources), "-w", str(wheels)]
    step("wheel", build, temporary)
    (wheel,) = wheels.glob("nested_interrupt_harness-*.whl")
    install = [*uv, "pip", "install", "--quiet", "--python", python] if uv else [*pip, "install"]
    step("install", [*install, str(wheel), f"{example}[test]"], temporary)
    # from here on, nothing of the checkout is importable: only what was installed
    step("check reference", [python, "-m", "harness", "check", "--target", "reference"], empty)
    step(f"check {TARGET}", [python, "-m", "harness", "check", "--target", TARGET], empty)
    # real restarts, for free: each stretch between restarts in a process of its own
    forked = [python, "-m", "harness", "check", "--target", TARGET, "--isolation", "fork"]
    step(f"check {TARGET} --isolation fork", forked, empty)
    listed = step("targets", [python, "-m", "harness", "targets"], empty)
    if not any(line.startswith(f"{TARGET} ") for line in listed.splitlines()):
        raise StepFailed(f"targets: {TARGET} is not listed")
    step(
        "pytest",
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(example / "tests")],
        empty,
    )


if __name__ == "__main__":
    sys.exit(main())

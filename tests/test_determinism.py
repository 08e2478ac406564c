"""The determinism check: it sees a run that wrote other bytes, names the histories that differ,
and leaves no busy process behind."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from harness import determinism
from harness.cli import main
from harness.determinism import DIGESTS, Run

# a stand-in for `check`: writes a report and two history digests, the second one depending on
# the hash seed when asked to (the way a set's order leaks into output)
FAKE_CHECK = """
import os, sys
where = sys.argv[1]
seeded = sys.argv[2] == "seeded"
seed = os.environ["PYTHONHASHSEED"] if seeded else "0"
open(os.path.join(where, "conformance.md"), "w").write("# same\\n")
open(os.path.join(where, "histories.sha256"), "w").write(
    "aaaa  reference/steady\\n" + f"{seed}  reference/wobbly\\n"
)
"""


def fake_check(mode: str) -> Callable[[Sequence[str], Path], list[str]]:
    def command(check_arguments: Sequence[str], reports: Path) -> list[str]:
        del check_arguments
        return [sys.executable, "-c", FAKE_CHECK, str(reports), mode]

    return command


def test_identical_runs_are_identical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(determinism, "check_command", fake_check("steady"))
    runs = [determinism.run_once(i, [], tmp_path, contention=i > 0) for i in range(2)]
    report = determinism.document([], runs)
    assert report["identical"]
    assert report["histories"] == 2
    assert report["runs"][0]["files_differ"] == []
    assert "every run wrote the same bytes" in determinism.markdown(report)


def test_a_history_that_follows_the_hash_seed_is_caught_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(determinism, "check_command", fake_check("seeded"))
    runs = [determinism.run_once(i, [], tmp_path, contention=False) for i in range(2)]
    report = determinism.document([], runs)
    assert not report["identical"]
    assert report["runs"][0]["files_differ"] == [DIGESTS]
    assert report["runs"][0]["histories_differ"] == ["reference/wobbly"]
    assert "`reference/wobbly`" in determinism.markdown(report)


def test_another_exit_code_is_a_difference() -> None:
    first = Run(0, 1, False, 0, {"a": b"x"})
    other = Run(1, 2, True, 1, {"a": b"x"})
    report = determinism.document([], [first, other])
    assert not report["identical"]
    assert report["runs"][0]["exit_code_differs"]


def test_busy_processes_run_during_the_block_and_are_gone_after() -> None:
    with determinism.busy_cores(2):
        children = _children()
        assert len(children) >= 2
    assert not any(_alive(pid) for pid in children)


def test_pinned_contention_puts_the_run_and_one_busy_process_on_one_core() -> None:
    import subprocess

    assert determinism.PINNED  # Linux, as this module's /proc reads assume
    with determinism.contended(True) as pin:
        [busy] = _children()
        run = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
        pin(run.pid)
        core = max(os.sched_getaffinity(0))
        assert os.sched_getaffinity(run.pid) == os.sched_getaffinity(busy) == {core}
        run.communicate(b"\n")
    assert not _alive(busy)


def test_without_contention_nothing_runs_beside_and_nothing_is_pinned() -> None:
    before = os.sched_getaffinity(0)
    with determinism.contended(False) as pin:
        assert _children() == []
        pin(os.getpid())
    assert os.sched_getaffinity(0) == before


def test_the_reference_is_deterministic_under_contention(tmp_path: Path) -> None:
    regression = Path("scenarios/regressions/colliding-ids.yaml")
    code = main(
        [
            "determinism",
            "--target",
            "reference",
            "--scenarios",
            str(regression),
            "--reports",
            str(tmp_path),
        ]
    )
    assert code == 0
    assert (tmp_path / "determinism.md").read_text().count("| 1 | 2 | yes | 0 | none | 0 |") == 1
    first, second = tmp_path / DIGESTS, tmp_path / "determinism" / "run-1" / DIGESTS
    assert first.read_bytes() == second.read_bytes()
    assert (
        tmp_path / "conformance.json"
    ).exists()  # the first run's reports, where check puts them


def test_real_restarts_are_deterministic_under_contention(tmp_path: Path) -> None:
    """Under --isolation fork every stretch between restarts runs in a process forked for it:
    which process runs a segment, and when, must change no byte of a report or a history."""
    regression = Path("scenarios/regressions/nested-approval-survives-a-new-process.yaml")
    arguments = ["determinism", "--target", "reference", "--isolation", "fork"]
    code = main([*arguments, "--scenarios", str(regression), "--reports", str(tmp_path)])
    assert code == 0
    assert (tmp_path / "determinism.md").read_text().count("| 1 | 2 | yes | 0 | none | 0 |") == 1
    assert "--isolation=fork" in (tmp_path / "determinism.json").read_text()
    first, second = tmp_path / DIGESTS, tmp_path / "determinism" / "run-1" / DIGESTS
    assert first.read_bytes() == second.read_bytes()


def test_runs_take_their_seeds_from_the_first_seed_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes that split the repeats between them cover distinct seeds."""
    monkeypatch.setattr(determinism, "check_command", fake_check("seeded"))
    runs = [
        determinism.run_once(i, [], tmp_path, contention=False, first_seed=12) for i in range(2)
    ]
    assert [run.seed for run in runs] == [12, 13]
    assert runs[1].files[DIGESTS].endswith(b"13  reference/wobbly\n")


def test_a_first_seed_past_the_last_hash_seed_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = ["determinism", "--target", "reference", "--repeats", "3", "--reports"]
    assert main([*arguments, str(tmp_path), "--first-seed", "4294967293"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "--first-seed: expected at most 4294967292 with --repeats 3 (PYTHONHASHSEED ends at "
        "4294967295), got 4294967293"
    ]
    assert not (tmp_path / "determinism").exists()


def test_an_unknown_target_is_refused_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["determinism", "--target", "nope", "--reports", str(tmp_path)]) == 2
    assert "--target" in capsys.readouterr().err
    assert not (tmp_path / "determinism").exists()


def _children() -> list[int]:
    own = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == own:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_busy_process_ends_when_its_parent_is_gone(tmp_path: Path) -> None:
    import subprocess

    pid_file = tmp_path / "busy.pid"
    starter = (
        "import os, subprocess, sys\n"
        "from harness.determinism import BUSY_LOOP\n"
        "busy = subprocess.Popen([sys.executable, '-c', BUSY_LOOP, '600', str(os.getpid())])\n"
        f"open({str(pid_file)!r}, 'w').write(str(busy.pid))\n"
    )
    subprocess.run([sys.executable, "-c", starter], check=True, cwd=Path(__file__).parent.parent)
    busy = int(pid_file.read_text())
    deadline = 100_000
    while _alive(busy) and deadline:  # the orphan notices on its next loop: no sleep needed
        deadline -= 1
    assert not _alive(busy)


def test_a_busy_process_runs_at_the_stated_niceness_above_the_runs() -> None:
    """What weighs against the run is the difference: a run started niced (a CI runner's
    ``nice tox``) gets a busy process that much nicer still, never the bare value."""
    wanted = min(19, os.nice(0) + determinism.BUSY_NICENESS)
    with determinism.busy_cores(1):
        [busy] = _children()
        # field 19 of /proc/PID/stat, counted after the command name's closing parenthesis
        nice = int(Path(f"/proc/{busy}/stat").read_text().rsplit(")", 1)[1].split()[16])
        deadline = 100_000
        while nice != wanted and deadline:  # until the loop has set it
            nice = int(Path(f"/proc/{busy}/stat").read_text().rsplit(")", 1)[1].split()[16])
            deadline -= 1
    assert nice == wanted


def test_contended_runs_at_a_time_each_get_a_core_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two at a time on the two highest cores, each run with a busy process of its own there;
    the runs come back in index order with their own seeds, whichever ended first."""
    monkeypatch.setattr(determinism, "check_command", fake_check("seeded"))
    monkeypatch.setattr(determinism, "usable_cores", lambda: [0, 1, 2])
    pinned: list[tuple[int, int]] = []
    monkeypatch.setattr(determinism, "_pin", lambda pid, core: pinned.append((pid, core)))
    runs = determinism.contended_runs(range(1, 5), [], tmp_path, first_seed=12, jobs=2)
    assert [(run.index, run.seed, run.contention) for run in runs] == [
        (1, 13, True),
        (2, 14, True),
        (3, 15, True),
        (4, 16, True),
    ]
    assert all(
        run.files[DIGESTS].endswith(f"{run.seed}  reference/wobbly\n".encode()) for run in runs
    )
    # each run: its busy process, then the run itself, on one core; never core 0
    assert len(pinned) == 8
    assert {core for _, core in pinned} == {1, 2}
    assert not any(_alive(pid) for pid, _ in pinned)


def test_one_job_runs_the_contended_runs_one_after_another_on_the_highest_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(determinism, "check_command", fake_check("steady"))
    monkeypatch.setattr(determinism, "usable_cores", lambda: [0, 1, 2])
    pinned: list[int] = []
    monkeypatch.setattr(determinism, "_pin", lambda pid, core: pinned.append(core))
    runs = determinism.contended_runs(range(1, 3), [], tmp_path, jobs=1)
    assert [run.index for run in runs] == [1, 2]
    assert pinned == [2, 2, 2, 2]

"""Scenario throughput as ratios, so a busy or a slower machine does not turn the gate red.

A time in seconds says as much about the machine, and what else runs on it, as about the code.
Each figure here is a ratio of two CPU times (every thread of the process) taken in one process,
interleaved round by round, each side's fastest round against the other's, so load that comes
and goes does not count:

* ``units``: seconds per run of the bench scenario divided by seconds per *calibration*, a fixed
  piece of pure-Python work of the kind the harness does (copy, serialise and parse a JSON-shaped
  conversation).  Used for every target, against ``reports/baselines/throughput.json``.
* ``overhead``: the harness's time over the same tree driven straight through the SDK
  (``benchmarks/direct.py``).

The limits in the baseline file say where each comes from.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
LIMITS: Final = ROOT / "reports" / "baselines" / "throughput.json"
ROUNDS: Final = 11

_CONVERSATION: Final = [
    {
        "role": "user" if turn % 2 else "assistant",
        "content": [
            {"text": f"turn {turn}: " + "word " * 20},
            {"toolUse": {"toolUseId": f"t{turn}", "name": "clerk", "input": {"n": turn}}},
        ],
    }
    for turn in range(40)
]


def calibration() -> int:
    """A fixed amount of JSON-shaped work; returns a size so nothing is optimised away."""
    total = 0
    for _ in range(5):
        text = json.dumps(_copy(_CONVERSATION), sort_keys=True)
        total += len(json.loads(text))
    return total


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


def _seconds(work: Callable[[], object]) -> float:
    """CPU seconds of this process, every thread counted: the SDK called synchronously runs its
    loop in a thread of its own, which a free second core would otherwise hide from a wall clock."""
    start = time.process_time()
    work()
    return time.process_time() - start


def fastest(
    work: Callable[[], object], against: Callable[[], object], rounds: int = ROUNDS
) -> tuple[float, float]:
    """(min time(work), min time(against)) in CPU seconds over ``rounds`` rounds that each time
    both.

    Load only ever adds time, so each side's fastest round is the closest to what it costs on a
    quiet machine; interleaving the rounds lets both sides meet the same quiet moments."""
    work()
    against()  # first-use costs (imports, caches) paid before measuring
    timed = [(_seconds(work), _seconds(against)) for _ in range(rounds)]
    return min(work_time for work_time, _ in timed), min(other for _, other in timed)


def ratio(work: Callable[[], object], against: Callable[[], object], rounds: int = ROUNDS) -> float:
    """min time(work) / min time(against), as ``fastest`` measures them."""
    work_time, other = fastest(work, against, rounds)
    return work_time / other


def limits() -> dict[str, Any]:
    return json.loads(LIMITS.read_text(encoding="utf-8"))  # type: ignore[no-any-return]

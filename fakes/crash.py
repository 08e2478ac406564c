"""Crash points: the process dying in the middle of a step, at a boundary the fakes can see.

A target's own code is opaque, but every session driven with the fakes passes three kinds of
boundary the harness controls: a model request being sent (the journal), a protected action
running (the ledger), and a write to storage (the store, or the SDK's session storage).  A
``CrashPlan`` counts them during a step and, when armed, raises ``SimulatedCrash`` at the chosen
one: a ``BaseException``, so no ``except Exception`` in the code under test can swallow it.
Some code does swallow it all the same (an SDK running tools as tasks whose failures nobody
collects), so from the crash on the plan is *dead*: every later boundary raises again, and no
model request, action or write gets through, as after a power cut.  What was written before the
crash stays written; nothing after it is.  Whatever the step returns after that is discarded
(the client never got a reply); ``fired`` says it happened.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

BOUNDARIES: Final[dict[str, str]] = {
    "model": "after a model request was sent, before its reply is used",
    "action": "right after a protected action ran, before anything else (any persist included)",
    "persist": "instead of a write to storage",
}


class SimulatedCrash(BaseException):
    """The process died here."""


class CrashPlan:
    def __init__(self) -> None:
        self.armed: tuple[str, int] | None = None
        self.reached_so_far: Counter[str] = Counter()
        self.fired: str | None = None  # where it crashed; then everything is dead

    def arm(self, boundary: str, occurrence: int) -> None:
        """Crash at the ``occurrence``-th (1-based) ``boundary`` from now on; counts restart."""
        if boundary not in BOUNDARIES:
            raise ValueError(f"unknown crash boundary {boundary!r}; known: {sorted(BOUNDARIES)}")
        self.reset()
        self.armed = (boundary, occurrence)

    def reset(self) -> None:
        """Disarm, come back to life (a new process), and count from zero."""
        self.armed = None
        self.fired = None
        self.reached_so_far = Counter()

    def alive(self) -> None:
        """Raise if the process already crashed (called before anything takes effect)."""
        if self.fired is not None:
            raise SimulatedCrash(f"the process is dead (crashed at {self.fired})")

    def reached(self, boundary: str) -> None:
        """A boundary was passed; crash if it is the armed one (or if dead already)."""
        self.alive()
        self.reached_so_far[boundary] += 1
        if self.armed == (boundary, self.reached_so_far[boundary]):
            self.armed = None
            self.fired = f"{boundary} #{self.reached_so_far[boundary]}"
            raise SimulatedCrash(f"crashed {BOUNDARIES[boundary]} ({self.fired})")

"""What a real restart costs: a scenario with a restart between every step run with
``--isolation fork`` against the same scenario run in-process, side by side in one run.

A real restart runs each stretch between restarts in a process forked from a server that
imported the SDK once (``harness.forking``), so most of its CPU is spent outside the harness's
own process: in the forked segments and in the server that forks them.  Both are counted.  The
server reaps every segment's process and reaps the rest before it exits, so once the server is
stopped all of it is in this process's ``resource.getrusage(RUSAGE_CHILDREN)``; what starting
the server cost (importing the SDK, its warm-up run) is taken off, as the server reports it when
it is ready: a server is started once per target and serves every run after, so that is not the
cost of a restart.

The two sides run in alternating rounds, and each side's CPU is added up over its rounds (the
children's can only be read for the whole block, once the server has stopped), so the ratio
compares the same number of runs of each under the same conditions: CPU time, not wall time,
so a busy machine slows both and the ratio keeps.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

from harness import forking
from harness.commands.inputs import isolated
from harness.runner import run_scenario
from harness.targets import registry
from scenarios.loading import REGRESSIONS, load_scenario

SCENARIO: Final = "restart-anywhere"  # a restart before and after every step: 8 of them
ROUNDS: Final = 2  # each round costs 0.1 (reference) to 5 (openai-agents) CPU-s: CI is over budget


@dataclass(frozen=True)
class RestartCost:
    """CPU seconds per run of the scenario (and its restart-free control), each way."""

    in_process: float
    fork_parent: float  # the harness's own process, which hands each step to a segment
    fork_children: float  # the segments' processes and the server, less its start

    @property
    def fork(self) -> float:
        return self.fork_parent + self.fork_children

    @property
    def ratio(self) -> float:
        return self.fork / self.in_process


def restart_cost(name: str, rounds: int = ROUNDS) -> RestartCost:
    """``SCENARIO`` on target ``name``, in-process and with real restarts, ``rounds`` times
    each, alternating; CPU seconds per run of each."""
    scenario = load_scenario(REGRESSIONS / f"{SCENARIO}.yaml")
    target = registry.get(name)
    forked = isolated(name, target, "fork")
    run_scenario(target, scenario, SCENARIO)  # first-use costs paid before measuring
    forking.stop_server(name)  # a fresh server: its CPU so far is its start alone
    children_before = forking.children_cpu()
    server = forking.server(name)
    run_scenario(forked, scenario, SCENARIO)  # the harness side's first-use costs
    in_process = fork_parent = 0.0
    for _ in range(rounds):
        start = time.process_time()
        run_scenario(target, scenario, SCENARIO)
        middle = time.process_time()
        run_scenario(forked, scenario, SCENARIO)
        in_process += middle - start
        fork_parent += time.process_time() - middle
    forking.stop_server(name)
    # the warm-up fork run's children are in this figure: counted as one more round
    children = forking.children_cpu() - children_before - server.startup_cpu
    return RestartCost(
        in_process=in_process / rounds,
        fork_parent=fork_parent / rounds,
        fork_children=children / (rounds + 1),
    )

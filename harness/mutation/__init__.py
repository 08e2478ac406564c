"""Mutation testing: ``python -m harness mutate`` and ``python -m harness mutate --sdk NAME``.

Two runs of mutmut 3 share this package.  The reference's round trip (``round_trip``) mutates
naming, routing, the continuation store and the agent-as-tool resume path and scores each
direction (``round_trip_report``).  The SDK run (``sdk_run``) mutates a real SDK's agent-as-tool
module in scratch trees (``sdk``: fetching its tests, preparing the trees) and joins what its
own suite and the harness's kill; survivors are classified from syntax trees (``classes``) and
reported as three kill rates (``sdk_report``).

Both runs start mutmut and read its results the same way (``mutants``), read the functions of a
source file the same way (``source``), keep reviewed survivors in ``mutation/*.yaml`` checked
the same way (``reviews``) and write their markdown from the same pieces (``markdown``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent.parent

"""Hypothesis settings profiles (ci, dev, deep, mutmut), and which one a run loads.

``ci`` is derandomized and bounded (the same examples every run), ``dev`` is a local default,
``deep`` is a long campaign, and ``mutmut`` is the profile for runs under mutation testing.
Chosen with ``HYPOTHESIS_PROFILE`` (or ``python -m harness check --profile``).

Every profile names its parent.  A profile registered without one inherits whichever profile is
active when it is registered (hypothesis loads its own "ci" profile by itself when ``CI`` is set),
so the same name would mean different settings on different machines.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hypothesis import HealthCheck, settings

PROFILES = ("ci", "dev", "deep", "mutmut")
# scenario strategies consult the oracle while drawing: slower than hypothesis expects
SLOW_STRATEGIES = [HealthCheck.too_slow, HealthCheck.data_too_large]


def register_profiles() -> None:
    # every profile builds on hypothesis' own default, never on its built-in "ci" profile (which
    # exists only where CI is set): the ci sample must be the same on every machine
    default = settings.get_profile("default")
    settings.register_profile(
        "ci",
        parent=default,
        derandomize=True,
        max_examples=200,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=SLOW_STRATEGIES,
    )
    settings.register_profile(
        "dev",
        parent=default,
        max_examples=200,
        deadline=None,
        suppress_health_check=SLOW_STRATEGIES,
    )
    settings.register_profile(
        "deep",
        parent=default,
        max_examples=5000,
        deadline=None,
        suppress_health_check=SLOW_STRATEGIES,
    )
    settings.register_profile(
        "mutmut",
        parent=default,
        derandomize=True,
        deadline=None,
        max_examples=30,
        suppress_health_check=[HealthCheck.differing_executors, *SLOW_STRATEGIES],
        database=None,
    )


def profile_name(environ: Mapping[str, str]) -> str:
    """mutmut's profile under mutmut, else ``HYPOTHESIS_PROFILE``, else "ci" on CI, else "dev"."""
    if "MUTANT_UNDER_TEST" in environ:
        return "mutmut"
    if environ.get("HYPOTHESIS_PROFILE"):
        return environ["HYPOTHESIS_PROFILE"]
    if "CI" in environ:
        return "ci"
    return "dev"


def load_profile(environ: Mapping[str, str] = os.environ) -> str:
    register_profiles()
    name = profile_name(environ)
    settings.load_profile(name)
    return name

"""Hypothesis settings profiles (ci, dev, deep, mutmut), and which one a run loads.

``ci`` is derandomized and bounded (the same examples every run), ``dev`` is a local default,
``deep`` is a long campaign, and ``mutmut`` is the profile for runs under mutation testing.
Chosen with ``HYPOTHESIS_PROFILE`` (or ``python -m harness check --profile``).

Where failures are kept (``HYPOTHESIS_DATABASE``): the dev and deep profiles save each failing
example in hypothesis' example database and try it first on the next run.  By default that is a
folder on this machine (``.hypothesis/``); ``dir:PATH`` makes it a folder every machine can reach
(a shared mount: ``DirectoryBasedExampleDatabase``) and ``redis://HOST:PORT`` a Redis server
(``RedisExampleDatabase``, with ``pip install 'hypothesis[redis]'``), so a failure found by one
process, on a worker or a nightly deep run, is replayed first by plain ``pytest`` anywhere else.
The ci and mutmut profiles are derandomized and keep no database.

Every profile names its parent.  A profile registered without one inherits whichever profile is
active when it is registered (hypothesis loads its own "ci" profile by itself when ``CI`` is set),
so the same name would mean different settings on different machines.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

PROFILES = ("ci", "dev", "deep", "mutmut")
DATABASE = "HYPOTHESIS_DATABASE"  # dir:PATH or redis://HOST:PORT[/DB]; unset: this machine's
FOLDER = "dir:"  # dir:PATH, a folder every machine can reach
REDIS = ("redis://", "rediss://", "unix://")
# scenario strategies consult the oracle while drawing: slower than hypothesis expects
SLOW_STRATEGIES = [HealthCheck.too_slow, HealthCheck.data_too_large]


class DatabaseChoiceError(ValueError):
    """``HYPOTHESIS_DATABASE`` names no database that can be had here; the message is one line."""


def example_database(environ: Mapping[str, str]) -> ExampleDatabase | None:
    """The database ``HYPOTHESIS_DATABASE`` names, or None for hypothesis' own local one."""
    chosen = environ.get(DATABASE, "").strip()
    if not chosen:
        return None
    if chosen.startswith(FOLDER) and chosen.removeprefix(FOLDER):
        return DirectoryBasedExampleDatabase(chosen.removeprefix(FOLDER))
    if chosen.startswith(REDIS):
        try:
            from hypothesis.extra.redis import RedisExampleDatabase
            from redis import Redis
        except ImportError as missing:
            raise DatabaseChoiceError(
                f"{DATABASE}={chosen}: needs the redis client (pip install 'hypothesis[redis]'): "
                f"{type(missing).__name__}: {missing}"
            ) from None
        return RedisExampleDatabase(Redis.from_url(chosen))
    raise DatabaseChoiceError(
        f"{DATABASE}={chosen}: expected dir:PATH (a shared folder) or redis://HOST:PORT"
    )


def register_profiles(database: ExampleDatabase | None = None) -> None:
    """Register every profile; dev and deep keep their failures in ``database`` (None:
    hypothesis' own local one)."""
    # every profile builds on hypothesis' own default, never on its built-in "ci" profile (which
    # exists only where CI is set): the ci sample must be the same on every machine
    default = settings.get_profile("default")
    shared = {} if database is None else {"database": database}
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
        **shared,
    )
    settings.register_profile(
        "deep",
        parent=default,
        max_examples=5000,
        deadline=None,
        suppress_health_check=SLOW_STRATEGIES,
        **shared,
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
    """Load the profile ``environ`` chooses, with the database it names
    (``DatabaseChoiceError``); its name."""
    register_profiles(example_database(environ))
    name = profile_name(environ)
    settings.load_profile(name)
    return name

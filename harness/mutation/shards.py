"""SDK mutation in shards: ``mutate --sdk NAME --shard I/N`` runs the mutants of shard I only and
writes a shard result; ``mutate --merge`` joins the shard results of one campaign into the
report a single run writes, byte for byte.

A mutant's shard is a function of its name alone (a SHA-256 of the name, modulo N): the same
whatever order anything runs in, on any machine, and every mutant is in exactly one shard.  A
single run is the one shard 1/1.  A shard result holds the rows ``sdk_report.observe`` gives
(before any review: reviews are applied by the merge, so a review can be edited and the shards
merged again), and the names of all the campaign's mutants, so that a merge can tell a missing
shard or mutant from an overlapping one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.mutation.classify import BEHAVIOUR, MESSAGE_TEXT
from harness.mutation.mutants import MutationError
from harness.mutation.sdk import SUITES
from harness.mutation.sdk_report import HEADER, Header, Row

SPEC: Final = re.compile(r"([1-9][0-9]*)/([1-9][0-9]*)")
CAMPAIGN: Final = (*HEADER, "unmutated", "all_mutants")  # what every shard of a campaign shares
ROW: Final = ("mutant", "function", *SUITES, "syntax")


@dataclass(frozen=True, order=True)
class Shard:
    index: int  # 1 ... count
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, mutant: str) -> bool:
        return shard_of(mutant, self.count) == self.index

    def file_name(self, sdk: str) -> str:
        return f"mutation-sdk-{sdk}-shard-{self.index}-of-{self.count}.json"


WHOLE: Final = Shard(1, 1)


def parse_shard(text: str) -> Shard:
    """``I/N`` with whole numbers 1 <= I <= N; bad input is one line naming ``--shard``."""
    match = SPEC.fullmatch(text)
    if match is None or int(match[1]) > int(match[2]):
        raise MutationError(
            f"--shard: expected I/N, whole numbers with 1 <= I <= N (such as 2/4); got {text!r}"
        )
    return Shard(int(match[1]), int(match[2]))


def shard_of(mutant: str, count: int) -> int:
    """The shard (1 ... count) of a mutant, from its full name alone."""
    digest = hashlib.sha256(mutant.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def shard_result(
    header: Header,
    unmutated: list[str],
    all_mutants: Sequence[str],
    shard: Shard,
    observed: list[Row],
    suites_run: Sequence[str],
) -> dict[str, Any]:
    """What a shard's run writes: its rows, the campaign it belongs to, and which suites this
    run itself ran (a suite not rerun had its tree's last results read back)."""
    return {
        "shard": str(shard),
        **{field: header[field] for field in HEADER},
        "unmutated": list(unmutated),
        "all_mutants": sorted(all_mutants),
        "suites_run": [suite for suite in SUITES if suite in suites_run],
        "mutants": sorted(observed, key=lambda row: str(row["mutant"])),
    }


def read_shard(path: Path) -> dict[str, Any]:
    """A shard result from its file; anything else is one line naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as problem:
        reason = problem.strerror if isinstance(problem, OSError) else "not JSON"
        raise MutationError(
            f"{path}: {reason}; expected a shard result of mutate --shard"
        ) from None
    if not isinstance(data, dict):
        raise MutationError(f"{path}: expected a shard result of mutate --shard (a mapping)")
    for field in ("shard", *CAMPAIGN, "suites_run", "mutants"):
        if field not in data:
            raise MutationError(f"{path}: no {field}; expected a shard result of mutate --shard")
    for field in ("shard", *HEADER):
        if not isinstance(data[field], str):
            raise MutationError(f"{path}: {field}: expected text")
    try:
        parse_shard(data["shard"])
    except MutationError:
        raise MutationError(
            f"{path}: shard: expected I/N with 1 <= I <= N; got {data['shard']!r}"
        ) from None
    for field in ("unmutated", "all_mutants", "suites_run"):
        if not isinstance(data[field], list) or not all(isinstance(n, str) for n in data[field]):
            raise MutationError(f"{path}: {field}: expected a list of text")
    if not set(data["suites_run"]) <= set(SUITES):
        raise MutationError(f"{path}: suites_run: expected some of {', '.join(SUITES)}")
    if not isinstance(data["mutants"], list):
        raise MutationError(f"{path}: mutants: expected a list of rows")
    for index, row in enumerate(data["mutants"]):
        if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in ROW):
            fields = ", ".join(ROW)
            raise MutationError(f"{path}: mutants[{index}]: expected a row with {fields}")
        if not isinstance(row.get("diff", ""), str):
            raise MutationError(f"{path}: mutants[{index}].diff: expected text")
        if row["syntax"] not in (BEHAVIOUR, MESSAGE_TEXT):
            raise MutationError(
                f"{path}: mutants[{index}].syntax: expected {BEHAVIOUR} or {MESSAGE_TEXT}"
            )
    return data


@dataclass(frozen=True)
class Merged:
    header: dict[str, str]
    unmutated: list[str]
    observed: list[Row]
    stitched: Path | None  # the first shard that did not run both suites itself, if one did not


def merge(shards: Sequence[tuple[Path, dict[str, Any]]]) -> Merged:
    """The rows of every mutant of one campaign, from each of its shards once; an overlapping,
    missing or foreign shard, or a mutant in the wrong shard, is one line naming the file."""
    if not shards:
        raise MutationError("--merge: expected the shard results of one campaign")
    (first_path, first), *_ = shards
    count = parse_shard(str(first["shard"])).count
    seen: dict[int, Path] = {}
    observed: list[Row] = []
    for path, data in shards:
        shard = parse_shard(str(data["shard"]))
        for field in CAMPAIGN:
            if data[field] != first[field]:
                raise MutationError(
                    f"{path}: its {field} differs from {first_path}'s; expected the shards of one "
                    "campaign (one SDK release, one mutmut, one mutant list)"
                )
        if shard.count != count:
            raise MutationError(f"{path}: shard {shard}, but {first_path} is of {count} shards")
        if shard.index in seen:
            raise MutationError(
                f"{path}: shard {shard} again (also {seen[shard.index]}); expected each once"
            )
        seen[shard.index] = path
        names = [str(row["mutant"]) for row in data["mutants"]]
        wanted = [name for name in first["all_mutants"] if shard.holds(name)]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise MutationError(f"{path}: mutant {twice[0]} twice; expected each once")
        stray = sorted(set(names) - set(wanted))
        if stray:
            raise MutationError(f"{path}: mutant {stray[0]} is not one of shard {shard}'s")
        lacking = sorted(set(wanted) - set(names))
        if lacking:
            raise MutationError(f"{path}: shard {shard} lacks mutant {lacking[0]}")
        observed += data["mutants"]
    missing = [str(Shard(index, count)) for index in range(1, count + 1) if index not in seen]
    if missing:
        raise MutationError(
            f"--merge: shard {', '.join(missing)} missing; expected every shard of {count}"
        )
    return Merged(
        header={field: str(first[field]) for field in HEADER},
        unmutated=list(first["unmutated"]),
        observed=sorted(observed, key=lambda row: str(row["mutant"])),
        stitched=next(
            (path for path, data in shards if list(data["suites_run"]) != list(SUITES)), None
        ),
    )

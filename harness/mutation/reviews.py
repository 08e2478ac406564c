"""Reviewed survivors, kept in ``mutation/*.yaml``: a list of mappings, each naming a mutant
and the reason a reviewer can check that it cannot change behaviour (or, for the SDK run, that
it only changes a message's text)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from harness.mutation.mutants import MutationError

Review = dict[str, Any]


def no_check(where: str, review: Review) -> None:
    pass


def read_reviews(path: Path, check: Callable[[str, Review], None] = no_check) -> list[Review]:
    """The reviews in ``path`` (none if there is no file), each a mapping with ``mutant`` and a
    ``reason`` of ten characters or more; ``check`` sees each one (``where`` is its place, for
    the message) before its reason is checked."""
    if not path.exists():
        return []
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    reviews: list[Review] = []
    for index, review in enumerate(data if isinstance(data, list) else [data]):
        where = f"{path}: [{index}]"
        if not isinstance(review, dict) or not {"mutant", "reason"} <= set(review):
            raise MutationError(f"{where}: expected a mapping with mutant and reason")
        check(where, review)
        if len(str(review["reason"]).strip()) < 10:
            raise MutationError(f"{where}.reason: a reason a reviewer can check")
        reviews.append(review)
    return reviews

"""The small strategies the generators draw from inside their composite draws, one object each.

A composite strategy that calls ``st.integers(1, 3)`` or ``st.sampled_from(labels)`` on every
draw builds a new strategy object each time, and hypothesis validates a strategy (works out
whether it can be empty, whether its values can be reused) the first time it is drawn from: in
the ci sample's generation that validation cost a third of the time, more than the draws
themselves.  These functions hand out one strategy object per argument list, so each is validated
once.  A strategy is a description of what to draw, with no state of its own, so the same draws
come out, byte for byte (``tests/test_corpus.py`` holds the committed sample to what ``generate``
writes).
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from typing import Final, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")

BOOLEANS: Final = st.booleans()


@functools.cache
def integers(low: int, high: int) -> st.SearchStrategy[int]:
    """``st.integers(low, high)``."""
    return st.integers(low, high)


def sampled(values: Sequence[T]) -> st.SearchStrategy[T]:
    """``st.sampled_from(values)``; one object per tuple of values when they can be hashed."""
    chosen = tuple(values)
    try:
        return _sampled(_typed(chosen))  # type: ignore[return-value]
    except TypeError:  # unhashable values (a tree's agents): a strategy of their own
        return st.sampled_from(chosen)


def _typed(values: tuple[object, ...]) -> tuple[tuple[type, object], ...]:
    """The values with their types, so that equal values of other types (1 and True) never
    share a strategy."""
    return tuple((type(value), value) for value in values)


@functools.lru_cache(maxsize=4096)
def _sampled(typed: tuple[tuple[type, Hashable], ...]) -> st.SearchStrategy[Hashable]:
    return st.sampled_from(tuple(value for _, value in typed))


def lists_of(
    values: Sequence[T],
    *,
    min_size: int = 0,
    max_size: int | None = None,
    unique: bool = False,
) -> st.SearchStrategy[list[T]]:
    """``st.lists(st.sampled_from(values), ...)``; one object per argument list when the values
    can be hashed."""
    chosen = tuple(values)
    try:
        return _lists_of(_typed(chosen), min_size, max_size, unique)  # type: ignore[return-value]
    except TypeError:
        return st.lists(
            st.sampled_from(chosen), min_size=min_size, max_size=max_size, unique=unique
        )


@functools.lru_cache(maxsize=4096)
def _lists_of(
    typed: tuple[tuple[type, Hashable], ...], min_size: int, max_size: int | None, unique: bool
) -> st.SearchStrategy[list[Hashable]]:
    values = tuple(value for _, value in typed)
    return st.lists(st.sampled_from(values), min_size=min_size, max_size=max_size, unique=unique)

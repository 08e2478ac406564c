"""What the LangGraph adapter needs that older LangGraph releases spell differently, in one place.

The adapter is written against the pinned release (tox.ini's ``[frameworks]``); the backtest
(``python -m harness backtest``) runs it on the older releases a catalogued upstream bug lived in.
Each shim below names the release that changed the thing it bridges, so it can go once no
catalogued bug needs a release before that one (docs/adapters.md lists them).
"""

from __future__ import annotations

from typing import Any, Final


def is_invalid_resume(error: BaseException) -> bool:
    """Whether LangGraph raised ``error`` because a resume value did not match the interrupt's
    ``response_schema`` (1.2.15 added the check and ``langgraph.errors.is_invalid_resume``).
    Before 1.2.15 no resume value is ever invalid: every failure is the task's own."""
    try:
        from langgraph.errors import is_invalid_resume as marked
    except ImportError:  # LangGraph before 1.2.15
        return False
    answer: Any = marked(error)
    return answer is True


# what the pinned release runs with (tox.ini's [frameworks]); an older LangGraph accepts them too
CHECKPOINT_SQLITE: Final = "langgraph-checkpoint-sqlite==3.1.2"
LANGCHAIN_CORE: Final = "langchain-core==1.8.3"
OLDEST_SUPPORTED: Final = "1.0.0"  # create_react_agent's and Send's signatures the adapter calls


def requirements(release: str) -> tuple[str, ...]:
    """What the backtest installs for LangGraph ``release``: the release, and the checkpointer
    and core the pinned release runs with (both accept every 1.x)."""
    return (f"langgraph=={release}", CHECKPOINT_SQLITE, LANGCHAIN_CORE)

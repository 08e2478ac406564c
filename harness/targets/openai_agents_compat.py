"""What the openai-agents adapter needs that older openai-agents releases need differently, in
one place.

The adapter drives every release through the same public API (``Agent.as_tool``,
``needs_approval``, ``RunState.to_json``/``from_json``); what differs is the ``openai`` client an
older release can run with.  openai-agents declares only a floor and a major (``openai<3,>=2.19``
for 0.8.x), and the newest ``openai`` 2.x has fields an older release does not fill
(``InputTokensDetails.cache_write_tokens`` is required there, and 0.8.4 builds the model's usage
without it, so every model response fails validation).  So an older release gets the ``openai``
its own floor names, the client it was released against.  docs/adapters.md lists the shims.
"""

from __future__ import annotations

from typing import Final

# (first release, the openai floor it and the releases after it declare), oldest first; from
# 0.21 on the floor is openai 3.0, which the newest 3.x honours
OPENAI_FLOORS: Final = (
    ((0, 8), "2.19.0"),
    ((0, 12), "2.26.0"),
    ((0, 19), "2.45.0"),
    ((0, 21), None),
)
OLDEST_SUPPORTED: Final = "0.8.0"  # RunState's to_json/from_json with nested agent-tool state


def requirements(release: str) -> tuple[str, ...]:
    """What the backtest installs for openai-agents ``release``: the release, and for one that
    takes openai 2.x, the openai of its floor."""
    version = tuple(int(part) for part in release.split("."))
    floor = None
    for first, openai in OPENAI_FLOORS:
        if version >= first:
            floor = openai
    own = (f"openai-agents=={release}",)
    return own if floor is None else (*own, f"openai=={floor}")

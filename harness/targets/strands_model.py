"""The scripted model (``fakes.model``) behind the Strands Agents SDK's model interface.

A ``strands.models.Model`` subclass that streams the SDK's own event shapes (text and citation
deltas, tool-use blocks, a stop reason) and reads and writes ``model_state`` as a stateful
provider does.  It is built on first use, so the harness imports without the SDK installed.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from fakes.model import Answer, ProviderError, ScriptedModel
from harness.targets.fake_model import conversation_of


@functools.cache
def model_class() -> type:
    """The scripted model as a ``strands.models.Model`` subclass, built on first use so this
    module imports without the SDK installed.

    Built once per process: a class definition holds no run's state (every build of a tree makes
    its own instances), and defining it again for every session cost up to a tenth of a short
    scenario's run."""
    from strands.models import Model

    class ScriptedStrandsModel(Model):  # type: ignore[misc]
        """The scripted model core behind the SDK's real model interface."""

        def __init__(
            self, core: ScriptedModel, *, outage: str | None = None, record: bool = False
        ) -> None:
            self.core = core
            self.config: dict[str, Any] = {"model_id": f"scripted:{core.agent}"}
            # a provider that is down refuses every request with this message
            self.outage = outage
            # with ``record``: what each request carried (messages, tool specs), as the provider
            # received it (off for scenario runs, which observe only what a user sees)
            self.record = record
            self.requests: list[dict[str, Any]] = []

        def update_config(self, **model_config: Any) -> None:
            self.config.update(model_config)

        def get_config(self) -> Any:
            return self.config

        def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the scripted model has no structured output")

        async def stream(
            self,
            messages: Any,
            tool_specs: Any = None,
            system_prompt: Any = None,
            **kwargs: Any,
        ) -> AsyncIterator[dict[str, Any]]:
            if self.record:
                self.requests.append(
                    copy.deepcopy({"messages": messages, "tool_specs": tool_specs or []})
                )
            if self.outage is not None:
                raise ProviderError(self.outage)
            model_state = kwargs.get("model_state")
            if model_state is None:
                model_state = {}
            scripted = self.core.next_turn(conversation_of(messages), len(messages), model_state)
            yield {"messageStart": {"role": "assistant"}}
            if isinstance(scripted.turn, Answer):
                text = f"{scripted.marker} {scripted.turn.text}"
                for event in _text_block(text, scripted.turn.cites):
                    yield event
                for paragraph in scripted.turn.more:
                    for event in _text_block(paragraph):
                        yield event
                yield {"messageStop": {"stopReason": "end_turn"}}
                return
            for event in _text_block(scripted.marker):
                yield event
            for call in scripted.turn.calls:
                yield {
                    "contentBlockStart": {
                        "start": {"toolUse": {"toolUseId": call.tool_use_id, "name": call.tool}}
                    }
                }
                payload = call.raw_input
                if payload is None:
                    payload = json.dumps(dict(call.input))
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": payload}}}}
                yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}

    return ScriptedStrandsModel


def _text_block(text: str, cites: Sequence[str] = ()) -> list[dict[str, Any]]:
    """One text block; each cited source streams as a citation delta (the SDK then builds a
    ``citationsContent`` block around the text)."""
    citations = [
        {
            "contentBlockDelta": {
                "delta": {
                    "citation": {
                        "title": source,
                        "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 1}},
                        "sourceContent": [{"text": text}],
                    }
                }
            }
        }
        for source in cites
    ]
    return [
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": text}}},
        *citations,
        {"contentBlockStop": {}},
    ]

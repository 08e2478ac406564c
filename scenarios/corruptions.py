"""The corruptions: the damage a corrupt step does to a stored continuation, by name (the
vocabulary the fakes read to apply it, and the generators to draw it)."""

from __future__ import annotations

from typing import Final, Literal, get_args

# the damage a corrupt step does to a stored continuation (fakes.corruption applies it): what
# each target words in its own stored shape, then what any stored JSON document can suffer
FormatSpecificCorruption = Literal[
    "schema_version_other",
    "schema_version_missing",
    "schema_version_newer",
    "payload_missing",
    "field_missing",
    "type_swap",
    "previous_shape",
    "conversation_manager_other",
]
GenericCorruption = Literal[
    "truncated",
    "deleted",
    "foreign",
    "key_deleted",
    "value_swapped",
    "document_truncated",
]
Corruption = Literal[FormatSpecificCorruption, GenericCorruption]
CORRUPTIONS: Final[tuple[str, ...]] = get_args(Corruption)
# a target that can take a damage has the capability corruption:<kind>
CORRUPTION_CAPABILITY: Final = "corruption:"
DESCRIPTIONS: Final[dict[str, str]] = {
    "schema_version_other": "the schema version is one the code does not know",
    "schema_version_missing": "the schema version field is gone",
    "schema_version_newer": "the schema version is the next one after the code's",
    "payload_missing": "the turn's payload (the agent's data) is gone",
    "field_missing": "a required field inside the payload is gone",
    "type_swap": "a list inside the payload holds a string instead",
    "previous_shape": "the turn is stored in the previous revision's shape",
    "conversation_manager_other": "the turn was stored for another conversation-manager type",
    "truncated": "the stored turn is cut in half (its JSON text, kept as a string)",
    "deleted": "the stored turn is gone",
    "foreign": "the stored turn is another call's",
    "key_deleted": "one key (or list item) of the stored turn is gone, at any depth",
    "value_swapped": "one value of the stored turn has another JSON type, at any depth",
    "document_truncated": "the stored document holding the turn is cut short (at a byte)",
}

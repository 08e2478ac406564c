"""The class of an SDK mutant: ``message text`` (the mutation changes only what a log call or a
raised exception says, found by comparing the mutant's syntax tree with the original's),
``equivalent`` (reviewed, with a reason, in ``mutation/<sdk>-<version>.yaml``: no run of the
SDK can tell it from the original), ``unreachable`` (reviewed likewise: what it changes only
matters on a path the SDK's public API never takes, such as the default of an argument only
the SDK's own code passes), or ``behaviour`` (everything else).  A review may also mark a
mutant ``message text`` the syntax rule misses.  A review is for a survivor only: a review on a
mutant a suite killed is refused.
"""

from __future__ import annotations

import ast
import difflib
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

from harness.mutation.mutants import MutationError, short_name
from harness.mutation.reviews import Review, read_reviews
from harness.mutation.source import Function, functions_of

BEHAVIOUR: Final = "behaviour"
MESSAGE_TEXT: Final = "message text"
EQUIVALENT: Final = "equivalent"
UNREACHABLE: Final = "unreachable"
REVIEWED_CLASSES: Final = (EQUIVALENT, UNREACHABLE, MESSAGE_TEXT)
LOG_METHODS: Final = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
)


def mutant_functions(tree: Path, module_path: str) -> dict[str, Function]:
    """Every function of mutmut's rewritten module (originals and mutants) by mangled name."""
    path = tree / "mutants" / module_path
    if not path.exists():
        raise MutationError(f"{path}: mutmut wrote no mutants")
    parsed = ast.parse(path.read_text(encoding="utf-8"))
    return {function.name: function for _, function in functions_of(parsed)}


def _original_name(mutant: str) -> str:
    return short_name(mutant).rsplit("__mutmut_", 1)[0] + "__mutmut_orig"


def diff(functions: dict[str, Function], mutant: str) -> str:
    """The mutant against the original, as a unified diff of their unparsed source."""
    original = functions[_original_name(mutant)]
    changed = functions[short_name(mutant)]
    before = ast.unparse(original).replace(original.name, "_").splitlines()
    after = ast.unparse(changed).replace(changed.name, "_").splitlines()
    lines = difflib.unified_diff(before, after, "original", "mutant", n=1, lineterm="")
    return "\n".join(lines)


Pair = tuple[ast.AST, ast.AST]


def where_changed(original: ast.AST, mutant: ast.AST) -> list[Pair] | None:
    """The (original, mutant) node pairs from the root down to the smallest node the mutant
    changed (None when the two are the same)."""
    here = (original, mutant)
    if type(original) is not type(mutant):
        return [here]
    for name in original._fields:
        if name == "name" and isinstance(original, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        before, after = getattr(original, name, None), getattr(mutant, name, None)
        pairs: list[tuple[Any, Any]]
        if isinstance(before, list) and isinstance(after, list):
            if len(before) != len(after):
                return [here]
            pairs = list(zip(before, after, strict=True))
        else:
            pairs = [(before, after)]
        for left, right in pairs:
            if isinstance(left, ast.AST) and isinstance(right, ast.AST):
                inner = where_changed(left, right)
                if inner is not None:
                    return [here, *inner]
            elif left != right:
                return [here]
    return None


def is_message_text(pairs: list[Pair]) -> bool:
    """Whether a change at the end of ``chain`` only alters what a message says: it sits in a
    log call's arguments (or drops some), in the arguments of the exception a ``raise`` builds,
    or it is a string literal inside a text block (a ``"text"`` value or a ``text=`` argument,
    what a model or a human reads), changed into another string."""
    chain = [original for original, _ in pairs]
    for index, node in enumerate(chain):
        below = chain[index + 1] if index + 1 < len(chain) else None
        if isinstance(node, ast.Call) and below is not node.func:
            if _is_log_call(node):
                return True
            if below is not None and index > 0 and isinstance(chain[index - 1], ast.Raise):
                return True
    return all(map(_is_literal, pairs[-1])) and any(
        _is_text_field(node, below) for node, below in pairwise(chain)
    )


def _is_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_text_field(node: ast.AST, below: ast.AST) -> bool:
    if isinstance(node, ast.keyword):
        return node.arg == "text"
    if isinstance(node, ast.Dict):
        keys = [
            key.value if isinstance(key, ast.Constant) else None
            for key, value in zip(node.keys, node.values, strict=True)
            if value is below
        ]
        return keys == ["text"]
    return False


def _is_log_call(call: ast.Call) -> bool:
    function = call.func
    if not isinstance(function, ast.Attribute) or function.attr not in LOG_METHODS:
        return False
    owner = ast.unparse(function.value).lower()
    return owner.endswith(("logger", "log", "logging"))


Reviewed = dict[str, tuple[str, str]]  # mutant name -> (class, reason)


def _known_class(where: str, review: Review) -> None:
    if review.get("class", EQUIVALENT) not in REVIEWED_CLASSES:
        raise MutationError(f"{where}.class: expected equivalent, unreachable or message text")


def load_reviewed(path: Path) -> Reviewed:
    """The reviewed survivors: each a mutant (its short name), a class (``equivalent``,
    ``unreachable`` or ``message text``) and the reason a reviewer can check."""
    return {
        str(review["mutant"]): (
            review.get("class", EQUIVALENT),
            " ".join(str(review["reason"]).split()),
        )
        for review in read_reviews(path, _known_class)
    }


def classify(functions: dict[str, Function], mutant: str, reviewed: Reviewed) -> str:
    """The mutant's class: its review's, else ``syntax_class``."""
    if short_name(mutant) in reviewed:
        return reviewed[short_name(mutant)][0]
    return syntax_class(functions, mutant)


def syntax_class(functions: dict[str, Function], mutant: str) -> str:
    """``message text`` when the syntax trees show the mutant changes only what a message says,
    else ``behaviour``."""
    original = functions[_original_name(mutant)]
    pairs = where_changed(original, functions[short_name(mutant)])
    if pairs is not None and is_message_text(pairs):
        return MESSAGE_TEXT
    return BEHAVIOUR

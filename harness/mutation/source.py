"""The functions of Python source, by qualified name ("Class.method"), read from its syntax tree:
the functions a change touched, the decorators to drop before mutating, the mutants mutmut
wrote."""

from __future__ import annotations

import ast
from pathlib import Path

Function = ast.FunctionDef | ast.AsyncFunctionDef


def functions_of(tree: ast.AST, prefix: str = "") -> list[tuple[str, Function]]:
    """Every function and method in a syntax tree, by qualified name ("Class.method")."""
    found: list[tuple[str, Function]] = []
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((prefix + child.name, child))
        elif isinstance(child, ast.ClassDef):
            found.extend(functions_of(child, f"{prefix}{child.name}."))
    return found


def function_lines(path: Path) -> dict[str, tuple[int, int]]:
    """The first and last line of every function in a file, by qualified name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        name: (function.lineno, function.end_lineno or function.lineno)
        for name, function in functions_of(tree)
    }

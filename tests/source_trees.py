"""The syntax of this checkout's own Python files, each file parsed once in a test process: a dozen
tests read the trees of pbem/ and engine/ (their imports, t() calls, private names, sys.modules),
and each parse of pbem/ is half a second of CPU. A tree is only read (ast.walk), never changed."""

from __future__ import annotations

import ast
import functools
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sources(*folders: str) -> list[Path]:
    """The .py files under each folder of the checkout (pbem/ when none is named), sorted."""
    return [path for folder in folders or ("pbem",) for path in sorted((ROOT / folder).rglob("*.py"))]


def tree(path: Path) -> ast.Module:
    """The file's syntax tree."""
    return _tree(path.resolve())


def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the file's tree, in ast.walk's order."""
    return _nodes(path.resolve())


@functools.cache
def _tree(path: Path) -> ast.Module:
    with warnings.catch_warnings():  # a module's own warnings (an escape in a string) are its tests' to report
        warnings.simplefilter("ignore")
        return ast.parse(path.read_text(encoding="utf-8"), str(path))


@functools.cache
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(_tree(path)))

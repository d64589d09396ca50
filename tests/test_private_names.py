"""No module of pbem reaches into another's private names: `x._name`, where x is not self or
cls, is allowed only for a name the same module defines (its own class's, a helper's).

A module that needs what another keeps private asks for it through a declared interface (the
timekeeper works on pbem.host.change.Change, not on the referee's `_state` or `_publish`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from source_trees import sources, tree

ROOT = Path(__file__).resolve().parent.parent / "pbem"
# Underscored names that are their owners' public API (namedtuple rows, os._exit after fork).
PUBLIC = {"_mapping", "_asdict", "_fields", "_replace", "_make", "_exit"}


def _own_names(tree: ast.AST) -> set[str]:
    """Every name a module defines: functions, classes, and names or attributes it assigns."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.alias) and node.asname is None and node.name.startswith("_"):
            out.add(node.name)
    return out


def reaching(tree: ast.Module, rel: str) -> list[str]:
    """`x._name` uses in module `rel` (its syntax `tree`) of a private name another module owns."""
    own = _own_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
            continue
        if node.attr in PUBLIC or node.attr in own:
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        found.append(ast.unparse(node))
    return [f"{rel}:{name}" for name in found]


def test_the_scan_finds_a_reach_into_another_modules_private_name() -> None:
    source = "def f(host, self):\n    host._me()\n    self._x()\n    return host._own\n\ndef _own():\n    pass\n"
    assert reaching(ast.parse(source), "pbem/host/example.py") == ["pbem/host/example.py:host._me"]


def test_no_module_reaches_into_another_modules_private_names() -> None:
    found = [hit for path in sources("pbem")
             for hit in reaching(tree(path), path.relative_to(ROOT.parent).as_posix())]
    assert not found, "private names used outside their module:\n" + "\n".join(found)

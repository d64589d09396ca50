"""engine/ is pure rules: no I/O, no imports from the application or its heavy dependencies.

The engine must run anywhere (a bot sandbox, a browser port, a replay verifier), so it may use
the standard library's computation only. The check imports every engine module in a fresh
interpreter and looks at what got loaded, and scans the sources for I/O calls.
"""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

from source_trees import nodes

import engine

ENGINE = Path(engine.__file__).parent
FORBIDDEN_PACKAGES = ("pbem", "sqlalchemy", "typer", "rich", "cryptography", "click")
FORBIDDEN_MODULES = (
    "pathlib", "os", "io", "shutil", "subprocess", "socket", "tempfile", "glob", "sqlite3", "urllib",
    "http", "smtplib", "imaplib", "email", "logging", "asyncio", "threading", "multiprocessing",
)  # fmt: skip
FORBIDDEN_CALLS = ("open", "print", "input", "exec", "eval", "__import__", "breakpoint")


def _engine_modules() -> list[str]:
    return ["engine"] + [m.name for m in pkgutil.walk_packages([str(ENGINE)], prefix="engine.")]


def _sources() -> list[Path]:
    return sorted(p for p in ENGINE.rglob("*.py"))


def test_engine_imports_no_application_code_or_heavy_dependencies() -> None:
    modules = _engine_modules()
    assert "engine.rules" in modules and "engine.board" in modules
    code = f"import importlib, json, sys\nfor m in {modules!r}:\n    importlib.import_module(m)\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ENGINE.parent)
    loaded = json.loads(out.stdout)
    bad = [m for m in loaded if m.split(".")[0] in FORBIDDEN_PACKAGES]
    assert not bad, f"engine imports {bad}"


def test_engine_sources_import_no_io_modules() -> None:
    for path in _sources():
        for node in nodes(path):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else []
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top not in FORBIDDEN_MODULES + FORBIDDEN_PACKAGES, f"{path.name}:{node.lineno} imports {name}"


def test_engine_sources_call_no_io_builtins() -> None:
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        for node in nodes(path):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in FORBIDDEN_CALLS, f"{path.name}:{node.lineno} calls {node.func.id}()"
        # and a plain text scan, for calls hidden from the AST check (getattr tricks and the like)
        for word in ("open(", "print(", "pathlib", "sys.stdout", "sys.stderr", "os.environ"):
            assert word not in text, f"{path.name} mentions {word}"

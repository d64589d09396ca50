"""pbem/ is layered and imports flow one way (like tests/test_engine_purity.py for the engine).

    __main__ -> entry -> cli -> auto -> replay -> mail, folder -> host, seat -> protocol -> ui -> atomic, names, watch -> errors -> engine

A module may import its own subpackage and any lower layer, never a higher one or a
sibling on its own layer (host and seat do not know each other; nor do mail and folder).
Protocol and host never import pbem.ui: they build words as values (pbem.errors.Msg).
Imports inside functions count too: a lazy import is still a dependency. Inside a layer,
modules import each other without cycles: a module and what it imports can be read bottom-up.
"""

from __future__ import annotations

import ast
from pathlib import Path

from source_trees import nodes

ROOT = Path(__file__).resolve().parents[1]

LAYERS: dict[str, int] = {
    "pbem.errors": 0,
    "pbem.atomic": 1, "pbem.names": 1, "pbem.watch": 1,
    "pbem.ui": 2,
    "pbem.protocol": 3,
    "pbem.host": 4, "pbem.seat": 4,
    "pbem.mail": 5, "pbem.folder": 5,
    "pbem.replay": 6,
    "pbem.auto": 7,
    "pbem.cli": 8,
    "pbem.entry": 9,
    "pbem.__main__": 10,
}


def unit_of(module: str) -> str | None:
    parts = module.split(".")
    for n in (2, 1):
        name = ".".join(parts[:n])
        if name in LAYERS:
            return name
    return None


def imports_of(path: Path, module: str) -> set[str]:
    found: set[str] = set()
    for node in nodes(path):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".")
                base = parts[: -node.level] if not path.name == "__init__.py" else parts[: len(parts) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{a.name}" for a in node.names)
    return found


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted((ROOT / "pbem").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append((".".join(parts), path))
    return out


def test_every_pbem_module_has_a_layer() -> None:
    missing = [m for m, _ in modules() if m != "pbem" and unit_of(m) is None]
    assert not missing, f"modules outside every layer (add them to LAYERS or move them): {missing}"


def test_imports_flow_one_way() -> None:
    wrong = []
    for module, path in modules():
        unit = unit_of(module)
        if unit is None:
            continue
        for target in imports_of(path, module):
            other = unit_of(target)
            if other is None or other == unit:
                continue
            if LAYERS[other] >= LAYERS[unit]:
                wrong.append(f"{module} imports {target}")
    assert not wrong, "imports against the layer direction:\n" + "\n".join(sorted(set(wrong)))


# Layers below the edges build words as values (pbem.errors.Msg) and never say them: only the CLI
# and the mail put them into a reader's language (docs/translating.md).
SPEECHLESS = ("pbem.protocol", "pbem.host")


def test_inner_layers_never_import_the_words() -> None:
    wrong = [f"{module} imports {target}" for module, path in modules() if module.startswith(SPEECHLESS)
             for target in imports_of(path, module) if target == "pbem.ui" or target.startswith("pbem.ui.")]
    assert not wrong, "words said below the edges (build a pbem.errors.msg instead):\n" + "\n".join(sorted(set(wrong)))


def module_graph() -> dict[str, set[str]]:
    """Each pbem module and the pbem modules it imports (a name imported from a package that is a
    submodule counts as that submodule)."""
    known = dict(modules())

    def resolve(target: str) -> str | None:
        parts = target.split(".")
        for n in range(len(parts), 0, -1):
            if ".".join(parts[:n]) in known:
                return ".".join(parts[:n])
        return None

    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        targets = {resolve(t) for t in imports_of(path, module)}
        graph[module] = {t for t in targets if t is not None and t not in (module, "pbem")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycles_inside_a_package() -> None:
    graph = module_graph()
    found = cycles(graph)
    shown = [", ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) for c in found]
    assert not found, "modules that import each other:\n" + "\n".join(shown)


def test_the_engine_never_imports_pbem() -> None:
    for path in sorted((ROOT / "engine").rglob("*.py")):
        assert not any(t == "pbem" or t.startswith("pbem.") for t in imports_of(path, "engine.x")), path


def test_scripts_import_only_names_that_exist() -> None:
    """The benchmarks and tools under scripts/ are not run by the suite; their imports still must resolve."""
    import importlib

    missing = []
    for path in sorted((ROOT / "scripts").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(("pbem", "engine")):
                continue
            try:
                module = importlib.import_module(node.module or "")
            except ImportError:
                missing.append(f"{path.name}: {node.module}")
                continue
            for alias in node.names:
                if hasattr(module, alias.name):
                    continue
                try:
                    importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    missing.append(f"{path.name}: {node.module}.{alias.name}")
    assert not missing, missing

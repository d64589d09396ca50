"""Runs the engine compiled by mypyc when it was built from the very sources `import engine` would run.

scripts/compiled_engine.py builds the engine into the venv (`<venv>/engine-compiled`: a copy of
engine/'s sources, their C extensions beside them, and a manifest of the sources it was built
from) and installs this module into the venv's site-packages as `_pbem_engine_select`, with a
.pth file that imports it at every start of the venv's Python. Importing it only puts a finder
first on `sys.meta_path`. That finder acts on `import engine` alone, then takes itself away: it
asks the other finders where engine/ is (PYTHONPATH, the editable install, the current folder),
and loads the compiled copy instead only if that engine/ holds the same .py files as the copy
(same names; each file the same size and either the same mtime or the same bytes). Otherwise,
an edited engine/ for instance, the sources run as they are: never stale compiled code.

PBEM_ENGINE=pure: the sources always. engine/ itself stays pure computation (no I/O), so the
selection lives here, outside it. Its cost at start-up: importing this module; the check at
`import engine`, a stat of each source file (docs/engine-speed.md "mypyc").
"""

# (no `from __future__ import annotations`, no typing or collections.abc: this runs at every start
# of the venv's Python, and only modules every start has loaded are imported here)
import os
import sys
from importlib.machinery import ModuleSpec, PathFinder
from importlib.util import module_from_spec

BUILD = os.path.join(sys.prefix, "engine-compiled")
MANIFEST = "manifest.txt"  # per source file: its path under engine/, size and mtime (ns), tab-separated
# mypyc's group: every compiled module of engine/ is a small extension that takes its code from one
# shared library, `<GROUP>__mypyc`, a top-level module in BUILD (loaded here with the package: its
# dotted name, inside the package, would be nicer, but mypyc 2.4's multi-file build cannot do that).
GROUP = "pbem_engine"


def sources(top: str) -> list[tuple[str, int, int]]:
    """(path under `top`, size, mtime in ns) of every .py file of the package folder `top`, sorted."""
    out = []
    stack = [""]
    while stack:
        rel = stack.pop()
        with os.scandir(os.path.join(top, rel)) as entries:
            for e in entries:
                if e.name.endswith(".py") and e.is_file():
                    st = e.stat()
                    out.append((rel + e.name, st.st_size, st.st_mtime_ns))
                elif e.is_dir() and e.name != "__pycache__" and not e.name.startswith("."):
                    stack.append(rel + e.name + "/")
    out.sort()
    return out


def _same_bytes(a: str, b: str) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def why_not(src: str, build: str = BUILD) -> str | None:
    """None if the compiled engine in `build` was built from the sources in `src`, else why not."""
    try:
        with open(os.path.join(build, MANIFEST), encoding="utf-8") as f:
            recorded = f.read().splitlines()
    except OSError:
        return "not built"
    files = sources(src)
    if [line.split("\t")[0] for line in recorded] != [rel for rel, _, _ in files]:
        return f"{src} has other files than the build"
    for (rel, size, mtime), line in zip(files, recorded):
        _, was_size, was_mtime = line.split("\t")
        if size != int(was_size) or (mtime != int(was_mtime)
                                     and not _same_bytes(os.path.join(src, rel), os.path.join(build, "engine", rel))):
            return f"{rel} changed since the build"
    return None


class CompiledEngine:
    """The finder (a class, like the standard ones: nothing to make at start-up, and only the
    standard library's modules that every start has loaded). `chosen`: what `import engine` took, and why."""

    chosen: str | None = None

    @classmethod
    def find_spec(cls, fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if fullname != "engine":
            return None
        if cls in sys.meta_path:
            sys.meta_path.remove(cls)  # once is enough: the submodules come from the package's __path__
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is not None and (spec := find(fullname, path, target)) is not None:
                break
        locations = spec.submodule_search_locations if spec is not None else None
        if not locations:
            return spec
        reason = why_not(locations[0])
        compiled = PathFinder.find_spec("engine", [BUILD]) if reason is None else None
        if compiled is None:
            cls.chosen = f"pure ({reason or 'no engine in ' + BUILD})"
            return spec
        name = GROUP + "__mypyc"
        lib = PathFinder.find_spec(name, [BUILD])
        if lib is None or lib.loader is None:
            cls.chosen = f"pure (no {name} in {BUILD})"
            return spec
        module = module_from_spec(lib)
        lib.loader.exec_module(module)
        sys.modules[name] = module
        cls.chosen = "compiled"
        return compiled


if os.environ.get("PBEM_ENGINE") != "pure" and os.path.isdir(BUILD):
    sys.meta_path.insert(0, CompiledEngine)  # type: ignore[arg-type]  # (a class with find_spec, as PathFinder is)

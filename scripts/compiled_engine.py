"""Compile the engine with mypyc into the venv, when it is missing or older than engine/ (scripts/_venv.sh runs this).

    .venv/bin/python scripts/compiled_engine.py           # build if needed, then say which engine runs
    .venv/bin/python scripts/compiled_engine.py --status  # only say which engine `import engine` runs, and why

The engine is strictly typed, so mypyc (part of mypy, which the test extra installs) compiles it
to C extensions, as mypy and black ship themselves: the same moves (tests/test_compiled_engine.py
compares their trace digests), about 1.4x the random rounds per second (docs/engine-speed.md "mypyc").
The build goes to `<venv>/engine-compiled`, outside the source tree: a copy of engine/'s .py files
with the extensions beside them and a manifest of the sources; scripts/engine_select.py (installed
into the venv's site-packages here) loads it only while engine/ still holds those same sources.

Exit status: 0 the compiled engine is up to date; 3 it cannot be built here (no C compiler, no
Python headers, no mypyc: the pure engine runs, one line says so); 1 the build failed (its log is
printed; the pure engine runs, and under scripts/test a test fails: the build was expected).
PBEM_ENGINE=pure skips all this (scripts/_venv.sh does not call it then).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import py_compile
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import engine_select  # noqa: E402

SELECT = "_pbem_engine_select"  # the module's name in site-packages
# The engine's modules to compile: all but the packages' __init__.py (a few imports and a
# Protocol: nothing to gain).
INTERPRETED = {"__init__.py"}
# The build: mypycify over the copied sources, C files compiled on every core.
_SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify
paths = sys.argv[1:]
sys.argv[1:] = ["build_ext", "--inplace", "--parallel", "{jobs}"]
setup(name="engine-compiled", ext_modules=mypycify(paths, group_name="{group}", multi_file=True))
"""


def cannot_build() -> str | None:
    """Why this machine cannot compile the engine, or None."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc})"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return "no Python headers (Python.h; a python3-dev package)"
    if importlib.util.find_spec("mypyc") is None:
        return "no mypyc (part of mypy, in the test extra)"
    return None


def install_select() -> None:
    """Put the selecting module and its .pth into this venv's site-packages (again if they changed)."""
    site = Path(sysconfig.get_paths()["purelib"])
    module = site / f"{SELECT}.py"
    text = (ROOT / "scripts" / "engine_select.py").read_text(encoding="utf-8")
    if not module.is_file() or module.read_text(encoding="utf-8") != text:
        module.write_text(text, encoding="utf-8")
        py_compile.compile(str(module), doraise=True)  # (read at every start: even with PYTHONDONTWRITEBYTECODE)
    pth = site / f"{SELECT}.pth"
    if not pth.is_file():
        pth.write_text(f"import {SELECT}\n", encoding="utf-8")


def build(src: Path, out: Path) -> bool:
    """Compile the sources in `src` (an engine/ folder) into `out`; False (log printed) on failure."""
    work = Path(tempfile.mkdtemp(prefix="engine-compiled.", dir=out.parent))
    try:
        files = engine_select.sources(str(src))
        for rel, _, _ in files:  # the manifest's stats are taken before the copy: see engine_select.why_not
            (work / "engine" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, work / "engine" / rel)
        paths = [f"engine/{rel}" for rel, _, _ in files if Path(rel).name not in INTERPRETED]
        setup = _SETUP.format(jobs=os.cpu_count() or 1, group=engine_select.GROUP)
        run = subprocess.run([sys.executable, "-c", setup, *paths], cwd=work, capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout[-6000:] + run.stderr[-6000:], file=sys.stderr)
            return False
        shutil.rmtree(work / "build", ignore_errors=True)  # the C sources and objects (~30 MB)
        shutil.rmtree(work / ".mypy_cache", ignore_errors=True)
        (work / engine_select.MANIFEST).write_text("".join(f"{r}\t{s}\t{m}\n" for r, s, m in files), encoding="utf-8")
        old = out.with_name(out.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if out.exists():
            out.rename(old)
        work.rename(out)
        shutil.rmtree(old, ignore_errors=True)
        return True
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--status", action="store_true", help="only say which engine runs")
    args = ap.parse_args(argv)
    src = ROOT / "engine"
    out = Path(engine_select.BUILD)
    reason = engine_select.why_not(str(src), str(out))
    if args.status:
        print("engine: compiled (mypyc)" if reason is None else f"engine: pure ({reason})")
        return 0 if reason is None else 3
    if reason is None:
        install_select()
        return 0
    why = cannot_build()
    if why is not None:
        print(f"engine: not compiled, {why}: the pure engine runs (the same moves, slower; docs/engine-speed.md \"mypyc\")",
              file=sys.stderr)
        return 3
    print(f"engine: compiling it with mypyc ({reason}; about a minute of CPU, once per change of engine/)...",
          file=sys.stderr)
    start = time.monotonic()
    if not build(src, out):
        print("error: compiling the engine failed (log above): the pure engine runs", file=sys.stderr)
        return 1
    install_select()
    print(f"engine: compiled in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

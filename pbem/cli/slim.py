"""A library imported without the modules it loads only for features pbem never uses (issue 16.1).

Typer imports subprocess, platform, uuid, traceback, difflib and shellingham at its own import
for launch(), shell completion, uuid parameters, its own tracebacks and "did you mean" (~5 ms,
a quarter of importing Typer); typer.rich_utils imports rich.markdown (markdown-it) and
rich.traceback (rich.pretty, attrs) for markdown help and those tracebacks (40% of a help
page's CPU time). While the library loads, each such module is a stand-in: a module holding
the placeholders given for what the library takes from it by name (`from uuid import UUID`),
which loads the real module for anything else it is asked (`subprocess.Popen`, should a
library ever call it). Then the stand-ins are forgotten, so that an import elsewhere loads the
real module. tests/test_startup.py checks that the commands run without them.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any


class StandIn(types.ModuleType):
    """A module's stand-in while a library loads; what it does not hold is the real module's."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # what the import system asks of a module (__path__, ...)
            raise AttributeError(name)
        return getattr(_real(self.__name__), name)


def _real(module: str) -> types.ModuleType:
    """The real module, imported now if what is loaded is a stand-in."""
    import importlib

    if isinstance(sys.modules.get(module), StandIn):
        del sys.modules[module]
    return importlib.import_module(module)


def placeholder(name: str) -> type:
    """A class that stands for one the library only names for a feature pbem does not use."""
    return type(name, (), {"__doc__": f"a placeholder (pbem.cli.slim): pbem never uses {name} through this library"})


def deferred(module: str, name: str) -> Any:
    """A function of `module` that imports it when first called."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(_real(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


class DeferredMapping(Mapping[Any, Any]):
    """A mapping of `module` (its attribute `name`) that imports it at the first look-up."""

    def __init__(self, module: str, name: str) -> None:
        self._where = module, name

    def _mapping(self) -> Mapping[Any, Any]:
        return getattr(_real(self._where[0]), self._where[1])

    def __getitem__(self, key: Any) -> Any:
        return self._mapping()[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self._mapping())


def stand_in(module: str, held: Mapping[str, Any]) -> None:
    """`module`, unless loaded already, a stand-in holding `held` until something else of it is
    asked for (not only while one library loads)."""
    if module not in sys.modules:
        _install(module, held, "a stand-in until it is needed (pbem.cli.slim)")


def _install(module: str, held: Mapping[str, Any], doc: str) -> StandIn:
    """A stand-in for `module`, holding `held`, put where an import finds it."""
    made = sys.modules[module] = StandIn(module, doc)
    made.__dict__.update(held)
    return made


def imported(module: str, without: Mapping[str, Mapping[str, Any]]) -> types.ModuleType:
    """`module`, imported while each module of `without` not yet loaded is a stand-in holding
    the attributes given for it."""
    import importlib

    made = {}
    for name, held in without.items():
        if name not in sys.modules:
            made[name] = _install(name, held, "a stand-in while a library loads (pbem.cli.slim)")
    try:
        return importlib.import_module(module)
    finally:
        for name, placed in made.items():
            if sys.modules.get(name) is placed:  # not replaced by the real module meanwhile
                del sys.modules[name]

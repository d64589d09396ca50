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
from collections.abc import Mapping
from typing import Any


class StandIn(types.ModuleType):
    """A module's stand-in while a library loads; what it does not hold is the real module's."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # what the import system asks of a module (__path__, ...)
            raise AttributeError(name)
        import importlib

        if sys.modules.get(self.__name__) is self:  # still loading the library: load the real one
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


def placeholder(name: str) -> type:
    """A class that stands for one the library only names for a feature pbem does not use."""
    return type(name, (), {"__doc__": f"a placeholder (pbem.cli.slim): pbem never uses {name} through this library"})


def deferred(module: str, name: str) -> Any:
    """A function of `module` that imports it when first called."""
    def call(*args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def imported(module: str, without: Mapping[str, Mapping[str, Any]]) -> types.ModuleType:
    """`module`, imported while each module of `without` not yet loaded is a stand-in holding
    the attributes given for it."""
    import importlib

    made = {}
    for name, held in without.items():
        if name not in sys.modules:
            made[name] = sys.modules[name] = StandIn(name, "a stand-in while a library loads (pbem.cli.slim)")
            made[name].__dict__.update(held)
    try:
        return importlib.import_module(module)
    finally:
        for name, stand_in in made.items():
            if sys.modules.get(name) is stand_in:  # not replaced by the real module meanwhile
                del sys.modules[name]

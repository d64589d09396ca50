"""Option groups for Typer (the way sqlite-utils shares its click options): a command's parameter
whose type is a struct of options (a msgspec.Struct, cli/_common.py: KeyOptions, StoreOptions;
cli/_mail_options.py: Smtp...) reaches Typer as that struct's options, and the command gets one
object built from them.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import msgspec


class _Grouped:
    """A command whose option group parameters Typer sees as the groups' options. Its signature
    is worked out when Typer first asks for it (evaluating the annotations is not free, and a
    command line converts only the command it runs: pbem.cli.tree_for)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.__wrapped__ = fn
        self.__name__, self.__qualname__ = fn.__name__, fn.__qualname__
        self.__module__, self.__doc__ = fn.__module__, fn.__doc__
        self._made: tuple[inspect.Signature, dict[str, tuple[type, list[tuple[str, str]]]]] | None = None

    def _make(self) -> tuple[inspect.Signature, dict[str, tuple[type, list[tuple[str, str]]]]]:
        if self._made is None:
            sig = inspect.signature(self.__wrapped__, eval_str=True)
            params: list[inspect.Parameter] = []
            groups: dict[str, tuple[type, list[tuple[str, str]]]] = {}
            for p in sig.parameters.values():
                if not (isinstance(p.annotation, type) and issubclass(p.annotation, msgspec.Struct)):
                    params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY))
                    continue
                hints = typing.get_type_hints(p.annotation, include_extras=True)
                fields = msgspec.structs.fields(p.annotation)
                flat = [(f"{p.name}__{f.name}", f.name) for f in fields]
                groups[p.name] = (p.annotation, flat)
                params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=_default(f),
                                             annotation=hints[f.name])
                           for (name, _), f in zip(flat, fields)]
            self._made = sig.replace(parameters=params), groups
        return self._made

    @property
    def __signature__(self) -> inspect.Signature:
        return self._make()[0]

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name: p.annotation for p in self._make()[0].parameters.values()}

    def __call__(self, **kwargs: Any) -> Any:
        for name, (cls, flat) in self._make()[1].items():
            kwargs[name] = cls(**{field: kwargs.pop(option) for option, field in flat})
        return self.__wrapped__(**kwargs)


def _default(f: msgspec.structs.FieldInfo) -> Any:
    return f.default_factory() if f.default is msgspec.NODEFAULT and f.default_factory is not msgspec.NODEFAULT \
        else f.default


def grouped(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Show Typer each option group parameter of `fn` as the group's options; call `fn` with
    one group object per such parameter."""
    return _Grouped(fn)

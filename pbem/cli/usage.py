"""Click's own usage errors (a missing argument, an unknown option, ...) as pbem says every
error: one line in the reader's language, `error: ...`, and a hint naming the command's
--help page, instead of Click's English "Usage: ... Try ... Error: ..." block.

Click's messages are English literals inside Click; the common ones are recognised by their
exception's type and fields (or, for plain UsageErrors, their fixed wording) and said again
through the catalogs. Anything else keeps Click's words, still on one line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pbem.ui.words import N_, t

_EXTRA = re.compile(r"Got unexpected extra arguments?(?:\(s\))? \((.*)\)$")
_NO_COMMAND = re.compile(r"No such command '(.*)'\.(?: Did you mean (.*)\?)?$")
_NEEDS_VALUE = re.compile(r"Option '(.*)' requires an argument\.$")
_NO_VALUE = re.compile(r"Option '(.*)' does not take a value\.$")
_NOT_NUMBER = re.compile(r"^'(.*)' is not a valid (float|integer)(?: range)?\.$")
_OUT_OF_RANGE = re.compile(r"^(\S+) is not in the range (\S+)\.$")  # the range as Click writes it: 0<=x<=60


def _hint_of(exc: Any) -> str:
    """The parameter as Click names it in its errors ('FILES...', '--as')."""
    hint = getattr(exc, "param_hint", None)
    param, ctx = getattr(exc, "param", None), getattr(exc, "ctx", None)
    if hint is None and param is not None:
        hint = param.get_error_hint(ctx) if ctx is not None else param.name
    if isinstance(hint, (list, tuple)):
        hint = " / ".join(f"'{h}'" for h in hint)
    return str(hint or "")


def _bad_value(text: str) -> str:
    """Click's words for a number it could not take ("'abc' is not a valid float range.")."""
    found = _NOT_NUMBER.match(text)
    if found:
        said = N_("{value} is not a number") if found.group(2) == "float" else N_("{value} is not a whole number")
        return t(said, value=repr(found.group(1)))
    found = _OUT_OF_RANGE.match(text)
    if found:
        return t("{value} is outside {range}", value=found.group(1), range=found.group(2))
    return text


def message(exc: Any) -> str:
    """A Click UsageError (or BadParameter, MissingParameter, NoSuchOption ...) in words."""
    kind = type(exc).__name__
    text = str(getattr(exc, "message", "") or exc).strip()
    if kind == "MissingParameter":
        what = getattr(exc, "param_type", None) or getattr(getattr(exc, "param", None), "param_type_name", "")
        name = _hint_of(exc)
        if what == "argument":
            return t("missing argument {name}", name=name)
        if what == "option":
            return t("missing option {name}", name=name)
        return t("missing parameter {name}", name=name)
    if kind == "NoSuchOption":
        name = repr(getattr(exc, "option_name", text))
        near = sorted(getattr(exc, "possibilities", None) or [])
        if near:
            return t("no such option {name}; did you mean {near}?", name=name, near=", ".join(near))
        return t("no such option {name}", name=name)
    if kind == "BadParameter":
        return t("invalid value for {name}: {why}", name=_hint_of(exc), why=_bad_value(text))
    found = _NO_COMMAND.search(text)
    if found and found.group(2):
        return t("no such command {name}; did you mean {near}?", name=repr(found.group(1)), near=found.group(2))
    for pattern, said in ((_EXTRA, N_("unexpected extra argument {args}")), (_NO_COMMAND, N_("no such command {name}")),
                          (_NEEDS_VALUE, N_("option {name} needs a value")), (_NO_VALUE, N_("option {name} takes no value"))):
        found = pattern.search(text)
        if found:
            return t(said, args=found.group(1), name=repr(found.group(1)))
    if text == "Missing command.":
        return t("missing command")
    return text


def hint(exc: Any, argv: list[str]) -> str | None:
    """Where to look: the command's --help page; for a file given where the game's name goes
    (`pbem apply --db saves/x.db move.pbem`), that the name comes first."""
    ctx = getattr(exc, "ctx", None)
    names, c = [], ctx
    while c is not None and c.parent is not None:  # the root's name is however pbem was started
        names.append(c.info_name)
        c = c.parent
    path = " ".join(["pbem", *reversed(names)])
    if type(exc).__name__ == "MissingParameter" and ctx is not None and "game" in ctx.params:
        game = ctx.params.get("game")
        if isinstance(game, str) and (game.endswith((".pbem", ".eml")) or Path(game).is_file()):
            return t("{file} was taken for the game's name: the name comes first ({command} GAME ...)",
                     file=repr(game), command=path)
    return t("'{command} --help' shows how it is used", command=path)

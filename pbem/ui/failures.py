"""Errors in the reader's language: a PbemError's message and hint (pbem.errors.Msg values, or
words an outer layer said already) through pbem.ui.words.render, the engine's refusals through
pbem/ui/engine_words.py, and the operating system's reasons through the catalogs.
"""

from __future__ import annotations

from pbem.errors import PbemError
from pbem.errors import os_reason as os_words
from pbem.ui.words import render


def os_reason(exc: OSError | int | None, fallback: str = "") -> str:
    """Why the operating system refused (an OSError or its errno), in the reader's language;
    an errno not listed says the system's own words."""
    code = exc.errno if isinstance(exc, OSError) else exc
    said = (exc.strerror or str(exc)) if isinstance(exc, OSError) else fallback
    return render(os_words(code, said))


def message(exc: BaseException, lang: str | None = None) -> str:
    """An error in the reader's language (`lang`, default the current one)."""
    if isinstance(exc, PbemError):
        return render(exc.message, lang)
    from engine.errors import MoveError  # here: the many commands that import this load no engine for it

    if isinstance(exc, MoveError):  # the engine speaks English; its templates are in engine_words
        from pbem.ui.engine_words import move_error_words

        return move_error_words(exc)
    return str(exc)


def hint(exc: PbemError, lang: str | None = None) -> str | None:
    return None if exc.hint is None else render(exc.hint, lang)

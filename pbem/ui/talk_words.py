"""Table talk in words (docs/protocol.md, "Table talk"): a line as `pbem turn`, `pbem show`, the
replay and the host's mails write it. The text is a seat's, shown as written but with every
control character, escape code and bidi override made visible (pbem.ui.terminal.printable): it
never acts on a terminal or reorders the words around it, in a mail or a web page either."""

from __future__ import annotations

from collections.abc import Sequence

from pbem.ui import words
from pbem.ui.terminal import printable
from pbem.ui.words import t


def heading() -> str:
    return words.labelled(t("table talk"), "").rstrip()


def line(speaker: str, seq: int, to: Sequence[str] | None, text: str) -> str:
    """One line: who said it at which packet (whispered to whom), and what."""
    said = printable(text)
    if to is None:
        return t("{seat} at packet {seq}: {text}", seat=speaker, seq=seq, text=said)
    return t("{seat} at packet {seq}, whispered to {seats}: {text}", seat=speaker, seq=seq,
             seats=words.join(list(to)), text=said)

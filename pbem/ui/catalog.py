"""Gettext catalogs: read .po files, compile them to .mo bytes, hand them to stdlib gettext.

The words live in pbem/ui/locale/: `pbem.pot` is the English source (one entry per message,
msgstr empty), `zh_Hans.po` and `zh_Hant.po` are its translations. These are ordinary gettext
files, so Poedit, Weblate, `msgfmt --check` and `msgmerge` all work on them; see
docs/translating.md.

Compiling happens in memory at first use, with the same layout GNU msgfmt writes, so no
build step or new dependency is needed; stdlib `gettext.GNUTranslations` then does the lookups
and the plural forms.
"""

from __future__ import annotations

import gettext
import io
import re
import struct
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

LOCALE_DIR = Path(__file__).with_name("locale")
SOURCE = LOCALE_DIR / "pbem.pot"
# Language code (words.LANGUAGES) -> catalog file; English is the source itself.
CATALOGS = {"zh-Hans": LOCALE_DIR / "zh_Hans.po", "zh-Hant": LOCALE_DIR / "zh_Hant.po"}


@dataclass
class Entry:
    msgid: str
    msgctxt: str | None = None
    plural: str | None = None
    msgstr: list[str] = field(default_factory=lambda: [""])
    flags: set[str] = field(default_factory=set)
    comments: list[str] = field(default_factory=list)  # every `#` line, kept verbatim
    line: int = 0

    @property
    def key(self) -> tuple[str | None, str]:
        return self.msgctxt, self.msgid

    @property
    def translated(self) -> bool:
        return "fuzzy" not in self.flags and all(self.msgstr) and len(self.msgstr) >= 1


class PoError(ValueError):
    """A .po file that is not well formed; the message names the file and line."""


def parse_po(text: str, name: str = "<po>") -> list[Entry]:
    """The entries of a .po file, the header (msgid "") included, in file order."""
    entries: list[Entry] = []
    cur: Entry | None = None
    field_name: str | None = None  # which string a continuation line extends
    comments: list[str] = []
    flags: set[str] = set()

    def finish() -> None:
        nonlocal cur
        if cur is not None:
            entries.append(cur)
        cur = None

    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if cur is not None and field_name is not None and field_name.startswith("msgstr"):
                finish()  # a comment after a msgstr belongs to the next entry
                field_name = None
            if line.startswith("#,"):
                flags |= {f.strip() for f in line[2:].split(",") if f.strip()}
            comments.append(raw)
            continue
        word, _, rest = line.partition(" ")
        if word.startswith('"'):
            if cur is None or field_name is None:
                raise PoError(f"{name}:{no}: a string outside any entry")
            _extend(cur, field_name, _unquote(line, name, no))
            continue
        value = _unquote(rest.strip(), name, no)
        if word == "msgctxt" or (word == "msgid" and (cur is None or field_name != "msgctxt")):
            finish()
            cur = Entry(msgid="", flags=flags, comments=comments, line=no)
            comments, flags = [], set()
        if cur is None:
            raise PoError(f"{name}:{no}: {word} before msgid")
        field_name = _set(cur, word, value, f"{name}:{no}")
    finish()
    return entries


def _set(entry: Entry, word: str, value: str, where: str) -> str:
    """Give `entry` the string a keyword line names; return the field's name, which continuation
    lines extend."""
    if word == "msgctxt":
        entry.msgctxt = value
    elif word == "msgid":
        entry.msgid = value
    elif word == "msgid_plural":
        entry.plural = value
    elif word == "msgstr":
        entry.msgstr = [value]
    elif word.startswith("msgstr[") and word.endswith("]"):
        i = int(word[7:-1])
        if i == 0:
            entry.msgstr = [value]
        elif i == len(entry.msgstr):
            entry.msgstr.append(value)
        else:
            raise PoError(f"{where}: {word} out of order")
        return f"msgstr[{i}]"
    else:
        raise PoError(f"{where}: unknown keyword {word!r}")
    return word


def _unquote(text: str, name: str, no: int) -> str:
    if not (len(text) >= 2 and text[0] == '"' and text[-1] == '"'):
        raise PoError(f"{name}:{no}: expected a quoted string, got {text[:40]!r}")
    body = text[1:-1]
    if "\\" not in body and '"' not in body:
        return body  # the common case, and parsing runs at every start
    if _BAD_QUOTE.search(body):
        raise PoError(f"{name}:{no}: bad string {text[:40]!r}")
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m[1], m[1]), body)


_ESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"'}
_BAD_QUOTE = re.compile(r'(?<!\\)(?:\\\\)*"')

def _extend(entry: Entry, field_name: str, value: str) -> None:
    if field_name == "msgctxt":
        entry.msgctxt = (entry.msgctxt or "") + value
    elif field_name == "msgid":
        entry.msgid += value
    elif field_name == "msgid_plural":
        entry.plural = (entry.plural or "") + value
    else:
        i = 0 if field_name == "msgstr" else int(field_name[7:-1])
        entry.msgstr[i] += value


def compile_mo(entries: list[Entry]) -> bytes:
    """GNU .mo bytes of the translated entries (fuzzy and empty ones are left out, as msgfmt does)."""
    table: dict[bytes, bytes] = {}
    for e in entries:
        if e.msgid and not e.translated:
            continue
        key = e.msgid if e.plural is None else f"{e.msgid}\0{e.plural}"
        if e.msgctxt is not None:
            key = f"{e.msgctxt}\x04{key}"
        table[key.encode()] = "\0".join(e.msgstr).encode()
    keys = sorted(table)
    n = len(keys)
    offsets = []
    id_end = str_end = 0
    for k in keys:
        offsets.append((id_end, len(k), str_end, len(table[k])))
        id_end += len(k) + 1
        str_end += len(table[k]) + 1
    ids = b"".join(k + b"\0" for k in keys)
    strs = b"".join(table[k] + b"\0" for k in keys)
    start_ids = 7 * 4 + 16 * n  # header, then the two index tables
    start_strs = start_ids + len(ids)
    index_ids: list[int] = []
    index_strs: list[int] = []
    for id_off, id_len, str_off, str_len in offsets:
        index_ids += [id_len, start_ids + id_off]
        index_strs += [str_len, start_strs + str_off]
    header = struct.pack("Iiiiiii", 0x950412DE, 0, n, 7 * 4, 7 * 4 + n * 8, 0, 0)
    return header + struct.pack(f"{2 * n}i", *index_ids) + struct.pack(f"{2 * n}i", *index_strs) + ids + strs


def read_po(path: Path) -> list[Entry]:
    return parse_po(path.read_text(encoding="utf-8"), str(path))


@cache
def source() -> dict[tuple[str | None, str], Entry]:
    """The English source entries by (msgctxt, msgid)."""
    return {e.key: e for e in read_po(SOURCE) if e.msgid}


@cache
def by_context() -> dict[str, Entry]:
    """Source entries that have a msgctxt, by it: the short keys of `t("to move")`."""
    return {e.msgctxt: e for e in source().values() if e.msgctxt is not None}


@cache
def english() -> dict[str, tuple[str | None, str, str | None]]:
    """What t() asks of the English source, by the word it is given: a short key (an entry's
    msgctxt) or, for an entry without one, its English text -> (msgctxt, msgid, msgid_plural).
    A short key wins over an English text that happens to be the same words."""
    found: dict[str, tuple[str | None, str, str | None]] = {
        e.msgid: (None, e.msgid, e.plural) for e in source().values() if e.msgctxt is None}
    found.update({key: (key, e.msgid, e.plural) for key, e in by_context().items()})
    return found


@cache
def translations(lang: str) -> gettext.NullTranslations:
    """The compiled catalog of `lang`; English is the source, so it needs none."""
    path = CATALOGS.get(lang)
    if path is None:
        return gettext.NullTranslations()
    return gettext.GNUTranslations(io.BytesIO(compile_mo(read_po(path))))


def _quote(text: str) -> str:
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{body}"'


def format_po(entries: list[Entry]) -> str:
    """A .po file's text (the inverse of parse_po, one line per string)."""
    out: list[str] = []
    for e in entries:
        out += e.comments
        if e.msgctxt is not None:
            out.append(f"msgctxt {_quote(e.msgctxt)}")
        out.append(f"msgid {_quote(e.msgid)}")
        if e.plural is None:
            out.append(f"msgstr {_quote(e.msgstr[0])}")
        else:
            out.append(f"msgid_plural {_quote(e.plural)}")
            out += [f"msgstr[{i}] {_quote(s)}" for i, s in enumerate(e.msgstr)]
        out.append("")
    return "\n".join(out)

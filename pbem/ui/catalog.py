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
from functools import cache
from pathlib import Path

import msgspec

LOCALE_DIR = Path(__file__).with_name("locale")
SOURCE = LOCALE_DIR / "pbem.pot"
# Language code (words.LANGUAGES) -> catalog file; English is the source itself.
CATALOGS = {"zh-Hans": LOCALE_DIR / "zh_Hans.po", "zh-Hant": LOCALE_DIR / "zh_Hant.po"}


class Entry(msgspec.Struct):
    msgid: str
    msgctxt: str | None = None
    plural: str | None = None
    msgstr: list[str] = msgspec.field(default_factory=lambda: [""])
    flags: set[str] = msgspec.field(default_factory=set)
    comments: list[str] = msgspec.field(default_factory=list)  # every `#` line, kept verbatim
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
    if re.search(_BAD_QUOTE, body):
        raise PoError(f"{name}:{no}: bad string {text[:40]!r}")
    return _unescaped(body)


# The patterns that only an escape, a file to check or a translation needs are strings: re
# compiles each the first time it is used (an English command may never).
_ESCAPE = r"\\(.)"
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"'}
_BAD_QUOTE = r'(?<!\\)(?:\\\\)*"'

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
    return _mo({_mo_key(e.msgctxt, e.msgid, e.plural): "\0".join(e.msgstr) for e in entries
                if not e.msgid or e.translated})


def _mo_key(msgctxt: str | None, msgid: str, plural: str | None) -> str:
    key = msgid if plural is None else f"{msgid}\0{plural}"
    return key if msgctxt is None else f"{msgctxt}\x04{key}"


def _mo(strings: dict[str, str]) -> bytes:
    """GNU .mo bytes of a catalog's keys (msgctxt, msgid and plural joined as msgfmt joins
    them) and their strings."""
    table = {k.encode(): v.encode() for k, v in strings.items()}
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


# scripts/i18n writes each string on one line (format_po; tests/test_translations.py checks the
# files stay so), and then an entry is a few lines that one regular expression reads: every
# command reads its words this way, not line by line through parse_po, which a file in another
# layout (a string continued on the next line, as some editors write) still goes through.
_ENTRY = r'^((?:#.*\n)*)(?:msgctxt "(.*)"\n)?msgid "(.*)"\n(?:msgid_plural "(.*)"\n)?((?:msgstr.*\n?)+)'
_CONTEXT = re.compile(r'msgctxt "(.*)"\nmsgid "(.*)"\n(?:msgid_plural "(.*)"\n)?')
# a plural's msgid is on the line before it: searched for by its msgid_plural line, since a search
# beginning at `msgid "` tries every entry of the file
_PLURAL = re.compile(r'\nmsgid_plural "(.*)"\n')
_MSGID = re.compile(r'msgid "(.*)"')
_MSGSTR = r'^msgstr(?:\[\d+\])? "(.*)"$'


def _unescaped(body: str) -> str:
    return re.sub(_ESCAPE, lambda m: _ESCAPES.get(m[1], m[1]), body) if "\\" in body else body


def _one_line_each(text: str) -> bool:
    return '\n"' not in text


@cache
def english() -> dict[str, tuple[str | None, str, str | None]]:
    """What t() asks of the English source, by the word it is given: a short key (an entry's
    msgctxt) or an English text -> (msgctxt, msgid, msgid_plural), for the entries with a
    msgctxt or a plural (any other English text is its own entry: (None, text, None)). A short
    key wins over an English text that happens to be the same words."""
    return keys_of(SOURCE.read_text(encoding="utf-8"), str(SOURCE))


def keys_of(text: str, name: str = "<po>") -> dict[str, tuple[str | None, str, str | None]]:
    """english() of a catalog's text."""
    if not _one_line_each(text):
        keys = [(e.msgctxt, e.msgid, e.plural) for e in parse_po(text, name) if e.msgid]
    else:  # the two searches look for a literal word first: quicker than one for every entry
        keys = [(_unescaped(c), _unescaped(m), _unescaped(p) if p else None) for c, m, p in _CONTEXT.findall(text)]
        for plural in _PLURAL.finditer(text):
            start = text.rfind("\n", 0, plural.start()) + 1  # the msgid's line
            msgid = _MSGID.fullmatch(text, start, plural.start())
            if msgid and not text.startswith("msgctxt", text.rfind("\n", 0, start - 1) + 1):  # else a context's, found above
                keys.append((None, _unescaped(msgid[1]), _unescaped(plural[1])))
    found: dict[str, tuple[str | None, str, str | None]] = {
        msgid: (None, msgid, plural) for context, msgid, plural in keys if context is None and plural is not None}
    found.update({context: (context, msgid, plural) for context, msgid, plural in keys if context is not None})
    return found


@cache
def translations(lang: str) -> gettext.NullTranslations:
    """The compiled catalog of `lang`; English is the source, so it needs none."""
    path = CATALOGS.get(lang)
    if path is None:
        return gettext.NullTranslations()
    return gettext.GNUTranslations(io.BytesIO(compile_po(path.read_text(encoding="utf-8"), str(path))))


def compile_po(text: str, name: str = "<po>") -> bytes:
    """compile_mo(parse_po(text)), the same bytes."""
    if not _one_line_each(text):
        return compile_mo(parse_po(text, name))
    strings = {}
    msgstr = re.compile(_MSGSTR, re.M)
    for comments, context, msgid, plural, said in re.findall(_ENTRY, text, re.M):
        forms = [_unescaped(s) for s in msgstr.findall(said)]
        if msgid and (not all(forms) or _fuzzy(comments)):
            continue  # not translated (yet): as msgfmt, left out
        strings[_mo_key(_unescaped(context) if context else None, _unescaped(msgid),
                        _unescaped(plural) if plural else None)] = "\0".join(forms)
    return _mo(strings)


def _fuzzy(comments: str) -> bool:
    return "fuzzy" in comments and any(line.startswith("#,") and "fuzzy" in {f.strip() for f in line[2:].split(",")}
                                       for line in comments.splitlines())


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

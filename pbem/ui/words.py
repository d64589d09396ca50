"""Every word the player reads, in English, 简体 and 繁體.

The words themselves are gettext catalogs in pbem/ui/locale/ (English source pbem.pot,
translations zh_Hans.po and zh_Hant.po; docs/translating.md). `t(msg, **kw)` looks a message
up and formats it with str.format: `msg` is either the English text itself
(`t("no packet {seq}", seq=3)`, the gettext way, for new messages) or the msgctxt of an
entry (`t("to move", player="ann")`, the short keys of the first table). An entry with a
plural form is picked by the keyword `n`, because English needs plurals and Chinese does not.
Card and role names are entries with the context `card KIND`.

The language is chosen by `set_language`, else by the environment variable PBEM_LANG (read
on each call, so tests and per-recipient mails can switch), else English.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar, cast

from pbem.errors import N_, Msg, PbemError, Text
from pbem.ui import catalog, zone

if TYPE_CHECKING:
    from engine.catalog import CardKind

# The card catalog and the notation (engine.catalog, engine.moves) load with the first
# card or move put in words, not for a help page nor a key's command.

LANGUAGES = ("en", "zh-Hans", "zh-Hant")
_chosen: str | None = None
P = ParamSpec("P")
R = TypeVar("R")
# The language of the `render` call under way, for the words it builds on (context-local: two
# mails rendered at once, in two threads or tasks, each keep their own).
_speaking: ContextVar[str | None] = ContextVar("pbem_speaking", default=None)


# --- the language ------------------------------------------------------------------------


@lru_cache(maxsize=64)  # asked on every t(): PBEM_LANG is read each time, its spelling mapped once
def _normalise(lang: str) -> str | None:
    """Map the usual spellings (zh_CN.UTF-8, zh-TW, zh-hant, en_GB ...) to a LANGUAGES entry."""
    code = lang.strip().split(".")[0].replace("_", "-").lower()
    if code in ("zh-hant", "zh-tw", "zh-hk", "zh-mo") or code.startswith("zh-hant"):
        return "zh-Hant"
    if code == "zh" or code.startswith(("zh-hans", "zh-cn", "zh-sg")):
        return "zh-Hans"
    if code == "en" or code.startswith("en-"):
        return "en"
    return None


def language_in(argv: list[str]) -> str | None:
    """The --lang value, looked up before parsing so that --help is already translated."""
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--lang="):
            return arg.split("=", 1)[1]
        if not arg.startswith("-"):
            return None  # --lang belongs before the command
    return None


def set_language(lang: str | None) -> None:
    """Choose the language; None goes back to PBEM_LANG. Raises ValueError when unknown."""
    global _chosen
    _chosen = None if lang is None else _known(lang)


def _known(lang: str) -> str:
    """`lang` as one of LANGUAGES; ValueError when it is none of them."""
    norm = _normalise(lang)
    if norm is None:
        raise ValueError(t("unknown language {lang}; choose one of {choices}", lang=repr(lang), choices=", ".join(LANGUAGES)))
    return norm


def language() -> str:
    """The language words are said in now: the one `render` was asked for while it speaks,
    else the one chosen (--lang), else PBEM_LANG, else English."""
    speaking = _speaking.get()
    if speaking is not None:
        return speaking
    if _chosen is not None:
        return _chosen
    # A bad PBEM_LANG must not break every command: fall back to English.
    return _normalise(os.environ.get("PBEM_LANG", "en")) or "en"


@contextmanager
def using(lang: str) -> Iterator[None]:
    """Words said in `lang` inside the block (a test's), as `in_language` says them: for this
    context only, never for the process. Raises ValueError when `lang` is unknown."""
    token = _speaking.set(_known(lang))
    try:
        yield
    finally:
        _speaking.reset(token)


def t(msg: str, **kw: object) -> str:
    """The message `msg` (English text or an entry's msgctxt) in the current language,
    formatted with `kw`. A message missing from a catalog falls back to English (the test
    suite makes sure none is missing)."""
    return t_in(language(), msg, **kw)


def t_in(lang: str, msg: str, /, **kw: object) -> str:
    """`t` in the language `lang` (one of LANGUAGES), whatever the current one is. A value that
    is a Msg or an error is said in `lang` too."""
    template = _singular.get((lang, msg))
    if template is None:
        template = _template(lang, msg, kw.get("n"))
    if not kw:
        return template  # no fields: braces are left for the caller
    return template.format(**{k: _value(v, lang) for k, v in kw.items()})


def _value(v: object, lang: str) -> object:
    if isinstance(v, Msg):
        return render(v, lang)
    if isinstance(v, PbemError):
        return render(v.message, lang)
    return v


def render(message: Text | None, lang: str | None = None) -> str:
    """Words not yet said (pbem.errors.Msg) in the language `lang` (default: the current one);
    words already said (a str) as they are."""
    if message is None:
        return ""
    if isinstance(message, str):
        return message
    if lang is None or lang == language():
        return _said(message, lang or language())
    return in_language(lang, _said, message, lang)  # the words it builds on (dates, names) too


def in_language(lang: str, fn: Callable[P, R], /, *args: P.args, **kw: P.kwargs) -> R:
    """`fn(*args, **kw)` with every word it says in `lang` (a mail to one reader): the language
    is this call's alone (a context variable), never the process's (`set_language`)."""
    token = _speaking.set(_normalise(lang) or "en")
    try:
        return fn(*args, **kw)
    finally:
        _speaking.reset(token)


def _said(message: Msg, lang: str) -> str:
    if message.id.startswith("@"):
        return _WORDS[message.id](lang, message.params)
    return t_in(lang, message.id, **message.params)


def _moment(value: object) -> datetime | str:
    return value if isinstance(value, datetime) else str(value)


def _now(value: object) -> datetime | None:
    return value if isinstance(value, datetime) else None


def _items(lang: str, params: Mapping[str, object]) -> list[str]:
    items = params.get("items", ())
    return [str(_value(i, lang)) for i in (items if isinstance(items, tuple) else ())]


_OS_REASONS = {
    errno.ENOENT: N_("no such file or folder"),
    errno.EACCES: N_("permission denied"),
    errno.EPERM: N_("operation not permitted"),
    errno.EISDIR: N_("it is a folder"),
    errno.ENOTDIR: N_("a part of the path is not a folder"),
    errno.ENOSPC: N_("no space left on the device"),
    errno.EROFS: N_("the file system is read-only"),
    errno.EEXIST: N_("it exists already"),
    errno.ENAMETOOLONG: N_("the name is too long"),
    errno.ELOOP: N_("too many levels of links"),
}


def _os(lang: str, params: Mapping[str, object]) -> str:
    """The operating system's reason (pbem.errors.os_reason): the catalog's words for an errno
    it lists, else the system's own."""
    code = params.get("errno")
    said = _OS_REASONS.get(code) if isinstance(code, int) else None
    return t_in(lang, said) if said is not None else str(params.get("reason") or "")


_WORDS: dict[str, Callable[[str, Mapping[str, object]], str]] = {
    "@os": _os,
    "@kind": lambda lang, p: kind_name(str(p["kind"]), article=bool(p.get("article"))),
    "@step": lambda lang, p: step_name(str(p["step"])),
    "@card": lambda lang, p: card_name(str(p["card"])),
    "@goal": lambda lang, p: goal_name(str(p["goal"])),
    "@and": lambda lang, p: join(_items(lang, p)),
    "@list": lambda lang, p: listing(_items(lang, p)),
    "@clauses": lambda lang, p: clauses(_items(lang, p)),
    "@cat": lambda lang, p: "".join(_items(lang, p)),
    "@status": lambda lang, p: game_status(str(p["status"])),
    "@date": lambda lang, p: date(_moment(p["when"]), _now(p.get("now"))),
    "@left": lambda lang, p: left(_moment(p["due"]), _now(p["now"]) or datetime.now(UTC)),
    "@span": lambda lang, p: span(float(str(p["seconds"]))),
    "@reason": lambda lang, p: reason(p["why"]),
    "@notice": lambda lang, p: notice_text(cast("NoticeShape", p["doc"]), _now(p["now"]) or datetime.now(UTC)),
}


# Templates of messages without plural forms, by (language, message): the catalogs do not
# change while pbem runs, and an audit or a replay says a few thousand of them.
_singular: dict[tuple[str, str], str] = {}


def _template(lang: str, msg: str, n: object) -> str:
    tr = catalog.translations(lang)
    context, english, plural = catalog.english().get(msg) or (None, msg, None)
    if plural is not None:
        count = n if isinstance(n, int) else 2
        if context is not None:
            return tr.npgettext(context, english, plural, count)
        return tr.ngettext(english, plural, count)
    template = tr.pgettext(context, english) if context is not None else tr.gettext(english)
    _singular[(lang, msg)] = template
    return template


def has(key: str) -> bool:
    """Whether `key` is a short key of the catalog (for keys built at run time, `f"nt {kind}"`)."""
    found = catalog.english().get(key)
    return found is not None and found[0] is not None


# --- names -------------------------------------------------------------------------------


def kind_of(card: str | CardKind) -> CardKind | None:
    from engine.catalog import KINDS, CardKind, card_kind, is_card_id

    if isinstance(card, CardKind):
        return card
    if is_card_id(card):
        return card_kind(card)
    return KINDS.get(card)


def card_name(card: str | CardKind) -> str:
    """The catalog name of a card id (`cross.3`), a kind (`cross`) or a CardKind."""
    k = kind_of(card)
    if k is None:
        return t("face-down card") if card == "?" else str(card)
    return catalog.translations(language()).pgettext(f"card {k.kind}", k.en)


def role_name(kind: str | CardKind | None) -> str:
    """A role (dwarf kind or dwarf card id); None or "?" is unknown."""
    if kind is None or kind == "?" or kind == "none":
        return t("unknown")
    return card_name(kind)


def article(name: str) -> str:
    """English indefinite article; Chinese needs none."""
    if language() != "en":
        return name
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def join(items: list[str]) -> str:
    """`a, b and c` / `a、b和c`."""
    if not items:
        return t("nothing")
    if len(items) == 1:
        return items[0]
    head, last = t("list sep").join(items[:-1]), items[-1]
    sep = t("and")
    # Chinese runs words together, but a Latin name ("ann和cat") needs air around 和.
    if sep.strip() == sep and (head[-1:].isascii() or last[:1].isascii()):
        sep = f" {sep} "
    return head + sep + last


def listing(items: Iterable[str]) -> str:
    """`a, b, c` / `a、b、c`: a plain list, no "and" (see `join`)."""
    return t("list sep").join(items)


def clauses(items: Iterable[str]) -> str:
    """`a; b; c` / `a；b；c`: sentences of one line."""
    return t("clause sep").join(items)


def goal_name(goal: str) -> str:
    return t(goal) if goal in ("top", "middle", "bottom") else goal


def goal_word(card: str) -> str:
    """gold / stone for a goal card id or kind."""
    k = kind_of(card)
    return t("goal gold") if k is not None and k.kind == "goal-gold" else t("goal stone")


# --- layout and time ---------------------------------------------------------------------


def pad(text: str, width: int) -> str:
    """`text` padded to `width` terminal cells (a Chinese character takes two)."""
    if text.isascii() and text.isprintable():  # a cell each: rich's table of widths need not load
        return text + " " * max(0, width - len(text))
    from rich.cells import cell_len

    return text + " " * max(0, width - cell_len(text))


DOCUMENT_KINDS = ("invitation", "join", "packet", "move", "archive", "notice", "request", "handover", "mental")


def kind_name(kind: str, *, article: bool = False) -> str:
    """A document's kind (protocol/documents.py's KIND, an armour label) in words, one word
    per kind in each language (docs/translating.md's glossary); `article`: "a join" in English.
    A kind this pbem does not know is quoted as it came."""
    key = f"document {str(kind).lower()}"
    if not has(key):
        return repr(kind)
    name = t(key)
    return globals()["article"](name) if article else name


def labelled(label: object, value: object) -> str:
    """`label: value` with the colon of the language (Chinese: full-width ：)."""
    return t("{label}: {value}", label=label, value=value)


def step_name(step: str) -> str:
    """A trustless table's step (shuffle, deal, move, tokens, goal, reveal, join, over) in words;
    a step this pbem does not know is quoted as it came."""
    key = f"trustless step {step}"
    return t(key) if has(key) else repr(step)


def game_status(status: str) -> str:
    """The host's game status (joining, playing, over) in words."""
    if status == "playing":
        return t("playing")
    if status == "over":
        return t("over")
    if status == "joining":
        return t("waiting for joins")
    return status


# --- times (pbem.ui.when says deadlines and notices with them) ------------------------------

_UNITS = (("span day", 86400), ("span hour", 3600), ("span minute", 60), ("span second", 1))


def _parse(when: datetime | str) -> datetime:
    dt = datetime.fromisoformat(when) if isinstance(when, str) else when
    return (dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt).astimezone(UTC)


def date(when: datetime | str, now: datetime | None = None) -> str:
    """Thu 3 Dec 18:00 UTC / 12月3日（周四）18:00 UTC, in the reader's zone (pbem.ui.zone):
    Thu 3 Dec 19:00 CET; with the year when it is not the year of `now` (the
    machine's clock when not given): Wed 1 Jan 9000 00:00 UTC."""
    dt = zone.local(_parse(when))
    wd = t("weekdays").split()[dt.weekday()]
    mon = t("months").split()[dt.month - 1]
    hm = dt.strftime("%H:%M")
    year = dt.year != zone.local(now or datetime.now(UTC)).year
    if not dt.utcoffset():
        if year:
            return t("date year", wd=wd, d=dt.day, mon=mon, year=dt.year, hm=hm)
        return t("date", wd=wd, d=dt.day, mon=mon, hm=hm)
    named = zone.zone_name(dt)
    if year:
        return t("date year in zone", wd=wd, d=dt.day, mon=mon, year=dt.year, hm=hm, zone=named)
    return t("date in zone", wd=wd, d=dt.day, mon=mon, hm=hm, zone=named)


def span(seconds: float) -> str:
    """The two largest units: 1 day 4 hours, 3 hours 20 minutes, 45 seconds."""
    left = max(0, int(round(seconds)))
    parts: list[str] = []
    for key, size in _UNITS:
        n, left = divmod(left, size)
        if n and len(parts) < 2:
            parts.append(t(key, n=n))
        elif parts:
            break  # 1 day 0 hours 5 minutes reads as "1 day"
    if len(parts) == 2:
        return t("span pair", first=parts[0], second=parts[1])
    return parts[0] if parts else t("span second", n=0)


def left(due: datetime | str, now: datetime) -> str:
    """in 1 day 4 hours / 3 hours late."""
    seconds = (_parse(due) - now).total_seconds()
    return t("in span", span=span(seconds)) if seconds >= 0 else t("late by", span=span(-seconds))


def reason(why: object) -> str:
    """Why the host moved for a seat (timeout, absent, resigned) in words."""
    key = f"why {why}"
    return t(key) if has(key) else str(why)


def notice_line(kind: str, now: datetime, *, seat: str | None = None, seq: int | None = None, missed: int | None = None,
                policy: str | None = None, fingerprint: str | None = None, due: str | None = None,
                until: str | None = None, step: str | None = None) -> str:
    """A host's notice (reminder, late, absent, away, ...) in one sentence. A notice of a
    trustless game names the step the table waits for (`step`): its own sentences say that
    nobody can answer for the seat."""
    kw: dict[str, Any] = {"player": seat, "seq": seq, "n": missed or 0, "policy": policy, "fingerprint": fingerprint}
    if due:
        kw["when"] = date(due, now)
        kw["left"] = left(due, now)
    if until:
        kw["when"] = date(until, now)
    key = f"nt {kind}"
    if step is not None and has(f"{key} step"):
        key, kw["step"] = f"{key} step", step_name(step)
        if policy == "discard" and has(f"{key} discard"):  # the others will stand in (docs/trustless.md §11)
            key = f"{key} discard"
    if not has(key):  # a notice kind from a newer host
        return labelled(kind, seat or "").strip()
    try:
        return t(key, **kw)
    except (KeyError, IndexError):
        return labelled(kind, seat or "").strip()


class NoticeShape(Protocol):
    """What `notice_text` reads of a host's notice (pbem.protocol.documents.Notice)."""

    @property
    def notice(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def seat(self) -> str | None: ...
    @property
    def due(self) -> str | None: ...
    @property
    def until(self) -> str | None: ...
    @property
    def missed(self) -> int | None: ...
    @property
    def policy(self) -> str | None: ...
    @property
    def fingerprint(self) -> str | None: ...
    @property
    def step(self) -> str | None: ...


def notice_text(doc: NoticeShape, now: datetime) -> str:
    """A host's notice document in one sentence."""
    return notice_line(doc.notice, now, seat=doc.seat, seq=doc.seq, missed=doc.missed, policy=doc.policy,
                       fingerprint=doc.fingerprint, due=doc.due, until=doc.until, step=doc.step)

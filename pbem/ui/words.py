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

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from engine.errors import InvalidMove
from pbem.ui import catalog

if TYPE_CHECKING:
    from datetime import datetime

    from engine.catalog import CardKind
    from engine.moves import Move
    from engine.state import RoundState

# The card catalog and the notation (engine.catalog, engine.moves) load with the first
# card or move put in words, not for a help page nor a key's command.

LANGUAGES = ("en", "zh-Hans", "zh-Hant")
_chosen: str | None = None


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
    if lang is None:
        _chosen = None
        return
    norm = _normalise(lang)
    if norm is None:
        raise ValueError(t("unknown language {lang}; choose one of {choices}", lang=repr(lang), choices=", ".join(LANGUAGES)))
    _chosen = norm


def language() -> str:
    if _chosen is not None:
        return _chosen
    # A bad PBEM_LANG must not break every command: fall back to English.
    return _normalise(os.environ.get("PBEM_LANG", "en")) or "en"


@contextmanager
def using(lang: str) -> Iterator[None]:
    """Temporarily write in `lang` (e.g. one mail per recipient)."""
    global _chosen
    before = _chosen
    set_language(lang)
    try:
        yield
    finally:
        _chosen = before


def t(msg: str, **kw: object) -> str:
    """The message `msg` (English text or an entry's msgctxt) in the current language,
    formatted with `kw`. A message missing from a catalog falls back to English (the test
    suite makes sure none is missing)."""
    lang = language()
    template = _singular.get((lang, msg))
    if template is None:
        template = _template(lang, msg, kw.get("n"))
    return template.format(**kw) if kw else template  # no fields: braces are left for the caller


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


def N_(msg: str) -> str:
    """Marks `msg` for the catalogs (scripts/i18n collects it like a t() call) where the words
    are said later by t(msg), e.g. from a table of templates (gettext's N_ convention)."""
    return msg


def has(key: str) -> bool:
    """Whether `key` is a short key of the catalog (for keys built at run time, `f"nt {kind}"`)."""
    found = catalog.english().get(key)
    return found is not None and found[0] is not None


# --- names -------------------------------------------------------------------------------


def _kind(card: str | CardKind) -> CardKind | None:
    from engine.catalog import KINDS, CardKind, card_kind, is_card_id

    if isinstance(card, CardKind):
        return card
    if is_card_id(card):
        return card_kind(card)
    return KINDS.get(card)


def card_name(card: str | CardKind) -> str:
    """The catalog name of a card id (`cross.3`), a kind (`cross`) or a CardKind."""
    k = _kind(card)
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
    k = _kind(card)
    return t("goal gold") if k is not None and k.kind == "goal-gold" else t("goal stone")


def describe_fact(fact: list[str]) -> str | None:
    """One entry of RoundState.knowledge (["map", goal, card], ["inspect", player, role],
    ["hat", role]) as its owner reads it."""
    if fact[:1] == ["map"]:  # "?": a trustless seat's map card not open yet (said with the shut cards)
        return t("knows map", goal=goal_name(fact[1]), card=goal_word(fact[2])) if fact[2] != "?" else None
    if fact[:1] == ["inspect"]:
        return t("knows inspect", player=fact[1], a_role=article(role_name(fact[2])))
    if fact[:1] == ["hat"]:
        return t("knows hat", role=role_name(fact[1]))
    return None


# --- moves -------------------------------------------------------------------------------

def describe_move(move_text: str, actor: str, events: Sequence[Mapping[str, Any]] | None = None, *, reveal: bool = False) -> str:
    """A move in words. A discard never names its cards unless `reveal` (they are secret).

    `events` (from engine.rules.apply) add what the text alone does not say, e.g. which
    card a rockfall removed.
    """
    text = " ".join(move_text.strip().lower().split())
    if text in ("pass", "skip"):
        return t("pass", actor=actor)
    from engine.moves import parse

    try:
        move = parse(text, public=True)
    except InvalidMove:
        return t("unknown move", actor=actor, move=move_text)
    if move.verb == "discard":
        return _discard(move, actor, reveal and not move.face_down)
    if move.verb == "steal":
        if move.target is None:
            return t("steal nobody", actor=actor)
        return t("steal", actor=actor, target=move.target)
    return _play(move, actor, events or [])


def _discard(move: Move, actor: str, reveal: bool) -> str:
    n = len(move.cards)
    names = join([article(card_name(c)) for c in move.cards])
    if move.remove:
        kind = card_name(move.remove)
        if reveal:
            return t("discard remove named", actor=actor, cards=names, type=kind)
        return t("discard remove", actor=actor, n=n, type=kind)
    if reveal:
        return t("discard named", actor=actor, cards=names)
    return t("discard", actor=actor, n=n)


def _play(move: Move, actor: str, events: Sequence[Mapping[str, Any]]) -> str:
    assert move.card is not None
    k = _kind(move.card)
    if k is None:
        return t("unknown move", actor=actor, move=str(move))
    kw: dict[str, object] = {"actor": actor, "card": card_name(k), "a_card": article(card_name(k)), "target": move.target}
    if move.at is not None:
        kw["at"] = f"{move.at[0]},{move.at[1]}"
    if k.category in ("path", "start", "goal"):
        return t("place rotated" if move.rotated else "place", **kw)
    action = k.action
    own = move.target == actor
    if action == "break":
        return t("break self" if own else "break", tool=t(k.tools[0]), **kw)
    if action == "fix":
        return t("fix self" if own else "fix", tool=t(move.tool or k.tools[0]), **kw)
    if action == "rockfall":
        removed = next((e.get("card") for e in events if e.get("event") == "rockfall"), None)
        if isinstance(removed, str):
            return t("rockfall card", removed=card_name(removed), a_removed=article(card_name(removed)), **kw)
        return t("rockfall", **kw)
    if action == "map":
        return t("map", goal=goal_name(move.target or ""), **kw)
    if action == "hands-off":
        return t("hands-off self" if own else "hands-off", theft=card_name("theft"), **kw)
    if action in ("free", "swap-hat"):
        return t(f"{action} self" if own else action, **kw)
    if action in ("theft", "trap", "inspect", "swap-hand"):
        return t(action, **kw)
    return t("unknown move", actor=actor, move=str(move))


# --- events ------------------------------------------------------------------------------

# Events that only repeat what the move's own sentence says, or that are secret (a draw).
_SILENT = frozenset({"place", "rockfall", "remove", "draw", "swap-hand"})
_PRIVATE = frozenset({"map", "inspect", "swap-hat"})


def describe_event(event: Mapping[str, Any], *, reveal: bool = False) -> str | None:
    """An engine event in words, or None when it says nothing new or is secret.

    Private events (map, inspect, swap-hat results) are described only with `reveal`, for
    the one player who may know them. A "move" event is described in its public form.
    """
    kind = event.get("event")
    if kind in _SILENT:
        return None
    if kind in _PRIVATE and not reveal:
        return None
    if kind == "move":
        text = str(event.get("move", ""))
        if not reveal:
            from engine.moves import public_text

            try:
                text = public_text(text)
            except InvalidMove:
                text = "?"  # not a move: show nothing of it
        return describe_move(text, str(event.get("player")), reveal=reveal)
    if kind == "reveal":
        return t("ev reveal", goal=goal_name(str(event["goal"])), card=goal_word(str(event["card"])))
    if kind == "gold":
        return t("ev gold", player=event["finder"])
    if kind == "round_over":
        found = event.get("gold_found")
        key = "ev round over" if found is None else "ev round over gold" if found else "ev round over no gold"
        return t(key, n=event.get("round", "?"))
    if kind == "payout":
        paid = [f"{p} {g:+d}" for p, g in dict(event.get("gold", {})).items() if g]
        return t("ev payout", list=join(paid)) if paid else t("ev payout none")
    if kind == "winners":
        players = list(event.get("players", []))
        return t("ev winners", list=join(players)) if players else t("ev no winners")
    if kind == "next_start":
        return t("ev next start", player=event.get("player"))
    if kind == "skip":
        return t("ev skip", player=event["player"])
    if kind == "passes":
        return t("ev passes")
    if kind == "hands-empty":
        return t("ev hands empty")
    if kind == "nugget":
        value = event.get("value")
        if value is None and isinstance(event.get("card"), str):
            from engine.catalog import card_kind

            value = card_kind(str(event["card"])).value
        return t("ev nugget", player=event["player"], n=value)
    if kind == "teams":
        teams = list(event.get("teams", []))
        if teams:
            return t("ev teams", list=join([t(f"team {x}") for x in teams]))
        return t("ev boss alone") if event.get("lone") == "boss" else t("ev saboteurs")
    if kind == "crystals":
        return t("ev crystals", n=event.get("count", 0), each=event.get("each", 0))
    if kind == "thefts":
        return t("ev thefts", list=join(list(event.get("order", []))))
    if kind == "steal":
        # A real steal is the thief's move; only the engine's skip is news.
        return t("ev steal skipped", player=event["player"]) if event.get("skipped") else None
    if kind == "map":
        return t("ev map", player=event["player"], goal=goal_name(str(event["goal"])), card=goal_word(str(event["card"])))
    if kind == "inspect":
        role = str(event.get("role"))
        return t("ev inspect", player=event["player"], target=event["target"], a_role=article(role_name(role)))
    if kind == "swap-hat":
        return t("ev swap-hat", player=event["player"], role=role_name(str(event.get("role"))))
    return None


# --- layout and time ---------------------------------------------------------------------


def round_outcome(state: RoundState) -> list[str]:
    """A finished round (its full final state) in two lines: who found the gold, or that nobody
    did, and which side won; then every seat's role (the saboteurs named at last)."""
    from engine.payout import winning_side

    if state.ruleset == "classic":
        side = (t("the gold-diggers win") if state.finder else t("ev saboteurs")) if state.winners else t("ev no winners")
    else:
        teams, lone = winning_side(state)
        side = describe_event({"event": "teams", "teams": sorted(teams), "lone": lone}) or ""
    found = (t("{player} found the gold: {side}", player=state.finder, side=side) if state.finder
             else t("the gold was not found: {side}", side=side))
    roles = listing(f"{p} {role_name(state.roles.get(p))}" for p in state.players)
    return [found, t("roles: {list}", list=roles)]


def pad(text: str, width: int) -> str:
    """`text` padded to `width` terminal cells (a Chinese character takes two)."""
    if text.isascii() and text.isprintable():  # a cell each: rich's table of widths need not load
        return text + " " * max(0, width - len(text))
    from rich.cells import cell_len

    return text + " " * max(0, width - cell_len(text))


def ago(stamp: str | None, now: datetime | None = None) -> str:
    """An ISO time as the reader says it: `just now`, `5 minutes ago`, `3 hours ago`, `2 days ago`."""
    from datetime import datetime

    if not stamp:
        return "-"
    try:
        then = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    seconds = int(((now or datetime.now(UTC)) - then).total_seconds())
    if seconds < 60:
        return t("just now")
    if seconds < 3600:
        return t("minutes ago", n=seconds // 60)
    if seconds < 86400:
        return t("hours ago", n=seconds // 3600)
    return t("days ago", n=seconds // 86400)


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


def game_turn(status: str, to_move: str | None, waiting: Mapping[str, Any] | None, joined: int, seats: int) -> str:
    """Where a hosted game stands, one phrase for `pbem games` and `pbem status` alike: over,
    the step a trustless table waits for and from whom, joining (how many are in), or who is to move."""
    if status == "over":
        return t("game over")
    if waiting and waiting.get("seats"):
        return t("trustless waits", step=step_name(str(waiting["step"])), seats=join(list(waiting["seats"])))
    if status == "joining":
        return t("joining ({joined}/{seats} in)", joined=joined, seats=seats)
    if to_move:
        return t("{player} to move", player=to_move)
    return game_status(status)


def game_status(status: str) -> str:
    """The host's game status (joining, playing, over) in words."""
    if status == "playing":
        return t("playing")
    if status == "over":
        return t("over")
    if status == "joining":
        return t("waiting for joins")
    return status

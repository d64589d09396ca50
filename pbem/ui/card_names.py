"""A typed move may name its cards as `pbem show` names them: `play 十字路 at 1,0`, `discard dead end`.

The engine reads a card as its id (`cross.1`), its kind (`cross`) or its number in the hand
shown (`3`); a person reads the hand's name column, in their own language. `typed_move`
turns each name at a card's place in a move (the card after `play`, the cards of a `discard`)
into the id of the card of that name in the mover's hand, and the engine reads the rest as
ever, so the move kept, signed and sent is in ids (the notation's canonical form), and ids,
kinds and numbers mean what they meant. A name is read in any of the three languages (the
names of every card of both rulesets, from the catalogs `card_name` prints them from), case
and spacing aside. A name that more than one card of the hand has (`curve`: curve-ne and
curve-nw) is refused with their numbers and ids: a path card's shape is the move.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from engine.catalog import HIDDEN, KINDS, card_kind, is_card_id
from engine.errors import IllegalMove, InvalidMove, MoveError
from pbem.ui import catalog, words
from pbem.ui.words import LANGUAGES, t

if TYPE_CHECKING:
    from engine.moves import Move
    from engine.state import RoundState

_ENDS = {"play": ("at", "on"), "discard": ("remove",)}  # the words after a move's cards


def fold(name: str) -> str:
    """A name as it is compared: case and spacing aside."""
    return " ".join(name.casefold().split())


@cache
def names() -> dict[str, frozenset[str]]:
    """Each card name of every language (folded) -> the kinds that bear it."""
    found: dict[str, set[str]] = {}
    for lang in LANGUAGES:
        said = catalog.translations(lang)
        for kind, k in KINDS.items():
            found.setdefault(fold(said.pgettext(f"card {kind}", k.en)), set()).add(kind)
    return {name: frozenset(kinds) for name, kinds in found.items()}


def _plain(word: str) -> bool:
    """A card as the engine reads it: an id, a kind or a number."""
    w = word.lower()
    return is_card_id(w) or w in KINDS or w.isdigit()


def typed_move(text: str, hand: Sequence[str] | None) -> str:
    """`text` with each card name at a card's place replaced by the id of the card of that
    name in `hand` (shown order; a card named twice in one discard is two cards). Anything
    else is left to the engine. InvalidMove for a name two kinds of the hand share,
    IllegalMove for a name no card left in the hand has."""
    words = text.split()
    if hand is None or len(words) < 2 or words[0].lower() not in _ENDS:
        return text
    verb = words[0].lower()
    stop = next((i for i in range(2, len(words)) if words[i].lower() in _ENDS[verb]), len(words))
    taken: list[str] = []
    out, i = [words[0]], 1
    while i < stop:
        n = _name_length(words, i, stop, whole=verb == "play")  # play: one card, all words up to 'at' or 'on'
        if n == 0:  # an id, kind or number, or no name: the engine says what it makes of it
            _refuse_near_name(text, words, i, stop, whole=verb == "play")
            out.append(words[i])
            i += 1
            continue
        card = _held(text, " ".join(words[i:i + n]), names()[fold(" ".join(words[i:i + n]))], hand, taken)
        taken.append(card)
        out.append(card)
        i += n
    return " ".join(out + words[stop:])


def _name_length(words: list[str], i: int, stop: int, *, whole: bool) -> int:
    """How many words from `i` make one card's name (the longest; `whole`: all up to `stop`), or 0.
    One word that is an id, kind or number is the notation's (`blue` the kind, `blue door` a name),
    so a move in the notation alone (`play cross.1 at 1,0`) needs no catalog's names."""
    if stop - i == 1 and _plain(words[i]):
        return 0
    for n in [stop - i] if whole else range(min(max(len(name.split()) for name in names()), stop - i), 0, -1):
        if (n > 1 or not _plain(words[i])) and fold(" ".join(words[i:i + n])) in names():
            return n
    return 0


def _refuse_near_name(text: str, words: list[str], i: int, stop: int, *, whole: bool) -> None:
    """InvalidMove, with the move meant, when the words from `i` are a name of two words or more
    misspelt (`dead edn`); the engine, which knows no names, would mend one word of it alone
    (`dead-n edn`). One word is left to the engine and its own suggestions."""
    if _plain(words[i]):
        return
    import difflib  # only for words that name no card

    longest = max(len(name.split()) for name in names())
    for n in [stop - i] if whole else range(min(longest, stop - i), 1, -1):
        if n < 2:  # play's one word
            return
        phrase = " ".join(words[i:i + n])
        near = difflib.get_close_matches(fold(phrase), [m for m in names() if len(m.split()) == n], n=1, cutoff=0.75)
        if near:
            meant = " ".join([*words[:i], near[0], *words[i + n:]])
            raise InvalidMove(text, f"unknown card {phrase!r}; did you mean {near[0]}?", meant)


def _held(text: str, name: str, kinds: frozenset[str], hand: Sequence[str], taken: list[str]) -> str:
    """The first card of `hand` (shown order) named `name` and not `taken`."""
    from engine.moves import shown_hand

    shown = shown_hand(hand)
    held = [(n, c) for n, c in enumerate(shown, 1) if c != HIDDEN and c not in taken and card_kind(c).kind in kinds]
    if not held:
        raise IllegalMove(text, f"you hold no {name}")
    if len({card_kind(c).kind for _, c in held}) > 1:
        choices = words.listing(f"{n} ({c})" for n, c in held)
        raise InvalidMove(text, t("{name} is the name of more than one card in your hand: {choices}; write its number "
                                  "or its id", name=repr(name), choices=choices))
    return held[0][1]


def check_typed(state: RoundState, text: str) -> Move:
    """A move a person typed, checked by the rules on `state` (the mover's view), its cards
    named as `pbem show` names them or as the notation does. A refusal quotes the words typed."""
    from engine.rules import check
    from engine.state import PLAYING

    hand = state.hands.get(state.player) if state.phase == PLAYING else None
    try:
        return check(state, typed_move(text, hand))
    except MoveError as exc:
        if exc.move == text:
            raise
        raise type(exc)(text, exc.reason, exc.suggestion) from None

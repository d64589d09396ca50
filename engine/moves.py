"""Moves and their text notation (RULES.md §7).

A `Move` is plain data. `parse` reads what a person types (any case, bare kinds allowed);
`str(move)` prints the canonical form. Bare kinds are resolved against a hand by `resolve`.
`move.public()` is the move as every seat may see it: a discard's cards face down, written
"discard 2 cards"; `parse(text, public=True)` reads that form back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, NamedTuple, get_args

from .catalog import (
    FRONT_TYPES,
    HIDDEN,
    KINDS,
    TOOLS,
    FrontType,
    Tool,
    card_kind,
    card_sort_key,
    ids_of,
    is_card_id,
    is_front_type,
    is_tool,
)
from .errors import IllegalMove, InvalidMove

Pos = tuple[int, int]
Verb = Literal["play", "discard", "steal"]
VERBS: tuple[Verb, ...] = get_args(Verb)
GoalName = Literal["top", "middle", "bottom"]
GOAL_NAMES: tuple[GoalName, ...] = get_args(GoalName)
RESERVED_NAMES = frozenset(GOAL_NAMES + ("nobody",))


class Move(NamedTuple):
    verb: Verb
    card: str | None = None  # the played card (an id once resolved)
    at: Pos | None = None  # placement or rockfall cell
    rotated: bool = False
    target: str | None = None  # a player, a goal name, or None ("nobody" for steal)
    tool: Tool | None = None  # fix: which tool is repaired
    cards: tuple[str, ...] = ()  # discard: the discarded cards, sorted by id
    remove: FrontType | None = None  # discard 2 and remove: the in-front type removed

    def public(self) -> Move:
        """The move as every seat may see it: the cards of a discard are face down."""
        if self.verb != "discard":
            return self
        return self._replace(cards=(HIDDEN,) * len(self.cards))

    @property
    def face_down(self) -> bool:
        """A discard whose cards are not shown (the public form)."""
        return HIDDEN in self.cards

    def __str__(self) -> str:
        verb = self.verb
        if verb == "play":  # the commonest first: apply writes every move's text in its event
            at = self.at
            if at is not None:
                text = f"play {self.card} at {at[0]},{at[1]}"
                return text + " rotated" if self.rotated else text
            if self.target is not None:
                text = f"play {self.card} on {self.target}"
                return f"{text} {self.tool}" if self.tool else text
            return f"play {self.card}"
        if verb == "steal":
            return f"steal {self.target or 'nobody'}"
        cards = self.cards
        if HIDDEN in cards:  # face down
            n = len(cards)
            text = f"discard {n} card{'' if n == 1 else 's'}"
        else:
            text = "discard " + " ".join(cards)
        return f"{text} remove {self.remove}" if self.remove else text


_COORD = re.compile(r"^(-?\d+),(-?\d+)$")


def shown_hand(hand: Sequence[str]) -> list[str]:
    """A hand in the order it is shown and numbered from 1 (`play 3 at 1,0` plays the third)."""
    return sorted(hand, key=lambda c: card_sort_key(c) if c != HIDDEN else ("", 0))


def parse(text: str, *, hand: Sequence[str] | None = None, public: bool = False) -> Move:
    """Parse one move. Raises InvalidMove (quoting the text) when it is not a move at all.

    With `hand` (the mover's), a card may be given by its number in `shown_hand(hand)`. With
    `public`, the public form of a discard ("discard 2 cards [remove <type>]") is read too.
    """
    original = text
    words = text.strip().lower().replace(", ", ",").split()
    if not words:
        raise InvalidMove(original, "empty move")
    verb, rest = words[0], words[1:]

    def bad(why: str, suggestion: str | None = None) -> InvalidMove:
        return InvalidMove(original, why, suggestion)

    def card_word(word: str) -> str:
        return _card_word(word, words, original, hand)

    if verb == "steal":
        if len(rest) != 1:
            raise bad("expected 'steal <player>' or 'steal nobody'")
        return Move("steal", target=None if rest[0] == "nobody" else rest[0])
    if verb == "discard":
        if public and len(rest) >= 2 and rest[1] in ("card", "cards") and rest[0] in ("1", "2", "3"):
            face_down = (HIDDEN,) * int(rest[0])
            if not rest[2:]:
                return Move("discard", cards=face_down)
            removed = rest[3] if len(rest) == 4 and rest[2] == "remove" else None
            if not is_front_type(removed):
                raise bad(f"expected 'discard <n> cards remove <{'|'.join(FRONT_TYPES)}>'")
            return Move("discard", cards=face_down, remove=removed)
        if "remove" in rest:
            i = rest.index("remove")
            cards, tail = rest[:i], rest[i + 1 :]
            if len(cards) != 2 or len(tail) != 1 or not is_front_type(tail[0]):
                raise bad(f"expected 'discard <card> <card> remove <{'|'.join(FRONT_TYPES)}>'")
            return Move("discard", cards=tuple(card_word(c) for c in cards), remove=tail[0])
        if not 1 <= len(rest) <= 3:
            raise bad("expected 'discard <card> [<card> [<card>]]'")
        return Move("discard", cards=tuple(card_word(c) for c in rest))
    if verb != "play":
        raise bad("a move starts with 'play', 'discard' or 'steal'")
    if not rest:
        raise bad("play what?")
    word, card, rest = rest[0], card_word(rest[0]), rest[1:]
    if not rest:
        return Move("play", card)
    if rest[0] == "at":
        if len(rest) not in (2, 3) or (len(rest) == 3 and rest[2] != "rotated"):
            raise bad("expected 'play <card> at <x>,<y> [rotated]'")
        m = _COORD.match(rest[1])
        if not m:
            raise bad(f"bad coordinates {rest[1]!r}, expected x,y")
        return Move("play", card, at=(int(m[1]), int(m[2])), rotated=len(rest) == 3)
    if rest[0] == "on":
        aim = rest[1:]
        if len(aim) == 2 and "goal" in aim and (set(aim) - {"goal"}) <= set(GOAL_NAMES):
            aim = [w for w in aim if w != "goal"]  # 'on goal top' and 'on top goal' mean 'on top'
        if len(aim) == 1 and _COORD.match(aim[0]):
            raise bad(f"a card goes on the maze 'at <x>,<y>', not 'on {aim[0]}'",
                      f"play {word} at {aim[0]}")
        if len(aim) == 1:
            return Move("play", card, target=aim[0], tool=_only_tool(card))
        if len(aim) == 2:
            tool = aim[1]
            if not is_tool(tool):
                raise bad(f"unknown tool {tool!r}, expected one of {', '.join(TOOLS)}")
            return Move("play", card, target=aim[0], tool=tool)
    raise bad("expected 'at <x>,<y>' or 'on <player>' after the card")


def _only_tool(card: str) -> Tool | None:
    """The tool a repair card fixes when it fixes one only (then the move need not name it)."""
    k = KINDS[card.rpartition(".")[0] if is_card_id(card) else card]
    return k.tools[0] if k.action == "fix" and len(k.tools) == 1 else None


_CARD_WORDS = sorted(set(KINDS) | {cid for kind in KINDS for cid in ids_of(kind)})


def _card_word(word: str, words: list[str], original: str, hand: Sequence[str] | None) -> str:
    """A card id or kind as written, or the card numbered `word` in the shown hand."""
    if is_card_id(word) or word in KINDS:
        return word
    if word.isdigit():
        if hand is None:
            raise InvalidMove(original, f"card {word}: a card is given by number only against your hand; "
                                        "write its name (e.g. cross.1)")
        shown, n = shown_hand(hand), int(word)
        if 1 <= n <= len(shown) and shown[n - 1] != HIDDEN:
            return shown[n - 1]
        raise InvalidMove(original, f"there is no card {n} in your hand (1 to {len(shown)})")
    kind, dot, copy = word.rpartition(".")
    if dot and kind in KINDS and copy.isdigit():
        count = KINDS[kind].count
        have = f"{kind}.1" if count == 1 else f"{kind}.1 to {kind}.{count}"
        raise InvalidMove(original, f"you do not hold {word}: there is no such card (the game has {have})")
    import difflib  # only for a word no card has, not at every seat's start

    close = difflib.get_close_matches(word, _CARD_WORDS, n=1, cutoff=0.75)
    if close:
        fixed = " ".join(close[0] if w == word else w for w in words)
        raise InvalidMove(original, f"unknown card {word!r}; did you mean {close[0]}?", fixed)
    raise InvalidMove(original, f"unknown card {word!r}")


def public_text(text: str) -> str:
    """The public form of a move's text: a discard's cards become a count. InvalidMove if not a move."""
    return str(parse(text, public=True).public())


def resolve(move: Move, hand: list[str], text: str | None = None) -> Move:
    """Replace bare kinds by the lowest copy held and normalise symmetric turns away."""
    if move.verb == "steal":
        return move
    if move.verb == "discard":
        cards = move.cards
        if move.face_down:  # on a view (pbem/protocol/trustless): a face-down discard takes hidden cards
            if hand.count(HIDDEN) < len(cards) or set(cards) != {HIDDEN}:
                raise IllegalMove(text or str(move), f"there are not {len(cards)} face-down cards to discard")
            return move
        if len(cards) == 1 and cards[0] in hand:  # the commonest discard: nothing to resolve or order
            return move
        if all(c in hand for c in cards) and len(set(cards)) == len(cards):  # ids held: only the order
            ordered = tuple(sorted(cards, key=card_sort_key))
            return move if ordered == cards else move._replace(cards=ordered)
        pool = _known(hand)
        chosen: list[str] = []
        for word in move.cards:
            cid = _take(word, pool, text, move)
            pool.remove(cid)
            chosen.append(cid)
        return move._replace(cards=tuple(sorted(chosen, key=card_sort_key)))
    assert move.card is not None
    cid = move.card if move.card in hand else _take(move.card, _known(hand), text, move)
    rotated = move.rotated
    if rotated:
        k = card_kind(cid)
        if k.category != "path" or k.symmetric:
            rotated = False
    return move if cid == move.card and rotated == move.rotated else move._replace(card=cid, rotated=rotated)


def _known(hand: list[str]) -> list[str]:
    """The cards of a hand one can name, in id order (a view's hidden cards left out)."""
    return sorted((c for c in hand if c != HIDDEN), key=card_sort_key)


def _take(word: str, pool: list[str], quoted: str | None, move: Move) -> str:
    if is_card_id(word):
        if word in pool:
            return word
        raise IllegalMove(quoted or str(move), f"you do not hold {word}")
    for cid in pool:
        if cid.rpartition(".")[0] == word:
            return cid
    raise IllegalMove(quoted or str(move), f"you hold no {word}")

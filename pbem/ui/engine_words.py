"""The engine's refusals in the reader's language.

engine/ is pure and speaks English: a MoveError's `reason` is one of its templates filled in
("bob already has a broken-lamp"). Each of those templates is here once, marked for the
catalogs; a reason is matched against them and said again through the catalog with the same
fields. tests/test_engine_words.py reads every reason template in engine/ and fails on one
that is missing here, so a new refusal cannot reach a player untranslated.
"""

from __future__ import annotations

import re
from functools import cache

from engine.errors import InvalidMove, MoveError
from pbem.errors import N_, Msg, Text, card_word, msg
from pbem.ui.words import render

REASONS = (
    # engine/actions.py: the action cards' refusals
    N_("{target} already has a {tool}"),
    N_("{card} repairs {tools}; name the tool"),
    N_("{target} has no broken {tool}"),
    N_("rockfall needs a path card (not the start or a goal) at {cell}"),
    N_("a map is played 'on top', 'on middle' or 'on bottom'"),
    N_("the {goal} goal is already face up"),
    N_("a theft is played in front of yourself: 'play theft'"),
    N_("you already have a theft in front of you"),
    N_("{target} has no theft in front of them"),
    N_("a trap is played on another player"),
    N_("{target} is already trapped"),
    N_("{target} is not trapped"),
    N_("{card} is played on another player"),
    N_("no dwarf cards are left aside"),
    # engine/board.py: where a path card may go
    N_("{x},{y} is not empty"),
    N_("{x},{y} does not touch the maze"),
    N_("its edges do not match the neighbouring cards"),
    N_("a ladder may not touch a goal card"),
    N_("it would not connect to the start"),
    # engine/moves.py: move text
    N_("empty move"),
    N_("a move starts with 'play', 'discard' or 'steal'"),
    N_("play what?"),
    N_("expected 'steal <player>' or 'steal nobody'"),
    N_("expected 'discard <card> [<card> [<card>]]'"),
    N_("expected 'discard <n> cards remove <{fronts}>'"),
    N_("expected 'discard <card> <card> remove <{fronts}>'"),
    N_("expected 'play <card> at <x>,<y> [rotated]'"),
    N_("expected 'at <x>,<y>' or 'on <player>' after the card"),
    N_("bad coordinates {text}, expected x,y"),
    N_("a card goes on the maze 'at <x>,<y>', not 'on {target}'"),
    N_("unknown tool {tool}, expected one of {tools}"),
    N_("card {card}: a card is given by number only against your hand; write its name (e.g. cross.1)"),
    N_("there is no card {n} in your hand (1 to {last})"),
    N_("you do not hold {card}: there is no such card (the game has {have})"),
    N_("unknown card {card}; did you mean {guess}?"),
    N_("unknown card {card}"),
    N_("there are not {n} face-down cards to discard"),
    N_("you do not hold {card}"),
    N_("you hold no {card}"),
    # engine/rules.py: the round's rules
    N_("the round is over"),
    N_("{player} must choose whom to steal from ('steal <player>' or 'steal nobody')"),
    N_("{target} cannot be robbed (not a player with gold, or yourself)"),
    N_("stealing happens only at the end of an expansion round"),
    N_("a path card is played 'at <x>,<y>'"),
    N_("you cannot place path cards while a broken tool or trap lies in front of you"),
    N_("'discard 2 and remove' is a Saboteur 2 rule"),
    N_("'discard 2 and remove' discards exactly 2 cards"),
    N_("there is no {card} in front of you"),
    N_("a pass discards exactly 1 card"),
    N_("a pass discards 1 to 3 cards"),
    N_("unknown player {target}; players are {players}"),
    N_("{card} is played 'on <player>'"),
    N_("only a repair card names a tool"),
)


def literal_parts(template: str) -> tuple[str, ...]:
    """The words of a template between its fields: what a reason must hold to match it."""
    return tuple(re.split(r"\{[^{}]*\}", template))


@cache
def _patterns() -> list[tuple[re.Pattern[str], str]]:
    # The most specific first: "unknown card {card}" would also match "unknown card 'x'; did you mean y?"
    ordered = sorted(REASONS, key=lambda tpl: -sum(map(len, literal_parts(tpl))))
    out = []
    for template in ordered:
        pieces = re.split(r"(\{[^{}]*\})", template)
        regex = "".join(f"(?P<{p[1:-1]}>.+?)" if p.startswith("{") else re.escape(p) for p in pieces)
        out.append((re.compile(regex, re.S), template))
    return out


def reason_msg(reason: str) -> Text:
    """An engine reason as words not yet said (as it is when no template matches). A card
    lying in front of a player (`{tool}`: break-pick, trap...) is named as `pbem show` names
    it, in the reader's language: "bob already has a broken pick", not its id."""
    from engine.catalog import FRONT_TYPES

    for pattern, template in _patterns():
        m = pattern.fullmatch(reason)
        if m:
            fields: dict[str, object] = dict(m.groupdict())
            if fields.get("tool") in FRONT_TYPES:
                fields["tool"] = card_word(str(fields["tool"]))
            return msg(template, **fields)
    return reason


def reason_words(reason: str) -> str:
    """An engine reason in the current language (reason_msg, said)."""
    return render(reason_msg(reason))


def move_error_msg(exc: MoveError) -> Msg:
    """The whole refusal as words not yet said: "illegal move 'play cross.1 at 9,9': 9,9 does
    not touch the maze", the same in a report whatever the reader's language."""
    if isinstance(exc, InvalidMove):
        return msg("not a move {move}: {reason}", move=repr(exc.move), reason=reason_msg(exc.reason))
    return msg("illegal move {move}: {reason}", move=repr(exc.move), reason=reason_msg(exc.reason))


def move_error_words(exc: MoveError) -> str:
    """The whole refusal in the current language."""
    return render(move_error_msg(exc))

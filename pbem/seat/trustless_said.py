"""What a trustless seat says of its table (pbem.seat.trustless): the news since it last
looked, the cards still shut and who owes their part of them, and `pbem show`'s summary."""

from __future__ import annotations

from typing import Any

from pbem.protocol.table_docs import CHOICES
from pbem.seat.trustless import Follower, TrustlessSeat
from pbem.ui.hints import legal_for
from pbem.ui.words import join as join_words
from pbem.ui.words import t

NEWS_AT_MOST = 20  # moves said at once; the replay has them all


def news(follower: Follower, since: int) -> list[str]:
    """What happened at the table after packet `since`, in words: each move as its seat made it
    public, who shuffled, each round's end (who found the gold, the winning side, every role);
    at most NEWS_AT_MOST moves, the earlier ones counted."""
    from pbem.ui.move_words import describe_move, round_outcome

    out: list[str] = []
    ends = {end.round_no: end for end in follower.table.ended}
    for seq, doc, ended in follower.log:
        if seq <= since:
            continue
        if doc.step == "move" and doc.move:
            out.append(describe_move(doc.move, doc.seat))
        elif doc.step == "shuffle":
            out.append(t("{seat} shuffled the cards", seat=doc.seat))
        if ended is not None:
            out += [t("ev round over", n=ended), *round_outcome(ends[ended].state)]
    if len(out) > NEWS_AT_MOST:
        earlier = len(out) - NEWS_AT_MOST
        out = [t("... and {n} before these (pbem replay shows a whole round once it is over)", n=earlier),
               *out[-NEWS_AT_MOST:]]
    return out


def waiting_words(cards: list[dict[str, Any]]) -> list[str]:
    """This seat's cards still shut, in words: its role, and how many cards of its hand, with
    the seats that have not sent their part of them yet."""
    lines = []
    for c in cards:
        if c["card"] == "role":
            lines.append(t("your role is not open yet: waiting for {seats} to send their part of it",
                           seats=join_words(c["tokens_from"])))
    hand: dict[tuple[str, ...], int] = {}
    for c in cards:
        if c["card"] == "hand":
            who = tuple(c["tokens_from"])
            hand[who] = hand.get(who, 0) + 1
    for who, n in hand.items():
        lines.append(t("cards of your hand not open yet: {count}; waiting for {seats} to send their part of them",
                       count=n, seats=join_words(list(who))))
    return lines


def summary(ts: TrustlessSeat) -> dict[str, Any]:
    """What `pbem show` says of a trustless table, for this seat."""
    role, hand = ts.hand()
    role_slot = ts.slots()[0]
    w = ts.table.waiting()
    return {"game": ts.inv.game, "seat": ts.me, "trustless": True, "seq": ts.head[0],
            "waiting": {"step": w.step, "seats": w.seats, **({"due": ts.due} if ts.due else {})},
            "role": role, "hand": hand,
            "legal": legal_for(ts.view(), ts.me) if ts.table.round is not None and ts.seat is not None
            and w.step in CHOICES and ts.me in w.seats else [],
            "cards_waiting": [{"slot": list(slot), "card": "role" if slot == role_slot else "hand", "tokens_from": who}
                              for slot, who in ts.waiting_for().items()]}

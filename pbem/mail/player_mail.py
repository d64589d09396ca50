"""A player's mail: a seat's join, move, mental block, request or handover as a mail to
the host, the signed block in the body and attached."""

from __future__ import annotations

from email.message import EmailMessage
from typing import Any

from pbem.errors import UsageError
from pbem.mail.message import compose
from pbem.mail.texts import tag
from pbem.protocol.documents import Handover, Join, Mental, Request, SeatMove, Signed, Talk
from pbem.ui import words
from pbem.ui.words import t


def move_subject(doc: SeatMove) -> str:
    return t("{tag} packet {seq}: move by {seat}", tag=tag(doc.game), seq=doc.seq, seat=doc.seat)


def join_subject(doc: Join) -> str:
    return t("{tag} join: {seat}", tag=tag(doc.game), seat=doc.seat)


def _asks_words(what: str) -> str:
    return {"away": t("away"), "resign": t("resign"), "handover": t("handover")}.get(what, what)


def block_mail(block: Signed[Any], *, sender: str, to: str, in_reply_to: str | None = None) -> EmailMessage:
    """A seat's block (join, move, request, handover, table talk) as a mail to the host (armour in the
    body and attached)."""
    armored = block.armored()
    doc = block.doc
    if isinstance(doc, SeatMove):
        subject = move_subject(doc)
        name = f"move-{doc.seat}-{doc.seq:06d}.pbem"
        text = t("{seat}'s move answering packet {seq} (sealed to the host).", seat=doc.seat, seq=doc.seq) + "\n"
    elif isinstance(doc, Join):
        subject = join_subject(doc)
        name = f"join-{doc.seat}.pbem"
        text = t("{seat} joins game {game}.", seat=doc.seat, game=doc.game) + "\n"
    elif isinstance(doc, Mental):  # a trustless seat's shuffle, tokens, move or round key
        subject = t("{tag} packet {seq}: {step} by {seat}", tag=tag(doc.game), seq=doc.seq, step=words.step_name(doc.step),
                    seat=doc.seat)
        name = f"{doc.step}-{doc.seat}-{doc.seq:06d}.pbem"
        text = t("{seat}'s {step} answering packet {seq} (a trustless game: every seat checks it).", seat=doc.seat,
                 step=words.step_name(doc.step), seq=doc.seq) + "\n"
    elif isinstance(doc, (Request, Handover)):  # away, resign; a seat handed to another key
        what = doc.action if isinstance(doc, Request) else "handover"
        subject = t("{tag} {what}: {seat}", tag=tag(doc.game), what=_asks_words(what), seat=doc.seat)
        name = f"{block.kind}-{doc.seat}-{what}.pbem"
        text = t("{seat} asks the host of game {game}: {what}.", seat=doc.seat, game=doc.game,
                 what=_asks_words(what)) + "\n"
    elif isinstance(doc, Talk):  # a line of table talk: a whisper's text stays sealed in the block
        subject = t("{tag} table talk at packet {seq}", tag=tag(doc.game), seq=doc.seq)
        name = f"talk-{doc.seat}-{doc.seq:06d}-{doc.n}.pbem"
        text = t("{seat}'s line of table talk answering packet {seq}, for the host to relay.", seat=doc.seat,
                 seq=doc.seq) + "\n"
    else:
        raise UsageError(t("players mail joins, moves, mental blocks, requests, handovers and table talk, not a {kind}",
                           kind=words.kind_name(block.kind)))
    if not isinstance(doc, Mental):  # a mental block is attached only: a shuffle is 90 KiB of armour
        text = f"{text}\n{armored}"
    return compose(sender=sender, to=to, subject=subject, body_text=text,
                   attachment_name=name, attachment=armored.encode(), in_reply_to=in_reply_to)

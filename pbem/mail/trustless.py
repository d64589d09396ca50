"""Mail for a trustless game (docs/trustless.md): who the blind host mails and what it says,
and a seat that plays by mail.

A trustless seat follows the whole chain, packet by packet, so a mail carries every packet
since that seat's last mail, not only the latest one. A seat is mailed when the table starts
waiting for it (its move, its shuffle, its tokens, its round key: each step once, however
many packets a parallel step takes), everyone when the game is over; otherwise at most one
digest per period, as in a classic game (pbem.mail.publisher.MailPublisher keeps the book).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbem.errors import PbemError
from pbem.mail.texts import PacketWords, play_commands
from pbem.names import HOST
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Invitation, Join, Mental, Packet, Signed, parse_relayed, read_blocks
from pbem.protocol.table_docs import CHOICES
from pbem.ui import move_words, words
from pbem.ui.words import t

if TYPE_CHECKING:  # the trustless stack loads only for a trustless game's seat
    from pbem.seat.trustless_client import TrustlessClient


def relayed_seats(doc: Packet) -> list[str]:
    """The seats whose blocks a packet relays (signatures are the seats' business)."""
    out = []
    for r in doc.relayed or []:
        try:
            out.append(str(parse_relayed(r, "a relayed block", check_signature=False).doc.seat))
        except PbemError:
            continue  # a seat checks every relayed block; the mail only counts them
    return out


def waited_anew(doc: Packet, prev: Packet | None, seat: str) -> bool:
    """Whether the table starts waiting for `seat` at this packet: it waits for it now, and
    did not already at the packet before for the same step (a parallel step that other seats
    are answering), unless the packet relays `seat`'s own answer (it is waited for again)."""
    w = doc.waiting
    if w is None or seat not in w.seats:
        return False
    before = prev.waiting if prev is not None else None
    if before is None or before.step != w.step or seat not in before.seats:
        return True
    return seat in relayed_seats(doc)


def mail_kind(doc: Packet, prev: Packet | None, recipient: str) -> str | None:
    """Why `recipient` gets a mail for this packet regardless of digests (None: only a digest)."""
    if doc.phase == "game-over":
        return "over"
    return "turn" if waited_anew(doc, prev, recipient) else None


def _step(step: str) -> str:
    return words.step_name(step)


def subject(doc: Packet, recipient: str | None, packets: int, gold: dict[str, int], tag: str) -> str:
    w = doc.waiting
    assert w is not None
    if doc.phase == "game-over":
        best = max(gold.values(), default=0)
        return t("mail over subject", tag=tag, winners=words.listing(p for p, g in gold.items() if g == best) or t("nobody"))
    if recipient in w.seats:
        return t("{tag} {seat}, the table waits for your {step}: round {round}, packet {seq}", tag=tag,
                 seat=recipient, step=_step(w.step), round=doc.round, seq=doc.seq)
    return t("{tag} {n} packet(s); the table waits for the {step} step from {seats} (round {round}, packet {seq})",
             tag=tag, n=packets, step=_step(w.step), seats=words.join(w.seats), round=doc.round, seq=doc.seq)


def happened(docs: list[Packet]) -> list[str]:
    """What the seats sent, in words, oldest first: each move, each other step by its name."""
    out = []
    for doc in docs:
        for r in doc.relayed or []:
            try:
                block = parse_relayed(r, "a relayed block", check_signature=False).doc
            except PbemError:
                continue
            if isinstance(block, Join):
                out.append(t("{seat} joined", seat=block.seat))
            elif isinstance(block, Mental) and block.step == "move" and block.move:
                try:
                    out.append(move_words.describe_move(block.move, block.seat))
                except Exception:  # a sentence is a nicety; never fail a mail on it
                    out.append(f"{block.seat}: {block.move}")
            elif isinstance(block, Mental):
                out.append(t("{seat} sent their {step}", seat=block.seat, step=_step(block.step)))
    return out


def packet_words(docs: list[Packet], recipient: str | None, digest: str | None, gold: dict[str, int]) -> PacketWords:
    """What a trustless game's mail says to `recipient`: what the seats sent since its last
    mail, what the table waits for, how to play (pbem.mail.texts.words_text makes the text)."""
    doc = docs[-1]
    w = doc.waiting
    assert w is not None
    game = doc.game
    if doc.phase == "game-over":
        best = max(gold.values(), default=0)
        status = t("mail game over", list=words.listing(f"{p} {g}" for p, g in gold.items()) or "-",
                   winners=words.listing(p for p, g in gold.items() if g == best) or t("nobody"))
    elif recipient in w.seats and w.step in CHOICES:
        status = t("mail your turn")
    elif recipient in w.seats:
        status = t("The table waits for your {step}: 'pbem turn {game}' sends it for you.", step=_step(w.step), game=game)
    else:
        status = t("trustless waits", step=_step(w.step), seats=words.join(w.seats))
    said = happened(docs)
    return PacketWords(head=t("mail head", game=game, round=doc.round, seq=doc.seq),
                       since=t("Since your last mail:") if said else None, moves=said, results=[], status=status,
                       news=[], sealed=_sealed(recipient), commands=play_commands(game, recipient),
                       digest=t("mail digest note", period=digest) if digest else None)


def _sealed(recipient: str | None) -> str:
    if recipient == HOST:
        return t("A trustless game: every packet since the host's last copy is attached; the host holds no seat "
                 "and sees no hand.")
    return t("A trustless game: every packet since your last mail is attached; 'pbem turn' checks each one and "
             "sends what the table waits for from you.")


# --- a seat by mail -------------------------------------------------------------------------------


def joined_trustless(home: Path, game: str) -> bool:
    """Whether `game` is a trustless game this key home joined (a game id, not a file)."""
    from pbem.seat.home import invitation_path, load_invitation

    try:
        return invitation_path(home, game).is_file() and load_invitation(home, game).doc.trustless
    except PbemError:  # not a game id at all
        return False


def mail_seat(home: Path, identity: Identity, game: str, mail: Callable[[Signed[Any]], str],
              invitation: Signed[Invitation] | None = None) -> TrustlessClient[str]:
    """This key's seat of a trustless game joined by mail: it follows the packets 'pbem inbox'
    (or the seat's bot) kept in the key home, and mails each block it owes with `mail`.
    `invitation`: the one received, for a seat that has not joined yet (its join anchors it)."""
    from pbem.seat.home import load_invitation, saved_notices, saved_packets
    from pbem.seat.trustless_client import TrustlessClient

    inv = invitation if invitation is not None else load_invitation(home, game)
    return TrustlessClient(inv, identity, Path(home), lambda: saved_packets(home, game),
                           lambda _step, data: mail(read_blocks(data.decode("utf-8"))[0]),
                           lambda: saved_notices(home, game))

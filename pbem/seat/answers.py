"""The one move a seat makes for each packet, kept in the key home.

The host takes one move per packet: the first it receives. So a seat makes its move for a
packet once and sends that same signed file again when asked twice, and says which move it was.
Two files per packet (pbem.seat.home.move_path):

    moves/SEAT-SEQ.pbem   the signed move, its words sealed to the host (sent as it is)
    moves/SEAT-SEQ.mine   the same words sealed to the seat's own key, so that the seat can
                          say later what it sent; never the plaintext (anyone who reads the
                          key home, or a synced copy of it, would see the move before the host)
    moves/SEAT-SEQ.sent   empty: pbem itself handed the move to the host (its folder's inbox,
                          a mail), so it can no longer be replaced (`pbem move --replace`)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.errors import MoveError
from pbem.atomic import read_bounded, same_content, write_atomic
from pbem.errors import BadPacket, CannotRead, PbemError, StaleMove, UsageError, msg
from pbem.protocol.documents import SealedMove, SeatMove, Signed, open_as, read_blocks, seal_info, seal_json
from pbem.protocol.limits import MAX_FILE
from pbem.protocol.timeout import answered_by
from pbem.seat.home import move_path
from pbem.seat.player import SeatPacket, refuse_stale, sign_move
from pbem.ui.card_names import check_typed
from pbem.ui.words import t


@dataclass
class Answer:
    signed: Signed[SeatMove]  # the move as made (and as sent)
    data: bytes  # its file, byte for byte
    text: str | None  # its words, canonical; None for a move kept before its words were (or unreadable)
    new: bool  # made now, not kept from before
    path: Path  # where the signed file is kept

    def same_as(self, sp: SeatPacket, text: str) -> bool:
        """Whether `text` is this move (in any notation that reads the same: `play 4 at 1,0` is
        `play cross.1 at 1,0` when card 4 is cross.1)."""
        return self.text is not None and canonical(sp, text) == self.text

    def before(self) -> str:
        """`you already answered packet 5 with “play cross.1 at 1,0”` (without the words for a
        move kept before pbem kept them)."""
        seq = self.signed.doc.seq
        if self.text is None:
            return t("you already answered packet {seq}", seq=seq)
        return t("you already answered packet {seq} with “{move}”", seq=seq, move=self.text)

    def renewed(self, sp: SeatPacket) -> bool:
        """Whether this move was made for the packet `sp` renews (timeout.answered_by)."""
        return self.signed.doc.seq != sp.doc.seq

    def waiting(self, sp: SeatPacket) -> str:
        """What the seat at `sp` is told while the host has this move to apply: that it answered
        the packet, or, at a renewal, that its move for the packet before still counts."""
        if not self.renewed(sp):
            return self.before() + t("; waiting for the host")
        if self.text is None:
            return t("your move for packet {before} still counts: packet {seq} renews that packet to name a deadline, "
                     "and the host applies your move at it; waiting for the host", before=self.signed.doc.seq,
                     seq=sp.doc.seq)
        return t("your move for packet {before} (“{move}”) still counts: packet {seq} renews that packet to name a "
                 "deadline, and the host applies your move at it; waiting for the host", before=self.signed.doc.seq,
                 move=self.text, seq=sp.doc.seq)

    @property
    def sent(self) -> bool:
        """Whether pbem handed this move to the host (a folder's inbox, a mail)."""
        return _sent(self.path).exists()

    def mark_sent(self) -> None:
        """Say that the move went to the host: from now on it cannot be replaced."""
        write_atomic(_sent(self.path), b"")

    def refuse_other(self, sp: SeatPacket, text: str) -> None:
        """StaleMove (exit 5) when `text`, asked for now, is not the move that was sent (again)."""
        if self.new or self.same_as(sp, text):
            return
        hint = t("the host takes one move per packet; the next packet is your next chance")
        if self.renewed(sp):
            raise StaleMove(t("your new move “{move}” was not sent: your move for packet {before} counts at packet "
                              "{seq}, which renews it", move=text, before=self.signed.doc.seq, seq=sp.doc.seq),
                            hint=hint)
        raise StaleMove(t("your new move “{move}” was not sent: packet {seq} has your move already",
                          move=text, seq=sp.doc.seq), hint=hint)


def canonical(sp: SeatPacket, text: str) -> str | None:
    """The move as the rules write it, or None when it is no legal move now."""
    try:
        return str(check_typed(sp.view, text))
    except MoveError:
        return None


def _mine(path: Path) -> Path:
    return path.with_suffix(".mine")


def _sent(path: Path) -> Path:
    return path.with_suffix(".sent")


def _info(sp: SeatPacket, seq: int | None = None) -> bytes:
    """The seal info of the seat's own copy of its words for packet `seq` (None: this packet)."""
    return seal_info(sp.packet.game, sp.doc.seq if seq is None else seq, sp.seat, sp.seat, "mine")


def kept(sp: SeatPacket, home: Path) -> Answer | None:
    """The move kept that the host applies at this packet, if the seat made one: its move for
    this packet, or for the packet this one renews to name a deadline (timeout.answered_by; the
    move must name the very packet this one follows)."""
    for seq in answered_by(sp.doc):
        made = _kept_for(sp, home, seq)
        if made is not None and (seq == sp.doc.seq or made.signed.doc.packet == sp.doc.prev):
            return made
    return None


def _kept_for(sp: SeatPacket, home: Path, seq: int) -> Answer | None:
    """The move kept for packet `seq` of this seat's game, if it made one."""
    path = move_path(home, sp.packet.game, sp.seat, seq)
    try:
        data = read_bounded(path, MAX_FILE)
    except CannotRead as e:
        if e.missing:
            return None
        raise _damaged(path, seq) from None
    try:
        blocks = read_blocks(data.decode("utf-8", errors="replace"))
        if len(blocks) != 1:
            raise _damaged(path, seq)
        signed = blocks[0].expect(SeatMove)
    except PbemError:
        raise _damaged(path, seq) from None
    text = None
    try:
        text = open_as(SealedMove, read_bounded(_mine(path), MAX_FILE).decode("ascii"), sp.identity,
                       _info(sp, seq)).move
    except (PbemError, UnicodeDecodeError):
        text = None  # missing or damaged: the move is still sent again as it was, only its words are not said
    return Answer(signed, data, text, False, path)


def _damaged(path: Path, seq: int) -> BadPacket:
    """A kept move that is no move (cut short, overwritten, not a file): pbem does not guess what
    was sent; the player decides (the host keeps the first move it received for the packet)."""
    return BadPacket(msg("the move kept in {path} is damaged", path=repr(str(path))),
                     hint=msg("delete it to answer packet {seq} again", seq=seq))


def keep(sp: SeatPacket, home: Path, text: str) -> Answer:
    """Make the move now (checked against the seat's view) and keep it, replacing nothing kept."""
    return _make(sp, home, text, replacing=False)


def _make(sp: SeatPacket, home: Path, text: str, *, replacing: bool) -> Answer:
    refuse_stale(sp)
    move = check_typed(sp.view, text)
    signed, words = sign_move(sp, move), str(move)
    path = move_path(home, sp.packet.game, sp.seat, sp.doc.seq)
    path.parent.mkdir(parents=True, exist_ok=True)
    # (the shape the host's copy has; no nonce: this copy commits to nothing)
    sealed = seal_json(SealedMove(move=words, nonce=""), sp.identity.public, _info(sp), pad="move").encode("ascii")
    data = signed.armored().encode()
    if replacing:
        # The old words go first, the new ones last: a crash in between leaves a move without
        # its words (said as "you already answered packet N"), never one move's words beside
        # the other move's file.
        _mine(path).unlink(missing_ok=True)
        write_atomic(path, data)
        write_atomic(_mine(path), sealed)
    else:
        # The words first: a crash between the two writes leaves no signed move, so the next try
        # makes both again; the other order could leave a sent move whose words are lost.
        write_atomic(_mine(path), sealed)
        write_atomic(path, data)
    return Answer(signed, data, words, True, path)


def replace_move(sp: SeatPacket, home: Path, text: str) -> Answer:
    """Make `text` this packet's move in place of the one kept (`pbem move --replace`): only
    while the host cannot have the first, i.e. pbem has not sent it (StaleMove, exit 5) and no
    later packet has been seen (refuse_stale)."""
    refuse_stale(sp)
    before = kept(sp, home)
    if before is not None and before.sent:
        raise StaleMove(t("your move for packet {seq} was sent to the host already: it cannot be replaced",
                          seq=before.signed.doc.seq), hint=t("the host takes one move per packet; the next packet is "
                                                   "your next chance"))
    return _make(sp, home, text, replacing=before is not None)


def answer(sp: SeatPacket, home: Path, text: str) -> Answer:
    """The seat's one move for this packet: the one kept, else `text` made and kept now."""
    return kept(sp, home) or keep(sp, home, text)


def write_move_file(sp: SeatPacket, home: Path, text: str, target: Path, *, replace: bool, packet: Path | str
                    ) -> tuple[Answer, bool]:
    """`pbem move`: this packet's move written to `target` to send by hand; (the move, whether
    it replaced another). The file holds the move the host will take, the first: a different
    one is refused (StaleMove) unless `replace` (replace_move), and another file at `target`
    is never written over without it."""
    check_typed(sp.view, text)  # a move that does not parse or is not legal says so first (exit 2, 6)
    before = kept(sp, home)
    same = before is not None and before.same_as(sp, text)
    if before is not None and not same and not replace:
        raise StaleMove(t("your new move “{move}” was not written: {before}", move=text, before=before.before()),
                        hint=t("the host takes the first move it receives; to replace yours before you send "
                               "it: {example}", example=f'pbem move {packet} "{text}" --replace'))
    if not replace and target.exists() and (before is None or not same_content(target, before.data)):
        raise UsageError(t("{path} holds another file; not overwritten", path=target),
                         hint=t("pass -o FILE, or --replace to write over it"))
    if before is not None and same:
        made = before  # the same signed file again: the host calls it a duplicate, never a second move
    else:
        made = replace_move(sp, home, text) if replace else keep(sp, home, text)
    write_atomic(target, made.data)
    return made, made is not before and before is not None

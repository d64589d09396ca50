"""Game-level shared-folder glue: publishing a game into a folder, and a seat's turn in it.

The folder layout is `pbem.folder.layout.GameFolder`; this module adds the game:
`DIR/invitation.pbem` (the signed invitation, written once), every packet published once to
`packets/table/` (each seat's hand is sealed inside it, so one copy serves everyone), round
archives in `archive/`, and joins and moves from the seats in `inbox/`.

A seat keeps its own trail in the key home (`<home>/games/<game>/`): the invitation it
joined (its trust anchor), its join file and every move it wrote, so running `pbem turn` or
a bot again never writes a second, different join or move for the same packet.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pbem.atomic import same_content, write_atomic
from pbem.errors import BadPacket, Conflict, ForkedChain, PbemError, SeatHandedOver, UsageError
from pbem.folder.layout import GameFolder
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Invitation, Notice, Packet, Signed, read_blocks, read_text
from pbem.seat import answers, player
from pbem.seat.home import join_path, move_path
from pbem.ui import failures, when
from pbem.ui.words import t

if TYPE_CHECKING:  # the seat side (pbem turn) must not import the host's store
    from pbem.host.interface import GameHost
    from pbem.host.publish import HostNotice, Release, TalkRelease
    from pbem.host.settings import MailMark

INVITATION = "invitation.pbem"
_ARCHIVE_RE = re.compile(r"^round-(\d{3,})-[0-9a-f]+\.pbem$")


# --- host side ------------------------------------------------------------------------------


def write_invitation(folder: GameFolder, armored: str) -> Path:
    path = folder.dir / INVITATION
    data = armored.encode()
    if os.path.lexists(path):
        if same_content(path, data):
            return path
        raise Conflict(t("{path} holds another invitation", path=path), hint=t("use a fresh folder for each game"))
    write_atomic(path, data)
    return path


def read_invitation(folder: GameFolder) -> Signed:
    path = folder.dir / INVITATION
    if not path.exists():
        raise UsageError(t("{dir} has no {file} yet", dir=folder.dir, file=INVITATION),
                         hint=t("the host runs 'pbem folder init DIR GAME'"))
    blocks = [b for b in read_blocks(read_text(path)) if b.kind == "invitation"]
    if not blocks:
        raise BadPacket(t("{path} holds no invitation", path=path))
    inv = blocks[0]
    if inv.game != folder.game_id:
        raise BadPacket(t("{path} invites to {game}, but the folder is for {folder}", path=path, game=inv.game,
                          folder=folder.game_id))
    return inv


def is_trustless(dir: Path) -> bool:
    """Whether the game folder at `dir` holds a trustless game (False if it is not laid out yet).
    Here, not in pbem.folder.trustless, so that asking loads none of the trustless modules."""
    try:
        return read_invitation(GameFolder.open(Path(dir))).expect(Invitation).doc.trustless
    except UsageError:
        return False


class FolderPublisher:
    """Publishes a game into its folder: the invitation, each packet once to packets/table/,
    and each round's archive to archive/ (a pbem.host.publish.Publisher)."""

    def __init__(self, folder: GameFolder) -> None:
        self.folder = folder
        self.channel = f"folder:{folder.dir.resolve()}"

    def deliver(self, release: Release) -> str:
        if release.seq == 0:
            return t("invitation: {path}", path=write_invitation(self.folder, release.armored).name)
        path = self.folder.publish_packet(release.seq, release.armored.encode())
        if release.archive is not None:
            self.folder.publish_archive(release.archive[0], release.archive[1].encode())
            return t("packet {seq}: {path} (and the archive of round {round})", seq=release.seq, path=path.name,
                     round=release.archive[0])
        return t("packet {seq}: {path}", seq=release.seq, path=path.name)

    def kept(self) -> dict[str, MailMark] | None:
        return None

    def relay(self, line: TalkRelease) -> str:
        from pbem.host.publish import talk_name

        path = self.folder.publish_talk(talk_name(line), line.armored.encode())
        return t("table talk: {file}", file=path.name)

    def notify(self, notice: HostNotice) -> str:
        path = self.folder.publish_notice(notice.seq, notice.kind, notice.armored.encode())
        return t("{notice}: {file}", notice=when.notice_name(notice.kind), file=path.name)

    def idle(self) -> list[str]:
        return []


def init_folder(dir: Path, host: GameHost) -> tuple[GameFolder, list[tuple[int, str]]]:
    """Lay out the game folder (idempotent) and publish the invitation and every packet
    that is not in it yet (e.g. after the host was killed between a commit and its packet,
    or when the folder is new); later packets go out with `publish_pending`."""
    st = host.status()
    folder = GameFolder.init(Path(dir), st["game"], [s["name"] for s in st["seats"]])
    pub = FolderPublisher(folder)
    have = {seq for seq, _ in folder.packets(None)}
    rounds = _archived(folder)
    done = []
    for rel in host.releases(-1):
        if rel.seq == 0 or rel.seq not in have or (rel.archive and rel.archive[0] not in rounds):
            done.append((rel.seq, pub.deliver(rel)))
        high = rel.seq
    host.mark_delivered(pub.channel, high)
    return folder, done


def _archived(folder: GameFolder) -> set[int]:
    try:
        names = os.listdir(folder.archive_dir)
    except FileNotFoundError:
        return set()
    return {int(m.group(1)) for n in names if (m := _ARCHIVE_RE.match(n))}


# --- seat side ------------------------------------------------------------------------------


def folder_notices(folder: GameFolder, invitation: Signed[Invitation]) -> list[Notice]:
    """The host's notices in a game folder (signed by the invitation's host), oldest first."""
    host_key = invitation.doc.host.key
    out = []
    for _, path in folder.notices():
        try:
            blocks = read_blocks(read_text(path))
        except BadPacket:
            continue  # a damaged or half-synced file says nothing
        out += [b.doc for b in blocks if isinstance(b.doc, Notice) and b.signer.encode() == host_key
                and b.game == invitation.game]
    return out


@dataclass
class FolderSeat:
    """One seat playing through a game folder, holding only its own key."""

    folder: GameFolder
    identity: Identity
    home: Path
    invitation: Signed[Invitation] = field(init=False)
    seat: str = field(init=False)
    skipped: list[str] = field(init=False, default_factory=list)  # what the last `latest` passed over
    # the bytes `latest` opened last and what they opened to: a bot looks at every poll, and the
    # same bytes are not verified, unsealed and loaded again at every poll; a file that changed
    # is opened anew
    _opened: tuple[bytes, player.SeatPacket] | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self.invitation = read_invitation(self.folder)
        try:
            self.seat = player.seat_of(self.invitation, self.identity)
        except UsageError:
            self.seat = self._handed_seat()

    def _handed_seat(self) -> str:
        """A key that holds no seat in the invitation may have been handed one: the latest
        packet, signed by the invitation's host, names it. The invitation becomes its anchor."""
        packet = self._host_packet(None)
        if packet is None:
            raise UsageError(t("key {name} holds no seat in game {game}", name=repr(self.identity.name),
                               game=self.invitation.game))
        seat = player.seat_in(packet.doc, self.invitation, self.identity)
        player.keep_anchor(self.home, self.invitation)
        return seat

    def _host_packet(self, seat: str | None) -> Signed[Packet] | None:
        """The newest packet of this game signed by its host, in `seat`'s folder or the table's.
        Anyone who can write to the folder can drop a file named like a packet, so a name alone
        says nothing: what does not read as such a packet is passed over."""
        host = self.invitation.doc.host.key
        for _, path in self.folder.packets_newest_first(seat):
            try:
                blocks = read_blocks(read_text(path))
            except PbemError:
                continue
            for b in blocks:
                if b.kind == "packet" and b.game == self.invitation.game and b.signer.encode() == host:
                    return b.expect(Packet)
        return None

    def notices(self) -> list[Notice]:
        """The host's notices in the folder (signed by the invitation's host), oldest first."""
        return folder_notices(self.folder, self.invitation)

    def talk_files(self) -> list[Path]:
        """The lines of table talk the host relayed into the folder (pbem.seat.talk checks each)."""
        return self.folder.talk()

    @classmethod
    def open(cls, dir: Path, identity: Identity, home: Path) -> FolderSeat:
        return cls(GameFolder.open(Path(dir)), identity, Path(home))

    @property
    def join_file(self) -> Path:
        return join_path(self.home, self.invitation.game, self.seat)

    def move_file(self, seq: int) -> Path:
        return move_path(self.home, self.invitation.game, self.seat, seq)

    def joined(self) -> bool:
        return self.join_file.exists()

    def join(self, *, again: bool = False) -> tuple[Path, bool]:
        """Write the join file into the inbox; (inbox path, whether it is a new join).

        The join is kept in the key home: joining again re-submits the same file (the host
        says "duplicate") instead of a second join with another contribution."""
        if self.join_file.exists():
            data = self.join_file.read_bytes()
            return self.folder.submit_move(self.seat, 0, data), False
        signed = player.join(self.invitation, self.identity, self.home)
        data = signed.armored().encode()
        self.join_file.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.join_file, data)
        return self.folder.submit_move(self.seat, 0, data), True

    def started(self) -> bool:
        """Whether the host has dealt: a packet of this game signed by its host is in the folder
        (a junk file named like one must not stop a seat from joining)."""
        return self._host_packet(self.seat) is not None

    def latest(self) -> player.SeatPacket | None:
        """The newest packet that verifies; what was skipped on the way is in `self.skipped`.

        Anyone with write access to the folder can drop a file named like a packet: it must
        not stop the game, so a file that does not open is skipped (and said), not fatal."""
        self.skipped = []
        for seq, path in self.folder.packets_newest_first(self.seat):
            try:
                data = read_text(path).encode()
                if self._opened is None or self._opened[0] != data:
                    self._opened = (data, self.open_seq(seq, data))
                return self._opened[1]
            except SeatHandedOver:
                raise  # the host's own packet says so: older packets are not this key's to play
            except PbemError as exc:
                if isinstance(exc, ForkedChain):
                    raise  # a fork of a verified chain is the host's doing: say it, never hide it
                self.skipped.append(t("skipped {file}: {error}", file=path.name, error=failures.message(exc)))
        return None

    def open_seq(self, seq: int, data: bytes) -> player.SeatPacket:
        blocks = [b for b in read_blocks(data.decode("utf-8", errors="replace")) if b.kind == "packet"]
        if not blocks:
            raise BadPacket(t("packet {seq} in {dir} holds no packet block", seq=seq, dir=self.folder.dir))
        return player.open_packet(blocks[0], self.identity, self.home)

    def answered(self, sp: player.SeatPacket) -> bool:
        """Whether a move of this seat's is kept for the host to apply at packet `sp` (answers.kept)."""
        return answers.kept(sp, self.home) is not None

    def move(self, sp: player.SeatPacket, text: str) -> tuple[Path, answers.Answer]:
        """Sign, seal and submit a move for packet sp; (inbox path, the move submitted).

        A move already made for this packet is submitted again as it was, never replaced: the
        host takes only one move per packet (the answer says which, and whether it is new)."""
        made = answers.answer(sp, self.home, text)
        path = self.folder.submit_move(self.seat, made.signed.doc.seq, made.data)  # (a renewal's: the packet before)
        made.mark_sent()
        return path, made

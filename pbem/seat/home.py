"""The key home: the one module that knows its layout.

    HOME/keys/NAME.key, NAME.pub          identities (pbem.seat.keys reads and writes them)
    HOME/invitations/GAME.pbem            invitations received by mail, not yet joined
    HOME/games/GAME/invitation.pbem       the invitation joined: this game's trust anchor
    HOME/games/GAME/seen.json             hash of every packet seen, by number (fork check)
    HOME/games/GAME/join-SEAT.pbem        the join sent (made once, resent as is)
    HOME/games/GAME/looked-SEAT.txt       the packet a trustless table was last shown at (`pbem turn`)
    HOME/games/GAME/checked-SEAT.txt      the trustless chain this seat checked, to the head it names,
                                          signed by its key (pbem.seat.checked)
    HOME/games/GAME/moves/SEAT-SEQ.pbem   each move sent (made once, resent as is)
    HOME/games/GAME/moves/SEAT-SEQ.mine   its words, sealed to the seat's own key (pbem.seat.answers)
    HOME/games/GAME/packets/packet-SEQ.pbem, archives/round-RRR.pbem   kept from the host (each packet
                                          opened or followed, or read from mail)
    HOME/games/GAME/notices/SEQ-KIND-HASH.pbem   the host's notices (reminders, late...) read from mail
    HOME/games/GAME/talk/SEQ-SEAT-HASH.pbem      table talk: the lines this seat said, and those read from mail
    HOME/games/GAME/talk/SEQ-SEAT-HASH.sent      empty: pbem sent that line of this seat's (pbem.seat.talk)
    HOME/games/GAME/talk-heard-SEAT.json         the lines of table talk this seat was shown (their hashes)
    HOME/mail/profile.json                this person's mail settings (no password: pbem.mail.profile)
    HOME/mail/read.db                     which mail was read before (pbem.mail.memory)
    HOME/mail/hosts.json                  the host's mail address of each game (learnt from its mail)

The key agent's socket is not in HOME (a socket path is limited to about 100 bytes, and a
shared or synced home is no place for it): RUNTIME/pbem-agent-UID/HASH.sock, RUNTIME being
$XDG_RUNTIME_DIR or the temporary folder, HASH naming the home (see agent_socket).

HOME is --home, else $PBEM_HOME, else the platform's configuration folder. Every game id and
seat name is checked (pbem.names) before it becomes a path.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbem.atomic import read_bounded, write_atomic
from pbem.errors import BadPacket, BadSignature, PbemError, UsageError
from pbem.names import check_game_id, check_identity_name, check_seat_id
from pbem.ui.words import t

if TYPE_CHECKING:  # the documents (msgspec, cryptography) load only where a file is read
    from pbem.protocol.documents import Archive, Invitation, Notice, Packet, Signed

ENV_HOME = "PBEM_HOME"


def key_home(override: Path | None = None) -> Path:
    if override is not None:
        return Path(override).expanduser()
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":
        appdata = os.environ.get("APPDATA")
        base = Path(appdata) if appdata else Path.home() / "AppData" / "Roaming"
        return base / "pbem"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "pbem"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "pbem"


# --- identities -------------------------------------------------------------------------------


def keys_dir(home: Path) -> Path:
    return Path(home) / "keys"


def key_path(home: Path, name: str) -> Path:
    return keys_dir(home) / f"{check_identity_name(name)}.key"


def pub_path(home: Path, name: str) -> Path:
    return keys_dir(home) / f"{check_identity_name(name)}.pub"


def contacts_path(home: Path) -> Path:
    """Other people's public keys, a `NAME pbem1...` line each (pbem.seat.contacts)."""
    return Path(home) / "contacts.txt"


# --- mail -------------------------------------------------------------------------------------


def mail_profile_path(home: Path) -> Path:
    return Path(home) / "mail" / "profile.json"


MAX_PROFILE = 64 * 1024  # a mail profile is a few hundred bytes


def profile_zone(home: Path) -> str | None:
    """The time zone the profile names (`pbem mail setup --timezone`), read without loading
    the mail modules: every command asks for it. None when there is none, or the profile
    cannot be read (the commands that read it whole say why)."""
    path = mail_profile_path(home)
    if not path.is_file():
        return None
    try:
        zone = json.loads(read_bounded(path, MAX_PROFILE)).get("timezone")
    except (PbemError, ValueError, AttributeError):
        return None
    return zone if isinstance(zone, str) else None


def mail_memory_path(home: Path) -> Path:
    return Path(home) / "mail" / "read.db"


def mail_hosts_path(home: Path) -> Path:
    return Path(home) / "mail" / "hosts.json"


# --- the key agent ---------------------------------------------------------------------------


def agent_dir() -> Path:
    """The folder holding this user's agent sockets (pbem.seat.agent checks who owns it)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        base = Path(runtime)
    else:
        import tempfile  # it loads random too: only where the system sets no runtime folder

        base = Path(tempfile.gettempdir())
    return base / f"pbem-agent-{os.getuid() if hasattr(os, 'getuid') else 0}"


def agent_socket(home: Path) -> Path:
    """The socket of the agent that holds this key home's unlocked keys."""
    from hashlib import sha256  # here: `pbem --help` loads no OpenSSL for it

    name = sha256(str(Path(home).expanduser().resolve()).encode("utf-8")).hexdigest()[:20]
    return agent_dir() / f"{name}.sock"


# --- games ------------------------------------------------------------------------------------


def games_dir(home: Path) -> Path:
    return Path(home) / "games"


def game_dir(home: Path, game: str) -> Path:
    return games_dir(home) / check_game_id(game)


def invitation_path(home: Path, game: str) -> Path:
    return game_dir(home, game) / "invitation.pbem"


def seen_path(home: Path, game: str) -> Path:
    return game_dir(home, game) / "seen.json"


def last_looked(home: Path, game: str, seat: str) -> int:
    """The packet this seat's table was last shown at (0: never; a damaged record says never)."""
    path = game_dir(home, game) / f"looked-{check_seat_id(seat)}.txt"
    if not path.is_file():  # a regular file only (a pipe would never end)
        return 0
    try:
        with path.open("rb") as f:  # a small number; a larger or odd file is no record
            text = f.read(32).decode("ascii").strip()
        return int(text) if text.isdigit() else 0
    except (OSError, UnicodeDecodeError):
        return 0


def mark_looked(home: Path, game: str, seat: str, seq: int) -> None:
    write_atomic(game_dir(home, game) / f"looked-{check_seat_id(seat)}.txt", f"{int(seq)}\n".encode())


def checked_path(home: Path, game: str, seat: str) -> Path:
    return game_dir(home, game) / f"checked-{check_seat_id(seat)}.txt"


def join_path(home: Path, game: str, seat: str) -> Path:
    return game_dir(home, game) / f"join-{check_seat_id(seat)}.pbem"


def move_path(home: Path, game: str, seat: str, seq: int) -> Path:
    return game_dir(home, game) / "moves" / f"{check_seat_id(seat)}-{int(seq):06d}.pbem"


def packets_dir(home: Path, game: str) -> Path:
    return game_dir(home, game) / "packets"


def packet_path(home: Path, game: str, seq: int) -> Path:
    return packets_dir(home, game) / f"packet-{seq:06d}.pbem"


def archive_path(home: Path, game: str, round_no: int) -> Path:
    return game_dir(home, game) / "archives" / f"round-{round_no:03d}.pbem"


def notices_dir(home: Path, game: str) -> Path:
    return game_dir(home, game) / "notices"


def talk_dir(home: Path, game: str) -> Path:
    return game_dir(home, game) / "talk"


def talk_heard_path(home: Path, game: str, seat: str) -> Path:
    return game_dir(home, game) / f"talk-heard-{check_seat_id(seat)}.json"


def received_invitation_path(home: Path, game: str) -> Path:
    return Path(home) / "invitations" / f"{check_game_id(game)}.pbem"


def joined_games(home: Path) -> list[str]:
    d = games_dir(home)
    if not d.is_dir():
        return []
    return sorted(p.name for p in d.iterdir() if (p / "invitation.pbem").is_file())


def game_named(home: Path, text: str) -> str:
    """The id of a game this key home joined or was invited to, from its id or from its name
    alone (`friday` for `friday-1a2b3c4d`) when one game has that name; else `text` as it is."""
    invited = Path(home) / "invitations"
    ids = set(joined_games(home)) | ({p.stem for p in invited.glob("*.pbem")} if invited.is_dir() else set())
    if text in ids:
        return text
    named = [i for i in ids if i.rsplit("-", 1)[0] == text]
    return named[0] if len(named) == 1 else text


def load_invitation(home: Path, game: str) -> Signed[Invitation]:
    from pbem.protocol.documents import Invitation, read_blocks

    anchor = invitation_path(home, game)
    if not anchor.exists():
        raise UsageError(t("you have not joined game {game} with this key home", game=repr(game)),
                         hint=t("run 'pbem join INVITATION --as NAME' first (or set PBEM_HOME)"))
    return read_blocks(anchor.read_text(encoding="utf-8"))[0].expect(Invitation)


def trusted_host_key(home: Path, game: str) -> str | None:
    anchor = invitation_path(home, game)
    if not anchor.exists():
        return None
    return load_invitation(home, game).doc.host.key


# --- what the host sent, kept once ------------------------------------------------------------


def _save_once(path: Path, block: Signed[Any], what: str) -> bool:
    """Write a block's file unless the same block is there; refuse a different one."""
    from pbem.protocol.documents import read_file

    if path.exists():
        try:
            old = read_file(path)
        except PbemError:
            old = []
        if any(b.hash == block.hash for b in old):
            return False
        raise BadPacket(t("the host sent two different {what}; keeping the first in {path}", what=what, path=path),
                        hint=t("the game has forked; tell the host"))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, block.armored().encode())
    return True


def _check_host(home: Path, block: Signed[Any], what: str, key: str | None = None) -> None:
    """A packet or archive is kept only for a joined game, and only from that game's host
    (`key`: the host's key of a game offered, not yet joined: pbem.seat.player.offered_seat)."""
    key = key or trusted_host_key(home, block.game)
    if key is None:
        raise UsageError(t("not a game you joined: {game}", game=block.game))
    if block.signer.encode() != key:
        raise BadSignature(t("{what} of {game} is not signed by the game's host", what=what, game=block.game))


def save_packet(home: Path, packet: Signed[Packet], host_key: str | None = None) -> tuple[Path, bool]:
    """Keep a packet of a joined game in the key home (or of a game offered by the host of
    `host_key`); (path, whether it is new)."""
    from pbem.protocol.documents import Packet

    seq = packet.expect(Packet).doc.seq
    _check_host(home, packet, t("packet {seq}", seq=seq), host_key)
    path = packet_path(home, packet.game, seq)
    return path, _save_once(path, packet, t("packets numbered {seq}", seq=seq))


def save_archive(home: Path, archive: Signed[Archive]) -> tuple[Path, bool]:
    from pbem.protocol.documents import Archive

    round_no = archive.expect(Archive).doc.round
    _check_host(home, archive, t("the archive of round {round}", round=round_no))
    path = archive_path(home, archive.game, round_no)
    return path, _save_once(path, archive, t("archives of round {round}", round=round_no))


def save_notice(home: Path, notice: Signed[Notice]) -> tuple[Path, bool]:
    """Keep a host's notice (reminder, late, absent...) of a joined game; (path, whether it is
    new). Named by packet, kind and content, as a game folder's notices/ are."""
    from pbem.protocol.documents import Notice

    doc = notice.expect(Notice).doc
    _check_host(home, notice, t("the {kind} notice", kind=doc.notice))
    path = notices_dir(home, notice.game) / f"{doc.seq:06d}-{doc.notice}-{notice.hash[:16]}.pbem"
    return path, _save_once(path, notice, t("{kind} notices for packet {seq}", kind=doc.notice, seq=doc.seq))


def saved_notices(home: Path, game: str) -> list[Notice]:
    """The host's notices kept for a game, oldest first (checked against its host key again)."""
    from pbem.protocol.documents import Notice, read_file

    key = trusted_host_key(home, game)
    d = notices_dir(home, game)
    if key is None or not d.is_dir():
        return []
    out: list[Notice] = []
    for p in sorted(d.glob("*.pbem")):
        try:
            blocks = read_file(p)
        except PbemError:
            continue  # a damaged file says nothing
        out += [b.doc for b in blocks if isinstance(b.doc, Notice) and b.signer.encode() == key and b.game == game]
    return sorted(out, key=lambda n: (n.seq, n.at))  # UTC stamps sort as text


def save_invitation(home: Path, invitation: Signed[Invitation]) -> tuple[Path, bool]:
    from pbem.protocol.documents import Invitation

    path = received_invitation_path(home, invitation.game)
    if invitation.signer.encode() != invitation.expect(Invitation).doc.host.key:
        raise BadSignature(t("the invitation is not signed by the host it names"))
    return path, _save_once(path, invitation, t("invitations with this game id"))


def saved_packets(home: Path, game: str) -> list[tuple[int, Path]]:
    d = packets_dir(home, game)
    if not d.is_dir():
        return []
    out = []
    for p in d.glob("packet-*.pbem"):
        try:
            out.append((int(p.stem.split("-", 1)[1]), p))
        except ValueError:
            continue
    return sorted(out)


def latest_saved_packet(home: Path, game: str) -> Path | None:
    found = saved_packets(home, game)
    return found[-1][1] if found else None

"""Game-level outgoing mail: which mail goes to whom and what it says.

The transport (`pbem.transports.mail`) only composes, sends and reads messages. This module
knows about games: a packet mail's subject names the game, round, packet number and whose
turn it is; its body says in words what happened since the last packet; it goes to every seat
with an address and to the host's own address. Incoming mail is `pbem.mail.incoming`'s business.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from pbem.errors import UsageError
from pbem.mail.message import SmtpSettings, compose, send, write_eml
from pbem.protocol.crypto import PublicKey
from pbem.protocol.documents import Signed, read_blocks

ENV_SMTP_PASSWORD = "PBEM_SMTP_PASSWORD"
DEFAULT_SENDER = "pbem@localhost"
HOST = "host"


# --- words ----------------------------------------------------------------------------------


def _tag(game: str) -> str:
    return f"[pbem {game}]"


def packet_subject(doc: dict[str, Any]) -> str:
    """E.g. "[pbem friday-1a2b] round 2, packet 41: ann to move"."""
    game, seq, rnd = doc.get("game", "?"), doc.get("seq", "?"), doc.get("round", "?")
    if doc.get("phase") == "game-over":
        winners = ", ".join((doc.get("standings") or {}).get("winners", [])) or "nobody"
        return f"{_tag(game)} packet {seq}: game over, won by {winners}"
    head = f"{_tag(game)} "
    if doc.get("phase") == "round-over":
        head += f"round {doc.get('result', {}).get('round', '?')} over; "
    return f"{head}round {rnd}, packet {seq}: {doc.get('to_move')} to move"


def invitation_subject(doc: dict[str, Any], seat: str | None) -> str:
    who = f": you are seat {seat}" if seat and seat != HOST else ""
    return f"{_tag(doc.get('game', '?'))} invitation to {doc.get('name', 'a game')} ({doc.get('ruleset', '?')}){who}"


def move_subject(doc: dict[str, Any]) -> str:
    return f"{_tag(doc.get('game', '?'))} packet {doc.get('seq', '?')}: move by {doc.get('seat', '?')}"


def join_subject(doc: dict[str, Any]) -> str:
    return f"{_tag(doc.get('game', '?'))} join: {doc.get('seat', '?')}"


def describe_moves(doc: dict[str, Any]) -> list[str]:
    """The packet's moves and public events in words (pbem.words if present, else notation)."""
    try:
        from pbem.ui.words import describe_event, describe_move
    except ImportError:  # pragma: no cover - words is optional
        describe_move = describe_event = None  # type: ignore[assignment]
    lines = []
    for m in doc.get("moves", []):
        seat, text = str(m.get("seat", "?")), str(m.get("text", "?"))
        line = f"{seat}: {text}"
        if describe_move is not None:
            try:
                line = describe_move(text, seat)
            except Exception:  # a sentence is a nicety; never fail a mail on it
                pass
        lines.append(line)
    if describe_event is not None:
        for e in doc.get("events", []):
            try:
                said = describe_event(e)
            except Exception:
                said = None
            if said:
                lines.append(said)
    return lines


def _gold(gold: dict[str, int]) -> str:
    return ", ".join(f"{p} {g}" for p, g in gold.items()) or "-"


def since_turn_lines(doc: dict[str, Any], recipient: str | None) -> list[str] | None:
    """Every move since `recipient`'s last turn in words (None: the packet has no `recent`)."""
    recent = doc.get("recent")
    if not isinstance(recent, list) or recipient is None or recipient == HOST:
        return None
    from pbem.ui.when import by_host
    from pbem.ui.words import describe_move

    mine = [i for i, m in enumerate(recent) if isinstance(m, dict) and m.get("seat") == recipient]
    lines = []
    for m in recent[(mine[-1] + 1 if mine else 0):]:
        try:
            line = describe_move(str(m["text"]), str(m["seat"]))
        except Exception:  # a sentence is a nicety; never fail a mail on it
            line = f"{m.get('seat')}: {m.get('text')}"
        lines.append(by_host(line, m["why"]) if m.get("by") == HOST else line)
    return lines


def packet_summary(doc: dict[str, Any], recipient: str | None = None, now: datetime | None = None) -> str:
    """A few lines a person reads before the armour: what happened, whose turn it is, by when."""
    from pbem.ui.when import table_lines

    out = [f"pbem game {doc.get('game')} - round {doc.get('round')}, packet {doc.get('seq')}", ""]
    since = since_turn_lines(doc, recipient)
    said = since or describe_moves(doc)  # nothing since your turn: your own move was the last
    if said:
        out.append("Since your last turn:" if since else "Since the last packet:")
        out += [f"  - {s}" for s in said]
        out.append("")
    result = doc.get("result")
    if result:
        winners = ", ".join(result.get("winners") or []) or "nobody"
        out.append(f"Round {result.get('round')} is over. Winners: {winners}.")
        if result.get("finder"):
            out.append(f"The gold was found by {result['finder']}.")
        paid = {p: g for p, g in (result.get("payout") or {}).items() if g}
        if paid:
            out.append(f"Payout: {_gold(paid)}.")
        out.append(f"Gold so far: {_gold(result.get('gold') or {})}.")
        out.append("")
    if doc.get("phase") == "game-over":
        st = doc.get("standings") or {}
        out.append(f"The game is over. Gold: {_gold(st.get('gold') or {})}. "
                   f"Winner(s): {', '.join(st.get('winners') or []) or 'nobody'}.")
    else:
        to_move = doc.get("to_move")
        out.append("It is YOUR turn." if recipient == to_move else f"Now: {to_move} to move.")
    out += table_lines(doc, recipient, now or datetime.now(timezone.utc))
    game = doc.get("game")
    out += [
        "",
        "The packet is attached and also below; your hand is sealed inside it for your key only.",
        "To play:",
        "  pbem inbox THIS-MAIL.eml                 (or your Maildir / mbox)",
        f"  pbem turn {game} --as YOU",
        f'  pbem mail-move {game} "MOVE" --as YOU --to HOST-ADDRESS --send',
        "",
    ]
    return "\n".join(out)


def invitation_summary(doc: dict[str, Any], seat: str | None) -> str:
    host = doc.get("host", {})
    fp = PublicKey.decode(host["key"]).fingerprint() if host.get("key") else "?"
    seats = ", ".join(s.get("name", "?") for s in doc.get("seats", []))
    game = doc.get("game")
    return "\n".join([
        f"{host.get('name', 'The host')} invites you to a game of Saboteur: {doc.get('name')} "
        f"({doc.get('ruleset')}), game id {game}.",
        f"Seats: {seats}." + (f" Yours: {seat}." if seat and seat != HOST else ""),
        f"Host key fingerprint: {fp} (check it with the host by another channel).",
        "",
        "To join:",
        "  pbem inbox THIS-MAIL.eml",
        f"  pbem mail-join ~/.config/pbem/invitations/{game}.pbem --as YOU --to HOST-ADDRESS --send",
        "",
    ])


# --- outgoing mail (host side) ----------------------------------------------------------------


@dataclass
class Outgoing:
    name: str  # seat name or "host"
    address: str
    seq: int  # 0 for the invitation
    message: EmailMessage


def recipients(host: Any) -> list[tuple[str, str]]:
    """(name, address) for every seat with an address, in seat order, then the host's."""
    st = host.status()
    emails = dict(host.config().get("emails") or {})
    out = []
    for seat in st["seats"]:
        addr = seat.get("email") or emails.get(seat["name"])
        if addr:
            out.append((seat["name"], addr))
    if emails.get(HOST):
        out.append((HOST, emails[HOST]))
    return out


def smtp_settings(config: dict[str, Any]) -> SmtpSettings | None:
    raw = config.get("smtp")
    return SmtpSettings.from_dict(raw) if raw else None


def sender_address(config: dict[str, Any]) -> str:
    smtp = config.get("smtp") or {}
    return smtp.get("from_addr") or (config.get("emails") or {}).get(HOST) or DEFAULT_SENDER


def mails_for(host: Any, seq: int) -> list[Outgoing]:
    """The mails for packet `seq` (0: the invitation), one per recipient."""
    config = host.config()
    sender = sender_address(config)
    to = recipients(host)
    if not to:
        raise UsageError("nobody in this game has a mail address",
                         hint="pbem game email GAME NAME=ADDRESS (and host=ADDRESS for a copy)")
    if seq == 0:
        armored = host.invitation()
        doc = read_blocks(armored)[0].doc
        name = f"invitation-{doc['game']}.pbem"
        return [Outgoing(n, a, 0, compose(sender=sender, to=a, subject=invitation_subject(doc, n),
                                          body_text=invitation_summary(doc, n) + "\n" + armored,
                                          attachment_name=name, attachment=armored.encode()))
                for n, a in to]
    found = dict(host.packets(seq - 1))
    if seq not in found:
        raise UsageError(f"no packet {seq} in this game")
    armored = found[seq]
    doc = read_blocks(armored)[0].doc
    name = f"packet-{seq:06d}.pbem"
    now = host.clock.now() if hasattr(host, "clock") else None
    return [Outgoing(n, a, seq, compose(sender=sender, to=a, subject=packet_subject(doc),
                                        body_text=packet_summary(doc, n, now) + "\n" + armored,
                                        attachment_name=name, attachment=armored.encode()))
            for n, a in to]


def smtp_password(settings: SmtpSettings | None, *, prompt: bool = True, command: str | None = None) -> str | None:
    """From `command`, else $PBEM_SMTP_PASSWORD, else a prompt on a terminal; None when no login is needed."""
    from pbem.mail.secrets import obtain

    if settings is None or not settings.user:
        return None
    return obtain("SMTP password", env=ENV_SMTP_PASSWORD, command=command,
                  prompt=f"SMTP password for {settings.user}@{settings.host}: " if prompt else None)


@dataclass
class Courier:
    """Delivers messages: over SMTP (settings + password) or as .eml files into a folder."""

    settings: SmtpSettings | None = None
    password: str | None = None
    to_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.settings is None and self.to_dir is None:
            raise UsageError("nowhere to deliver mail", hint="pass --to-dir DIR, or --send with SMTP settings")

    def deliver(self, msg: EmailMessage) -> str:
        if self.settings is not None:
            send(msg, self.settings, self.password)
            return f"sent to {msg['To']}"
        assert self.to_dir is not None
        return f"wrote {write_eml(msg, self.to_dir)}"


def send_pending(host: Any, courier: Courier, *, log: Callable[[str], None] = lambda s: None,
                 only_latest: bool = False) -> int:
    """Mail every packet not mailed yet (config "mailed"), the invitation first; returns how many.

    The mark is written after each packet's mails went out, so a crash resends at most one
    packet (harmless: readers keep one copy per packet number).
    """
    mailed = int(host.config().get("mailed", -1))
    seqs = [s for s, _ in host.packets(max(mailed, 0))]
    todo = ([0] if mailed < 0 else []) + seqs
    if only_latest and todo:
        todo = todo[-1:]
    for seq in todo:
        for out in mails_for(host, seq):
            where = courier.deliver(out.message)
            log(f"mailed {'invitation' if seq == 0 else f'packet {seq}'} to {out.name} <{out.address}>: {where}")
        host.set_config(mailed=max(seq, int(host.config().get("mailed", -1))))
    return len(todo) + send_notices(host, courier, log=log)


def notice_mails(host: Any, armored: str) -> list[Outgoing]:
    """A host's notice as short mails: a reminder to the seat it reminds (and the host's copy),
    anything else to everyone; the signed notice is attached for `pbem inbox`."""
    from pbem.ui.when import notice_line

    doc = read_blocks(armored)[0].doc
    line = notice_line(doc, host.clock.now())
    sender = sender_address(host.config())
    name = f"notice-{int(doc.get('seq', 0)):06d}-{doc.get('notice')}.pbem"
    out = []
    for n, a in recipients(host):
        if doc.get("notice") == "reminder" and n not in (doc.get("seat"), HOST):
            continue
        out.append(Outgoing(n, a, int(doc.get("seq", 0)), compose(
            sender=sender, to=a, subject=f"{_tag(str(doc.get('game')))} packet {doc.get('seq')}: {line}",
            body_text=f"{line}\n\n{armored}", attachment_name=name, attachment=armored.encode())))
    return out


def send_notices(host: Any, courier: Courier, *, log: Callable[[str], None] = lambda s: None) -> int:
    """Mail every notice not mailed yet (config "noticed": the last notice mailed)."""
    if not hasattr(host, "tick"):
        return 0
    from pbem.host import timekeeper

    done = int(host.config().get("noticed", 0))
    sent = 0
    for nid, row in timekeeper.notices(host, done):
        for out in notice_mails(host, row.armored):
            log(f"mailed {row.kind} notice (packet {row.seq}) to {out.name} <{out.address}>: {courier.deliver(out.message)}")
        host.set_config(noticed=nid)
        sent += 1
    return sent


# --- outgoing mail (player side) ------------------------------------------------------------


def block_mail(block: Signed, *, sender: str, to: str, in_reply_to: str | None = None) -> EmailMessage:
    """A join or move block as a mail to the host (armour in the body and attached)."""
    armored = block.armored()
    doc = block.doc
    if block.kind == "move":
        subject = move_subject(doc)
        name = f"move-{doc['seat']}-{int(doc['seq']):06d}.pbem"
        text = f"{doc['seat']}'s move answering packet {doc['seq']} (sealed to the host).\n"
    elif block.kind == "join":
        subject = join_subject(doc)
        name = f"join-{doc['seat']}.pbem"
        text = f"{doc['seat']} joins game {doc['game']}.\n"
    else:
        raise UsageError(f"players mail joins and moves, not a {block.kind}")
    return compose(sender=sender, to=to, subject=subject, body_text=f"{text}\n{armored}",
                   attachment_name=name, attachment=armored.encode(), in_reply_to=in_reply_to)


def player_settings(server: str | None, port: int | None, security: str, user: str | None,
                    sender: str | None) -> SmtpSettings:
    if not server:
        raise UsageError("--send needs --smtp-server", hint="or write the mail with --to-dir DIR")
    if not sender:
        raise UsageError("--send needs --from ADDRESS")
    d: dict[str, Any] = {"host": server, "security": security, "user": user, "from_addr": sender}
    if port:
        d["port"] = port
    return SmtpSettings.from_dict(d)

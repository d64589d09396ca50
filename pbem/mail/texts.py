"""What a classic game's mails say: subjects and the words before the armour.

A packet mail's subject names the game, round, packet number and whose turn it is; its body
says in words what happened since the reader's last mail. A trustless game's words are
`pbem.mail.trustless`'s; who gets which mail is `pbem.mail.publisher`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pbem.names import HOST
from pbem.protocol.crypto import PublicKey
from pbem.protocol.documents import Invitation, Packet
from pbem.ui import when, words
from pbem.ui.words import t


def tag(game: str) -> str:
    """The subject's prefix that names the game, e.g. "[pbem friday-1a2b]"."""
    return f"[pbem {game}]"


Kind = Literal["turn", "digest", "round", "over"]


def mail_kind(doc: Packet, recipient: str) -> Kind | None:
    """Why `recipient` gets a mail for this packet regardless of digests (None: only a digest)."""
    if doc.phase == "game-over":
        return "over"
    if doc.result is not None:
        return "round"
    if doc.to_move == recipient:
        return "turn"
    return None


def packet_subject(doc: Packet, recipient: str | None = None, moves: int = 0) -> str:
    """E.g. "[pbem friday-1a2b] your turn, ann: round 2, packet 41" (words.py, 3 languages)."""
    game, seq, rnd = doc.game, doc.seq, doc.round
    kind = mail_kind(doc, recipient or "")
    if kind == "over":
        winners = words.listing(doc.standings.winners if doc.standings else []) or t("nobody")
        return t("mail over subject", tag=tag(game), winners=winners)
    if kind == "round" and doc.result is not None:
        return t("mail round subject", tag=tag(game), done=doc.result.round, round=rnd, seq=seq, player=doc.to_move)
    if kind == "turn":
        return t("mail turn subject", tag=tag(game), seat=recipient, round=rnd, seq=seq)
    return t("mail digest subject", tag=tag(game), n=max(moves, 1), player=doc.to_move, round=rnd, seq=seq)


def invitation_subject(doc: Invitation, seat: str | None) -> str:
    if seat and seat != HOST:
        return t("{tag} invitation to {name} ({ruleset}): you are seat {seat}", tag=tag(doc.game), name=doc.name,
                 ruleset=t(doc.ruleset), seat=seat)
    return t("{tag} invitation to {name} ({ruleset})", tag=tag(doc.game), name=doc.name, ruleset=t(doc.ruleset))


def describe_moves(docs: list[Packet]) -> list[str]:
    """The packets' moves and public events in words, oldest first; a move the host made for a
    silent seat says so."""
    from pbem.ui.move_words import describe_event, describe_move
    from pbem.ui.when import by_host

    lines = []
    for doc in docs:
        for m in doc.moves:
            try:
                line = describe_move(m.text, m.seat)
            except Exception:  # a sentence is a nicety; never fail a mail on it
                line = f"{m.seat}: {m.text}"
            lines.append(by_host(line, m.why) if m.by == HOST else line)
        for e in doc.events:
            try:
                said = describe_event(e)
            except Exception:
                said = None
            if said:
                lines.append(said)
    return lines


def _gold(gold: dict[str, int]) -> str:
    return words.listing(f"{p} {g}" for p, g in gold.items()) or "-"


@dataclass
class PacketWords:
    """What a packet's mail says to one reader, in the reader's language, part by part: the
    plain text and the HTML part (pbem.mail.board) say the same. Public words only: the seat's
    role and hand stay in the sealed packet."""

    head: str
    since: str | None  # e.g. "Since your last mail, 2 moves:" (None: no move since)
    moves: list[str]  # each move and public event in words, oldest first
    results: list[list[str]]  # each round that ended: its result in lines
    status: str  # whose turn it is, or that the game is over
    news: list[str]  # the deadline, a pause, who is away
    sealed: str  # where the reader's own cards are
    commands: list[str]  # how to play
    digest: str | None  # why no mail came for each move


def play_commands(game: str, reader: str | None = None) -> list[str]:
    """How the reader of a game's mail plays (none for the host's own copy: it holds no seat)."""
    return [] if reader == HOST else [f"pbem turn {game}", f'pbem mail-move {game} "MOVE"']


def sealed_words(reader: str | None) -> str:
    """Where the reader's own cards are, as a packet mail's HTML part says it: the host's copy
    says that it holds none."""
    if reader == HOST:
        return t("The host's copy: the host holds no seat; each seat's role and hand are sealed in the packet, "
                 "for that seat's key only.")
    return t("Your role and your hand are sealed in the attached packet, for your key only.")


def packet_words(docs: list[Packet], recipient: str | None = None, digest: str | None = None,
                 now: datetime | None = None) -> PacketWords:
    """Every move since the reader's last mail (the host's moves for a silent seat marked so),
    the round's result, whose turn it is and by when, how to answer. `docs`: the packets since
    that mail, oldest first; `now`: the host's clock."""
    doc = docs[-1]
    said = describe_moves(docs)
    results = []
    for d in docs:
        result = d.result
        if result is None:
            continue
        lines = [t("mail round over", n=result.round, winners=words.listing(result.winners) or t("nobody"))]
        if result.finder:
            lines.append(t("mail finder", player=result.finder))
        paid = {p: g for p, g in result.payout.items() if g}
        if paid:
            lines.append(t("mail payout", list=_gold(paid)))
        lines.append(t("mail gold so far", list=_gold(result.gold)))
        results.append(lines)
    if doc.phase == "game-over":
        st = doc.standings
        status = t("mail game over", list=_gold(st.gold if st else {}),
                   winners=words.listing(st.winners if st else []) or t("nobody"))
    else:
        status = t("mail your turn") if recipient == doc.to_move else t("mail now", player=doc.to_move)
    game = doc.game
    return PacketWords(head=t("mail head", game=game, round=doc.round, seq=doc.seq),
                       since=t("mail since", n=sum(len(d.moves) for d in docs)) if said else None, moves=said,
                       results=results, status=status, news=when.packet_news(doc, recipient, now or datetime.now(UTC)),
                       sealed=sealed_words(HOST) if recipient == HOST else t("mail sealed"),
                       commands=play_commands(game, recipient),
                       digest=t("mail digest note", period=digest) if digest else None)


def words_text(w: PacketWords) -> str:
    """A packet mail's words as the plain text before the armour."""
    out = [w.head, ""]
    if w.since:
        out += [w.since, *(f"  - {s}" for s in w.moves), ""]
    for lines in w.results:
        out += [*lines, ""]
    out += [w.status, *w.news]
    out += ["", w.sealed]
    if w.commands:
        out += [t("mail to play"), *(f"  {c}" for c in w.commands)]
    if w.digest:
        out += ["", w.digest]
    return "\n".join(out) + "\n"


def invitation_parts(doc: Invitation, seat: str | None) -> tuple[list[str], str, list[str]]:
    """An invitation mail's words, for its text and its HTML part alike: its sentences (who
    hosts, the seats, the host key's fingerprint), the line before the commands, the commands."""
    host = doc.host
    fp = PublicKey.decode(host.key).fingerprint()
    seats = words.listing(doc.seat_names())
    game = doc.game
    yours = seat if seat and seat != HOST else None
    sentences = [
        t("{host} invites you to a game of {title}: {name} ({ruleset}), game id {game}.", host=host.name,
          title=t("title"), name=doc.name, ruleset=t(doc.ruleset), game=game),
        t("Seats: {seats}. Yours: {seat}.", seats=seats, seat=yours) if yours else t("Seats: {seats}.", seats=seats),
        t("Host key fingerprint: {fingerprint} (check it with the host by another channel).", fingerprint=fp),
    ]
    commands = ["pbem inbox                    " + t("(or: pbem inbox THIS-MAIL.eml)"), f"pbem mail-join {game}"]
    return sentences, t("To join (with 'pbem mail setup' done once):"), commands


def invitation_summary(doc: Invitation, seat: str | None) -> str:
    sentences, join, commands = invitation_parts(doc, seat)
    return "\n".join([*sentences, "", join, *(f"  {c}" for c in commands), ""])

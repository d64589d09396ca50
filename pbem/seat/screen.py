"""A packet as a seat sees it, drawn for the terminal (`pbem show`, `pbem turn`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rich.console import Console, RenderableType
from rich.text import Text

from pbem.names import HOST
from pbem.protocol.documents import Notice, PublicMove, RecentMove, Result, Standings
from pbem.protocol.table_docs import CHOICES
from pbem.seat.player import SeatPacket
from pbem.ui import move_words, talk_words, when, words
from pbem.ui.hints import Hints
from pbem.ui.seatview import render_view
from pbem.ui.words import t

if TYPE_CHECKING:  # the trustless modules load only for a trustless table
    from engine.state import RoundState
    from pbem.protocol.talk import Line
    from pbem.seat.trustless import TrustlessSeat


def move_line(m: PublicMove, events: list[dict[str, Any]] | None = None) -> str:
    """One public move in words; a move the host made for an absent or late seat says so."""
    line = move_words.describe_move(m.text, m.seat, events or [])
    if m.by == HOST:
        line = when.by_host(line, m.why or "timeout")
    return line


def last_moves_in_words(sp: SeatPacket) -> list[str]:
    """Every move since this seat's last turn (the last one with its events), then what only
    this seat learnt."""
    since = sp.since_my_turn()
    last = len(since) - 1
    lines = [move_line(m, sp.doc.events if i == last else None) for i, m in enumerate(since)]
    game_over = sp.doc.standings is not None
    for e in sp.part.events:
        if game_over and e.get("event") == "next_start":
            continue  # there is no next round
        line = move_words.describe_event(e, reveal=True)
        if line:
            lines.append(line)
    return lines


def played_over(sp: SeatPacket) -> list[str]:
    """Warnings: the host played for this seat a packet it had answered."""
    return [t("warning: the host played for you at packet {seq} ({why}), though you had answered it; "
              "'pbem audit --as {seat}' checks it once the round is over", seq=m.seq, why=words.reason(m.why),
              seat=sp.seat) for m in sp.played_over()]


def news_lines(sp: SeatPacket, notices: list[Notice], now: datetime) -> list[str]:
    """The deadline, pause, away and absent seats, and the host's notices since this seat's last turn."""
    lines = [*played_over(sp), *when.packet_news(sp.doc, sp.seat, now)]
    since = sp.since_my_turn()
    first = min([m.seq if isinstance(m, RecentMove) else 0 for m in since] + [sp.doc.seq])
    fresh = [n for n in notices if n.seq >= first]
    if fresh:
        lines.append(words.labelled(t("news"), "").rstrip())
        lines += [f"  - {words.notice_text(n, now)}" for n in fresh]
    return lines


def talk_lines(lines: list[Line]) -> list[str]:
    """Lines of table talk under their heading (none: nothing), each shown safely (pbem.ui.talk_words)."""
    if not lines:
        return []
    return [talk_words.heading(), *("  " + talk_words.line(ln.speaker, ln.seq, ln.to, ln.text) for ln in lines)]


def result_lines(result: Result | None, st: Standings | None) -> list[str]:
    """A finished round's and a finished game's result in words (empty while playing)."""
    lines = []
    if result:
        paid = words.join([f"{p} +{g}" for p, g in result.payout.items() if g]) if any(
            result.payout.values()) else t("ev payout none")
        winners = words.join(list(result.winners)) if result.winners else t("nobody")
        lines.append(t("round {n} is over: winners {winners}; {paid}", n=result.round, winners=winners, paid=paid))
        lines += outcome_lines(result)
    if st:
        lines.append(t("game won", n=len(st.winners), winners=words.join(list(st.winners)),
                       gold=max(st.gold.values(), default=0)))
    return lines


def outcome_lines(result: Result) -> list[str]:
    """Who found the gold (or that nobody did) and every seat's role, from the round's final
    position (empty if the packet's final position cannot be read)."""
    from engine.errors import BadPosition
    from engine.position import load

    try:
        return move_words.round_outcome(load(result.final))
    except (BadPosition, KeyError, TypeError, ValueError):
        return []


def packet_renderable(sp: SeatPacket, notices: list[Notice] | None = None,
                      now: datetime | None = None, answered: bool = False, hints: bool = False,
                      talk: list[Line] | None = None) -> RenderableType:
    """The packet as this seat sees it; `answered`: its move for this packet is made (sent, or
    written for the host), so the table waits for the host, not for it; `hints`: where its
    cards go, if it is to move (pbem.ui.hints); `talk`: the lines of table talk to show (those
    since the seat last looked)."""
    doc = sp.doc
    now = now or datetime.now(UTC)
    header = {t("game"): sp.packet.game, t("packet"): doc.seq, t("you are"): sp.seat}
    mine = sp.my_turn and not sp.old and not answered
    parts = render_view(sp.view, sp.seat, last_moves=last_moves_in_words(sp), header=header,
                        answered=answered and not sp.old, hints=_hints(sp.view, sp.seat, mine) if hints else None)
    news = [Text(line) for line in news_lines(sp, notices or [], now)]
    extra = [Text(line, style="bold") for line in result_lines(doc.result, doc.standings)]
    playing = doc.phase != "game-over" and doc.to_move
    if doc.standings is None and (playing or sp.old):
        extra.append(Text(_turn_line(sp, answered), style="bold"))
    said = [Text(line) for line in talk_lines(talk or [])]
    return _group(parts, *extra, *news, *said)


def _hints(view: RoundState, seat: str, mine: bool) -> Hints:
    """Where `seat`'s cards go on `view` when the table waits for its move, else that it does not."""
    from pbem.ui.hints import hints_for

    return hints_for(view, seat) if mine else Hints(lines=[t("no hints: the table does not wait for your move")])


def _turn_line(sp: SeatPacket, answered: bool) -> str:
    if sp.old:
        return t("clause sep").join([t("old packet", seq=sp.doc.seq, newest=sp.newest_seen),
                                     t("old packet hint", newest=sp.newest_seen)])
    if answered and sp.doc.to_move == sp.seat:
        return t("answered; waiting for the host")
    return t("to move", player=sp.doc.to_move)


def _group(*parts: RenderableType) -> RenderableType:
    from rich.console import Group

    return Group(*parts)


def show_packet(sp: SeatPacket, console: Console | None = None, notices: list[Notice] | None = None,
                answered: bool = False, hints: bool = False, talk: list[Line] | None = None) -> None:
    from pbem.ui.terminal import console as new_console

    (console or new_console()).print(packet_renderable(sp, notices, answered=answered, hints=hints, talk=talk))


def trustless_lines(summary: dict[str, Any], drawn: bool = False) -> list[str]:
    """A trustless table for this seat (pbem.seat.trustless_said.summary): where the table is, what it
    waits for and from whom (by when), its role and hand as far as they are open (unless `drawn`:
    the view above shows them), and its cards still shut, in words."""
    from pbem.seat.trustless_said import waiting_words

    w = summary["waiting"]
    step = words.step_name(w['step'])
    lines = [words.t("trustless table", game=summary["game"], seq=summary["seq"]),
             step if not w["seats"] else words.t("trustless waits", step=step, seats=words.join(w["seats"]))]
    if w.get("due"):
        now = datetime.now(UTC)
        lines.append(words.t("due {when} ({left})", when=words.date(w["due"]), left=words.left(w["due"], now)))
    if not drawn:
        role = summary["role"]
        lines.append(words.t("your role", role=words.role_name(role) if role else words.t("not open yet")))
        hand = [words.card_name(c) if c else words.t("not open yet") for c in summary["hand"]]
        lines.append(words.labelled(words.t("your hand"), words.t("list sep").join(hand)))
    return lines + waiting_words(summary["cards_waiting"])


def trustless_screen(ts: TrustlessSeat, last_moves: list[str], hints: bool = False) -> RenderableType:
    """A trustless table drawn as any packet is: while a round is played, the maze and this
    seat's numbered hand and role as far as they are open (render_view); between rounds and
    at the game's end, the round just ended with every card open; then where the table stands.
    `hints`: where this seat's cards go, when the table waits for its move."""
    from pbem.seat.trustless_said import summary

    header = {t("game"): ts.inv.game, t("packet"): ts.head[0], t("you are"): ts.me}
    r = ts.table.round
    if r is not None and ts.seat is not None:
        w = ts.table.waiting()
        seen = ts.view()
        marked = _hints(seen, ts.me, w.step in CHOICES and ts.me in w.seats) if hints else None
        view: RenderableType = render_view(seen, ts.me, last_moves=last_moves, header=header, hints=marked)
    elif r is None and ts.table.ended:  # the game is over: its last round, every card open
        view = render_view(ts.table.ended[-1].state, ts.me, last_moves=last_moves, header=header)
    else:  # before the deal: the joins, the shuffles
        return _group(*[Text(f"- {m}") for m in last_moves], *map(Text, trustless_lines(summary(ts))))
    return _group(view, *map(Text, trustless_lines(summary(ts), drawn=True)))

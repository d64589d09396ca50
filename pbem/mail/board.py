"""The public table in a packet's mail, as its HTML part (multipart/alternative beside the text);
an invitation's and a mail of table talk alone have one too, of their words.

What a phone's mail app shows: the maze drawn (pbem.ui.cards_svg, the replay's drawings), whose
turn it is and by when, the moves since the reader's last mail, each player's hand size, cards
in front and gold, the table talk the mail carries. Made for a mail client that runs no script
and fetches nothing: inline CSS only, no script, no link to anything, no image but the inline
SVG; one column that fits 390 px.

Only what every seat may see: the maze and the players come from the public view (a classic
packet's `public`, a trustless host's table), the words from `packet_words` (pbem.mail.texts,
pbem.mail.trustless); the reader's role and hand stay sealed in the packet, for `pbem turn` to
open, as a whisper's text does. Every text is escaped: a line of table talk, a name, a move or
a notice can hold anything.
"""

from __future__ import annotations

from html import escape

from engine.state import RoundState
from pbem.mail.texts import PacketWords, sealed_words
from pbem.ui import words
from pbem.ui.words import t

_FONT = "font-family:-apple-system,'Segoe UI',Roboto,'Noto Sans','PingFang SC','Microsoft YaHei',sans-serif"
_MUTED = "color:#57606a;font-size:13px"
_CELL = "padding:4px 6px;border-bottom:1px solid #d0d7de;text-align:left;vertical-align:top"


def packet_html(v: RoundState | None, to_move: str | None, w: PacketWords, recipient: str | None,
                talk: list[str] | None = None) -> str:
    """The HTML part of a packet's mail to `recipient`, in the current language (the reader's):
    `v` the table every seat sees (GameHost.public_view; None: words only), `to_move` the seat
    to move, `talk` the lines of table talk the mail carries (pbem.mail.talk_mail.said)."""
    from pbem.ui.cards_svg import board_cells, maze_svg

    mine = recipient is not None and recipient == to_move
    status = ("background:#fff8c5;border:1px solid #d4a72c" if mine else "background:#ddf4ff;border:1px solid #54aeff")
    out = [f'<p style="margin:0 0 8px;padding:8px 10px;border-radius:6px;font-weight:bold;{status}">'
           f'{escape(w.status)}</p>']
    out += [f'<p style="margin:0 0 6px">{escape(line)}</p>' for line in w.news]
    if v is not None:
        out.append('<div style="background:#161b22;border-radius:8px;padding:6px;margin:8px 0">'
                   f'{maze_svg(board_cells(v, None))}</div>')
        out.append(f'<p style="margin:0 0 10px;{_MUTED}">{escape(t("deck", n=len(v.deck)))} · '
                   f'{escape(t("discard pile", n=len(v.discard)))}</p>')
    if w.since:
        out.append(f'<h2 style="font-size:15px;margin:12px 0 4px">{escape(w.since)}</h2>'
                   '<ul style="margin:0 0 8px;padding-left:20px">')
        out += [f"<li>{escape(line)}</li>" for line in w.moves]
        out.append("</ul>")
    for lines in w.results:
        out.append('<p style="margin:8px 0">' + "<br>".join(escape(line) for line in lines) + "</p>")
    if v is not None:
        out.append(_players(v, to_move))
    if talk:
        out.append(_talk(talk))
    out.append(f'<p style="margin:12px 0 4px">{escape(sealed_words(recipient))}</p>')
    if w.commands:
        out.append(_commands(t("mail to play"), w.commands))
    if w.digest:
        out.append(f'<p style="margin:10px 0 0;{_MUTED}">{escape(w.digest)}</p>')
    return _page(w.head, out)


def invitation_html(head: str, sentences: list[str], join: str, commands: list[str]) -> str:
    """The HTML part of an invitation's mail, in the current language: the words of its text
    part (pbem.mail.texts.invitation_parts), which are all public (who hosts, the seats, the
    host key's fingerprint, how to join)."""
    return _page(head, [*(f'<p style="margin:0 0 8px">{escape(line)}</p>' for line in sentences),
                        _commands(join, commands)])


def talk_html(head: str, talk: list[str]) -> str:
    """The HTML part of a mail of table talk alone: its lines as `talk_mail.said` gives them to
    the reader (a whisper's text stays sealed for `pbem turn`)."""
    return _page(head, [_talk(talk)])


def _page(head: str, body: list[str]) -> str:
    """A whole HTML part: `head` as its title and heading over `body` (markup, its text escaped)."""
    return (f'<!doctype html><html lang="{escape(words.language())}"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{escape(head)}</title></head>'
            f'<body style="margin:0;padding:0;background:#ffffff;color:#1f2328">'
            f'<div style="max-width:640px;margin:0 auto;padding:10px;{_FONT};font-size:15px;line-height:1.45">'
            f'<h1 style="font-size:17px;margin:0 0 8px">{escape(head)}</h1>' + "".join(body) + "</div></body></html>\n")


def _talk(talk: list[str]) -> str:
    return (f'<h2 style="font-size:15px;margin:12px 0 4px">{escape(t("table talk"))}</h2>'
            '<ul style="margin:0 0 8px;padding-left:20px;overflow-wrap:anywhere">'
            + "".join(f"<li>{escape(line)}</li>" for line in talk) + "</ul>")


def _commands(header: str, commands: list[str]) -> str:
    return (f'<p style="margin:0 0 4px">{escape(header)}</p>'
            '<pre style="margin:0;padding:6px 8px;background:#f6f8fa;border-radius:6px;font-size:13px;'
            f'white-space:pre-wrap;word-break:break-all">{escape(chr(10).join(commands))}</pre>')


def _players(v: RoundState, to_move: str | None) -> str:
    """Each player's hand size, the cards in front of them (broken tools) and gold: a table."""
    head = "".join(f'<th style="{_CELL}">{escape(k)}</th>' for k in (t("player"), t("hand"), t("cards in front"),
                                                                       t("gold")))
    rows = []
    for p in v.players:
        front = ", ".join(words.card_name(c) for c in v.in_front.get(p, [])) or "-"
        mark = ' style="font-weight:bold"' if p == to_move else ""
        rows.append(f"<tr{mark}><td style=\"{_CELL}\">{escape(p)}{' ▶' if p == to_move else ''}</td>"
                    f'<td style="{_CELL}">{len(v.hands.get(p, []))}</td><td style="{_CELL}">{escape(front)}</td>'
                    f'<td style="{_CELL}">{v.gold.get(p, 0)}</td></tr>')
    return (f'<table style="border-collapse:collapse;width:100%;margin:8px 0;font-size:14px">'
            f"<tr>{head}</tr>{''.join(rows)}</table>")

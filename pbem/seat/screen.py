"""A packet as a seat sees it, drawn for the terminal (`pbem show`, `pbem turn`)."""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.text import Text

from pbem.seat.player import SeatPacket
from pbem.ui import words
from pbem.ui.render import render_view


def last_moves_in_words(sp: SeatPacket) -> list[str]:
    lines = [words.describe_move(m["text"], m["seat"], sp.doc.get("events", [])) for m in sp.doc.get("moves", [])]
    for e in sp.part.get("events", []):
        line = words.describe_event(e, reveal=True)
        if line:
            lines.append(line)
    return lines


def packet_renderable(sp: SeatPacket) -> RenderableType:
    doc = sp.doc
    header = {"game": sp.packet.game, "packet": doc["seq"], "you are": sp.seat}
    parts = render_view(sp.view, sp.seat, last_moves=last_moves_in_words(sp), header=header)
    result = doc.get("result")
    if not result and doc["phase"] != "game-over":
        return _group(parts, Text(_turn_line(sp), style="bold"))
    extra = []
    if result:
        paid = ", ".join(f"{p} +{g}" for p, g in result["payout"].items() if g) or words.t("nobody")
        extra.append(Text(f"round {result['round']} over: winners {', '.join(result['winners']) or '-'}; {paid}", style="bold"))
    if doc.get("standings"):
        st = doc["standings"]
        extra.append(Text(f"game over: {', '.join(st['winners'])} win with {max(st['gold'].values())} gold", style="bold"))
    elif doc["to_move"]:
        extra.append(Text(_turn_line(sp), style="bold"))
    return _group(parts, *extra)


def _turn_line(sp: SeatPacket) -> str:
    return words.t("to move", player=sp.doc["to_move"])


def _group(*parts: RenderableType) -> RenderableType:
    from rich.console import Group

    return Group(*parts)


def show_packet(sp: SeatPacket, console: Console | None = None) -> None:
    (console or Console()).print(packet_renderable(sp))

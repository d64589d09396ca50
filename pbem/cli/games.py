"""`pbem games`: the games you host (from the store) and play (from the key home), with
whose turn it is and by when."""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pbem.cli._common import HomeOpt, JsonOpt, StoreOptions
from pbem.cli._grouped import grouped
from pbem.cli.jsonout import json_text
from pbem.seat.home import key_home
from pbem.ui import when, words
from pbem.ui.words import pad, t

if TYPE_CHECKING:
    from datetime import datetime

    from pbem.host.interface import GameOverview


@grouped
def games(
    store: StoreOptions = StoreOptions(),
    host_only: Annotated[bool, typer.Option("--host", help="Only the games you host (the store).")] = False,
    player_only: Annotated[bool, typer.Option("--player", help="Only the games you play (the key home).")] = False,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Your games: those you host (round, whose turn, since when, the deadline) and those
    you play (whose turn, which wait on you, by when)."""
    from datetime import datetime

    from pbem.host.games import hosted_games
    from pbem.seat.games import invitations, my_games, my_keys

    explicit = store.given()  # a store named is listed whole; the default one, only the games your keys host
    hosting = [] if player_only else hosted_games(store.url(), explicit=explicit,
                                                  host_keys=None if explicit else my_keys(key_home(home)))
    playing = [] if host_only else my_games(key_home(home))
    invited = [] if host_only else invitations(key_home(home))
    if as_json:
        typer.echo(json_text({"hosting": hosting, "playing": playing, "invited": invited}))
        return
    now = datetime.now(UTC)
    if hosting:
        typer.echo(t("games you host:"))
        for row in hosting:
            typer.echo(_hosted_line(row, now))
    if playing:
        typer.echo(t("games you play:"))
        for g in playing:
            typer.echo(_played_line(g, now))
    if invited:  # anyone can mail one: the host's key says whose it is; a seat is taken only when asked
        typer.echo(t("invitations (not joined):"))
        for g in invited:
            typer.echo("  " + t("{game} from {host} (key {fingerprint}), seat {seat}: pbem mail-join {game}",
                                game=g["game"], host=g["host"], fingerprint=g["host_key"], seat=g["seat"] or "-"))
    if not hosting and not playing and not invited:
        typer.echo(t("no games yet (pbem game new to host one, pbem join INVITATION to play)"))


def _hosted_line(row: GameOverview, now: datetime) -> str:
    """A game you host, as `pbem games` lists it: round and packet, whose turn, since when, by when."""
    from pbem.ui.words import date, left

    turn = when.game_turn(row["status"], row["to_move"], row["waiting"], row["joined"], row["seats"])
    due = ""
    if row["due"]:
        due = t("clause sep") + t("due {when} ({left})", when=date(row["due"]), left=left(row["due"], now))
    elif row["paused"]:
        due = t("clause sep") + t("paused")
    where = t("round {n}, packet {seq}", n=row["round"], seq=row["seq"])
    since = t("since {when}", when=date(row["since"])) if row["since"] else ""
    return f"  {pad(row['name'], 16)} {pad(where, 20)} {pad(turn, 22)} {since}{due}"


def _played_line(g: dict[str, Any], now: datetime) -> str:
    """A game you play, as `pbem games` lists it: your seat, round and packet, whose turn, by when."""
    from pbem.ui.words import date, left

    if g["seq"] is None:
        state = t("no packet opened with this key home yet")
    elif g["phase"] == "game-over":
        state = t("game over")
    elif g.get("waiting"):  # a trustless game: whatever the step, 'pbem turn GAME' sends this seat's part
        w = g["waiting"]
        state = t("trustless waits", step=words.step_name(w['step']), seats=words.join(w["seats"]))
        if g["yours"]:
            state = words.labelled(t("YOUR TURN"), state)
    elif g["yours"]:
        state = t("YOUR TURN")
    elif g["answered"]:
        state = t("answered; waiting for the host")
    else:
        state = t("{player} to move", player=g["to_move"])
    where = t("round {n}, packet {seq}", n=g["round"], seq=g["seq"]) if g["seq"] is not None else ""
    due = ""
    if g["due"] and not g["answered"]:
        due = " (" + t("due {when} ({left})", when=date(g["due"]), left=left(g["due"], now)) + ")"
    seat = t("as {seat}", seat=g["seat"] or "?")
    return f"  {pad(g['name'] or g['game'], 16)} {pad(seat, 14)} {pad(where, 20)} {state}{due}"

"""`pbem club`: a club's store as a whole: ratings, seasons and their standings, the export of
its finished games. The workflow is pbem.host.club's; docs/club.md says how rounds are rated."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pbem.cli._common import JsonOpt, OutOpt, StoreOpt, argument, optional
from pbem.cli.jsonout import json_text
from pbem.ui.words import role_name, t

if TYPE_CHECKING:
    from pbem.host.club import ClubStanding
    from pbem.host.store import Store

app = typer.Typer(help="A club's store as a whole: ratings, seasons, standings, export.", no_args_is_help=True)

SeasonOpt = Annotated[str, optional("--season", help="The season's name (made by 'pbem club season').")]


def _open(store: str | None) -> Store:
    from pbem.host.paths import store_url
    from pbem.host.store import Store

    return Store(store_url(store))


def _print(table: list[ClubStanding], as_json: bool, title: str) -> None:
    if as_json:
        typer.echo(json_text([p.as_json() for p in table]))
        return
    if not table:
        typer.echo(t("no finished game yet"))
        return
    typer.echo(title)
    typer.echo(t("rank  rating  player  games  rounds  won  gold"))
    for n, p in enumerate(table, 1):
        won = ", ".join(f"{role_name(role)} {k}" for role, k in sorted(p.won.items())) or "-"
        typer.echo(f"{n:>4}  {p.ordinal:6.2f}  {p.name}  {len(p.games)}  {p.rounds}  {won}  {p.gold}")


@app.command("ratings")
def ratings(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Every player's rating over the store's finished games (each round a team match), with
    games and rounds played, rounds won per role, and gold."""
    from pbem.host.club import finished_rounds, standings

    with _open(store) as st:
        table = standings(finished_rounds(st))
    _print(table, as_json, t("ratings over every finished game:"))


@app.command("season")
def season(
    name: Annotated[str, argument("The season's name.")],
    game: Annotated[list[str], optional("--game", help="A game of the season (again for each).")],
    store: StoreOpt = None,
) -> None:
    """Make a season: a league of the games named (made again if it exists)."""
    from pbem.host.club import define_season

    with _open(store) as st:
        define_season(st, name, game)
    typer.echo(t("season {name}: {games}", name=name, games=", ".join(sorted(set(game)))))


@app.command("standings")
def standings_cmd(season_name: SeasonOpt, store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """The standings of a season: ratings over its finished games only."""
    from pbem.host.club import finished_rounds, season_games, standings

    with _open(store) as st:
        table = standings(finished_rounds(st, season_games(st, season_name)))
    _print(table, as_json, t("standings of season {name}:", name=season_name))


@app.command("export")
def export_cmd(store: StoreOpt = None, output: OutOpt = None) -> None:
    """Write the store's finished games as JSON: public facts and signed archives only (its
    shape: docs/club.md)."""
    import json

    from pbem.host.club import export

    with _open(store) as st:
        doc = export(st)
    data = json.dumps(doc, indent=2, sort_keys=True) + "\n"  # ASCII: the same bytes anywhere
    chains = any(g["trustless"] for g in doc["games"])
    note = t("trustless games are exported without the chains that prove their rounds (too large); check one with "
             "{command}", command="pbem audit URL --game NAME")
    if output is None:
        typer.echo(data, nl=False)
        if chains:
            typer.echo(note, err=True)
        return
    from pbem.atomic import write_atomic

    write_atomic(Path(output), data.encode())
    typer.echo(t("exported to {path}", path=output))
    if chains:
        typer.echo(note)


def register(root: typer.Typer, only: str | None = None) -> None:
    """Add the `club` group to `root` (the one word this module adds: `only` is it or None)."""
    root.add_typer(app, name="club")

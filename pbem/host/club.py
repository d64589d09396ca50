"""A club's store read as a whole: its finished games' rounds, the players' ratings and
standings over them, seasons (leagues of chosen games) and the export of its public record.

Only what every seat already saw is read: each finished round's result (public once the round
is over: roles, winners, gold) and its signed archive (a trustless round: the packet of its
chain that ended it), the seats' names and public keys. Nothing sealed (hands, the host's box,
the host's secrets) is read at all. docs/club.md tells how a
round, a hidden-role team match, is rated.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from pbem.errors import UsageError, msg
from pbem.host.blind_status import public_of
from pbem.host.store import Store
from pbem.host.tables import games, meta, packets, rounds, seats, trustless_games, trustless_packets, trustless_rounds

SEASON_KEY = "season:"  # a season is a row of `meta`: key "season:NAME", value a JSON list of game ids
MAX_SEASON_NAME = 64


@dataclass(frozen=True)
class FinishedRound:
    """One finished round of a finished game, in the order rounds ended across the store."""

    game: str  # the game's name
    game_id: str
    round_no: int
    ended_at: str  # when the packet that closed it was made
    players: dict[str, str]  # seat name -> the seat's public key (pbem1 line): who a player is
    roles: dict[str, str]  # seat name -> role this round
    winners: list[str]
    gold: dict[str, int]  # the game's gold so far, after this round's payout


@dataclass
class ClubStanding:
    """A player's line in `pbem club ratings` / `standings`."""

    key: str
    name: str
    mu: float
    sigma: float
    games: set[str] = field(default_factory=set)
    rounds: int = 0
    won: dict[str, int] = field(default_factory=dict)  # role -> rounds won in it
    played: dict[str, int] = field(default_factory=dict)  # role -> rounds played in it
    gold: int = 0

    @property
    def ordinal(self) -> float:
        """The rating shown and ranked by: mu - 3 sigma (openskill's ordinal), low while unsure."""
        return self.mu - 3 * self.sigma

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "key": self.key, "rating": self.ordinal, "mu": self.mu, "sigma": self.sigma,
                "games": len(self.games), "rounds": self.rounds, "rounds_won": sum(self.won.values()),
                "won_by_role": dict(sorted(self.won.items())), "played_by_role": dict(sorted(self.played.items())),
                "gold": self.gold}


def finished_rounds(store: Store, game_ids: Iterable[str] | None = None) -> list[FinishedRound]:
    """Every round of the store's finished games (or of `game_ids` among them), oldest first."""
    wanted = None if game_ids is None else set(game_ids)
    closing = packets.alias("closing")
    q = (select(games.c.id, games.c.name, rounds.c.round_no, rounds.c.result, closing.c.created_at)
         .select_from(rounds.join(games, games.c.id == rounds.c.game_id)
                      .join(closing, (closing.c.game_id == rounds.c.game_id) & (closing.c.seq == rounds.c.last_seq)))
         .where(games.c.status == "over", rounds.c.result.is_not(None)))
    with store.read() as c:
        rows = [r for r in c.execute(q) if wanted is None or r.id in wanted]
        keys: dict[str, dict[str, str]] = {}
        for s in c.execute(select(seats.c.game_id, seats.c.name, seats.c.key).order_by(seats.c.game_id, seats.c.idx)):
            keys.setdefault(s.game_id, {})[s.name] = s.key
        blind = [r for r in c.execute(_TRUSTLESS_ROUNDS) if wanted is None or r.id in wanted]
    out = []
    for r in rows:
        result = json.loads(r.result)
        roles = result.get("final", {}).get("roles", {})
        out.append(FinishedRound(game=r.name, game_id=r.id, round_no=r.round_no, ended_at=r.created_at,
                                 players=keys.get(r.id, {}), roles=dict(roles), winners=list(result["winners"]),
                                 gold={p: int(g) for p, g in result["gold"].items()}))
    for b in blind:  # a trustless round's result, made public at its end (pbem.host.blind_facts)
        result = json.loads(b.result)
        out.append(FinishedRound(game=b.name, game_id=b.id, round_no=b.round_no, ended_at=b.ended_at,
                                 players=dict(public_of(b.public).seats), roles=dict(result["roles"]),
                                 winners=list(result["winners"]), gold={p: int(g) for p, g in result["gold"].items()}))
    out.sort(key=lambda f: (f.ended_at, f.game_id, f.round_no))
    return out


# The rounds of the finished trustless games, with the packet that ended each
_CLOSING = trustless_packets.alias("closing")
_TRUSTLESS_ROUNDS = (
    select(trustless_games.c.id, trustless_games.c.name, trustless_games.c.public, trustless_rounds.c.round_no,
           trustless_rounds.c.ended_at, trustless_rounds.c.result, trustless_rounds.c.last_seq,
           _CLOSING.c.hash.label("last_hash"))
    .select_from(trustless_rounds.join(trustless_games, trustless_games.c.id == trustless_rounds.c.game_id)
                 .join(_CLOSING, (_CLOSING.c.game_id == trustless_rounds.c.game_id)
                       & (_CLOSING.c.seq == trustless_rounds.c.last_seq)))
    .where(trustless_games.c.status == "over")
    .order_by(trustless_rounds.c.game_id, trustless_rounds.c.round_no))


def teams(r: FinishedRound) -> tuple[list[list[str]], list[float]]:
    """A round as a team match: the seats grouped by (role, won or lost), the winners' teams
    ranked 1 and the losers' 2 (openskill's ranks: lower is better). Empty when it teaches
    nothing: a round everyone won or no one did."""
    won = set(r.winners)
    if not won or won >= set(r.roles):
        return [], []
    groups: dict[tuple[bool, str], list[str]] = {}
    for seat in sorted(r.roles):
        groups.setdefault((seat not in won, r.roles[seat]), []).append(seat)
    order = sorted(groups)
    return [groups[k] for k in order], [2.0 if lost else 1.0 for lost, _ in order]


def standings(rounds_: Sequence[FinishedRound]) -> list[ClubStanding]:
    """Every player's rating after `rounds_` in order, with their counts, best first."""
    from openskill.models import PlackettLuce  # loaded by the club's commands only

    model = PlackettLuce()
    table: dict[str, ClubStanding] = {}
    final_gold: dict[tuple[str, str], int] = {}
    for r in rounds_:
        for seat, key in r.players.items():
            if key not in table:
                fresh = model.rating()
                table[key] = ClubStanding(key=key, name=seat, mu=fresh.mu, sigma=fresh.sigma)
            p = table[key]
            p.name = seat  # the name it had in its latest game
            p.games.add(r.game_id)
            final_gold[(r.game_id, key)] = r.gold.get(seat, 0)
            if seat in r.roles:
                role = r.roles[seat]
                p.rounds += 1
                p.played[role] = p.played.get(role, 0) + 1
                if seat in r.winners:
                    p.won[role] = p.won.get(role, 0) + 1
        groups, ranks = teams(r)
        if not groups:
            continue
        before = [[model.create_rating([table[r.players[s]].mu, table[r.players[s]].sigma]) for s in g] for g in groups]
        after = model.rate(before, ranks=ranks)
        for g, rated in zip(groups, after, strict=True):
            for seat, new in zip(g, rated, strict=True):
                table[r.players[seat]].mu, table[r.players[seat]].sigma = new.mu, new.sigma
    for (_, key), gold in final_gold.items():
        table[key].gold += gold
    return sorted(table.values(), key=lambda p: (-p.ordinal, p.name, p.key))


# --- seasons ---------------------------------------------------------------------------------


def check_season_name(name: str) -> str:
    if not name or len(name) > MAX_SEASON_NAME or not all(ch.isalnum() or ch in "-_." for ch in name):
        raise UsageError(msg("bad season name {name}", name=repr(name)),
                         hint=msg("letters, digits, '-', '_' and '.', at most {n} characters", n=MAX_SEASON_NAME))
    return name


def define_season(store: Store, name: str, game_names: Sequence[str]) -> list[str]:
    """Make (or remake) the season `name` of the games `game_names`; their ids, in one change.
    Every name is checked before anything is written."""
    check_season_name(name)
    if not game_names:
        raise UsageError(msg("a season needs at least one game"), hint=msg("name them with --game GAME"))
    ids = sorted({store.find(g) for g in game_names})
    with store.write() as c:
        c.execute(meta.delete().where(meta.c.key == SEASON_KEY + name))
        c.execute(meta.insert().values(key=SEASON_KEY + name, value=json.dumps(ids)))
    return ids


def season_games(store: Store, name: str) -> list[str]:
    """The ids of the season's games; refused when there is no such season."""
    check_season_name(name)
    with store.read() as c:
        value = c.execute(select(meta.c.value).where(meta.c.key == SEASON_KEY + name)).scalar()
        have = sorted(str(k)[len(SEASON_KEY):] for k in c.execute(select(meta.c.key).where(meta.c.key.startswith(SEASON_KEY))).scalars())
    if value is None:
        raise UsageError(msg("no season {name} in store {store}", name=repr(name), store=repr(store.label)),
                         hint=msg("seasons there: {names}", names=", ".join(have)) if have else
                         msg("make one with {command}", command="pbem club season NAME --game GAME..."))
    return [str(g) for g in json.loads(value)]


# --- export ----------------------------------------------------------------------------------

EXPORT_FORMAT = "pbem-club-export/1"


def export(store: Store) -> dict[str, Any]:
    """The store's finished games as public facts: each game's name, rules, host and seats (names
    and public keys), its invitation (what every seat was sent), and each round's public result
    (roles, winners, payout, gold) with what proves it: a referee's round its revealed deal secret
    and signed archive; a trustless round the packet of its chain that ended it (the chain itself,
    which `pbem audit` checks, is not exported: it is most of a megabyte a game). Games in the
    order they were made, rounds in theirs: the same store gives the same bytes."""
    with store.read() as c:
        done = c.execute(select(games).where(games.c.status == "over")
                         .order_by(games.c.created_at, games.c.name, games.c.id)).all()
        ids = [g.id for g in done]
        seat_rows = c.execute(select(seats.c.game_id, seats.c.name, seats.c.key)
                              .where(seats.c.game_id.in_(ids)).order_by(seats.c.game_id, seats.c.idx)).all()
        round_rows = c.execute(select(rounds.c.game_id, rounds.c.round_no, rounds.c.secret, rounds.c.result,
                                      rounds.c.archive)
                               .where(rounds.c.game_id.in_(ids), rounds.c.result.is_not(None))
                               .order_by(rounds.c.game_id, rounds.c.round_no)).all()
        blind = c.execute(select(trustless_games).where(trustless_games.c.status == "over")).all()
        blind_rounds = c.execute(_TRUSTLESS_ROUNDS).all()
    by_game_seats: dict[str, list[dict[str, str]]] = {}
    for s in seat_rows:
        by_game_seats.setdefault(s.game_id, []).append({"name": s.name, "key": s.key})
    by_game_rounds: dict[str, list[dict[str, Any]]] = {}
    for r in round_rows:
        result = json.loads(r.result)
        final = result.get("final", {})
        by_game_rounds.setdefault(r.game_id, []).append({
            "round": r.round_no, "secret": r.secret, "roles": dict(sorted(final.get("roles", {}).items())),
            "finder": result.get("finder"), "winners": result["winners"], "payout": result["payout"],
            "gold": result["gold"], "archive": r.archive})
    for b in blind_rounds:
        result = json.loads(b.result)
        by_game_rounds.setdefault(b.id, []).append({
            "round": b.round_no, "roles": dict(sorted(result["roles"].items())), "finder": result["finder"],
            "winners": result["winners"], "payout": result["payout"], "gold": result["gold"],
            "last_packet": {"seq": b.last_seq, "hash": b.last_hash}})
    for g in blind:
        by_game_seats[g.id] = [{"name": name, "key": key} for name, key in public_of(g.public).seats]
    trustless = {g.id for g in blind}
    made = sorted([*done, *blind], key=lambda g: (g.created_at, g.name, g.id))
    return {"format": EXPORT_FORMAT, "games": [
        {"id": g.id, "name": g.name, "ruleset": g.ruleset, "options": json.loads(g.options),
         "host": {"name": g.host_name, "key": g.host_key}, "created_at": g.created_at,
         "invitation": g.invitation, "trustless": g.id in trustless, "seats": by_game_seats.get(g.id, []),
         "rounds": by_game_rounds.get(g.id, [])}
        for g in made]}

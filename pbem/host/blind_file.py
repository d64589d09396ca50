"""A trustless game's file, as the blind host (pbem.host.blind) keeps it: its tables, and the
making of a new game's file with the rules a blind host can keep (either ruleset, deadlines
whose timeout policy is `wait` or `discard`, nobody marked absent)."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Column, Integer, LargeBinary, MetaData, String, Table, Text, UniqueConstraint, insert
from sqlalchemy.engine import Engine

from pbem.errors import UsageError, msg
from pbem.host import sqlite
from pbem.host.clock import REAL, Clock, stamp
from pbem.host.creation import check_host_mail, check_new_game
from pbem.host.deadlines import Timing
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import HostParty, Invitation, Party, Signed, sign

META = MetaData()
GAMES = Table("blind_game", META, Column("id", String, primary_key=True), Column("name", String, nullable=False),
              Column("host_name", String, nullable=False), Column("invitation", Text, nullable=False))
JOINS = Table("blind_join", META, Column("seat", String, primary_key=True), Column("hash", String, nullable=False),
              Column("payload", LargeBinary, nullable=False))
PACKETS = Table("blind_packet", META, Column("seq", Integer, primary_key=True), Column("hash", String, nullable=False),
                Column("armored", Text, nullable=False), Column("relayed", String, nullable=False))
# The host's settings (its transport, for 'pbem host run --all'; the deadline rules `timing`
# and the current step's `clock`); made when first set, so a file of an
# older version reads as one with no settings.
CONFIG = Table("blind_config", META, Column("key", String, primary_key=True), Column("value", Text, nullable=False))
# When each seat's last block was taken (`pbem status`'s last activity), made when the first is.
ACTIVITY = Table("blind_activity", META, Column("seat", String, primary_key=True), Column("at", String, nullable=False))
# The host's signed notices (reminders, late notices), made when the first one is.
NOTICES = Table("blind_notice", META, Column("id", Integer, primary_key=True), Column("seq", Integer, nullable=False),
                Column("kind", String, nullable=False), Column("seat", String),
                Column("armored", Text, nullable=False))
# The seats' lines of table talk, each kept as it came (pbem/host/talk.py), made when the first is.
TALK = Table("blind_talk", META, Column("id", Integer, primary_key=True), Column("seat", String, nullable=False),
             Column("n", Integer, nullable=False), Column("seq", Integer, nullable=False),
             Column("file_hash", String, nullable=False, unique=True), Column("armored", Text, nullable=False),
             Column("created_at", String, nullable=False), UniqueConstraint("seat", "n"))


def open_file(path: Path, *, create: bool = False) -> Engine:
    """The SQLAlchemy engine of a blind host's file (WAL); `create`: its tables made."""
    engine = sqlite.engine(f"sqlite:///{path}")
    sqlite.use_wal(engine)
    if create:
        META.create_all(engine)
    return engine


def create_game(path: Path, name: str, host: Identity, ruleset: str, seats: list[tuple[str, PublicKey]],
                options: list[str], clock: Clock = REAL, host_mail: str | None = None,
                threshold: int | None = None) -> Signed[Invitation]:
    """A trustless game: the invitation commits to nothing, since the host deals nothing.
    `host_mail`: the address the seats mail, signed into the invitation; `threshold`: how many
    of the other seats can do a vanished seat's part (default all of them, docs/trustless.md §11)."""
    checked = check_new_game(path, name, ruleset, seats, options)
    if threshold is None:
        threshold = len(seats) - 1
    if not 1 <= threshold <= len(seats) - 1:
        raise UsageError(msg("bad {what} {text}", what="--threshold", text=threshold),
                         hint=msg("a threshold counts other seats: 1 to {n}", n=len(seats) - 1))
    host_mail = check_host_mail(host_mail)
    path.parent.mkdir(parents=True, exist_ok=True)
    game_id = f"{name}-{os.urandom(4).hex()}"
    invitation = sign(Invitation(game=game_id, name=name, ruleset=checked, options=sorted(options),
                                 host=HostParty(name=host.name, key=host.public.encode(), mail=host_mail),
                                 seats=[Party(name=n, key=k.encode()) for n, k in seats],
                                 commitments=[], created=stamp(clock.now()), trustless=True,
                                 threshold=threshold), host)
    engine = open_file(path, create=True)
    with engine.begin() as c:
        c.execute(insert(GAMES).values(id=game_id, name=name, host_name=host.name, invitation=invitation.armored()))
    engine.dispose()
    return invitation


def check_timing(timing: Timing, *, shared: bool = True) -> Timing:
    """Deadline rules a blind host can keep: any deadline, reminders and days, and the timeout
    policy `wait` or `discard` (the others stand in for a seat gone past its deadline and grace,
    its turns face-down discards; `shared`: the game's seats share their keys, docs/trustless.md
    §11); never `bot`, which would have to read the seat's hand and role."""
    timing.check()
    if timing.on_timeout == "bot":
        raise UsageError(msg("a trustless game cannot take --on-timeout bot: nobody may read a silent seat's hand "
                             "and role to play it"),
                         hint=msg("use --on-timeout discard: the other seats stand in for it and its turns are "
                                  "face-down discards (docs/trustless.md §11)"))
    if timing.on_timeout == "discard" and not shared:
        raise UsageError(msg("--on-timeout discard needs a trustless game whose seats share their keys, and this one "
                             "was made before they did"),
                         hint=msg("make the game again to play on without a silent seat (docs/trustless.md §11)"))
    return timing


def check_no_absent_rule(absent_after: int | None) -> None:
    """Refuse --absent-after for a trustless game: its host marks nobody absent (§10)."""
    if absent_after is not None:
        raise UsageError(msg("--absent-after does not apply to a trustless game: its host marks nobody absent"),
                         hint=msg("a trustless game's deadlines remind and say who is late (docs/trustless.md §10)"))



"""A new trustless game in a store (its trustless_games row: pbem.host.store), with the rules a
blind host can keep: either ruleset, deadlines whose timeout policy is `wait` or `discard`,
nobody marked absent. The blind host (pbem.host.blind) then serves it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
from sqlalchemy import insert

from pbem.errors import UsageError, msg
from pbem.host.blind_status import Public
from pbem.host.clock import REAL, Clock, stamp
from pbem.host.creation import check_host_mail, check_new_game, named_once, open_store
from pbem.host.deadlines import Timing
from pbem.host.settings import Settings, encode
from pbem.host.store import Store
from pbem.host.tables import trustless_games
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import HostParty, Invitation, Party, Signed, sign


def create_game(store: Store | Path | str, name: str, host: Identity, ruleset: str, seats: list[tuple[str, PublicKey]],
                options: list[str], clock: Clock = REAL, host_mail: str | None = None,
                threshold: int | None = None, emails: dict[str, str] | None = None,
                timing: Timing | None = None) -> Signed[Invitation]:
    """A trustless game in `store` (a file path: a SQLite store, made if missing), in one
    transaction: the invitation commits to nothing, since the host deals nothing.
    `host_mail`: the address the seats mail, signed into the invitation; `threshold`: how many
    of the other seats can do a vanished seat's part (default all of them, docs/trustless.md §11);
    `emails`: the seats' (and the host's) addresses; `timing`: the deadline rules."""
    checked = check_new_game(name, ruleset, seats, options)
    if threshold is None:
        threshold = len(seats) - 1
    if not 1 <= threshold <= len(seats) - 1:
        raise UsageError(msg("bad {what} {text}", what="--threshold", text=threshold),
                         hint=msg("a threshold counts other seats: 1 to {n}", n=len(seats) - 1))
    host_mail = check_host_mail(host_mail)
    if timing is not None:
        check_timing(timing, shared=bool(threshold))
    game_id = f"{name}-{os.urandom(4).hex()}"
    created = stamp(clock.now())
    invitation = sign(Invitation(game=game_id, name=name, ruleset=checked, options=sorted(options),
                                 host=HostParty(name=host.name, key=host.public.encode(), mail=host_mail),
                                 seats=[Party(name=n, key=k.encode()) for n, k in seats],
                                 commitments=[], created=created, trustless=True,
                                 threshold=threshold), host)
    settings = Settings(timing=timing, emails=dict(emails or {}))
    first = Public(seats=[(n, k.encode()) for n, k in seats], waiting=[n for n, _ in seats])  # each owes its join
    st, owned = open_store(store, create=True)
    try:
        with named_once(st, name) as c:
            c.execute(insert(trustless_games).values(
                id=game_id, name=name, host_name=host.name, host_key=host.public.encode(), created_at=created,
                invitation=invitation.armored(), settings=encode(settings), ruleset=checked,
                options=json.dumps(sorted(options)), public=msgspec.json.encode(first).decode()))
    finally:
        if owned:
            st.close()
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


def check_no_seat_rules(absent_after: int | None, bot_turns: int | None) -> None:
    """Refuse --absent-after and --bot-turns for a trustless game: its host marks nobody absent
    (§10) and no bot plays for its seats (`check_timing`)."""
    if absent_after is not None:
        raise UsageError(msg("--absent-after does not apply to a trustless game: its host marks nobody absent"),
                         hint=msg("a trustless game's deadlines remind and say who is late (docs/trustless.md §10)"))
    if bot_turns is not None:
        raise UsageError(msg("--bot-turns does not apply to a trustless game: no bot plays for its seats"),
                         hint=msg("a trustless game's deadlines remind and say who is late (docs/trustless.md §10)"))

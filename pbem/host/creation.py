"""Creating a game in a store: what `game new` refuses, the round secrets committed to, the
signed invitation, and the game's first rows (pbem.host.referee then hosts it).

Also the host's own sealing: the infos its secrets, states and moves are sealed under, and
the key of its own box of a game.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import insert
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from engine.catalog import RULESETS, Ruleset, is_ruleset
from engine.state import OPTIONS, PLAYER_RANGE, ROUNDS_PER_GAME
from pbem.errors import UsageError, msg
from pbem.host.clock import REAL, Clock, stamp
from pbem.host.deadlines import Timing
from pbem.host.paths import as_url
from pbem.host.settings import Memo, Settings, WebhookSetting, encode
from pbem.host.store import Store
from pbem.host.tables import games, seats
from pbem.names import HOST, check_game_name, check_seat_name
from pbem.protocol import fairness
from pbem.protocol.crypto import Identity, OwnBox, PublicKey
from pbem.protocol.documents import HostParty, Invitation, Party, Signed, mail_address_ok, seal_info, seal_json, sign


def open_store(store: Store | Path | str, *, create: bool = False) -> tuple[Store, bool]:
    """(the store, whether we opened it and so must close it)."""
    if isinstance(store, Store):
        return store, False
    return Store(as_url(store), create=create), True


def check_seat_count(ruleset: str, n: int) -> Ruleset:
    """The ruleset, checked to be one, and to be played by `n` players."""
    if not is_ruleset(ruleset):
        raise UsageError(msg("unknown ruleset {name}", name=repr(ruleset)), hint=msg("use one of: {choices}", choices=", ".join(RULESETS)))
    lo, hi = PLAYER_RANGE[ruleset]
    if not lo <= n <= hi:
        raise UsageError(msg("{ruleset} is played by {lo}-{hi} players, not {n}", ruleset=ruleset, lo=lo, hi=hi, n=n))
    return ruleset


def check_new_game(name: str, ruleset: str, seats: list[tuple[str, PublicKey]], options: list[str]) -> Ruleset:
    """What `game new` refuses, for every kind of host; the ruleset, checked."""
    check_game_name(name)
    checked = check_seat_count(ruleset, len(seats))
    names = [n for n, _ in seats]
    for n in names:
        check_seat_name(n)
    if len(set(names)) != len(names):
        raise UsageError(msg("two seats have the same name"))
    if len({k.encode() for _, k in seats}) != len(seats):
        raise UsageError(msg("two seats have the same public key"))
    bad = set(options) - set(OPTIONS)
    if bad:
        raise UsageError(msg("unknown option {name}", name=repr(sorted(bad)[0])),
                         hint=msg("use one of: {choices}", choices=", ".join(OPTIONS)))
    return checked


def check_host_mail(address: str | None) -> str | None:
    """The host's mail address as an invitation may sign it (None: none given)."""
    if address is not None and not mail_address_ok(address):
        raise UsageError(msg("{address} is no mail address the invitation can name", address=repr(address)),
                         hint=msg("write it as user@example.org"))
    return address


def create_game(
    store: Store | Path | str,
    name: str,
    host: Identity,
    ruleset: str,
    seat_keys: list[tuple[str, PublicKey]],
    options: list[str],
    emails: dict[str, str] | None = None,
    timing: dict[str, Any] | None = None,
    clock: Clock = REAL,
    host_mail: str | None = None,
    webhook: WebhookSetting | None = None,
) -> Signed:
    """Add a game to the store (created if it does not exist) and return its invitation.

    `timing` is the game's deadline rules (pbem.host.deadlines.Timing.to_config()), if any.
    `host_mail` (else `emails["host"]`) is signed into the invitation: the address seats mail.
    `webhook`: where the host POSTs its notices (pbem.host.webhooks.setting), if anywhere."""
    ruleset = check_new_game(name, ruleset, seat_keys, options)
    host_mail = check_host_mail(host_mail or (emails or {}).get(HOST))
    st, owned = open_store(store, create=True)
    try:
        game_id = f"{name}-{os.urandom(4).hex()}"
        secrets = fairness.new_secrets(ROUNDS_PER_GAME)
        commitments = [fairness.commitment(game_id, k + 1, s) for k, s in enumerate(secrets)]
        invitation = sign(Invitation(game=game_id, name=name, ruleset=ruleset, options=sorted(options),
                                     host=HostParty(name=host.name, key=host.public.encode(), mail=host_mail),
                                     seats=[Party(name=n, key=k.encode()) for n, k in seat_keys],
                                     commitments=commitments, created=stamp(clock.now())), host)
        with named_once(st, name) as c:
            c.execute(insert(games).values(
                id=game_id, name=name, ruleset=ruleset, options=json.dumps(sorted(options)), host_name=host.name,
                host_key=host.public.encode(), created_at=stamp(clock.now()), invitation=invitation.armored(),
                invitation_hash=invitation.hash, commitments=json.dumps(commitments),
                secrets_sealed=seal_json([x.hex() for x in secrets], host.public, host_info(game_id, "secrets"),
                                         pad="secrets"),
                box_key=new_box_key(game_id, host.public), state_sealed=None, public="{}", status="joining",
                round_no=0, move_no=0, seq=0,
                head=invitation.hash,
                settings=encode(Settings(timing=Timing.from_dict(timing) if timing else None,
                                         emails={HOST: (emails or {})[HOST]} if (emails or {}).get(HOST) else {},
                                         webhook=webhook)),
                memo=encode(Memo())))
            c.execute(insert(seats), [{"game_id": game_id, "idx": i, "name": n, "key": k.encode(),
                                       "email": (emails or {}).get(n)} for i, (n, k) in enumerate(seat_keys)])
    finally:
        if owned:
            st.close()
    return invitation


@contextmanager
def named_once(st: Store, name: str) -> Iterator[Connection]:
    """The transaction that makes the game called `name` in `st`: refused (nothing written) when
    a game of either kind has that name, or another process takes it meanwhile."""
    taken = UsageError(msg("store {store} already has a game called {name}", store=repr(st.label), name=repr(name)),
                       hint=msg("choose another game name (pbem games lists them)"))
    try:
        with st.write() as c:
            if st.name_taken(c, name):
                raise taken
            yield c
    except IntegrityError:  # another process took the name between our check and insert
        raise taken from None


def host_info(game_id: str, purpose: str) -> bytes:
    """What the host's own sealed things of a game (secrets, states, moves, box key) are bound to."""
    return seal_info(game_id, 0, HOST, HOST, purpose)


def new_box_key(game_id: str, host: PublicKey) -> str:
    """A new key for the host's own box of a game, sealed to the host's key."""
    return seal_json(os.urandom(OwnBox.KEY_LEN).hex(), host, host_info(game_id, "box key"), pad="secrets")

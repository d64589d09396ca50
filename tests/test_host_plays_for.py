"""The host's moves for a seat, attacked: a host that plays for a seat when the rules allow
none, or plays another move than its timeout policy makes, is refused by its own library and
faulted by the audit; the seat's own client says when the host played a packet it had
answered. And a seat's move with an empty nonce (its words guessable from its commitment)
is refused. Real keys, a real store (SQLite and PostgreSQL), a real shared folder.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from pbem_helpers import store_dump
from test_deadlines import dealt

from engine.rules import legal_moves
from pbem.errors import BadPacket
from pbem.host.deadlines import Timing
from pbem.protocol.documents import SealedMove, b64, move_commitment, seal_info, seal_json, sign
from pbem.protocol.crypto import PublicKey
from pbem.names import HOST


def test_a_move_with_an_empty_nonce_is_refused(tmp_path, store_url: str) -> None:
    """A nonce of no bytes makes the commitment a hash of the move's words alone: anyone who
    reads the move file finds the words by trying each legal move. Refused, nothing changes."""
    from pbem.seat import player

    clock, host, fh, seats, ids = dealt(tmp_path, Timing(deadline=3600), store_url)
    first = host.status()["to_move"]
    sp = seats[first].latest()
    text = str(legal_moves(sp.view)[0])
    honest = player.make_move(sp, text)
    key = PublicKey.decode(sp.invitation.doc.host.key)
    info = seal_info(sp.packet.game, sp.doc.seq, first, HOST, "move")
    for nonce in (b"", b"\0" * 15):
        doc = msgspec.structs.replace(honest.doc, commit=move_commitment(nonce, text), signer="",
                                      sealed=seal_json(SealedMove(move=text, nonce=b64(nonce)), key, info, pad="move"))
        before = store_dump(host.store.url)
        with pytest.raises(BadPacket, match=f"nonce has {len(nonce)} bytes, not 16"):
            host.accept(sign(doc, ids[first]))
        assert store_dump(host.store.url) == before
    assert host.accept(honest).kind == "applied"
    host.close()


def test_away_is_bounded_rate_limited_and_a_far_date_says_its_year(tmp_path, store_url: str) -> None:
    """`away --until 9000-01-01` under a 1 h deadline would freeze the game: refused beyond the
    game's --max-away (14 days unless set), nothing changes. Each away notice goes to every
    seat: a fourth in a day is refused. A date of another year is said with its year."""
    from pbem.errors import Conflict
    from pbem.seat import player
    from pbem.ui import when, words

    clock, host, fh, seats, ids = dealt(tmp_path, Timing(deadline=3600, on_timeout="bot"), store_url)
    first = host.status()["to_move"]
    me = seats[first]

    def away(until: str):
        return player.make_request(me.invitation, first, ids[first], "away", until=until)

    before = store_dump(host.store.url)
    with pytest.raises(BadPacket, match=r"ends Wed 1 Jan 9000 00:00 UTC, more than 14 days from now") as refused:
        host.accept(away("9000-01-01T00:00:00+00:00"))
    assert "at most 14 days" in refused.value.hint
    assert store_dump(host.store.url) == before
    assert host.status()["deadline"]["due"] == "2026-12-01T13:00:00+00:00"
    for day in (5, 6, 7):  # three changes of mind in a day are taken
        assert host.accept(away(f"2026-12-{day:02}T00:00:00+00:00")).kind == "away"
    before = store_dump(host.store.url)
    with pytest.raises(Conflict, match="sent 3 away notices in the last 1 day"):
        host.accept(away("2026-12-08T00:00:00+00:00"))
    assert store_dump(host.store.url) == before
    assert [n.kind for n in host.notices()].count("away") == 3
    clock.advance(86400)  # a day later the seat may say so again
    assert host.accept(away("2026-12-09T00:00:00+00:00")).kind == "away"
    now = clock.now()
    assert when.date("2026-12-09T00:00:00+00:00", now) == "Wed 9 Dec 00:00 UTC"
    assert when.date("2027-01-01T00:00:00+00:00", now) == "Fri 1 Jan 2027 00:00 UTC"
    with words.using("zh-Hans"):
        assert when.date("2027-01-01T00:00:00+00:00", now) == "2027年1月1日（周五）00:00 UTC"
    with words.using("zh-Hant"):
        assert when.date("2027-01-01T00:00:00+00:00", now) == "2027年1月1日（週五）00:00 UTC"
    host.close()


def test_max_away_is_a_game_setting(tmp_path) -> None:
    """`game new --max-away` and `game config --max-away` set the bound; `game config` says it."""
    from test_folder_play import make_homes, run_cli
    from pbem.cli import app
    from pbem.seat import keys

    homes = make_homes(tmp_path, ["referee", "ann", "bob", "cat"])
    players = [a for s in ("ann", "bob", "cat")
               for a in ("--player", f"{s}={keys.load_identity(homes[s], s, None).public.encode()}")]
    db = str(tmp_path / "g.db")
    made = run_cli(app, ["game", "new", "t", "--host", "referee", *players, "--db", db, "--deadline", "48h",
                         "--max-away", "3d"], homes["referee"])
    assert made.exit_code == 0, made.output
    said = run_cli(app, ["game", "config", "t", "--db", db], homes["referee"])
    assert said.exit_code == 0 and said.output.rstrip().endswith("away at most 3 days"), said.output
    changed = run_cli(app, ["game", "config", "t", "--db", db, "--max-away", "1d12h"], homes["referee"])
    assert changed.output.rstrip().endswith("away at most 1 day 12 hours"), changed.output
    from processes import one_error_line, pbem

    before = Path(db).read_bytes()
    bad = pbem("game", "config", "t", "--db", db, "--max-away", "forever", home=homes["referee"])
    one_error_line(bad, 2, "bad --max-away 'forever'")
    assert Path(db).read_bytes() == before

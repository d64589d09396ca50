"""Deadlines in the reader's time zone, named: TZ, else the zone of the key home's profile
(`pbem mail setup --timezone`), else the machine's; what is stored and sent stays UTC. Real
`pbem` processes on a packet of a real game whose clock stands still."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from processes import one_error_line, pbem

from pbem.host import referee as H
from pbem.host.clock import FakeClock
from pbem.host.deadlines import Timing
from pbem.protocol.documents import read_blocks
from pbem.seat import keys
from pbem.seat import player as P
from pbem.ui import zone

SEATS = ["ann", "bob", "cat"]
# dealt at noon UTC on 1 July 2026 with 48 hours to answer: due 3 July 12:00 UTC
DUE_UTC = "2026-07-03T12:00:00+00:00"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("local-time")
    homes = {n: root / f"home-{n}" for n in ["referee", *SEATS]}
    ids = {n: keys.create_identity(h, n, None) for n, h in homes.items()}
    clock = FakeClock("2026-07-01T12:00:00+00:00")
    db = root / "g.db"
    inv = H.create_game(db, "g", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [],
                        timing=Timing(deadline=48 * 3600).to_config(), clock=clock)
    with H.Host(db, ids["referee"], clock, game="g") as host:
        for s in SEATS:
            host.accept(read_blocks(P.join(read_blocks(inv.armored())[0], ids[s], homes[s]).armored())[0])
        packet = read_blocks(host.packets()[-1][1])[0]
    (root / "packet.pbem").write_text(packet.armored())
    return {"root": root, "homes": homes, "mover": packet.doc.to_move, "packet": root / "packet.pbem"}


def due_line(table: dict, seat: str, **env: str | None) -> str:
    out = pbem("show", table["packet"], "--as", seat, home=table["homes"][seat], cwd=table["root"], ok=True,
               env={"COLUMNS": "120", **env}).stdout
    return next(line for line in out.splitlines() if " due " in line or line.startswith("your move, due"))


def test_two_zones_say_the_same_moment_each_in_its_own_time(table: dict) -> None:
    seat = next(s for s in SEATS if s != table["mover"])
    shanghai = due_line(table, seat, TZ="Asia/Shanghai")
    new_york = due_line(table, seat, TZ="America/New_York")
    assert "3 Jul" in shanghai and "20:00 CST" in shanghai, shanghai  # UTC+8
    assert "3 Jul" in new_york and "08:00 EDT" in new_york, new_york  # UTC-4 in July
    assert "UTC" not in shanghai + new_york
    chinese = pbem("--lang", "zh-Hans", "show", table["packet"], "--as", seat, home=table["homes"][seat],
                   env={"TZ": "America/New_York"}, ok=True).stdout
    assert "7月3日（周五）08:00 EDT" in chinese, chinese
    # the JSON carries the signed UTC time, whatever the reader's zone
    wire = [json.loads(pbem("show", table["packet"], "--as", seat, "--json", home=table["homes"][seat],
                            env={"TZ": tz}, ok=True).stdout)["deadline"]["due"] for tz in ("Asia/Shanghai", "UTC")]
    assert wire[0] == wire[1] and datetime.fromisoformat(wire[0]) == datetime.fromisoformat(DUE_UTC)


def test_the_profile_names_the_zone_when_tz_is_not_set(table: dict) -> None:
    seat = table["mover"]
    home = table["homes"][seat]
    saved = pbem("mail", "setup", "--timezone", "Asia/Tokyo", home=home, ok=True)
    assert "time zone: Asia/Tokyo" in saved.stdout
    try:
        assert "21:00 JST" in due_line(table, seat, TZ=None)  # UTC+9, from the profile
        assert "14:00 CEST" in due_line(table, seat, TZ="Europe/Berlin")  # TZ given for this run wins
        games = pbem("games", home=home, cwd=table["root"], env={"TZ": None}, ok=True).stdout
        assert "21:00 JST" in games, games
        before = (home / "mail" / "profile.json").read_bytes()
        one_error_line(pbem("mail", "setup", "--timezone", "Mars/Olympus", home=home), 2, "unknown time zone")
        assert (home / "mail" / "profile.json").read_bytes() == before
    finally:
        pbem("mail", "setup", "--timezone", "none", home=home, ok=True)
    assert "Asia/Tokyo" not in (home / "mail" / "profile.json").read_text()
    assert "JST" not in due_line(table, seat, TZ="UTC")


def test_a_log_line_names_its_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    noon = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    monkeypatch.delenv("TZ", raising=False)
    try:
        zone.set_zone("Asia/Kolkata")
        assert zone.clock(noon) == "17:30:00 IST"
        zone.set_zone("Etc/GMT-5")  # a zone known by its offset alone
        assert zone.clock(noon) == "17:00:00 UTC+05"
    finally:
        zone.set_zone(None)

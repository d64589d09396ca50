"""A game's webhook: the host POSTs when a seat is to move, is late, or a round ends.

A real HTTP server on loopback (http.server in a thread) receives the notices; a closed port
and a server that accepts and never answers stand for dead ones. The notices go through the
store's outbox (recorded with the change, sent after it commits, marked sent), on SQLite and
PostgreSQL; the daemon's path runs as a real `pbem` process (its second pass and the refused
settings through the command line's entry in this process).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from on_disk import store_dump
from processes import pbem
from sqlalchemy import create_engine, select
from table_games import PASS, Table

from engine.bots import RandomBot
from pbem.auto.webhooks import MAX_ATTEMPTS, TIMEOUT, Sender
from pbem.errors import UsageError
from pbem.folder.play import FolderSeat
from pbem.host import referee as H
from pbem.host.clock import FakeClock
from pbem.host.deadlines import Timing
from pbem.host.settings import WebhookSetting
from pbem.host.store import Store
from pbem.host.tables import games, webhooks
from pbem.host.webhooks import setting
from pbem.protocol.documents import read_file
from pbem.seat import keys
from pbem.seat import player as P

SEATS = ["ann", "bob", "cat"]


class Hook:
    """An HTTP server on loopback that keeps every POST's bytes."""

    def __init__(self, status: int = 204) -> None:
        got: list[bytes] = []
        self.got = got

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                got.append(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def silent_server() -> tuple[socket.socket, str]:
    """A server that accepts connections (the kernel's backlog) and never answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    return s, f"http://127.0.0.1:{s.getsockname()[1]}/hook"


def hooked_game(root: Path, url: str, hook: str, fmt: str = "json",
                timing: Timing | None = None) -> tuple[Table, FakeClock]:
    """A dealt three-seat game in store `url` with an hour's deadline (or `timing`) and the webhook `hook`."""
    clock = FakeClock("2026-12-01T12:00:00+00:00")
    homes = {n: root / f"home-{n}" for n in ["referee", *SEATS]}
    ids = {n: keys.create_identity(h, n, PASS) for n, h in homes.items()}
    invitation = H.create_game(url, "t", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [],
                               timing=(timing or Timing(deadline=3600)).to_config(), clock=clock,
                               webhook=WebhookSetting(url=hook, format=fmt))
    (root / "invitation.pbem").write_text(invitation.armored())
    table = Table(root, H.Host(url, ids["referee"], clock), ids, homes, SEATS)
    for s in SEATS:
        (root / f"join-{s}.pbem").write_text(P.join(read_file(root / "invitation.pbem")[0], ids[s], homes[s]).armored())
        table.apply_file(root / f"join-{s}.pbem")
    return table, clock


def play(table: Table, stop, seed: int = 1) -> None:
    bots = {s: RandomBot(f"{seed}-{s}") for s in SEATS}
    for _ in range(500):
        _, packet = table.latest()
        if stop(packet):
            return
        seat = packet.doc.to_move
        sp = P.open_packet(packet, table.ids[seat], table.homes[seat])
        table.apply_file(table.move_file(seat, str(bots[seat].choose(sp.view)), packet, sp))
    raise AssertionError("the game did not get there")


def secrets_of(url: str, table: Table) -> list[bytes]:
    """What must never reach a webhook: the sealed columns, every role and card in the hands
    (from the host's own live state), the keys and the passphrase."""
    db = create_engine(url)
    with db.connect() as c:
        sealed = [v.encode() for row in c.execute(select(games.c.secrets_sealed, games.c.state_sealed, games.c.box_key))
                  for v in row if v]
    state = table.host.live_state()
    words = [b"role", b"hand", b"pbem1", PASS, b"sealed", b"saboteur", b"digger", *sealed]
    words += [c.encode() for p in SEATS for c in state.hands[p]]
    return words


@pytest.mark.slow  # a round played to its end by bots, then its deadline missed: 4-8 s a store
def test_a_webhook_hears_each_turn_the_late_seat_and_the_round_end_and_no_secret(tmp_path: Path, store_url: str) -> None:
    hook = Hook()
    try:
        table, clock = hooked_game(tmp_path, store_url, hook.url)
        play(table, lambda p: p.doc.round > 1)
        clock.advance(3601)
        table.host.tick()  # the seat to move is late
        log: list[str] = []
        with Store(store_url) as st:
            with st.read() as c:
                owed = c.execute(select(webhooks.c.body).order_by(webhooks.c.id)).scalars().all()
            assert Sender(store_url, log.append).drain(st) == len(owed)
            assert Sender(store_url, log.append).drain(st) == 0  # marked sent: never again
        bodies = [json.loads(b) for b in hook.got]
        assert len(hook.got) == len(owed) == table.host.status()["seq"] + 1 and not log  # one a packet, and the late one
        events = [b["event"] for b in bodies]
        assert events.count("round-over") == 1 and events.count("late") == 1 and events[0] == "to-move"
        late = bodies[-1]
        assert late["seat"] == table.host.status()["to_move"] and late["game"] == "t"
        assert late["deadline"] and bodies[-2]["deadline"] == late["deadline"]  # the deadline it missed
        assert all(set(b) == {"id", "event", "game", "seat", "deadline", "round", "packet", "at"} for b in bodies)
        sent = b"".join(hook.got)
        leaked = [w for w in secrets_of(store_url, table) if w.lower() in sent.lower()]
        assert not leaked, leaked
    finally:
        hook.close()


def test_a_webhook_hears_the_reminders_and_the_seat_that_became_absent(tmp_path: Path) -> None:
    hook = Hook()
    try:
        url = f"sqlite:///{tmp_path / 'club.db'}"
        table, clock = hooked_game(tmp_path, url, hook.url, "json",
                                   Timing(deadline=3600, reminders=["40m", "20m"], absent_after=1))
        to_move = table.host.status()["to_move"]
        for seconds in (1201, 1200, 1200):  # the two reminders, then the deadline missed: late and absent at once
            clock.advance(seconds)
            table.host.tick()
        with Store(url) as st:
            assert Sender(url, print).drain(st) == 5
        bodies = [json.loads(b) for b in hook.got]
        assert [b["event"] for b in bodies] == ["to-move", "reminder", "reminder", "late", "absent"]
        due = bodies[0]["deadline"]
        assert due and all(b["seat"] == to_move and b["deadline"] == due and b["packet"] == 1 for b in bodies)
        assert len({b["id"] for b in bodies}) == 5  # two reminders of one packet: two notices, each its own id
        for fmt, key, words in [("discord", "content", f"a reminder: {to_move} to move, by {due}"),
                                ("slack", "text", f"{to_move} missed too many deadlines and is absent now")]:
            with Store(url) as st, st.write() as c:
                c.execute(webhooks.update().values(format=fmt, sent_at=None))
            del hook.got[:]
            with Store(url) as st:
                assert Sender(url, print).drain(st) == 5
            lines = [json.loads(b)[key] for b in hook.got]
            assert any(line == f"pbem t: {words}" for line in lines), lines
    finally:
        hook.close()


def test_chat_formats_are_one_line(tmp_path: Path) -> None:
    hook = Hook()
    try:
        for fmt, key in [("discord", "content"), ("slack", "text")]:
            url = f"sqlite:///{tmp_path / fmt}.db"
            (tmp_path / fmt).mkdir()
            hooked_game(tmp_path / fmt, url, hook.url, fmt)
            with Store(url) as st:
                assert Sender(url, print).drain(st) == 1
            said = json.loads(hook.got[-1])
            assert list(said) == [key] and said[key].startswith("pbem t: ") and "to move" in said[key], said
    finally:
        hook.close()


@pytest.mark.slow  # waits out one timeout of the silent server (2 s) while the game goes on
def test_a_dead_webhook_never_slows_play_and_loses_nothing(tmp_path: Path) -> None:
    silent, dead = silent_server()
    url = f"sqlite:///{tmp_path / 'store.db'}"
    try:
        table, _ = hooked_game(tmp_path, url, dead)
        log: list[str] = []
        sender = Sender(url, log.append)
        sender.start(poll=0.05)
        started = time.monotonic()
        play(table, lambda p: p.doc.seq >= 25)  # 24 moves while the sender waits on the silent server
        played = time.monotonic() - started
        t0 = time.monotonic()
        sender.stop()
        stopped = time.monotonic() - t0
        assert stopped <= TIMEOUT * 1.5 + 0.5
        # the moves took what moves take: never a timeout's wait for each of the 24 notices
        assert played < 24 * TIMEOUT / 4, played
        with Store(url) as st, st.read() as c:
            rows = c.execute(select(webhooks)).all()
        assert len(rows) == 25 and all(r.sent_at is None and r.attempts < MAX_ATTEMPTS for r in rows)  # none lost
        assert rows[0].attempts >= 1 and "timed out" in (rows[0].error or "") and any("not delivered" in x for x in log)
        # the server comes back (another URL answers now): what was owed is sent once
        hook = Hook()
        try:
            with Store(url) as st:
                with st.write() as c:
                    c.execute(webhooks.update().values(url=hook.url, next_at="2000-01-01T00:00:00+00:00"))
                assert Sender(url, log.append).drain(st) == 25
                assert Sender(url, log.append).drain(st) == 0
            assert len(hook.got) == 25 and len({json.loads(b)["id"] for b in hook.got}) == 25
        finally:
            hook.close()
    finally:
        silent.close()


@pytest.mark.parametrize("url", ["ftp://example.org/x", "http://", "https://:80/x", "http://h:99999/", "file:///etc/passwd",
                                 "http://a b/", "http://h/\x1b[2J", "x" * 3000, "javascript:alert(1)"])
def test_only_http_urls_are_taken(url: str) -> None:
    with pytest.raises(UsageError, match="bad webhook URL"):
        setting(url, None, None)
    with pytest.raises(UsageError, match="unknown webhook format"):
        setting("http://127.0.0.1/x", "irc", None)
    assert setting("HTTPS://Example.org:8443/a?b=c", "slack", None) == WebhookSetting("HTTPS://Example.org:8443/a?b=c",
                                                                                      "slack")
    assert setting(None, "discord", WebhookSetting("http://h/")) == WebhookSetting("http://h/", "discord")
    assert setting("none", None, WebhookSetting("http://h/")) is None and setting(None, None, None) is False


def run(root: Path, home: Path, *args: object, code: int = 0):
    r = pbem(*args, home=home, cwd=root, timeout=60)
    assert r.returncode == code, r.stderr + r.stdout
    return r


@pytest.mark.slow  # two `pbem` processes and a timeout of the silent server: 4-8 s
def test_the_host_daemon_posts_and_bad_urls_are_refused(tmp_path: Path, here) -> None:
    silent, dead = silent_server()
    hook = Hook()
    homes = {n: tmp_path / f"home-{n}" for n in ["referee", *SEATS]}
    ids = {n: keys.create_identity(h, n, None) for n, h in homes.items()}
    ref, db, folder = homes["referee"], tmp_path / "t.db", tmp_path / "shared"
    players = [a for s in SEATS for a in ("--player", f"{s}={ids[s].public.encode()}")]
    try:
        # made in this process: the refusals and the daemon below are the point
        here("game", "new", "t", "--host", "referee", *players, "--db", db, "--webhook", dead, home=ref, ok=True)
        here("folder", "init", "t", folder, "--db", db, home=ref, ok=True)
        before = store_dump(f"sqlite:///{db}")
        for args, words in [(["--webhook", "ftp://example.org/x"], "bad webhook URL"),
                            (["--webhook", "http://127.0.0.1/", "--webhook-format", "irc"], "unknown webhook format")]:
            r = here("game", "config", "t", "--db", db, *args, home=ref, cwd=tmp_path)  # the command's entry, here
            assert r.returncode == 2, r.stderr + r.stdout
            assert r.stderr.startswith("error: ") and words in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert store_dump(f"sqlite:///{db}") == before  # nothing changed
        for s in SEATS:
            FolderSeat.open(folder, ids[s], homes[s]).join()
        started = time.monotonic()
        out = run(tmp_path, ref, "host", "run", "t", "--db", db, "--folder", folder, "--once").stdout
        took = time.monotonic() - started
        assert "not delivered" in out and "timed out" in out, out
        assert took < 10, took  # the command's own work and at most one timeout and a half more
        r = run(tmp_path, ref, "game", "config", "t", "--db", db, "--webhook", hook.url, "--webhook-format", "slack")
        assert hook.url in r.stdout
        with Store(f"sqlite:///{db}") as st, st.write() as c:  # the owed notice now goes to the live server
            c.execute(webhooks.update().values(url=hook.url, format="slack", next_at="2000-01-01T00:00:00+00:00"))
        here("host", "run", "t", "--db", db, "--folder", folder, "--once", home=ref, cwd=tmp_path, ok=True)
        assert len(hook.got) == 1 and b"to move" in hook.got[0], hook.got
    finally:
        silent.close()
        hook.close()

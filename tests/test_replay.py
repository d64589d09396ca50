"""Replays of finished rounds: real bot games on disk, replayed from the DB and from a player's folder."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from processes import pbem
from source_trees import nodes
from table_games import Table, make_table, play_until

from engine.position import dump
from engine.views import view
from pbem.protocol.documents import read_blocks
from pbem.replay.html import render_html
from pbem.replay.load import load_replay
from pbem.replay.navigator import Navigator, decode_keys, frame
from pbem.replay.sources import ALL, NotReplayable
from pbem.ui.render import plain_text

SEATS = ["ann", "bob", "cat", "dan"]


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[Table, list[dict]]:
    """Round 1 played to its end by bots (round 2 is dealt, not finished); the host's state after every move."""
    table = make_table(tmp_path_factory.mktemp("replay"), SEATS)
    states: list[dict] = []

    def stop(packet) -> bool:
        if packet.doc.round == 1:
            states.append(dump(table.host.live_state()))
        return packet.doc.round > 1

    play_until(table, stop, seed=11)
    return table, states


def _inbox(table: Table, seat: str) -> Path:
    """What a seat received: the packet files only (no DB, no move files of others)."""
    inbox = table.root / f"inbox-{seat}"
    if not inbox.exists():
        inbox.mkdir()
        for f in sorted((table.root / "out").glob("packet-*.pbem")):
            shutil.copy(f, inbox / f.name)
    return inbox


def test_replay_matches_the_game_move_for_move(played) -> None:
    table, states = played
    r = load_replay(str(table.root / "game.db"), round_no=1)
    archive = read_blocks(table.host.archives()[1])[0]
    assert len(r) == len(archive.doc.moves) == len(states)
    for i in range(len(r)):  # states[i]: the host's state before move i + 1
        assert dump(r.state(i)) == states[i], f"step {i}"
        assert r.steps[i].text == archive.doc.moves[i].text
        assert r.steps[i].seat == archive.doc.moves[i].seat == states[i]["to_move"]
    assert dump(r.final) == archive.doc.final
    _, last = table.latest()
    assert dump(r.final) == last.doc.result.final
    assert r.final.phase == "over"


def test_a_seat_sees_only_what_it_knew_then(played) -> None:
    table, _ = played
    r = load_replay(str(table.root / "game.db"), round_no=1)
    page = json.loads(_data_of(render_html(r)))
    checked = 0
    for i in range(len(r) + 1):
        full = r.state(i)
        for seat in SEATS:
            v = r.view(i, seat)
            assert dump(v) == dump(view(full, seat))
            if full.phase != "playing":
                continue
            secret = [c for p in SEATS if p != seat for c in full.hands[p]] + list(full.deck)
            secret += [c for st in r.steps[:i] if st.seat != seat and st.text.startswith("discard ")
                       for c in st.text.split()[1:]]  # others' discards stay face down
            text = plain_text(frame(r, i, seat), width=120)
            as_json = json.dumps(r.to_json(i, seat))
            html_frame = json.dumps(page["frames"][seat][i])
            pattern = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, secret)) + r")(?!\w)")
            for where, shown in (("text", text), ("JSON", as_json), ("page", html_frame)) if secret else ():
                leak = pattern.search(shown)
                assert leak is None, f"{leak and leak.group(1)} shown to {seat} at step {i} in the {where}"
            kinds = [c for p, row in zip(SEATS, page["frames"][seat][i]["p"]) if p != seat for c in row[1]]
            assert set(kinds) <= {"?"}, f"another hand shown in {seat}'s page frame {i}"
            if full.role(seat) != "saboteur":  # nobody else's role shows
                assert "saboteur" not in text
            checked += 1
    assert checked > 100
    # others' discards are face down while playing, open in the 'all' perspective and at the end
    n = next(s.n for s in r.steps if s.text.startswith("discard") and s.seat != "ann")
    assert r.notation(n, "ann") == "discard 1 card"
    assert r.notation(n, ALL) == r.steps[n - 1].text
    assert r.notation(n, "ann", at=len(r)) == r.steps[n - 1].text


def _data_of(page: str) -> str:
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert m, "no data script"
    return m.group(1)


def test_html_page_is_self_contained_with_one_frame_per_move(played, tmp_path: Path, here) -> None:
    table, _ = played
    out = tmp_path / "round1.html"
    result = here("replay", table.root / "game.db", "--round", "1", "--html", out, home=tmp_path)
    assert result.returncode == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|@import|url\(", page)
    raw = _data_of(page)
    assert "</" not in raw and "<" not in raw
    data = json.loads(raw)
    r = load_replay(str(table.root / "game.db"), round_no=1)
    assert data["moves"] == len(r)
    assert [p[0] for p in data["perspectives"]] == [ALL, *SEATS]
    for who, frames in data["frames"].items():
        assert len(frames) == len(r) + 1, who  # the deal, then one frame per move
        assert "m" not in frames[0]
        assert [f["m"][0] for f in frames[1:]] == list(range(1, len(r) + 1))
    symbols = set(re.findall(r'<symbol id="([^"]+)"', page))
    used = {c[2] for board in data["boards"] for c in board}
    assert used <= symbols and "c-start" in symbols and "back" in symbols
    assert f"{len(r) + 1} frames" in result.stdout


def test_html_page_fits_a_phone_and_opens_at_a_moves_link(played, tmp_path: Path, here) -> None:
    """At a phone's 390 px the maze was cut after column 5, and no move had a link of its own.
    The maze scales to the page's width (never under 30 px a card: a wider one scrolls in its
    box), the players' table scrolls in its own box, and each move is `#r1-mN`: the log links
    it, the address follows the step shown, and a page opened at it shows that move (stepped in
    a real Chromium at 390 px by scripts/browser-check)."""
    table, _ = played
    out = tmp_path / "r1.html"
    result = here("replay", table.root / "game.db", "--round", "1", "--html", out, home=tmp_path, ok=True)
    r = load_replay(str(table.root / "game.db"), round_no=1)
    assert f"each move has a link of its own: r1.html#r1-m{len(r)} opens the page at move {len(r)}" in result.stdout
    page = out.read_text(encoding="utf-8")
    style, script = page.split("<style>")[1].split("</style>")[0], page.split("<script>")[1]
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
    assert "#maze svg { display: block; width: 100%; height: auto; }" in style
    assert "#maze, .wide { overflow-x: auto; max-width: 100%; }" in style
    assert 'style="max-width:${w}px;min-width:${least}px"' in script and "(x1 - x0 + 1) * 30 + pad" in script
    assert '<div class="wide"><table id="players"></table></div>' in page
    assert "function anchor(n) { return `r${D.round}-m${n}`; }" in script
    assert 'line.href = "#" + anchor(n);' in script and 'history.replaceState(null, "", "#" + anchor(step))' in script
    assert "/^#r(\\d+)-m(\\d+)$/" in script and "step = linked() ?? 0;" in script
    assert 'window.addEventListener("hashchange"' in script
    assert json.loads(_data_of(page))["round"] == 1


def test_a_player_folder_replays_and_audits(played, tmp_path: Path, here) -> None:
    table, _ = played
    inbox = _inbox(table, "cat")
    from pbem.mail.message import compose, write_eml

    last = sorted(inbox.glob("packet-*.pbem"))[-1]
    mail = compose(sender="host@example.org", to="cat@example.org", subject="packet", body_text=last.read_text(),
                   attachment_name=last.name, attachment=last.read_bytes())
    last.unlink()  # the round's last packet (with the archive) arrives by mail
    write_eml(mail, inbox)
    from_folder = load_replay(str(inbox))
    from_db = load_replay(str(table.root / "game.db"), round_no=1)
    assert from_folder.round == 1
    assert [s.text for s in from_folder.steps] == [s.text for s in from_db.steps]
    assert dump(from_folder.final) == dump(from_db.final)
    result = here("audit", inbox, home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("audit ok: ")
    assert "matched to packet files" in result.stdout


def test_archive_command_writes_a_replayable_file(played, tmp_path: Path, here) -> None:
    table, _ = played
    out = tmp_path / "r1.pbem"
    here("archive", "test", "--db", table.root / "game.db", "--round", "1", "-o", out, home=tmp_path, ok=True)
    assert read_blocks(out.read_text())[0].kind == "archive"
    result = here("replay", out, "--to", "5", "--as", "bob", "--json", home=tmp_path, ok=True)
    doc = json.loads(result.stdout)
    assert doc["step"] == 5 and doc["as"] == "bob" and len(doc["moves"]) == 5
    assert doc["position"]["hands"]["ann"] == ["?"] * len(doc["position"]["hands"]["ann"])
    result = here("replay", out, "--all", home=tmp_path, ok=True)
    assert "1. ann: " in result.stdout and "round is over" in result.stdout
    result = here("archive", "test", "--db", table.root / "game.db", "--round", "2", home=tmp_path)
    assert result.returncode == NotReplayable.exit_code and result.stderr.startswith("error: "), result.stderr


def _pbem(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The real command line: the installed `pbem`."""
    return pbem(*args, cwd=cwd, installed=True, timeout=60)


def test_an_unfinished_round_cannot_be_replayed(played) -> None:
    table, _ = played
    for source in (str(table.root / "game.db"), str(_inbox(table, "dan"))):
        proc = _pbem("replay", source, "--round", "2", cwd=table.root)
        assert proc.returncode == NotReplayable.exit_code != 0
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert errors == [errors[0]] and "round 2" in errors[0] and "has not ended yet" in errors[0], proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout == ""
    # a folder from before the end of round 1 holds no archive at all
    early = table.root / "early"
    early.mkdir()
    shutil.copy(table.root / "out" / "packet-000003.pbem", early)
    with pytest.raises(NotReplayable, match="no round of game .* has ended yet"):
        load_replay(str(early))


def test_keys_step_jump_and_switch_perspective(played) -> None:
    table, _ = played
    r = load_replay(str(table.root / "game.db"), round_no=1)
    assert decode_keys("\x1b[C\x1b[Dn\x1b[H\x1b[F\x1bOH12\rq") == \
        ["right", "left", "n", "home", "end", "home", "1", "2", "enter", "q"]
    nav = Navigator(r, ALL)
    for key, (i, who) in [("right", (1, ALL)), ("n", (2, ALL)), ("left", (1, ALL)), ("G", (len(r), ALL)),
                          ("home", (0, ALL)), ("g", (0, ALL)), ("1", (0, ALL)), ("2", (0, ALL)), ("enter", (12, ALL)),
                          ("v", (12, "ann")), ("v", (12, "bob")), ("end", (len(r), "bob")), ("g", (len(r), "bob")),
                          ("g", (0, "bob")), ("p", (0, "bob"))]:
        assert nav.handle(key)
        assert (nav.i, nav.who) == (i, who), key
    assert nav.handle_line("g 7") and nav.i == 7
    assert nav.handle_line("") and nav.i == 8
    assert not nav.handle("q")
    assert "as bob saw it then" in plain_text(nav.screen(), width=120)


def test_html_as_a_seat_holds_that_view_only_and_speaks_the_language(played) -> None:
    """`--as ann --html` is ann's page alone; the page is translated."""
    from pbem.ui import words

    table, _ = played
    r = load_replay(str(table.root / "game.db"), round_no=1)
    seat = SEATS[0]
    page = render_html(r, only=seat)
    data = json.loads(_data_of(page))
    assert list(data["frames"]) == [seat] and [p[0] for p in data["perspectives"]] == [seat]
    everything = json.loads(_data_of(render_html(r)))
    assert set(everything["frames"]) == {ALL, *SEATS}
    assert '<html lang="en">' in page and "Keys: Left/Right" in page
    with words.using("zh-Hans"):
        chinese = render_html(r, only=seat)
    assert '<html lang="zh-Hans">' in chinese and "矮人矿坑" in chinese.split("</title>")[0]
    for english in ("Keys:", "first (Home)", 'title="perspective"', '"the deal"', "as ann saw it then", '"player":"player"'):
        assert english not in chinese, english
    assert "scrollTop" in page  # the move list follows the current move (checked in a browser by scripts/browser-check)


def test_the_replay_and_the_audit_step_through_a_round_one_way(played) -> None:
    """One Step (pbem.replay.rounds): `pbem audit` re-applies the moves with the replay's own
    rounds.step, and a host move is kept as the archive says it (by, why)."""
    import ast

    from pbem.names import HOST
    from pbem.replay.load import load_replay
    from pbem.replay.rounds import Step, step

    root = Path(__file__).resolve().parents[1]
    named = sorted(str(p.relative_to(root)) for p in (root / "pbem").rglob("*.py")
                   for node in nodes(p)
                   if isinstance(node, ast.ClassDef) and node.name == "Step")
    assert named == ["pbem/replay/rounds.py"]
    table, _ = played
    replay = load_replay(str(table.root / "game.db"), round_no=1)
    again = [step(replay.state(i), s.n, s.seat, s.text, s.by, s.why) for i, s in enumerate(replay.steps)]
    assert [(s.text, s.events, dump(s.state)) for s in again] == [(s.text, s.events, dump(s.state)) for s in replay.steps]
    assert [Step(1, "ann", "x", [], replay.start, by, why).by_host
            for by, why in ((None, None), (HOST, None), (HOST, "absent"))] == [None, "timeout", "absent"]

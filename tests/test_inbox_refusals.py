"""`pbem inbox` exits non-zero when it refused something, one `error:` line per
refused block, after routing everything else (a real process reading real .eml files)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from processes import pbem
from table_games import PASS, make_table

from engine.rules import legal_moves
from pbem.mail.message import compose, write_eml
from pbem.seat import player as P


def _inbox(folder: Path, db: Path, home: Path, *extra: str, here=None) -> subprocess.CompletedProcess:
    """`pbem inbox` as a process of its own; given `here`, through the command line's entry in this
    process (the file's further runs: its first is a process)."""
    return (pbem if here is None else here)("inbox", folder, "--db", db, *extra, home=home,
                                            env={"PBEM_PASSPHRASE": PASS.decode()})


def _mail(block, folder: Path, name: str, armored: str | None = None) -> None:
    """The mail a player sends with this block; with `armored`, that text instead (damaged)."""
    armored = armored or block.armored()
    msg = compose(sender="x@example.org", to="host@example.org", subject="move", body_text=armored,
                  attachment_name="move.pbem", attachment=armored.encode())
    path = write_eml(msg, folder)
    path.rename(folder / name)


def test_inbox_reports_each_refused_block_and_exits_non_zero(tmp_path: Path, here) -> None:
    table = make_table(tmp_path, ["ann", "bob", "cat"])
    _, packet = table.latest()
    mover = packet.doc.to_move
    sp = P.open_packet(packet, table.ids[mover], table.homes[mover])
    first, second = (str(m) for m in legal_moves(sp.view)[:2])
    good, stale = P.make_move(sp, first), P.make_move(sp, second)
    table.host.close()
    box = tmp_path / "box"
    box.mkdir()
    _mail(good, box, "a-good.eml")
    armored = good.armored()
    lines = armored.splitlines()
    middle = len(lines) // 2
    lines[middle] = lines[middle][:10] + ("A" if lines[middle][10] != "A" else "B") + lines[middle][11:]
    _mail(good, box, "b-damaged.eml", "\n".join(lines) + "\n")
    _mail(stale, box, "c-stale.eml")
    db = tmp_path / "game.db"
    run = _inbox(box, db, table.homes["referee"])
    assert run.returncode == 3, (run.returncode, run.stdout, run.stderr)  # the first refusal: a bad packet
    errors = run.stderr.strip().splitlines()
    assert len(errors) == 2 and all(e.startswith("error: ") for e in errors), run.stderr
    assert "b-damaged.eml" in errors[0] and "c-stale.eml" in errors[1] and "answers packet 1" in errors[1]
    assert "Traceback" not in run.stderr
    assert f"applied {mover}'s move" in run.stdout and "error" not in run.stdout
    # Run again: the inbox remembers what it read and reports only new mail (none).
    rerun = _inbox(box, db, table.homes["referee"], here=here)
    assert rerun.returncode == 0 and rerun.stderr == "", rerun.stderr
    assert "no new mail" in rerun.stdout and "skipped 3 messages read before" in rerun.stdout
    # Read everything again: the good move is a duplicate now (not an error); the two refusals stay refusals.
    again = _inbox(box, db, table.homes["referee"], "--json", "--again", here=here)
    assert again.returncode == 3
    outcomes = json.loads(again.stdout)
    assert [o["outcome"] for o in outcomes] == ["duplicate", "refused", "refused"]
    assert [o.get("exit_code") for o in outcomes] == [None, 3, 5]
    assert len(again.stderr.strip().splitlines()) == 2
    # Nothing refused: exit 0.
    (box / "b-damaged.eml").unlink()
    (box / "c-stale.eml").unlink()
    clean = _inbox(box, db, table.homes["referee"], "--again", here=here)
    assert clean.returncode == 0 and clean.stderr == "" and "already applied" in clean.stdout


def test_inbox_refuses_hostile_mail_in_one_line_each_and_applies_the_rest(tmp_path: Path) -> None:
    """Hostile mail through the real command: a 20,000-part mail, MIME nested 2,000 deep, a
    header of nested comments and a charset=idna body beside a good move. Each hostile mail is
    one `error:` line (exit 3, a bad packet), never exit 70; the move is applied."""
    from test_hostile_input import HOSTILE_MAIL

    table = make_table(tmp_path, ["ann", "bob", "cat"])
    _, packet = table.latest()
    mover = packet.doc.to_move
    sp = P.open_packet(packet, table.ids[mover], table.homes[mover])
    good = P.make_move(sp, str(legal_moves(sp.view)[0]))
    table.host.close()
    box = tmp_path / "box"
    box.mkdir()
    _mail(good, box, "a-good.eml")
    hostile = ["20000-parts", "deep-mime", "nested-comment-header", "charset-idna"]
    for name in hostile:
        (box / f"b-{name}.eml").write_bytes(HOSTILE_MAIL[name][0])
    run = _inbox(box, tmp_path / "game.db", table.homes["referee"])  # a process: its own stack for the nesting
    assert run.returncode == 3, (run.returncode, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    errors = run.stderr.strip().splitlines()
    assert [e.split(": ", 2)[1].rsplit("/", 1)[1] for e in errors] == [
        "b-20000-parts.eml", "b-deep-mime.eml", "b-nested-comment-header.eml"], run.stderr
    assert "more than 64 parts" in errors[0] and "nests more than 16" in errors[1] and "nested too deeply" in errors[2]
    assert f"applied {mover}'s move" in run.stdout
    assert "b-charset-idna.eml: not a pbem mail" in run.stdout

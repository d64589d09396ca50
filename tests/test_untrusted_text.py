"""Names from documents someone sent are checked whole before they
become paths, and text from unauthenticated sources reaches the terminal sanitised (real
processes; the bytes of stdout and stderr are checked). A name's further cases, whose point is
that nothing becomes a path, run through the command line's entry in this process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from processes import pbem

from pbem.mail.message import compose, write_eml
from pbem.protocol.armor import armor
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import sign_json
from pbem.seat import keys
from pbem.ui.terminal import printable

TITLE = "\x1b]0;pwned\x07"  # sets the terminal's window title


def _pbem(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return pbem(*args, home=home, cwd=cwd, text=False)  # the bytes as a terminal would get them


def _refusal(here, first: bool, *args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """A refused command's run: for the first case a process of its own (`_pbem`), for the others
    through the command line's entry in this process (`here`), its words encoded as a process's
    (for the cases whose point is that nothing becomes a path, not the bytes a terminal gets)."""
    if first:
        return _pbem(*args, home=home, cwd=cwd)
    run = here(*args, home=home, cwd=cwd)
    return subprocess.CompletedProcess(run.args, run.returncode, run.stdout.encode(), run.stderr.encode())


def _forged(kind: str, doc: dict, signer: Identity) -> str:
    """A signed block holding anything (the typed documents refuse to make such a one)."""
    return armor(kind.upper(), sign_json(kind, doc, signer))


def _invitation(host: Identity, game: str, seats: list[tuple[str, Identity]]) -> str:
    return _forged("invitation", {"game": game, "name": "x", "ruleset": "classic", "options": [],
                                  "host": {"name": host.name, "key": host.public.encode()},
                                  "seats": [{"name": n, "key": i.public.encode()} for n, i in seats],
                                  "commitments": ["00" * 32] * 3, "created": "2026-01-01T00:00:00Z"}, host)


def test_printable_escapes_what_acts_on_a_terminal() -> None:
    assert printable("plain text, 简体 and 繁體　ok") == "plain text, 简体 and 繁體　ok"
    assert printable(f"game {TITLE}") == "game \\x1b]0;pwned\\x07"
    assert printable("a\nerror: forged\r\t\x7f\x9b") == "a\\nerror: forged\\r\\t\\x7f\\x9b"
    assert printable("abc\u202edef\u2066") == "abc\\u202edef\\u2066"


def test_a_mail_cannot_reach_the_terminal_with_control_characters(tmp_path: Path) -> None:
    stranger = Identity.generate("stranger")
    box = tmp_path / "box"
    box.mkdir()
    # A packet for a game id holding the escape (signed by nobody we know), and a
    # non-pbem mail whose From header decodes to control characters.
    packet = _forged("packet", {"game": f"evil{TITLE}", "seq": 1}, stranger)
    msg = compose(sender="host@example.org", to="ann@example.org", subject="packet", body_text=packet,
                  attachment_name="a.txt", attachment=b"x")
    write_eml(msg, box).rename(box / "0.eml")
    (box / "1.eml").write_bytes(b"From: =?utf-8?q?evil=1B]0;pwned=07=0Aerror:_fake?= <x@example.org>\r\n"
                                b"To: ann@example.org\r\nSubject: =?utf-8?q?hi=1B[2J?=\r\n\r\nhello\r\n")
    run = _pbem("inbox", str(box), "--saves", str(tmp_path / "none"), home=tmp_path / "home", cwd=tmp_path)
    out = run.stdout + run.stderr
    assert b"\x1b" not in out and b"\x07" not in out, out
    assert b"\\x1b]0;pwned\\x07" in out
    assert all(not line.startswith(b"error: fake") for line in out.splitlines())
    assert b"internal error" not in out and b"unreadable header" in out  # the From header crashed `inbox` once
    # An error line quoting such a game id (`show` of a packet of a game never joined).
    bad = tmp_path / "bad.pbem"
    bad.write_text(packet)
    keys.create_identity(tmp_path / "home", "ann", None)
    run = _pbem("show", str(bad), "--as", "ann", home=tmp_path / "home", cwd=tmp_path)
    assert run.returncode != 0 and b"\x1b" not in run.stderr + run.stdout and b"Traceback" not in run.stderr


@pytest.mark.parametrize("seat", ["../../evil", "ann\n", "a/b", "host", "CON", ""])
def test_a_seat_name_from_an_invitation_never_becomes_a_path(tmp_path: Path, seat: str, here) -> None:
    home = tmp_path / "home"
    keys.create_identity(home, "ann", None)
    ann = keys.load_identity(home, "ann", None)
    host = Identity.generate("host")
    inv = tmp_path / "work" / "invitation.pbem"
    inv.parent.mkdir()
    inv.write_text(_invitation(host, "game-1a2b3c4d", [(seat, ann), ("bob", Identity.generate("bob"))]))
    before = sorted(p for p in tmp_path.rglob("*"))
    for args in (["join", str(inv), "--as", "ann"],
                 ["mail-join", str(inv), "--as", "ann", "--to", "h@example.org", "--to-dir", str(tmp_path / "out")]):
        run = _refusal(here, seat == "../../evil", *args, home=home, cwd=inv.parent)
        assert run.returncode == 3, run.stderr
        assert run.stderr.startswith(b"error: bad seat name") and b"Traceback" not in run.stderr
    assert sorted(p for p in tmp_path.rglob("*")) == before  # nothing written anywhere


@pytest.mark.parametrize("game", ["../../evil", "g\n", "a/b", "nul", "x" * 70])
def test_a_game_id_from_an_invitation_never_becomes_a_path(tmp_path: Path, game: str, here) -> None:
    home = tmp_path / "home"
    keys.create_identity(home, "ann", None)
    ann = keys.load_identity(home, "ann", None)
    inv = tmp_path / "work" / "invitation.pbem"
    inv.parent.mkdir()
    inv.write_text(_invitation(Identity.generate("host"), game, [("ann", ann), ("bob", Identity.generate("b"))]))
    before = sorted(p for p in tmp_path.rglob("*"))
    run = _refusal(here, game == "../../evil", "join", str(inv), "--as", "ann", home=home, cwd=inv.parent)
    assert run.returncode == 3 and run.stderr.startswith(b"error: bad game id"), run.stderr
    assert sorted(p for p in tmp_path.rglob("*")) == before

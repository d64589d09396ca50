"""A game mailed by a stranger: its names are checked as every other name is, whatever the host
signs reaches the terminal and --json without a character that acts on a terminal, and a seat
handed to a key is taken only when its player says so (real processes; the bytes of stdout
and stderr are checked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from processes import pbem
from table_games import PASS, make_table

from pbem.mail.message import compose, write_eml
from pbem.protocol.armor import armor
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import SIG_LEN, sign_json
from pbem.seat import keys
from pbem.ui.terminal import json_shown, printable, shown, styled

# ESC ] title BEL, a CSI (ESC [) that clears the screen, the C1 CSI, and a right-to-left override
EVIL = "\x1b]0;pwned\x07\x1b[2J\x9b2J\u202eevil"
ACTING = (b"\x1b", b"\x07", b"\xc2\x9b", "\u202e".encode())


def _clean(*outputs: bytes) -> None:
    for out in outputs:
        for raw in ACTING:
            assert raw not in out, (raw, out)


def _mail(box: Path, name: str, *armored: str) -> None:
    box.mkdir(exist_ok=True)
    msg = compose(sender="host@example.org", to="ann@example.org", subject="a game", body_text="\n".join(armored),
                  attachment_name="a.txt", attachment=b"x")
    write_eml(msg, box).rename(box / f"{name}.eml")


def _resigned(block, changes: dict, signer: Identity) -> str:
    """`block`'s document with `changes`, signed again by `signer`."""
    doc = json.loads(block.payload[SIG_LEN:])
    doc.update(changes)
    return armor(block.kind.upper(), sign_json(block.kind, doc, signer))


def test_the_sanitisers() -> None:
    assert styled("ok\n\tnext \x1b[1mbold\x1b[0m") == "ok\n\tnext \x1b[1mbold\x1b[0m"  # rich's own styles pass
    assert shown("ok\n\tnext \x1b[1mbold\x1b[0m") == "ok\n\tnext \\x1b[1mbold\\x1b[0m"  # anyone else's do not
    assert shown(f"a {EVIL}\r") == "a \\x1b]0;pwned\\x07\\x1b[2J\\x9b2J\\u202eevil\\r"
    assert printable("简体　繁體") == shown("简体　繁體") == "简体　繁體"
    text = json.dumps({"name": EVIL + "\U000e0001", "zh": "简体"}, ensure_ascii=False)
    assert json.loads(json_shown(text)) == json.loads(text)
    assert json_shown(text) == '{"name": "\\u001b]0;pwned\\u0007\\u001b[2J\\u009b2J\\u202eevil\\udb40\\udc01", "zh": "简体"}'


@pytest.mark.parametrize("field", ["name", "host"])
def test_an_invitation_whose_names_act_on_the_terminal_is_refused(tmp_path: Path, field: str) -> None:
    home = tmp_path / "home"
    ann = keys.create_identity(home, "ann", None)
    stranger = Identity.generate("stranger")
    doc = {"game": "fake-1a2b3c4d", "name": "fake", "ruleset": "classic", "options": [],
           "host": {"name": "stranger", "key": stranger.public.encode()},
           "seats": [{"name": n, "key": k.public.encode()} for n, k in (("ann", ann), ("bob", Identity.generate("b")),
                                                                      ("cat", Identity.generate("c")))],
           "commitments": ["00" * 32] * 3, "created": "2026-01-01T00:00:00Z"}
    if field == "name":
        doc["name"] = f"fake{EVIL}"
    else:
        doc["host"]["name"] = f"host{EVIL}"
    _mail(tmp_path / "box", "0", armor("INVITATION", sign_json("invitation", doc, stranger)))
    run = pbem("inbox", tmp_path / "box", "--saves", tmp_path / "none", home=home, cwd=tmp_path, text=False)
    assert run.returncode == 3 and b"Traceback" not in run.stderr, run.stderr
    said = "game name" if field == "name" else "identity name"
    assert f"invitation block: bad {said} ".encode() in run.stderr and b"\\x1b]0;pwned" in run.stderr, run.stderr
    assert not (home / "invitations").exists()
    games = pbem("games", "--player", home=home, cwd=tmp_path, text=False)
    listed = pbem("games", "--player", "--json", home=home, cwd=tmp_path, text=False)
    _clean(run.stdout, run.stderr, games.stdout, games.stderr, listed.stdout)
    assert json.loads(listed.stdout) == {"hosting": [], "playing": [], "invited": []}


def test_whatever_the_host_signs_reaches_no_terminal_raw(tmp_path: Path) -> None:
    """A host (any stranger can be one) signs a packet whose move text acts on the terminal:
    show and show --json print it escaped (before: raw through --json's ensure_ascii=False)."""
    table = make_table(tmp_path, ["ann", "bob", "cat"])
    packet = table.latest()[1]
    mover = packet.doc.to_move
    table.apply_file(table.move_file(mover, "discard 1", packet))
    latest = table.latest()[1]
    doc = json.loads(latest.payload[SIG_LEN:])
    for listed in (doc["moves"], doc["recent"]):
        listed[-1]["text"] = f"discard 1 {EVIL}"
    forged = tmp_path / "forged.pbem"
    forged.write_text(_resigned(latest, {"moves": doc["moves"], "recent": doc["recent"]}, table.ids["referee"]))
    reader = next(s for s in table.seats if s != mover)
    env = {"PBEM_PASSPHRASE": PASS.decode()}
    runs = [pbem("show", forged, "--as", reader, *extra, home=table.homes[reader], cwd=tmp_path, env=env, text=False)
            for extra in ((), ("--json",))]
    for run in runs:
        assert run.returncode == 0, run.stderr
        _clean(run.stdout, run.stderr)
    assert f"discard 1 {EVIL}" in _strings(json.loads(runs[1].stdout))  # the same text, to a JSON reader


def _strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _offered(tmp_path: Path) -> tuple[Path, str]:
    """Anyone who knows ann's public key hosts a game of their own, hands a seat to her key and
    mails her its invitation and that packet: (her key home, the game)."""
    home = tmp_path / "home-ann"
    ann = keys.create_identity(home, "ann", None)
    fake = make_table(tmp_path / "stranger", ["sam", "sue", "sid"])
    fake.host.identity = fake.ids["referee"]
    fake.host.accept(fake.host.reseat_document("sue", ann.public))
    handed = fake.latest()[0].read_text()
    invitation = (tmp_path / "stranger" / "invitation.pbem").read_text()
    _mail(tmp_path / "box", "0", invitation, handed)
    return home, fake.host.game_id()


def test_a_stranger_cannot_hand_a_seat_to_a_key_by_mail(tmp_path: Path, here) -> None:
    """`pbem inbox` keeps the game's invitation and packet and says so; the game is an
    invitation until `pbem mail-join` takes the seat (before: inbox took it at once, and
    `pbem games` listed it among her games). `mail-join` first as a process of its own; the
    further runs of each command (the tests above run `inbox` and `games` as processes, their
    bytes checked) through the command line's entry in this process."""
    home, game = _offered(tmp_path)
    run = here("inbox", tmp_path / "box", "--saves", tmp_path / "none", home=home, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "hands seat sue to your key (host referee, key " in run.stdout, run.stdout
    assert f"nothing is taken until you say so: pbem mail-join {game}" in run.stdout
    assert not (home / "games" / game / "invitation.pbem").exists()  # no trust anchor: not her game
    listed = json.loads(here("games", "--player", "--json", home=home, cwd=tmp_path, ok=True).stdout)
    assert listed["playing"] == [] and [(g["game"], g["seat"]) for g in listed["invited"]] == [(game, "sue")]
    games = here("games", "--player", home=home, cwd=tmp_path, ok=True).stdout
    assert "games you play" not in games and f"{game} from referee (key " in games and "seat sue" in games
    # she says so: the seat is hers, and the game one she plays
    took = pbem("mail-join", game, "--as", "ann", home=home, cwd=tmp_path, ok=True).stdout
    assert took.startswith(f"you took seat sue of {game}, handed to your key at packet ")
    again = here("mail-join", game, "--as", "ann", home=home, cwd=tmp_path, ok=True).stdout
    assert again.startswith(f"you hold seat sue of {game} already: play it with pbem turn {game}")
    listed = json.loads(here("games", "--player", "--json", home=home, cwd=tmp_path, ok=True).stdout)
    assert [(g["game"], g["seat"]) for g in listed["playing"]] == [(game, "sue")] and listed["invited"] == []


def test_turn_on_the_game_by_name_takes_the_seat(tmp_path: Path, here) -> None:
    """Asking for the game by name (`pbem turn GAME`, as for an invitation, which it joins)
    takes the seat too; `pbem games` before it had listed the game as an invitation only."""
    home, game = _offered(tmp_path)
    here("inbox", tmp_path / "box", "--saves", tmp_path / "none", home=home, cwd=tmp_path, ok=True)
    assert not (home / "games" / game / "invitation.pbem").exists()
    turn = pbem("turn", game, "--as", "ann", home=home, cwd=tmp_path)
    assert turn.returncode == 0, turn.stderr
    assert f"took seat sue of {game}, handed to your key at packet " in turn.stdout + turn.stderr
    assert (home / "games" / game / "invitation.pbem").is_file()


def test_no_text_output_escapes_the_sanitiser(tmp_path: Path) -> None:
    """Text printed by any command goes through pbem.ui.terminal.Shown: a name typed on the
    command line (here a file name holding the escapes) comes back escaped."""
    bad = tmp_path / f"x{EVIL}.pbem"
    bad.write_text("not a packet\n")
    shown_run = pbem("show", bad, home=tmp_path / "h", cwd=tmp_path, text=False)
    assert shown_run.returncode != 0
    _clean(shown_run.stdout, shown_run.stderr)


def test_the_demos_progress_bars_still_draw_on_a_terminal() -> None:
    """What pbem draws itself, live (the demo's progress bars move the cursor), writes to the
    stream under Shown; everything else passes Shown."""
    import io

    from pbem.ui.terminal import Shown, unshown

    raw = io.StringIO()
    Shown(raw).write("\x1b[2K\x1b[1A")
    assert raw.getvalue() == "\\x1b[2K\\x1b[1A" and unshown(Shown(raw)) is raw and unshown(raw) is raw

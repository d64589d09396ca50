"""A seat cannot take over another player's mail route: the host's address comes from what the
host signed (its invitation), never from the headers of whoever passed the invitation on.

Bob forwards the genuine invitation to ann with `Reply-To: bob@...`; ann reads his forward
first. Real `pbem` processes, real key files, real .eml files."""

from __future__ import annotations

import json
import shutil
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest
from folder_games import make_homes
from processes import one_error_line, pbem

from pbem.auto.seat_bot import MailBot
from pbem.mail.courier import Courier
from pbem.mail.incoming import MailScanner
from pbem.mail.message import write_eml
from pbem.seat import keys

SEATS = ["ann", "bob", "cat"]
HOST = "referee@example.org"


def _game(root: Path, *host_email: str, run=pbem) -> tuple[dict[str, Path], str, Path]:
    """A mail game made and its invitation mailed (as .eml files) by real processes (`run`: or
    through the command line's entry in this process, for the second game of this file): the key
    homes, the game id, the folder of the host's mails."""
    homes = make_homes(root, ["referee", *SEATS])
    players = [a for s in SEATS for a in ("--player", f"{s}={keys.load_public(homes[s], s).encode()}",
                                          "--email", f"{s}={s}@example.org")]
    db = root / "saves" / "t.db"
    run("game", "new", "t", "--host", "referee", *players, *host_email, "--db", db, home=homes["referee"], ok=True)
    sent = root / "sent"
    run("mail", "t", "--db", db, "--to-dir", sent, home=homes["referee"], ok=True)
    mails = {m["To"]: m for m in map(_read, sorted(sent.glob("*.eml")))}
    game = str(mails["ann@example.org"]["Subject"]).split("]")[0].split()[-1]
    return homes, game, sent


@pytest.fixture(scope="module")
def signed_game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One game naming the host's address, made once for the tests that read it: its root and id."""
    root = tmp_path_factory.mktemp("signed")
    _, game, _ = _game(root, "--email", f"host={HOST}")
    return root, game


def _copy(made: tuple[Path, str], to: Path) -> tuple[dict[str, Path], str, Path]:
    """A test's own copy of a made game (its key homes change as it reads): homes, game id, sent mails."""
    root, game = made
    shutil.copytree(root, to, dirs_exist_ok=True)
    return {n: to / f"home-{n}" for n in ["referee", *SEATS]}, game, to / "sent"


def _read(path: Path) -> EmailMessage:
    with path.open("rb") as f:
        msg = BytesParser(policy=policy.default).parse(f)
    assert isinstance(msg, EmailMessage)
    return msg


def _forwarded_by_bob(sent: Path, to: str) -> EmailMessage:
    """Bob's genuine invitation, forwarded from his address with his Reply-To: inline (the
    armour quoted in the body) and as an attachment (the whole mail)."""
    genuine = next(m for m in map(_read, sorted(sent.glob("*.eml"))) if m["To"] == "bob@example.org")
    body = genuine.get_body(("plain",))
    assert body is not None
    fwd = EmailMessage(policy=policy.default)
    fwd["From"] = "Bob <bob@example.org>"
    fwd["Reply-To"] = "bob@example.org"
    fwd["To"] = to
    fwd["Subject"] = "Fwd: " + str(genuine["Subject"])
    fwd.set_content("Join this one, answer me directly.\n\n---------- Forwarded message ---------\n"
                    + str(body.get_content()))
    fwd.add_attachment(genuine)
    return fwd


def test_a_forwarded_invitation_does_not_reroute_the_readers_mail(signed_game, tmp_path: Path) -> None:
    homes, game, sent = _copy(signed_game, tmp_path)
    box = tmp_path / "ann-box"
    box.mkdir()
    write_eml(_forwarded_by_bob(sent, "ann@example.org"), box).rename(box / "a-forward.eml")  # read first
    genuine = next(p for p in sorted(sent.glob("*.eml")) if _read(p)["To"] == "ann@example.org")
    (box / "b-genuine.eml").write_bytes(genuine.read_bytes())
    read = pbem("inbox", box, home=homes["ann"], ok=True)
    assert f"invitation to {game} from referee" in read.stdout, read.stdout
    # before: hosts.json said bob@example.org (the forward's Reply-To), and ann's join went to bob
    assert json.loads((homes["ann"] / "mail" / "hosts.json").read_text()) == {game: HOST}
    out = tmp_path / "ann-out"
    pbem("mail-join", game, "--to-dir", out, home=homes["ann"], ok=True)
    (join,) = [_read(p) for p in out.glob("*.eml")]
    assert join["To"] == HOST and "bob" not in join.as_string()


def test_a_bot_reading_the_forward_mails_the_signed_address(signed_game, tmp_path: Path) -> None:
    homes, _, sent = _copy(signed_game, tmp_path)
    box = tmp_path / "cat-box"
    write_eml(_forwarded_by_bob(sent, "cat@example.org"), box)  # cat's bot sees only bob's forward
    out = tmp_path / "cat-out"
    bot = MailBot(MailScanner([box]), keys.load_identity(homes["cat"], "cat", None), homes["cat"], None,
                  Courier(to_dir=out), "cat@example.org", log=lambda line: None)
    bot.step()
    (join,) = [_read(p) for p in out.glob("*.eml")]
    assert join["To"] == HOST, join["To"]  # before: bob@example.org


def test_an_invitation_naming_no_address_teaches_none(tmp_path: Path, here) -> None:
    """A game made without the host's address (and no mail profile to take it from): the
    forward's headers are not taken for it; mail-join asks for --to. (Through the command
    line's entry in this process: the tests above run each command as a process.)"""
    homes, game, sent = _game(tmp_path, run=here)
    box = tmp_path / "ann-box"
    write_eml(_forwarded_by_bob(sent, "ann@example.org"), box)
    here("inbox", box, home=homes["ann"], ok=True)
    assert not (homes["ann"] / "mail" / "hosts.json").exists()
    run = here("mail-join", game, "--to-dir", tmp_path / "out", home=homes["ann"])
    one_error_line(run, 2, f"no host address known for game {game}")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.eml"))


def test_the_hosts_mail_profile_address_is_signed_when_none_is_given(tmp_path: Path, here) -> None:
    """`pbem mail setup --from` once, then `game new` without `--email host=`: the invitation
    names the profile's address. (`game new` through the command line's entry in this process:
    the module's game makes one by a process.)"""
    from pbem.protocol.documents import Invitation, read_file

    homes = make_homes(tmp_path, ["referee", *SEATS])
    pbem("mail", "setup", "--smtp-server", "smtp.example.org", "--from", f"Referee <{HOST}>", home=homes["referee"],
         ok=True)
    players = [a for s in SEATS for a in ("--player", f"{s}={keys.load_public(homes[s], s).encode()}")]
    invitation = tmp_path / "invitation.pbem"
    here("game", "new", "t", "--host", "referee", *players, "--db", tmp_path / "t.db", "--output", invitation,
         home=homes["referee"], ok=True)
    assert read_file(invitation)[0].expect(Invitation).doc.host.mail == HOST
    bad = here("game", "new", "u", "--host", "referee", *players, "--db", tmp_path / "u.db", "--email",
               "host=me@example.org\x1b[2J", home=homes["referee"])
    one_error_line(bad, 2, "is no mail address the invitation can name")
    assert not (tmp_path / "u.db").exists()


def test_an_invitation_naming_a_bad_address_is_refused_by_its_reader(signed_game, tmp_path: Path) -> None:
    """The host's address is checked where the invitation is read, as the other names are:
    a host key that signs escapes into it gets a refusal, not a key home that mails them."""
    import msgspec

    from pbem.errors import BadPacket
    from pbem.protocol.crypto import Identity
    from pbem.protocol.documents import Invitation, parse, read_blocks, sign_json

    _, _, sent = _copy(signed_game, tmp_path)
    mail = next(m for m in map(_read, sorted(sent.glob("*.eml"))) if m["To"] == "ann@example.org")
    body = mail.get_body(("plain",))
    assert body is not None
    (good,) = [b for b in read_blocks(str(body.get_content())) if b.kind == "invitation"]
    host = Identity.generate("referee")
    doc = msgspec.to_builtins(good.expect(Invitation).doc)
    doc["host"] = {**doc["host"], "key": host.public.encode(), "mail": "ann@example.org\x1b[2J"}
    with pytest.raises(BadPacket, match="no mail address"):
        parse("invitation", sign_json("invitation", doc, host))
    doc["host"]["mail"] = HOST
    assert parse("invitation", sign_json("invitation", doc, host)).expect(Invitation).doc.host.mail == HOST

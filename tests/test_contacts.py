"""Contacts: `pbem key add`, `pbem key import`, `pbem key list` and `game new --player NAME`,
through real `pbem` processes on real key homes; a refusal is one line, a documented exit
code, and the contacts file's bytes unchanged. Each command runs as a process of its own at least
once; its further cases run through the command line's own entry in this process (`here`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from folder_games import keys_here
from processes import one_error_line, pbem

from pbem.protocol.documents import read_one


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("contact-keys")
    return keys_here({n: root / n for n in ("referee", "ann", "bob", "cat", "eve")})


@pytest.fixture
def home(tmp_path: Path, keys: dict[str, str]) -> Path:
    """The host's key home: its own identity (as `pbem key new referee --no-passphrase` makes
    it), no contact yet."""
    home = tmp_path / "host-home"
    keys_here({"referee": home})
    return home


def contacts(home: Path) -> bytes | None:
    path = home / "contacts.txt"
    return path.read_bytes() if path.exists() else None


def fingerprint(key: str, _: Path | None = None) -> str:
    """The key's fingerprint as `pbem key show` prints it to its owner."""
    from pbem.protocol.crypto import PublicKey

    return PublicKey.decode(key).fingerprint()


def test_add_shows_the_fingerprint_and_game_new_seats_contacts(home: Path, keys: dict[str, str],
                                                                tmp_path: Path, here) -> None:
    """Each command as a process of its own, its further runs through its entry in this process."""
    for name in ("ann", "bob"):
        run = (pbem if name == "ann" else here)("key", "add", name, keys[name], home=home, cwd=tmp_path, ok=True)
        assert run.stdout.strip() == f"added contact {name}: fingerprint {fingerprint(keys[name], tmp_path)}"
    listed = pbem("key", "list", home=home, cwd=tmp_path, ok=True).stdout.splitlines()
    assert listed[0].startswith("referee ") and listed[1] == "contacts:"
    assert [line.split() for line in listed[2:]] == [[n, fingerprint(keys[n], tmp_path)] for n in ("ann", "bob")]
    rows = json.loads(here("key", "list", "--json", home=home, cwd=tmp_path, ok=True).stdout)
    assert [(r["name"], r["contact"], r["public"]) for r in rows if r["contact"]] == \
        [("ann", True, keys["ann"]), ("bob", True, keys["bob"])]
    # --player NAME: the contact's key; NAME=pbem1... as before, side by side
    pbem("game", "new", "friday", "--host", "referee", "--player", "ann", "--player", "bob",
         "--player", f"cat={keys['cat']}", home=home, cwd=tmp_path, ok=True)
    invitation = read_one(tmp_path / "saves" / "friday" / "out" / "invitation.pbem", "invitation")
    assert invitation.doc.seat_keys() == {"ann": keys["ann"], "bob": keys["bob"], "cat": keys["cat"]}


def test_a_name_held_with_another_key_is_not_replaced_unless_asked(home: Path, keys: dict[str, str],
                                                                   tmp_path: Path, here) -> None:
    here("key", "add", "ann", keys["ann"], home=home, cwd=tmp_path, ok=True)
    before = contacts(home)
    again = here("key", "add", "ann", keys["ann"], home=home, cwd=tmp_path, ok=True)  # the same key: said, kept
    assert "holds this key already" in again.stdout and contacts(home) == before
    swapped = here("key", "add", "ann", keys["eve"], home=home, cwd=tmp_path)  # someone's impostor key
    one_error_line(swapped, 2, f"already holds another key ({fingerprint(keys['ann'], tmp_path)})")
    assert fingerprint(keys["eve"], tmp_path) in swapped.stderr and "--replace" in swapped.stderr
    assert contacts(home) == before
    replaced = here("key", "add", "ann", keys["eve"], "--replace", home=home, cwd=tmp_path, ok=True)
    assert f"warning: contact ann held another key ({fingerprint(keys['ann'], tmp_path)}); it now holds " \
           f"{fingerprint(keys['eve'], tmp_path)}" in replaced.stderr
    assert contacts(home) == f"ann {keys['eve']}\n".encode()
    twin = here("key", "add", "eva", keys["eve"], home=home, cwd=tmp_path, ok=True)
    assert "note: contact ann holds the same key as eva" in twin.stderr


@pytest.mark.parametrize("name,words", [("Ann", "bad contact name 'Ann'"), ("../ann", "bad contact name"),
                                        ("host", "bad contact name 'host'"), ("referee", "one of your own identities")])
def test_a_bad_name_writes_nothing(home: Path, keys: dict[str, str], tmp_path: Path, here, name: str,
                                   words: str) -> None:
    one_error_line(here("key", "add", name, keys["ann"], home=home, cwd=tmp_path), 2, words)
    assert contacts(home) is None and not (tmp_path / "ann").exists()


def test_a_bad_key_and_a_missing_contact(home: Path, keys: dict[str, str], tmp_path: Path, here) -> None:
    one_error_line(here("key", "add", "ann", keys["ann"][:-3], home=home, cwd=tmp_path), 2, "not a public key line")
    assert contacts(home) is None
    missing = here("game", "new", "friday", "--host", "referee", "--player", "ann", "--player", "bob", "--player",
                   f"cat={keys['cat']}", home=home, cwd=tmp_path)
    one_error_line(missing, 4, "no contact 'ann'")
    assert "pbem key add ann pbem1..." in missing.stderr
    assert not (tmp_path / "saves").exists()


def club_file(path: Path, keys: dict[str, str], *extra: str) -> Path:
    path.write_text("# the Friday club\n\n" + f"ann {keys['ann']}\n" + f"bob={keys['bob']}\n" +
                    "".join(extra) + f"cat {keys['cat']}\n")
    return path


def test_import_takes_a_club_file_whole(home: Path, keys: dict[str, str], tmp_path: Path, here) -> None:
    run = pbem("key", "import", club_file(tmp_path / "club.txt", keys), home=home, cwd=tmp_path, ok=True)
    assert run.stdout.splitlines() == [f"added contact {n}: fingerprint {fingerprint(keys[n], tmp_path)}"
                                       for n in ("ann", "bob", "cat")]
    assert contacts(home) == "".join(f"{n} {keys[n]}\n" for n in ("ann", "bob", "cat")).encode()
    here("game", "new", "friday", "--host", "referee", "--player", "cat", "--player", "ann", "--player", "bob",
         home=home, cwd=tmp_path, ok=True)


def test_a_file_of_comments_adds_nothing_and_says_so(home: Path, tmp_path: Path, here) -> None:
    (tmp_path / "empty.txt").write_text("# the Friday club: keys to come\n\n")
    run = here("key", "import", tmp_path / "empty.txt", home=home, cwd=tmp_path, ok=True)
    assert run.stderr.startswith("no contacts in ") and run.stdout == "" and contacts(home) is None


@pytest.mark.parametrize("bad,code,words", [
    ("dan\n", 2, "line 5 of"),  # one word
    ("dan pbem1abc\n", 2, "line 5 of"),  # a key that does not decode
    ("Dan {ann}\n", 2, "bad contact name 'Dan'"),
    ("ann {bob}\n", 2, "'ann' is given twice, with two keys"),
    ("ann {ann} extra\n", 2, "expected NAME pbem1"),
])
def test_a_bad_line_stores_nothing(home: Path, keys: dict[str, str], tmp_path: Path, here, bad: str, code: int,
                                   words: str) -> None:
    club = club_file(tmp_path / "club.txt", keys, bad.format(**keys))
    one_error_line(here("key", "import", club, home=home, cwd=tmp_path), code, words)
    assert contacts(home) is None


def test_import_with_a_name_held_to_another_key_stores_nothing(home: Path, keys: dict[str, str],
                                                               tmp_path: Path, here) -> None:
    here("key", "add", "bob", keys["eve"], home=home, cwd=tmp_path, ok=True)
    before = contacts(home)
    one_error_line(here("key", "import", club_file(tmp_path / "club.txt", keys), home=home, cwd=tmp_path), 2,
                   "contact 'bob' already holds another key")
    assert contacts(home) == before  # not even ann and cat, which were new


def test_import_reads_only_a_small_regular_file(home: Path, keys: dict[str, str], tmp_path: Path, here) -> None:
    club = club_file(tmp_path / "club.txt", keys)
    (tmp_path / "link.txt").symlink_to(club)
    one_error_line(here("key", "import", tmp_path / "link.txt", home=home, cwd=tmp_path), 3, "is a link")
    os.mkfifo(tmp_path / "fifo")  # nobody writes to it: a read that waited would hang the test
    one_error_line(pbem("key", "import", tmp_path / "fifo", home=home, cwd=tmp_path, timeout=20), 3, "special file")
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as f:
        f.truncate(2 << 20)  # sparse: 2 MiB of nothing
    one_error_line(here("key", "import", huge, home=home, cwd=tmp_path), 3, "over the limit")
    (tmp_path / "bin.txt").write_bytes(b"ann \xff\xfe\n")
    one_error_line(here("key", "import", tmp_path / "bin.txt", home=home, cwd=tmp_path), 2, "not UTF-8 text")
    assert contacts(home) is None


def test_contacts_in_chinese(home: Path, keys: dict[str, str], tmp_path: Path, here) -> None:
    """(Through the command line's entry in this process: a test above runs `key add` as a process.)"""
    run = here("--lang", "zh-Hans", "key", "add", "ann", keys["ann"], home=home, cwd=tmp_path, ok=True)
    assert run.stdout.strip() == f"已添加联系人 ann：指纹 {fingerprint(keys['ann'], tmp_path)}"
    refused = here("--lang", "zh-Hant", "key", "add", "ann", keys["bob"], home=home, cwd=tmp_path)
    assert refused.returncode == 2 and refused.stderr.startswith("錯誤：聯絡人 'ann' 已經是另一個公鑰")

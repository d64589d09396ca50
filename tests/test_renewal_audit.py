"""The audit checks the archive's renewals against the packets, both ways (docs/replay.md,
"What the audit checks"; docs/protocol.md, "Archive"): a host that publishes a renewal of the
packet waiting (`game resume` of a paused game) without listing it in the archive's `renewed`,
or lists as renewed a packet that is no renewal, is caught at that packet by `pbem audit`
(exit 8). Real games: a SQLite store, real keys, a real shared folder; the misbehaving host's
archive is re-signed with the host's own key, so that its signature holds and the renewal check
is what finds the lie.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from folder_games import bots_end_the_round, paused_game

from pbem.errors import EXIT_AUDIT_FAILED
from pbem.protocol.armor import armor
from pbem.protocol.documents import read_blocks, sign_json

_ARCHIVE = re.compile(r"-----BEGIN PBEM ARCHIVE-----.*?-----END PBEM ARCHIVE-----", re.S)


def _renewed_game(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, here, *,
                  host_plays: bool = False):
    """Round 1 of a paused four-seat game: the seat to move at packet 2 moves (`pbem turn`), `game
    resume` renews packet 2 as 3 to name the deadline, and the host applies the seat's move at 3
    (`host_plays`: the host never reads it and plays for the seat at 3 once its deadline has
    passed); bots end the round. (the shared folder, the seats, ids, the seat, packet 2's number)"""
    store, home, shared = f"sqlite:///{tmp_path / 'store.db'}", tmp_path / "home-referee", tmp_path / "shared"
    clock, host, fh, seats, ids = paused_game(tmp_path, store, home, capsys, monkeypatch)
    seat, waiting = host.status()["to_move"], host.status()["seq"]
    here("turn", shared, "--as", seat, "discard 1", home=seats[seat].home, ok=True)
    if host_plays:
        for unread in (shared / "inbox").glob(f"{seat}-*.pbem"):
            unread.unlink()
    here("game", "resume", "t", "--store", store, home=home, ok=True)
    if host_plays:
        clock.advance(3 * 3600 + 60)
        assert "applied" in [o.kind for o in host.tick()]
    fh.step()
    bots_end_the_round(host, fh, seats)
    host.close()
    return shared, seats, ids, seat, waiting


def _misbehave(shared: Path, ids: dict[str, Any], renewed: list[int] | None) -> None:
    """The round's archive, wherever the folder holds it (its own file, and after the round's
    last packet), with its `renewed` list changed and signed again by the host."""
    found = [p for p in shared.rglob("*.pbem") if _ARCHIVE.search(p.read_text())]
    assert found
    for path in found:
        text = path.read_text()
        block = next(b for b in read_blocks(text) if b.kind == "archive")
        doc = msgspec.to_builtins(block.doc)
        doc.pop("renewed", None)
        if renewed is not None:
            doc["renewed"] = renewed
        path.write_text(_ARCHIVE.sub(armor("ARCHIVE", sign_json("archive", doc, ids["referee"])).strip(), text))


def test_an_honest_renewal_audits_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch, here) -> None:
    """The honest host's round audits clean, its renewal checked against its packet (and so does
    the seat's own `audit --as`). Fails on main: the summary named no renewal."""
    shared, seats, _, seat, _ = _renewed_game(tmp_path, capsys, monkeypatch, here)
    for how in ([], ["--as", seat]):
        audit = here("audit", shared, "--round", 1, *how, home=seats[seat].home)
        assert audit.returncode == 0, audit.stdout + audit.stderr
        assert "1 renewal checked against its packet" in audit.stdout, audit.stdout


def test_a_renewal_the_archive_does_not_list_is_a_fault(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch, here) -> None:
    """The host published packet 3 renewing packet 2 (the seat was told its move for 2 still
    counts) but its archive lists no renewal: `pbem audit` faults packet 3 (exit 8). Fails on
    main: main failed the audit only as a move missing between packets 2 and 4."""
    shared, seats, ids, seat, waiting = _renewed_game(tmp_path, capsys, monkeypatch, here)
    _misbehave(shared, ids, None)
    audit = here("audit", shared, "--round", 1, home=seats[seat].home)
    assert audit.returncode == EXIT_AUDIT_FAILED, audit.stdout + audit.stderr
    assert f"FAULT round 1 packet {waiting + 1}: it renews packet {waiting} to name a deadline, so a move made for " \
           f"packet {waiting} counts at it, but the archive does not list it as renewed" in audit.stdout, audit.stdout
    assert audit.stderr.startswith("error: audit failed"), audit.stderr


def test_the_seats_audit_faults_a_host_move_over_its_move_at_an_unlisted_renewal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, here) -> None:
    """The host renews packet 2 as 3 without listing it, never reads the seat's move for 2 and
    plays for the seat at 3 once its deadline has passed. The seat's `audit --as` faults both the
    unlisted renewal and the host move over the move it made for packet 2 (kept in its key home).
    Fails on main: the seat's audit read renewals from the archive's list alone, so it said
    nothing of its move (only that a move was missing between packets 1 and 3)."""
    shared, seats, ids, seat, waiting = _renewed_game(tmp_path, capsys, monkeypatch, here, host_plays=True)
    _misbehave(shared, ids, None)
    audit = here("audit", shared, "--round", 1, "--as", seat, home=seats[seat].home)
    assert audit.returncode == EXIT_AUDIT_FAILED, audit.stdout + audit.stderr
    assert f"FAULT round 1 packet {waiting + 1}: it renews packet {waiting}" in audit.stdout, audit.stdout
    assert f"the host played for {seat} at packet {waiting + 1}, which {seat} had answered" in audit.stdout, \
        audit.stdout


def test_a_packet_listed_as_renewed_that_is_no_renewal_is_a_fault(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch, here) -> None:
    """The archive lists as renewed, beside the real renewal 3, packet 4 (it carries the seat's
    move: no renewal), so that a move made for packet 3 would count at 4; and a packet beyond
    the round's chain. `pbem audit` faults each (exit 8). Fails on main: it found no fault in
    the second and failed the first only as moves out of step."""
    shared, seats, ids, seat, waiting = _renewed_game(tmp_path, capsys, monkeypatch, here)
    _misbehave(shared, ids, [waiting + 1, waiting + 2])
    audit = here("audit", shared, "--round", 1, home=seats[seat].home)
    assert audit.returncode == EXIT_AUDIT_FAILED, audit.stdout + audit.stderr
    assert f"FAULT round 1 packet {waiting + 2}: the archive lists it as renewed, but it is no renewal" in audit.stdout, \
        audit.stdout
    _misbehave(shared, ids, [waiting + 1, 999])
    audit = here("audit", shared, "--round", 1, "--json", home=seats[seat].home)
    assert audit.returncode == EXIT_AUDIT_FAILED, audit.stdout + audit.stderr
    [fault] = msgspec.json.decode(audit.stdout)["rounds"][0]["faults"]
    assert (fault["check"], fault["code"], fault["params"]) == ("renewal", "bad-renewal", {"seq": 999})

"""Audits: a clean game passes; each kind of tampering is caught, with its move number.

Tampered archives are re-signed with the host's own key (table.ids["referee"]), so that the
archive's signature is valid and the deeper checks must find the lie.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from table_games import Table, make_table, play_until

from pbem.errors import EXIT_AUDIT_FAILED, BadPacket
from pbem.protocol.armor import armor
from pbem.protocol.documents import b64, parse, read_blocks, sign, sign_json, unb64
from pbem.replay.audit import audit, audit_source
from pbem.replay.load import load_replay
from pbem.replay.report import AuditFailed, Report
from pbem.replay.rounds import verify_archive
from pbem.replay.sources import MOST_ENTRIES, open_source
from pbem.ui.words import render

SEATS = ["ann", "bob", "cat", "dan", "eve"]


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Table:
    """Rounds 1 and 2 of a five-seat game played to their ends by bots."""
    t = make_table(tmp_path_factory.mktemp("audit"), SEATS)
    play_until(t, lambda p: p.doc.round > 2 or p.doc.phase == "game-over", seed=5)
    return t


def _archive(table: Table, round_no: int = 1):
    return read_blocks(table.host.archives()[round_no])[0]


def _resign(table: Table, doc: dict) -> bytes:
    """The archive document, changed and signed again by the real host."""
    return sign_json("archive", doc, table.ids["referee"])


def _changed(table: Table, change) -> Report:
    doc = msgspec.to_builtins(_archive(table).doc)
    change(doc)
    report = audit(_resign(table, doc), origin="tampered")
    assert not report.ok
    return report


def _first(report: Report) -> tuple[int | None, str]:
    return report.faults[0].move, report.faults[0].check


def test_clean_rounds_pass_from_the_db_and_from_a_player_folder(table: Table, tmp_path: Path) -> None:
    db = open_source(str(table.root / "game.db"))
    game = db.games()[0]
    t0 = time.perf_counter()
    reports = audit_source(db, game, [1, 2])
    elapsed = time.perf_counter() - t0
    assert [r.ok for r in reports] == [True, True], [f.line() for r in reports for f in r.faults]
    assert elapsed < 5
    for rep in reports:
        assert rep.counts["envelope"] == rep.counts["commit"] == rep.counts["engine"] == rep.moves > 0
        assert rep.counts["join"] == len(SEATS) and rep.counts["deal"] == 1 and not rep.notes
        assert rep.summary().startswith(f"audit ok: game {game} round {rep.round}")
    # round 2's deal is checked with round 1's final position (gold, nugget pile, first player)
    folder = tmp_path / "eve"
    shutil.copytree(table.root / "out", folder)
    reports = audit_source(open_source(str(folder)), game, [1, 2])
    assert all(r.ok for r in reports) and reports[1].counts["packet-file"] > 0
    # round 2's archive alone: fully checked, from what it says round 1 carried over
    alone = tmp_path / "r2.pbem"
    alone.write_text(table.host.archives()[2])
    [rep] = audit_source(open_source(str(alone)), game, [2])
    assert rep.ok and rep.counts["deal"] == 1
    assert [n for n in map(render, rep.notes) if "no packet files of round 2" not in n] == []  # (the archive alone has none)


def test_a_folder_too_big_to_be_a_game_is_refused_before_it_is_read(table: Table, tmp_path: Path) -> None:
    """`pbem audit /` (or a home) is refused in one line, not walked for minutes; within a
    folder, hidden and linked folders are not followed, so a link loop costs nothing."""
    folder = tmp_path / "eve"
    shutil.copytree(table.root / "out", folder)
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    (folder / ".cache").mkdir()
    (folder / ".cache" / "junk.pbem").write_text("not armour")
    run = subprocess.run([sys.executable, "-m", "pbem", "audit", str(folder)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    crowd = folder / "crowd"
    crowd.mkdir()
    for i in range(MOST_ENTRIES):
        os.close(os.open(crowd / f"f{i}", os.O_CREAT | os.O_WRONLY, 0o600))
    before = sorted(p.name for p in folder.iterdir())
    run = subprocess.run([sys.executable, "-m", "pbem", "audit", str(folder)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.splitlines() == [f"error: {folder} holds more than {MOST_ENTRIES} files and folders: "
                                       "name the folder of one game"]
    assert sorted(p.name for p in folder.iterdir()) == before


def test_a_round_asked_for_reads_only_that_rounds_packets(table: Table) -> None:
    """An audit or replay of one round reads that round's packets (as its archive
    chains them) and the newest one, not the whole game, and reports exactly the same."""
    path = str(table.root / "game.db")
    whole = open_source(path)
    game = whole.games()[0]
    newest = max(whole.packets[game])
    for r in (1, 2):
        one = open_source(path, rounds=[r])
        chain = {link.seq for link in verify_archive(one.archive(game, r)[0])[0].doc.chain}
        assert set(one.packets[game]) == chain | {newest} < set(whole.packets[game])
        [by_round], [from_whole] = audit_source(one, game, [r]), audit_source(whole, game, [r])
        assert by_round.ok and by_round.to_json() == from_whole.to_json()
    assert set(open_source(path, rounds=()).packets[game]) == {newest}  # a replay: the archive alone


def test_a_changed_move_text_is_caught_at_its_move(table: Table) -> None:
    doc = msgspec.to_builtins(_archive(table).doc)
    k = next(i for i, m in enumerate(doc["moves"], 1) if m["text"].startswith("play ") and i > 3)

    def change(d):
        d["moves"][k - 1]["text"] = "discard " + d["start"]["hands"][d["moves"][k - 1]["seat"]][0]

    report = _changed(table, change)
    assert _first(report) == (k, "commit")


def test_a_dropped_move_is_caught_at_its_place(table: Table) -> None:
    k = 7
    report = _changed(table, lambda d: d["moves"].pop(k - 1))
    assert _first(report) == (k, "order")
    assert any(f.move == k + 1 and f.check == "chain" and "missing" in render(f.message) for f in report.faults)


def test_a_swapped_card_in_a_starting_hand_is_caught_in_the_deal(table: Table) -> None:
    def change(d):
        hands = d["start"]["hands"]
        hands["ann"][0], hands["cat"][0] = hands["cat"][0], hands["ann"][0]

    report = _changed(table, change)
    assert _first(report) == (0, "deal")
    assert "hands (ann, cat)" in render(report.faults[0].message)


def test_a_card_swapped_with_the_deck_is_caught_in_the_deal(table: Table) -> None:
    def change(d):
        d["start"]["hands"]["bob"][0], d["start"]["deck"][-1] = d["start"]["deck"][-1], d["start"]["hands"]["bob"][0]

    report = _changed(table, change)
    assert _first(report) == (0, "deal")
    assert "deck" in render(report.faults[0].message) and "hands (bob)" in render(report.faults[0].message)


def test_a_wrong_secret_is_caught(table: Table) -> None:
    report = _changed(table, lambda d: d.update(secret=os.urandom(32).hex()))
    assert _first(report) == (0, "secret")
    assert "commitment" in render(report.faults[0].message)


def test_a_move_envelope_signed_by_another_key_is_caught(table: Table) -> None:
    k = 4
    seat = _archive(table).doc.moves[k - 1].seat
    other = next(s for s in SEATS if s != seat)

    def change(d):
        env = parse("move", unb64(d["moves"][k - 1]["envelope"], "envelope"))
        forged = sign(env.doc, table.ids[other])
        d["moves"][k - 1]["envelope"] = b64(forged.payload)

    report = _changed(table, change)
    assert _first(report) == (k, "envelope")
    assert f"not by seat {seat}'s key" in render(report.faults[0].message)


def test_a_broken_packet_chain_is_caught(table: Table) -> None:
    def change(d):
        d["chain"][5]["hash"] = "0" * 64

    report = _changed(table, change)
    assert {f.check for f in report.faults} == {"chain"}


def test_a_broken_archive_signature_is_caught_by_the_cli(table: Table, tmp_path: Path, here) -> None:
    archive = _archive(table)
    payload = bytearray(archive.payload)
    payload[10] ^= 0x01  # inside the signature
    report = audit(bytes(payload))
    assert _first(report) == (None, "signature")
    assert len(report.faults) == 1  # everything else in it is still the honest record
    path = tmp_path / "broken.pbem"
    path.write_text(armor("ARCHIVE", bytes(payload)))
    result = here("audit", path, home=tmp_path)
    assert result.returncode == AuditFailed.exit_code == EXIT_AUDIT_FAILED == 8, result.stderr
    assert "FAULT round 1 archive: the archive's signature does not verify" in result.stdout
    result = here("audit", path, "--json", home=tmp_path)
    assert result.returncode == EXIT_AUDIT_FAILED, result.stderr
    out = json.loads(result.stdout)
    assert out["ok"] is False and out["rounds"][0]["faults"][0]["check"] == "signature"
    with pytest.raises(BadPacket):  # and a replay refuses it
        load_replay(str(path))


def test_a_tampered_archive_fails_the_cli_audit_and_a_clean_one_passes(table: Table, tmp_path: Path, here) -> None:
    doc = msgspec.to_builtins(_archive(table).doc)
    doc["secret"] = os.urandom(32).hex()
    path = tmp_path / "tampered.pbem"
    path.write_text(armor("ARCHIVE", _resign(table, doc)))
    result = here("audit", path, "--json", home=tmp_path)
    assert result.returncode == AuditFailed.exit_code, result.stderr
    faults = json.loads(result.stdout)["rounds"][0]["faults"]
    assert faults[0]["move"] == 0 and faults[0]["check"] == "secret"
    clean = tmp_path / "clean.pbem"
    clean.write_text(table.host.archives()[1])
    result = here("audit", clean, "--json", home=tmp_path)
    assert result.returncode == 0 and json.loads(result.stdout)["ok"] is True, result.stderr


def test_auditing_packet_files_loads_no_database_library(table: Table, tmp_path: Path) -> None:
    """A player auditing the packet files in their folder needs no store: the packet contents
    an audit rebuilds live apart from the referee's database host."""
    folder = tmp_path / "eve"
    shutil.copytree(table.root / "out", folder)
    env = {**os.environ, "HOME": str(tmp_path), "PBEM_HOME": str(tmp_path / "keys")}
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "pbem", "audit", str(folder)],
                         capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "audit ok: game" in run.stdout
    loaded = [line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")]
    assert "pbem.replay.audit" in loaded  # the audit itself was imported, so the list is the real one
    assert not [name for name in loaded if name.split(".")[0] == "sqlalchemy"]


def test_audit_json_faults_are_codes_and_values_the_same_in_every_language(table: Table, tmp_path: Path,
                                                                           here) -> None:
    """`pbem audit --json` is for scripts: each fault carries a code, the message id and its values
    and the English text, whatever --lang says; the lines for people are in the reader's words.
    (English by a process of its own, the other runs through the command line's entry here.)"""
    import processes

    doc = msgspec.to_builtins(_archive(table).doc)
    doc["secret"] = os.urandom(32).hex()
    doc["joins"][0] = "!" + doc["joins"][0][1:]  # a join that is not base64: an inner error's fault
    doc["moves"][0]["text"] = "play cross.1 at 9,9"  # the engine's refusal, said from its template
    path = tmp_path / "tampered.pbem"
    path.write_text(armor("ARCHIVE", _resign(table, doc)))
    said = {lang: (processes.pbem if lang == "en" else here)("--lang", lang, "audit", path, "--json", home=tmp_path)
            for lang in ("en", "zh-Hans")}
    assert {run.returncode for run in said.values()} == {EXIT_AUDIT_FAILED}
    assert said["en"].stdout == said["zh-Hans"].stdout  # the same bytes in every language
    faults = json.loads(said["en"].stdout)["rounds"][0]["faults"]
    secret = next(f for f in faults if f["check"] == "secret")
    assert secret["code"] == "audit-failed" and secret["params"] == {"round": 1}
    assert secret["id"] == "the revealed secret does not match the invitation's commitment for round {round}"
    assert secret["text"] == "the revealed secret does not match the invitation's commitment for round 1"
    join = next(f for f in faults if f["check"] == "join")
    inner = join["params"]["error"]
    assert join["id"] == "join {n} is unusable: {error}" and inner["code"] == "bad-packet", join
    assert inner["text"].startswith("join 1") and join["text"] == f"join 1 is unusable: {inner['text']}"
    engine = next(f for f in faults if f["check"] == "engine")
    refusal = engine["params"]["error"]
    assert refusal["id"] in ("illegal move {move}: {reason}", "not a move {move}: {reason}"), engine
    assert not any(ord(c) > 127 for c in said["zh-Hans"].stdout)
    human = here("--lang", "zh-Hans", "audit", path, home=tmp_path)
    assert human.returncode == EXIT_AUDIT_FAILED and "秘密" in human.stdout + human.stderr, human.stdout

"""The key agent: unlock once, then show and move ask for no passphrase.

Real processes: the `pbem` command, the agent in the background, its Unix socket, real key
files protected by a passphrase. Nothing here gives the later commands a passphrase, so
they can only succeed through the agent.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import processes
import pytest
from run_here import here_wide

from pbem.protocol import crypto
from pbem.seat import agent as A
from pbem.seat import keys
from pbem.seat.home import agent_socket

PASSPHRASE = "correct horse battery"
SEATS = ["ann", "bob", "cat"]


def pbem(*args: str, home: Path, cwd: Path, passphrase: bool = False, env: dict | None = None):
    """A `pbem` command with no passphrase unless `passphrase` (only the agent can unlock a key)."""
    return processes.pbem(*args, home=home, cwd=cwd, stdin=subprocess.DEVNULL, timeout=60,
                          env={"PBEM_PASSPHRASE": PASSPHRASE if passphrase else None, **(env or {})})


def ok(run: subprocess.CompletedProcess) -> str:
    assert run.returncode == 0, run.stderr
    return run.stdout


def agent_pids(socket_path: Path) -> list[int]:
    out = subprocess.run(["pgrep", "-f", f"pbem.seat.agent {socket_path}"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def wait_gone(socket_path: Path, seconds: float = 10) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and (agent_pids(socket_path) or socket_path.exists()):
        time.sleep(0.1)
    assert not agent_pids(socket_path) and not socket_path.exists()


@pytest.fixture
def runtime(monkeypatch) -> Iterator[Path]:
    """Each test its own agent folder (XDG_RUNTIME_DIR), for this process and the commands it runs: a short path
    under /tmp, as a socket's path is limited to ~104 bytes (pytest-xdist's tmp_path made it too long)."""
    folder = Path(tempfile.mkdtemp(prefix="pbem-run-", dir="/tmp"))
    folder.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_socket_path_too_long_is_refused_in_one_line(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / ("r" * 120)
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    with pytest.raises(A.AgentUnavailable, match="more than a socket can have"):
        A.start_agent(tmp_path / "home")
    assert not (folder / f"pbem-agent-{os.getuid()}").exists()


@pytest.fixture(scope="module")
def game(tmp_path_factory) -> dict:
    """One game for the module (the agent tests do not change its store): three seats dealt, packet 1 out."""
    tmp_path = tmp_path_factory.mktemp("agent")
    homes = {n: tmp_path / f"home-{n}" for n in ["referee", *SEATS]}
    # made in this process, as `pbem key new` (protected keys), game new, join and apply make them:
    # what is tested is what the commands do through the agent afterwards
    pubs = {n: keys.create_identity(h, n, PASSPHRASE.encode()).public.encode() for n, h in homes.items()}
    players = [x for s in SEATS for x in ("--player", f"{s}={pubs[s]}")]
    env = {"PBEM_PASSPHRASE": PASSPHRASE}
    invitation = tmp_path / "saves" / "t" / "out" / "invitation.pbem"
    packet = tmp_path / "saves" / "t" / "out" / "packet-000001.pbem"
    with contextlib.chdir(tmp_path):  # the default store: ./saves
        here_wide("game", "new", "t", "--host", "referee", *players, home=homes["referee"], ok=True, env=env)
        joins = [tmp_path / f"join-{s}.pbem" for s in SEATS]
        for s, join in zip(SEATS, joins):
            here_wide("join", invitation, "--as", s, "-o", join, home=homes[s], ok=True, env=env)
        here_wide("apply", "t", *joins, home=homes["referee"], ok=True, env=env)
        to_move = json.loads(here_wide("show", packet, "--json", home=homes["ann"], ok=True, env=env).stdout)["to_move"]
    return {"root": tmp_path, "homes": homes, "packet": packet, "to_move": to_move}


@pytest.fixture
def lone_key(tmp_path: Path, runtime: Path) -> tuple[Path, Path]:
    """(cwd, key home) holding one protected key, ann's."""
    home = tmp_path / "home"
    keys.create_identity(home, "ann", PASSPHRASE.encode())  # as `pbem key new ann` makes it
    return tmp_path, home


@pytest.mark.slow
def test_unlock_once_then_show_and_move_need_no_passphrase(game: dict, runtime: Path) -> None:
    root, packet, seat = game["root"], game["packet"], game["to_move"]
    home = game["homes"][seat]
    refused = pbem("show", str(packet), home=home, cwd=root)
    assert refused.returncode == 2 and "no passphrase available" in refused.stderr

    started = ok(pbem("agent", "start", "--timeout", "10m", home=home, cwd=root, passphrase=True))
    assert f"agent holds {seat}" in started
    sock = agent_socket(home)
    assert stat.S_ISSOCK(os.lstat(sock).st_mode)
    assert stat.S_IMODE(os.lstat(sock).st_mode) == 0o600 and stat.S_IMODE(os.lstat(sock.parent).st_mode) == 0o700
    try:
        shown = json.loads(ok(pbem("show", str(packet), "--json", home=home, cwd=root)))
        assert shown["me"] == seat and len(shown["hand"]) == 6  # the hand was opened by the agent
        move = root / "move.pbem"
        ok(pbem("move", str(packet), f"discard {shown['hand'][0]}", "-o", str(move), home=home, cwd=root))
        applied = ok(pbem("apply", "t", str(move), home=game["homes"]["referee"], cwd=root, passphrase=True))
        assert "packet 2" in applied  # the host accepted the agent's signature

        status = json.loads(ok(pbem("agent", "status", "--json", home=home, cwd=root)))
        assert status["running"] and status["keys"][0]["name"] == seat and 500 < status["keys"][0]["seconds_left"] <= 600
        # the agent's folder holds its socket and nothing else: no key was written anywhere
        assert [p.name for p in sock.parent.iterdir()] == [sock.name]
        # another key home has no agent: the socket is per home
        other = game["homes"]["referee"]
        assert "no key agent is running" in ok(pbem("agent", "status", home=other, cwd=root))
    finally:
        stopped = ok(pbem("agent", "stop", home=home, cwd=root))
    assert "forgot its keys" in stopped
    wait_gone(sock)
    again = pbem("show", str(packet), home=home, cwd=root)
    assert again.returncode == 2 and "no passphrase available" in again.stderr


@pytest.mark.slow
def test_the_host_unlocks_once_then_apply_needs_no_passphrase(game: dict, runtime: Path, here) -> None:
    """The host's key held by the agent of the host's key home (`pbem agent start --as referee`):
    apply signs the next packet and opens the host's own box through it, with no passphrase."""
    root, host_home = game["root"], game["homes"]["referee"]
    # the seat's move to apply, made in this process (what is tested is the host's apply through the agent)
    env = {"PBEM_PASSPHRASE": PASSPHRASE}
    with contextlib.chdir(root):  # the default store: ./saves
        before = json.loads(here("status", "t", "--json", home=host_home, ok=True).stdout)  # another test may have moved
        seat = before["to_move"]
        packet = root / "latest.pbem"
        here("packet", "t", "-o", packet, home=host_home, ok=True)
        hand = json.loads(here("show", packet, "--json", home=game["homes"][seat], ok=True, env=env).stdout)["hand"]
        move = root / "host-agent-move.pbem"
        here("move", packet, f"discard {hand[0]}", "-o", move, home=game["homes"][seat], ok=True, env=env)
    refused = pbem("apply", "t", str(move), home=host_home, cwd=root)
    assert refused.returncode == 2 and "no passphrase available" in refused.stderr

    ok(pbem("agent", "start", "--as", "referee", "--timeout", "10m", home=host_home, cwd=root, passphrase=True))
    sock = agent_socket(host_home)
    try:
        applied = ok(pbem("apply", "t", str(move), home=host_home, cwd=root))
        assert f"packet {before['seq'] + 1}" in applied
        after = json.loads(ok(pbem("status", "t", "--json", home=host_home, cwd=root)))
        assert after["seq"] == before["seq"] + 1 and after["to_move"] != seat
        # the packet the agent signed opens for the next seat, whose key file its passphrase unlocks
        newest = root / "saves" / "t" / "out" / f"packet-{after['seq']:06d}.pbem"
        shown = json.loads(ok(pbem("show", str(newest), "--json", home=game["homes"][after["to_move"]], cwd=root,
                                   passphrase=True)))
        assert shown["me"] == after["to_move"] and shown["seq"] == after["seq"]
    finally:
        ok(pbem("agent", "stop", home=host_home, cwd=root))
    wait_gone(sock)
    assert pbem("apply", "t", str(move), home=host_home, cwd=root).returncode == 2  # the key is forgotten


@pytest.mark.slow
def test_keys_are_forgotten_when_their_time_is_up(lone_key: tuple[Path, Path]) -> None:
    root, home = lone_key
    ok(pbem("agent", "start", "--timeout", "2s", home=home, cwd=root, passphrase=True))
    sock = agent_socket(home)
    assert agent_pids(sock)
    wait_gone(sock, seconds=15)  # the agent exits once it holds no key
    assert "no key agent is running" in ok(pbem("agent", "status", home=home, cwd=root))


def test_a_wrong_passphrase_starts_nothing(lone_key: tuple[Path, Path]) -> None:
    root, home = lone_key
    run = pbem("agent", "start", home=home, cwd=root, env={"PBEM_PASSPHRASE": "not the passphrase"})
    assert run.returncode == 4 and run.stderr.startswith("error: wrong passphrase")
    assert "Traceback" not in run.stderr
    assert not agent_socket(home).exists() and not agent_pids(agent_socket(home))


@pytest.mark.parametrize("args, words", [
    (["--timeout", "soon"], "bad --timeout 'soon'"),
    (["--timeout", "30d"], "longer than a week"),
    (["--as", "nobody"], "no identity 'nobody'"),
])
def test_bad_arguments_are_one_line(lone_key: tuple[Path, Path], args: list[str], words: str, here) -> None:
    """(Through the command line's entry in this process: the tests above start the agent by processes.)"""
    root, home = lone_key
    run = here("agent", "start", *args, home=home, cwd=root, env={"PBEM_PASSPHRASE": PASSPHRASE})
    assert run.returncode in (2, 4) and run.stderr.startswith("error: ") and words in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and not agent_socket(home).exists()


def test_an_agent_folder_others_can_open_is_refused(lone_key: tuple[Path, Path], here) -> None:
    root, home = lone_key
    folder = agent_socket(home).parent
    folder.mkdir(mode=0o700)
    folder.chmod(0o755)
    run = here("agent", "start", home=home, cwd=root, env={"PBEM_PASSPHRASE": PASSPHRASE})  # (in this process)
    assert run.returncode == 2 and "is not a private folder of yours" in run.stderr
    assert list(folder.iterdir()) == []


def test_a_file_in_the_way_of_the_socket_is_never_replaced(lone_key: tuple[Path, Path], here) -> None:
    root, home = lone_key
    sock = agent_socket(home)
    sock.parent.mkdir(mode=0o700)
    sock.write_text("mine")
    run = here("agent", "start", home=home, cwd=root, env={"PBEM_PASSPHRASE": PASSPHRASE})  # (in this process)
    assert run.returncode == 2 and "is not a socket" in run.stderr
    assert sock.read_text() == "mine"


def test_the_agent_answers_bad_requests_without_falling_over() -> None:
    agent = A.Agent()
    identity = crypto.Identity.generate("ann")
    secret = base64.b64encode(crypto.identity_secret(identity)).decode()
    assert agent.answer({"op": "add", "name": "ann", "secret": secret, "lifetime": 60}, now=0) == {}
    data = b"a move"
    signed = agent.answer({"op": "sign", "name": "ann", "data": base64.b64encode(data).decode()}, now=1)
    crypto.verify(identity.public, data, base64.b64decode(signed["signature"]))
    sealed = crypto.seal(b"your hand", identity.public, b"ctx")
    body = base64.b64encode(sealed[1 + crypto.KEY_ID_LEN:]).decode()
    opened = agent.answer({"op": "decrypt", "name": "ann", "body": body, "info": base64.b64encode(b"ctx").decode()},
                          now=1)
    assert base64.b64decode(opened["plain"]) == b"your hand"
    wrong = agent.answer({"op": "decrypt", "name": "ann", "body": body, "info": base64.b64encode(b"other").decode()},
                         now=1)
    assert wrong == {"error": "does not open"}
    for bad in (None, [], {"op": "sign"}, {"op": "sign", "name": "bob", "data": ""},
                {"op": "sign", "name": "ann", "data": "***"}, {"op": "add", "name": "x", "secret": "AA==",
                                                              "lifetime": 5},
                {"op": "add", "name": "x", "secret": secret, "lifetime": -1}, {"op": "fly", "name": "ann"}):
        assert "error" in agent.answer(bad, now=1), bad
    agent.forget_expired(now=61)
    assert agent.answer({"op": "list"}, now=61) == {"keys": []}

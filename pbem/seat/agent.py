"""The key agent: unlock a key once per session, in the manner of ssh-agent.

`pbem agent start` unlocks keys (scrypt, slow by design) and hands them to a small process
that holds them in memory and answers on a Unix socket only this user can open
(pbem.seat.home.agent_socket). Commands that need a key ask it to sign or to open a sealed
part: the private keys never leave the agent and are never written anywhere. The agent
forgets each key when its time is up, forgets all on `pbem agent stop`, and exits when it
holds none. Core dumps and debugger attachment are refused for its process where the system
allows.

Wire: one request per connection, one line of JSON each way; bytes are base64.
    {"op": "list"}                                   -> {"keys": [{"name", "public", "left"}]}
    {"op": "add", "name", "secret", "lifetime"}      -> {}
    {"op": "sign", "name", "data"}                   -> {"signature"}
    {"op": "decrypt", "name", "body", "info"}        -> {"plain"}   or {"error": "does not open"}
    {"op": "stop"}                                   -> {}          then the agent exits
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbem.errors import KeyNotFound, UsageError
from pbem.protocol import crypto
from pbem.protocol.crypto import Identity, PublicKey
from pbem.seat.home import agent_dir, agent_socket
from pbem.ui.words import t

if TYPE_CHECKING:
    import socket

MAX_LINE = 1 << 20  # a sealed part is a few kilobytes; anything near this is not ours
IDLE_EXIT = 60.0  # an agent that was never given a key does not linger
START_TIMEOUT = 10.0
SOCKET_PATH_MAX = 103  # sun_path is 108 bytes on Linux, 104 on macOS and the BSDs, with its NUL


class AgentUnavailable(KeyNotFound):
    """The agent went away or answered nonsense in the middle of a command."""


# --- the client side --------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(value: Any) -> bytes:
    if not isinstance(value, str):
        raise ValueError("not text")
    return base64.b64decode(value, validate=True)


def check_private_dir(path: Path) -> None:
    """Refuse an agent folder that is a link or that another user could reach into."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    uid = os.getuid() if hasattr(os, "getuid") else st.st_uid
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o077:
        raise UsageError(t("the agent folder {path} is not a private folder of yours", path=repr(str(path))),
                         hint=t("remove it (or set XDG_RUNTIME_DIR to a folder only you can open)"))


class AgentClient:
    """Talks to the agent of one key home."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        import socket  # only with an agent to ask: a command with a passphrase finds no socket file

        message = (json.dumps({"op": op, **fields}) + "\n").encode("ascii")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(30)
                s.connect(str(self.path))
                s.sendall(message)
                reply = _read_line(s)
        except (OSError, ValueError) as exc:
            raise AgentUnavailable(f"the key agent at {self.path} did not answer ({exc})",
                                   hint="start it again with 'pbem agent start', or stop it with 'pbem agent stop'") from exc
        try:
            doc = json.loads(reply)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            raise AgentUnavailable(f"the key agent at {self.path} answered nonsense")
        return doc

    def keys(self) -> list[dict[str, Any]]:
        keys = self.request("list").get("keys")
        return [k for k in keys if isinstance(k, dict)] if isinstance(keys, list) else []

    def add(self, identity: Identity, lifetime: float) -> None:
        answer = self.request("add", name=identity.name, secret=_b64(crypto.identity_secret(identity)),
                              lifetime=lifetime)
        if "error" in answer:
            raise AgentUnavailable(f"the key agent refused {identity.name!r}: {answer['error']}")

    def stop(self) -> None:
        self.request("stop")


def _socket_client(home: Path) -> AgentClient | None:
    """A client of the agent socket of this key home, if there is one (not yet asked anything)."""
    path = agent_socket(home)
    check_private_dir(path.parent)
    try:
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            return None
    except FileNotFoundError:
        return None
    return AgentClient(path)


def find_agent(home: Path) -> AgentClient | None:
    """The running agent of this key home, or None (no socket, or nobody answers on it)."""
    client = _socket_client(home)
    if client is None:
        return None
    try:
        client.request("hello")
    except AgentUnavailable:
        return None
    return client


class AgentIdentity(Identity):
    """An identity whose private keys stay in the agent: signing and opening are asked of it."""

    _public: PublicKey
    _client: AgentClient

    def __init__(self, name: str, public: PublicKey, client: AgentClient) -> None:
        # this subclass holds no key, only the way to the agent
        self._hold(name=name, _public=public, _client=client)

    @property
    def public(self) -> PublicKey:
        return self._public

    def sign(self, data: bytes) -> bytes:
        return self._answer("sign", "signature", data=_b64(data))

    def decrypt(self, body: bytes, info: bytes) -> bytes:
        return self._answer("decrypt", "plain", body=_b64(body), info=_b64(info))

    def _answer(self, op: str, field: str, **fields: Any) -> bytes:
        answer = self._client.request(op, name=self.name, **fields)
        if answer.get("error") == "does not open":
            raise ValueError("does not open")  # open_sealed turns this into WrongKey, as for a local key
        if "error" in answer:
            raise AgentUnavailable(f"the key agent cannot use {self.name!r}: {answer['error']}",
                                   hint=f"its time may be up: 'pbem agent start --as {self.name}'")
        try:
            return _unb64(answer.get(field))
        except (ValueError, binascii.Error):
            raise AgentUnavailable(f"the key agent answered nonsense for {self.name!r}") from None


def agent_identity(home: Path, name: str, public: PublicKey) -> AgentIdentity | None:
    """`name`'s identity through the running agent, if the agent holds that very key. Its list
    of keys is the one question asked (an agent that does not answer it is none): no hello
    first, one round trip less on every command that uses the agent."""
    client = _socket_client(home)
    if client is None:
        return None
    try:
        held = client.keys()
    except AgentUnavailable:
        return None
    for key in held:
        if key.get("name") == name and key.get("public") == public.encode():
            return AgentIdentity(name, public, client)
    return None


def start_agent(home: Path) -> AgentClient:
    """The agent of this key home, started in the background if none is running."""
    running = find_agent(home)
    if running is not None:
        return running
    path = agent_socket(home)
    if len(os.fsencode(path)) > SOCKET_PATH_MAX:  # the kernel's sun_path limit: bind would fail in the agent
        raise AgentUnavailable(t("the agent's socket path is {n} bytes, more than a socket can have ({limit}): {path}",
                                 n=len(os.fsencode(path)), limit=SOCKET_PATH_MAX, path=repr(str(path))),
                               hint=t("set XDG_RUNTIME_DIR (or TMPDIR) to a shorter folder"))
    folder = agent_dir()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    check_private_dir(folder)
    try:
        if stat.S_ISSOCK(os.lstat(path).st_mode):
            path.unlink()  # a socket nobody answers on: left by an agent that was killed
        else:
            raise UsageError(t("{path} is in the way of the agent's socket and is not a socket", path=repr(str(path))),
                             hint=t("remove it yourself; pbem only replaces stale sockets"))
    except FileNotFoundError:
        pass
    import select
    import subprocess  # only to start an agent, not in every command that asks one

    proc = subprocess.Popen([sys.executable, "-m", "pbem.seat.agent", str(path)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
    line = proc.stdout.readline() if ready else b""
    proc.stdout.close()
    if line.strip() != b"ready":
        proc.kill()
        raise AgentUnavailable(f"the key agent did not start (socket {path})")
    return AgentClient(path)


# --- the agent itself -------------------------------------------------------------------------


def _read_line(s: socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n"):
            break
        if size > MAX_LINE:
            raise ValueError("message too long")
    return b"".join(chunks)


def _harden() -> None:
    """No core dumps, and no other process of the user may attach a debugger (Linux: prctl)."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
        except (OSError, AttributeError):
            pass


def _peer_is_me(conn: socket.socket) -> bool:
    import socket

    if not hasattr(socket, "SO_PEERCRED"):
        return True  # the folder's mode is then the only guard (macOS: checked by the folder alone)
    import struct

    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


class Agent:
    def __init__(self) -> None:
        self.keys: dict[str, tuple[Identity, float]] = {}  # name -> (identity, forget at, monotonic)
        self.stopping = False

    def forget_expired(self, now: float) -> None:
        for name in [n for n, (_, until) in self.keys.items() if until <= now]:
            del self.keys[name]

    def answer(self, request: Any, now: float) -> dict[str, Any]:
        if not isinstance(request, dict):
            return {"error": "not a request"}
        op = request.get("op")
        if op == "hello":
            return {"agent": "pbem", "version": 1}
        if op == "list":
            return {"keys": [{"name": n, "public": ident.public.encode(), "left": round(until - now)}
                             for n, (ident, until) in sorted(self.keys.items())]}
        if op == "stop":
            self.keys.clear()
            self.stopping = True
            return {}
        name = request.get("name")
        if not isinstance(name, str):
            return {"error": "no key named"}
        try:
            if op == "add":
                lifetime = request.get("lifetime")
                if not isinstance(lifetime, (int, float)) or not 0 < lifetime <= 7 * 86400:
                    return {"error": "bad lifetime"}
                self.keys[name] = (crypto.identity_from_secret(name, _unb64(request.get("secret"))), now + lifetime)
                return {}
            held = self.keys.get(name)
            if held is None:
                return {"error": f"holds no key {name!r}"}
            identity = held[0]
            if op == "sign":
                return {"signature": _b64(identity.sign(_unb64(request.get("data"))))}
            if op == "decrypt":
                body, info = _unb64(request.get("body")), _unb64(request.get("info"))
                try:
                    return {"plain": _b64(identity.decrypt(body, info))}
                except Exception:  # InvalidTag, ValueError: the part is not for this key or context
                    return {"error": "does not open"}
        except (ValueError, binascii.Error, crypto.BadPacket):
            return {"error": "bad request"}
        return {"error": f"unknown op {str(op)[:20]!r}"}


def serve(path: Path) -> None:
    import socket

    _harden()
    agent = Agent()
    old_umask = os.umask(0o177)
    try:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
    finally:
        os.umask(old_umask)
    server.listen(16)
    server.settimeout(0.5)
    born, ever_held = time.monotonic(), False
    print("ready", flush=True)
    sys.stdout.close()
    try:
        while not agent.stopping:
            now = time.monotonic()
            agent.forget_expired(now)
            ever_held = ever_held or bool(agent.keys)
            if not agent.keys and (ever_held or now - born > IDLE_EXIT):
                break
            try:
                conn, _ = server.accept()
            except (TimeoutError, InterruptedError):
                continue
            with conn:
                try:
                    conn.settimeout(5)
                    if not _peer_is_me(conn):
                        continue
                    line = _read_line(conn)
                    try:
                        request = json.loads(line)
                    except ValueError:
                        request = None
                    reply = agent.answer(request, time.monotonic())
                    conn.sendall((json.dumps(reply) + "\n").encode("ascii"))
                except (OSError, ValueError):
                    continue
    finally:
        agent.keys.clear()
        server.close()
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                path.unlink()
        except FileNotFoundError:
            pass


if __name__ == "__main__":
    serve(Path(sys.argv[1]))

"""Passphrases typed at a real terminal (a pseudo-terminal: the stdlib's pty, pbem as its own
process): three tries, as ssh and gpg give; a new key's passphrase checked as soon as it is
typed and asked again when weak or mistyped; a hint that says where the passphrase came
from; Ctrl-C ends the prompt's line before `error: interrupted`."""

from __future__ import annotations

import os
import pty
import select
import sys
import time
from pathlib import Path

from folder_games import keys_here
from processes import cli_env, pbem

GOOD = "correct horse battery"


class Terminal:
    """`pbem ARGS` on a pseudo-terminal of its own (its controlling terminal: getpass writes
    its prompt there and turns echo off)."""

    def __init__(self, *args: object, home: Path, cwd: Path, env: dict[str, str | None] | None = None) -> None:
        environ = cli_env(home, PBEM_PASSPHRASE=None, **(env or {}))
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: becomes pbem
            os.chdir(cwd)
            os.execve(sys.executable, [sys.executable, "-m", "pbem", *map(str, args)], environ)
        self.out = b""

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        self.out += data
        return bool(data)

    def expect(self, text: str, timeout: float = 60) -> None:
        """Wait until the output has `text` once more than it had when asked."""
        want, end = self.out.count(text.encode()) + 1, time.monotonic() + timeout
        while self.out.count(text.encode()) < want:
            assert time.monotonic() < end, f"no {text!r} in {self.out!r}"
            assert self._read(0.2) or self.out.count(text.encode()) >= want, f"ended without {text!r}: {self.out!r}"

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\r")

    def answer(self, prompt: str, line: str) -> None:
        self.expect(prompt)
        self.type(line)

    def end(self, timeout: float = 60) -> int:
        """The exit code, once pbem ends (its output read to the end)."""
        end = time.monotonic() + timeout
        while self._read(0.2):
            assert time.monotonic() < end, self.out
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)

    def text(self) -> str:
        return self.out.decode().replace("\r\n", "\n")


def _host_with_protected_key(tmp_path: Path) -> tuple[Path, list[str]]:
    """A key home holding key `ref`, protected by GOOD (`pbem key new`); and the --player options of
    three seats, their key files made by the library (the files `pbem key new` writes)."""
    home = tmp_path / "host"
    pbem("key", "new", "ref", home=home, env={"PBEM_PASSPHRASE": GOOD}, ok=True)
    pubs = keys_here({n: tmp_path / f"home-{n}" for n in ("ann", "bob", "cat")})
    return home, [a for n, k in pubs.items() for a in ("-p", f"{n}={k}")]


def test_three_tries_at_the_prompt(tmp_path: Path) -> None:
    home, seats = _host_with_protected_key(tmp_path)
    term = Terminal("game", "new", "friday", *seats, home=home, cwd=tmp_path)
    term.answer("Passphrase: ", "wrong horse battery")
    term.answer("Passphrase: ", "wrong again")  # asked again after each wrong one
    term.answer("Passphrase: ", GOOD)
    assert term.end() == 0, term.text()
    said = term.text()
    assert said.count("wrong passphrase; try again") == 2 and "created game friday-" in said, said

    term = Terminal("game", "new", "monday", *seats, home=home, cwd=tmp_path)
    for _ in range(3):
        term.answer("Passphrase: ", "wrong horse battery")
    assert term.end() == 4
    said = term.text()
    assert said.count("Passphrase: ") == 3 and "error: wrong passphrase for key 'ref'" in said, said
    assert "hint: 3 tries typed; a damaged key file fails the same way" in said and "PBEM_PASSPHRASE" not in said
    assert "monday" not in pbem("games", "--host", home=home, cwd=tmp_path).stdout


def test_a_passphrase_from_a_file_or_the_environment_gets_one_try_and_its_own_hint(tmp_path: Path) -> None:
    home, seats = _host_with_protected_key(tmp_path)
    wrong = tmp_path / "pass.txt"
    wrong.write_text("wrong horse battery\n")
    run = pbem("game", "new", "friday", *seats, "--passphrase-file", wrong, home=home, cwd=tmp_path,
               env={"PBEM_PASSPHRASE": None})
    assert run.returncode == 4 and run.stderr.splitlines() == [
        "error: wrong passphrase for key 'ref'",
        f"hint: check the passphrase in {str(wrong)!r}; a damaged key file fails the same way"], run.stderr
    run = pbem("game", "new", "friday", *seats, home=home, cwd=tmp_path, env={"PBEM_PASSPHRASE": "wrong horse"})
    assert run.returncode == 4 and run.stderr.splitlines()[1:] == [
        "hint: check PBEM_PASSPHRASE; a damaged key file fails the same way"], run.stderr


def test_a_new_keys_passphrase_is_checked_when_typed_and_asked_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    term = Terminal("key", "new", "ann", home=home, cwd=tmp_path)
    term.answer("Passphrase: ", "short")  # weak: said at once, before it is typed twice
    term.answer("Passphrase: ", GOOD)
    term.answer("Passphrase again: ", "correct horse batterY")  # mistyped: asked again from the start
    term.answer("Passphrase: ", GOOD)
    term.answer("Passphrase again: ", GOOD)
    assert term.end() == 0, term.text()
    said = term.text()
    assert said.count("Passphrase again: ") == 2, said
    assert "the passphrase is too weak: use at least 8 characters" in said and "; try again" in said
    assert "the two passphrases differ; try again" in said and "created identity 'ann'" in said
    assert pbem("key", "show", "ann", home=home, cwd=tmp_path, ok=True).stdout.startswith("pbem1")
    assert (home / "keys" / "ann.key").is_file()

    term = Terminal("key", "new", "bob", home=home, cwd=tmp_path)
    for weak in ("a", "1234", "aaaaaaaaaaaa"):
        term.answer("Passphrase: ", weak)
    assert term.end() == 2
    assert "error: the passphrase is too weak" in term.text() and "Passphrase again" not in term.text()
    assert not (home / "keys" / "bob.key").exists()


def test_ctrl_c_at_the_prompt_ends_its_line_first(tmp_path: Path) -> None:
    home, seats = _host_with_protected_key(tmp_path)
    term = Terminal("game", "new", "friday", *seats, home=home, cwd=tmp_path)
    term.expect("Passphrase: ")
    os.write(term.fd, b"\x03")  # Ctrl-C: the terminal sends SIGINT
    assert term.end() == 130
    said = term.text()
    assert "Passphrase: error" not in said and "Passphrase: \nerror: interrupted\n" in said, said

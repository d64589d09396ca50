"""Mail passwords and tokens: from a command, the environment or a prompt; never stored.

A command (`pass show mail/pbem`, `secret-tool lookup ...`, an OAuth2 helper printing an
access token) is run without a shell each time a secret is needed, so a token that expires
is fetched fresh on every reconnect. Its first line of output is the secret.
"""

from __future__ import annotations

import getpass
import os
import shlex
import subprocess
import sys

from pbem.errors import UsageError
from pbem.ui.words import t

COMMAND_TIMEOUT = 60.0


def run_command(command: str, what: str) -> str:
    """The first line a secret command prints; UsageError (without its output) if it fails.
    `what` names the secret in words (translated: t("IMAP password"))."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(t("cannot read the {what} command {command}: {error}", what=what, command=repr(command),
                           error=exc)) from None
    if not argv:
        raise UsageError(t("the {what} command is empty", what=what))
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=COMMAND_TIMEOUT)
    except FileNotFoundError:
        raise UsageError(t("the {what} command {command} was not found", what=what, command=repr(argv[0]))) from None
    except subprocess.TimeoutExpired:
        raise UsageError(t("the {what} command {command} did not finish in {seconds} s", what=what,
                           command=repr(argv[0]), seconds=f"{COMMAND_TIMEOUT:.0f}")) from None
    if done.returncode != 0:
        # stderr may say why (a locked store); stdout may hold half a secret: never shown.
        why = (done.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[0][:200]
        failed = t("the {what} command {command} failed with exit code {code}", what=what, command=repr(argv[0]),
                   code=done.returncode)
        raise UsageError(t("{failed}: {why}", failed=failed, why=why) if why else failed)
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    if not lines or not lines[0]:
        raise UsageError(t("the {what} command {command} printed nothing", what=what, command=repr(argv[0])))
    return lines[0]


def obtain(what: str, *, env: str, command: str | None = None, prompt: str | None = None) -> str:
    """A secret: from `command` if given, else $`env`, else a terminal prompt."""
    if command:
        return run_command(command, what)
    value = os.environ.get(env)
    if value:
        return value
    if prompt and sys.stdin is not None and sys.stdin.isatty():
        return getpass.getpass(prompt)
    raise UsageError(t("no {what} given", what=what),
                     hint=t("set {env}, pass --password-command CMD, or run in a terminal", env=env))

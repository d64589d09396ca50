"""Option groups (pbem/cli/_common.py): the same options, help and defaults on every command
that takes a group, and the rules by which given SMTP options meet the mail profile."""

from __future__ import annotations

from typing import Any

import pytest
from typer.main import get_command

from pbem.cli import app
from pbem.cli._mail_options import Smtp
from pbem.errors import UsageError
from pbem.mail.message import SmtpSettings

GROUP_FLAGS = {  # group parameter name -> its flags
    "smtp": ["--smtp-server", "--smtp-port", "--smtp-security", "--smtp-user", "--from"],
    "keys": ["--as", "--home", "--passphrase-file"],
    "mail_in": ["--imap", "--password-command", "--oauth2-command"],
    "timing": ["--deadline", "--grace", "--days", "--on-timeout", "--absent-after", "--remind", "--max-away"],
}


def commands(group: Any, prefix: str = "") -> dict[str, Any]:
    """Every command under `group` (Typer's own click), by its full name: "bot run"."""
    out: dict[str, Any] = {}
    for name, cmd in group.commands.items():
        if hasattr(cmd, "commands"):
            out |= commands(cmd, f"{prefix}{name} ")
        else:
            out[f"{prefix}{name}"] = cmd
    return out


def test_a_group_reads_the_same_on_every_command() -> None:
    every = commands(get_command(app))
    users: dict[str, set[str]] = {}
    for group, flags in GROUP_FLAGS.items():
        seen: dict[str, tuple] = {}
        for name, cmd in every.items():
            opts = {o: p for p in cmd.params for o in p.opts}
            if not any(p.name.startswith(f"{group}__") for p in cmd.params):
                # --smtp-server or --imap written out again instead of the group
                # ('--as' also means a point of view in 'replay' and keys to unlock in 'agent')
                assert group == "keys" or flags[0] not in opts, (group, name)
                continue
            users.setdefault(group, set()).add(name)
            for flag in flags:
                assert flag in opts and opts[flag].name.startswith(f"{group}__"), (group, name, flag)  # whole
                said = (getattr(opts[flag], "help", None), opts[flag].default)
                assert seen.setdefault(flag, said) == said, (group, name, flag)
    assert {"mail-join", "mail-move", "bot run", "mail setup", "away", "resign", "handover"} <= users["smtp"]
    assert {"away", "resign", "handover", "game pause", "game config", "mail-move", "turn", "bot run"} <= users["keys"]
    assert {"inbox", "turn", "host run", "bot run", "mail setup"} <= users["mail_in"]
    assert {"game new", "game config"} <= users["timing"]


@pytest.mark.parametrize("flag", ["--passphrase-file", "--home", *GROUP_FLAGS["timing"]])
def test_a_shared_option_is_written_once(flag: str) -> None:
    """Every command that takes the option shows the same help and default: it is defined once."""
    said = {}
    for name, cmd in commands(get_command(app)).items():
        for p in cmd.params:
            if flag in p.opts:
                said[name] = (p.help, repr(p.default))
    assert len(said) >= 2 and len(set(said.values())) == 1, said


PROFILE = SmtpSettings.from_dict({"host": "smtp.example.org", "port": 587, "security": "starttls",
                                  "user": "ann@example.org", "from_addr": "ann@example.org"})


def test_smtp_options_over_the_profile() -> None:
    # a login or address given: the profile's server with that change
    s = Smtp(user="other").settings(PROFILE)
    assert (s.host, s.port, s.security, s.user, s.from_addr) == ("smtp.example.org", 587, "starttls", "other",
                                                                 "ann@example.org")
    # another server takes nothing from the profile but the from-address
    s = Smtp(server="127.0.0.1", port=2525, security="none").settings(PROFILE)
    assert (s.host, s.port, s.security, s.user, s.from_addr) == ("127.0.0.1", 2525, "none", None, "ann@example.org")
    # no profile: the options alone, which need a server and an address
    s = Smtp(server="mx.example.org", sender="bob@example.org").settings(None)
    assert (s.host, s.port, s.user, s.from_addr) == ("mx.example.org", 587, None, "bob@example.org")
    with pytest.raises(UsageError, match="--smtp-server"):
        Smtp(sender="bob@example.org").settings(None)

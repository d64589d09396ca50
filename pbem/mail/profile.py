"""A person's mail settings, kept once in their key home (HOME/mail/profile.json).

SMTP (server, port, security, user, from-address) and the IMAP URL, plus how to get the
passwords: the name of a command that prints them, never a password itself; and a CA file
to trust for both servers besides the system's (a club's or school's own CA). The file
refuses a password field on reading and writing. `pbem mail setup` writes it; mail-join,
mail-move, turn, bot run and host run read it when their own options are not given.

The host's address of each joined game is kept beside it (HOME/mail/hosts.json), learnt
from the invitation (the address its host signed into it, never a mail's headers), so a
player answers with just `pbem mail-move GAME "MOVE"`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pbem.atomic import write_atomic
from pbem.errors import UsageError
from pbem.mail.imap import ImapUrl
from pbem.mail.message import SmtpSettings
from pbem.names import check_game_id
from pbem.seat.home import mail_hosts_path, mail_profile_path
from pbem.ui.words import t

_SECRET_WORDS = ("password", "token", "secret")


def _setup_again() -> str:
    return t("write it again with 'pbem mail setup'")


def _no_secrets(d: dict[str, Any], where: str) -> None:
    for key, value in d.items():
        if any(w in key.lower() for w in _SECRET_WORDS) and not key.endswith("_command"):
            raise UsageError(t("{where} holds a {key}: passwords are never stored", where=where, key=repr(key)),
                             hint=t("remove it; give a --password-command, $PBEM_SMTP_PASSWORD or answer the prompt"))
        if isinstance(value, dict):
            _no_secrets(value, where)


@dataclass(frozen=True)
class MailProfile:
    smtp: SmtpSettings | None = None
    imap: str | None = None  # an ImapUrl, as text
    imap_password_command: str | None = None
    smtp_password_command: str | None = None
    imap_oauth2_command: str | None = None  # prints an OAuth2 access token (XOAUTH2), instead of a password
    ca_file: str | None = None  # PEM: trusted for IMAP and SMTP besides the system's CAs
    timezone: str | None = None  # IANA name: dates are shown in it when TZ is not set (pbem.ui.when)

    def __post_init__(self) -> None:
        if self.imap is not None:
            ImapUrl.parse(self.imap)
        if self.timezone is not None:
            check_zone(self.timezone)

    def sending(self, settings: SmtpSettings | None = None) -> SmtpSettings | None:
        """`settings` (else the profile's SMTP settings) trusting the profile's CA file too."""
        settings = settings or self.smtp
        if settings is None or not self.ca_file or settings.ca_file:
            return settings
        return replace(settings, ca_file=self.ca_file)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"format": "pbem-mail-profile", "version": 1}
        if self.smtp is not None:
            d["smtp"] = self.smtp.to_dict()
        for key in ("imap", "imap_password_command", "smtp_password_command", "imap_oauth2_command", "ca_file",
                    "timezone"):
            if getattr(self, key):
                d[key] = getattr(self, key)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str | None = None) -> MailProfile:
        where = where or t("the mail profile")
        if not isinstance(d, dict) or d.get("format") != "pbem-mail-profile":
            raise UsageError(t("{where} is not a pbem mail profile", where=where), hint=_setup_again())
        _no_secrets(d, where)
        smtp = SmtpSettings.from_dict(d["smtp"]) if d.get("smtp") else None
        return cls(smtp, d.get("imap"), d.get("imap_password_command"), d.get("smtp_password_command"),
                   d.get("imap_oauth2_command"), d.get("ca_file"), d.get("timezone"))

    def describe(self) -> list[str]:
        out = []
        if self.smtp:
            out.append(self.smtp.in_words())
        if self.imap:
            out.append(f"IMAP: {ImapUrl.parse(self.imap)}")
        for what, cmd in ((t("IMAP password"), self.imap_password_command),
                          (t("SMTP password"), self.smtp_password_command),
                          (t("IMAP OAuth2 token"), self.imap_oauth2_command)):
            if cmd:
                out.append(t("{what} from: {command}", what=what, command=cmd))
        if self.ca_file:
            out.append(t("trusted CA file: {path}", path=self.ca_file))
        if self.timezone:
            out.append(t("time zone: {zone} (when TZ is not set)", zone=self.timezone))
        return out or [t("no mail settings")]


def check_zone(name: object) -> str:
    """An IANA time zone name the system knows (Europe/Berlin), else UsageError."""
    from pbem.ui.zone import zone_named

    try:
        if not isinstance(name, str) or not name or len(name) > 64:
            raise ValueError(name)
        zone_named(name)
    except ValueError:
        raise UsageError(t("unknown time zone {zone}", zone=repr(str(name)[:64])),
                         hint=t("an IANA name such as Europe/Berlin, America/New_York, Asia/Shanghai or UTC")) from None
    return name


def load_profile(home: Path) -> MailProfile | None:
    path = mail_profile_path(home)
    if not path.exists():
        return None
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(t("cannot read {path}: {error}", path=path, error=exc), hint=_setup_again()) from None
    return MailProfile.from_dict(d, str(path))


def ca_file_of(home: Path, given: str | None = None) -> str | None:
    """The CA file to trust for mail: `given` (--ca-file), else the mail profile's."""
    if given:
        return given
    profile = load_profile(home)
    return profile.ca_file if profile else None


def save_profile(home: Path, profile: MailProfile) -> Path:
    path = mail_profile_path(home)
    d = profile.to_dict()
    _no_secrets(d, str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(d, indent=2, sort_keys=True) + "\n").encode(), mode=0o600)
    return path


# --- the host's address of each game ------------------------------------------------------------


def host_addresses(home: Path) -> dict[str, str]:
    path = mail_hosts_path(home)
    if not path.exists():
        return {}
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in d.items()} if isinstance(d, dict) else {}


def remember_host_address(home: Path, game: str, address: str | None) -> None:
    """Keep the address a game's invitation names for its host (signed by the host: no header
    of whoever passed the invitation on counts; an address kept before from a header gives way)."""
    known = host_addresses(home)
    if address is None or known.get(check_game_id(game)) == address:
        return
    known[game] = address
    path = mail_hosts_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(known, indent=2, sort_keys=True) + "\n").encode(), mode=0o600)


def host_address(home: Path, game: str, given: str | None) -> str:
    if given:
        return given
    found = host_addresses(home).get(game)
    if found is None:
        raise UsageError(t("no host address known for game {game}", game=game),
                         hint=t("pass --to HOST-ADDRESS ('pbem inbox' learns it from the invitation, when its host "
                                "signed an address into it)"))
    return found

"""Delivering mail: SMTP settings and password, and the courier that sends a message or
writes it as an .eml file."""

from __future__ import annotations

from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbem.errors import UsageError
from pbem.mail.message import SmtpSettings, send, write_eml
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.host.settings import Settings, SmtpSetting

ENV_SMTP_PASSWORD = "PBEM_SMTP_PASSWORD"


def smtp_settings(config: Settings) -> SmtpSettings | None:
    """The game's SMTP settings ('pbem game smtp'), checked; None: none stored."""
    import msgspec

    return SmtpSettings.from_dict(msgspec.to_builtins(config.smtp)) if config.smtp else None


def keep_smtp(settings: SmtpSettings) -> SmtpSetting:
    """SMTP settings as the game keeps them ('pbem game smtp --server ...')."""
    import msgspec

    from pbem.host.settings import SmtpSetting

    return msgspec.convert(settings.to_dict(), SmtpSetting)


def smtp_password(settings: SmtpSettings | None, *, prompt: bool = True, command: str | None = None) -> str | None:
    """From `command`, else $PBEM_SMTP_PASSWORD, else a prompt on a terminal; None when no login is needed."""
    from pbem.mail.secrets import obtain

    if settings is None or not settings.user:
        return None
    return obtain(t("SMTP password"), env=ENV_SMTP_PASSWORD, command=command,
                  prompt=t("SMTP password for {who}: ", who=f"{settings.user}@{settings.host}") if prompt else None)


@dataclass
class Courier:
    """Delivers messages: over SMTP (settings + password) or as .eml files into a folder."""

    settings: SmtpSettings | None = None
    password: str | None = None
    to_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.settings is None and self.to_dir is None:
            raise UsageError(t("nowhere to deliver mail"), hint=t("pass --to-dir DIR, or --send with SMTP settings"))

    def deliver(self, msg: EmailMessage) -> str:
        if self.settings is not None:
            send(msg, self.settings, self.password)
            return t("sent to {address}", address=msg["To"])
        assert self.to_dir is not None
        return t("wrote {path}", path=write_eml(msg, self.to_dir))


def player_settings(server: str | None, port: int | None, security: str, user: str | None,
                    sender: str | None) -> SmtpSettings:
    if not server:
        raise UsageError(t("--send needs --smtp-server"), hint=t("or write the mail with --to-dir DIR"))
    if not sender:
        raise UsageError(t("--send needs --from ADDRESS"))
    d: dict[str, Any] = {"host": server, "security": security, "user": user, "from_addr": sender}
    if port:
        d["port"] = port
    return SmtpSettings.from_dict(d)

"""Where a host's or a player's mail comes from and goes to, from options and the mail profile.

One place for the choice every mail command and the club host make: files (.eml, Maildir,
mbox) or an IMAP folder to read; SMTP (the game's settings, else the key home's mail
profile) or .eml files to write.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pbem.errors import UsageError
from pbem.mail.courier import Courier, smtp_password, smtp_settings
from pbem.mail.memory import MailSource
from pbem.mail.message import SmtpSettings
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.host.settings import Settings
    from pbem.mail.imap import Credential
    from pbem.watch import Watch

Credentials = Callable[[], "Credential"]


def mail_source(paths: list[Path], imap: str | None, password_command: str | None, oauth2_command: str | None,
                no_idle: bool, *, remember: Path | None = None, log=lambda line: None,
                ca_file: str | None = None, by_content: bool = True,
                credential: Credentials | None = None) -> MailSource:
    """Files (.eml, Maildir, mbox) or an IMAP folder; with `remember` (a key home), only new mail
    (`by_content`: also what was read before from another place: pbem.mail.memory.Remembering).
    `credential`: how to log in (else from the two commands or the prompt)."""
    from pbem.mail.imap import ImapFolder, ImapUrl, credential_source
    from pbem.mail.incoming import MailScanner
    from pbem.mail.memory import InboxMemory, Remembering

    if imap and paths:
        raise UsageError(t("read mail files or --imap URL, not both"))
    source: ImapFolder | MailScanner
    if imap:
        url = ImapUrl.parse(imap)
        login = credential or credential_source(password_command=password_command, oauth2_command=oauth2_command,
                                                url=url)
        source = ImapFolder(url, login, idle=not no_idle, log=log, ca_file=ca_file)
    elif paths:
        source = MailScanner(list(paths))
    else:
        raise UsageError(t("no mail to read"), hint=t("pass a Maildir, mbox or .eml file, or {example}",
                                                       example="--imap imaps://USER@HOST/INBOX"))
    if remember is None:
        return source
    return Remembering(source, InboxMemory.of_home(remember), by_content=by_content)


def mail_watch(paths: list[Path], imap: str | None, credential: Credentials | None, *,
               ca_file: str | None = None) -> Watch:
    """Waiting for new mail where `mail_source` reads it: IDLE on an IMAP folder (a connection
    of its own; `credential` logs in), or the Maildir, mbox or folder of .eml files watched
    (pbem.watch; a file: the folder it is in)."""
    from pbem.mail.imap import ImapFolder, ImapUrl, ImapWatch
    from pbem.watch import Doorbell

    if imap:
        assert credential is not None
        return ImapWatch(ImapFolder(ImapUrl.parse(imap), credential, ca_file=ca_file))
    return Doorbell((p.parent if p.is_file() else p for p in paths), subfolders=True, safety=True).arm()


def courier(send: bool, to_dir: Path | None, settings: SmtpSettings | None, default_dir: Path | None = None) -> Courier:
    if send:
        if settings is None:
            raise UsageError(t("--send needs SMTP settings"), hint=t("set them with: {command}",
                                                                     command="pbem game smtp GAME --server ... --from ..."))
        return Courier(settings=settings, password=smtp_password(settings))
    return Courier(to_dir=to_dir or default_dir)


def host_courier(config: Settings, send: bool, to_dir: Path | None, home: Path, default_dir: Path) -> Courier:
    """The game's SMTP settings ('pbem game smtp'), else the host's mail profile (which sends
    without --send, unless --to-dir asks for .eml files)."""
    from pbem.mail.profile import load_profile

    settings = smtp_settings(config)
    profile = load_profile(home)
    if settings is None and profile and profile.smtp and to_dir is None:
        mine = profile.sending()
        return Courier(settings=mine, password=smtp_password(mine, command=profile.smtp_password_command))
    return courier(send, to_dir, profile.sending(settings) if profile else settings, default_dir)

"""A new game (`pbem game new`; docs/hosting.md): its seats' mail addresses and deadline rules
checked, the game created in the host's store (a trustless game too, kept there for its blind
host), and its signed invitation written for the players. `new_game` returns
a `NewGame`; the command says where everything went.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbem.atomic import write_atomic
from pbem.errors import UsageError
from pbem.host.paths import out_dir, store_url
from pbem.names import HOST, check_game_name
from pbem.ui import words
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.host.settings import WebhookSetting
    from pbem.protocol.crypto import Identity, PublicKey
    from pbem.protocol.documents import Invitation, Signed


@dataclass(frozen=True)
class NewGame:
    game: str
    url: str  # the store that keeps it
    invitation: Path  # the file written
    seats: list[str]
    mailed: list[str] = field(default_factory=list)  # the seats with a mail address, in seat order


def parse_emails(given: list[str]) -> dict[str, str]:
    """NAME=ADDRESS pairs (`--email`), by lower-case name."""
    emails = {}
    for e in given:
        n, sep, addr = e.partition("=")
        if not sep or "@" not in addr:
            raise UsageError(t("bad --email {text}", text=repr(e)), hint=t("write NAME=user@example.org"))
        emails[n.lower()] = addr
    return emails


def new_game(game: str, host: Identity, seats: list[tuple[str, PublicKey]], *, ruleset: str = "classic",
             options: list[str] | None = None, emails: dict[str, str] | None = None,
             timing: dict[str, Any] | None = None, absent_after: int | None = None, bot_turns: int | None = None,
             host_mail: str | None = None, trustless: bool = False, threshold: int | None = None, store: str | None = None,
             db: Path | None = None, output: Path | None = None, webhook: WebhookSetting | None = None) -> NewGame:
    """Create game `game`, hosted by `host`, with `seats` in seat order and deadline rules `timing`
    (a Timing's config, or None; `absent_after` and `bot_turns` as the host gave them, which a
    trustless game refuses) and `webhook` (pbem.host.webhooks.setting), in the chosen store; write its invitation to `output` (default:
    GAME/out/invitation.pbem beside the store)."""
    from pbem.host.creation import create_game

    check_game_name(game)
    emails = emails or {}
    url = store_url(store, db, game)
    if trustless and webhook:
        raise UsageError(t("a trustless game has no webhook"), hint=t("its host is blind: it sends no notices"))
    if trustless:
        invitation = _trustless(url, game, host, seats, ruleset, list(options or ()), emails, timing,
                                (absent_after, bot_turns), host_mail, threshold)
    elif threshold is not None:
        raise UsageError(t("--threshold needs --trustless"))
    else:
        invitation = create_game(url, game, host, ruleset, seats, list(options or ()), emails, timing,
                                 host_mail=host_mail, webhook=webhook)
    target = output or out_dir(game, url) / "invitation.pbem"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, invitation.armored().encode())
    names = [n for n, _ in seats]
    return NewGame(invitation.game, url, target, names, [n for n in names if n in emails])


def _trustless(url: str, game: str, host: Identity, seats: list[tuple[str, PublicKey]], ruleset: str,
               options: list[str], emails: dict[str, str], timing: dict[str, Any] | None,
               seat_rules: tuple[int | None, int | None], host_mail: str | None, threshold: int | None = None) -> Signed[Invitation]:
    """A trustless game in the store at `url`, as any game, with its seats' addresses and deadline
    rules, everything it refuses refused before anything is written."""
    from pbem.host import blind
    from pbem.host.deadlines import Timing

    names = [n for n, _ in seats]
    stray = [n for n in emails if n not in names and n != HOST]
    if stray:
        raise UsageError(t("no seat {name} in game {game}", name=repr(stray[0]), game=game),
                         hint=t("seats: {list}", list=words.listing(names)) + t("; or 'host'"))
    if timing:
        blind.check_no_seat_rules(*seat_rules)
    return blind.create_game(url, game, host, ruleset, seats, options, host_mail=host_mail, threshold=threshold,
                             emails=emails, timing=Timing.from_dict(timing) if timing else None)

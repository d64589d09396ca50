"""Deadlines and seats changing hands (docs/playing.md, "Deadlines and absent players").

Host: `game config` (deadline rules), `game pause` / `game resume`, `game reseat`.
Players: `away`, `resign`, `handover` (a signed request or handover, into the game folder's
inbox or written to a file for the host).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from pbem.cli._common import (
    GameArg,
    JsonOpt,
    KeyOptions,
    OutOpt,
    StoreOptions,
    first_time,
    game_app,
    host_out_dir,
    write_packets,
)
from pbem.cli._game_options import TimingOptions, WebhookOptions
from pbem.cli._grouped import grouped
from pbem.cli._mail_options import Reply, Smtp
from pbem.cli.jsonout import json_text
from pbem.errors import UsageError
from pbem.seat.home import key_home
from pbem.ui import words
from pbem.ui.words import kind_name, t

if TYPE_CHECKING:
    from pbem.host.interface import GameHost
    from pbem.host.referee import Host

H = TypeVar("H", bound="GameHost")

TargetArg = Annotated[str, typer.Argument(help="The shared game folder, a packet file of the game, or the id of a "
                                                "game joined by mail (then the request is mailed to the host).")]
def timing_words(timing: dict[str, Any] | None, *, trustless: bool = False) -> str:
    """The deadline rules in words (a trustless game's blind host only reminds and says who is
    late: it marks nobody absent, so that rule is not said)."""
    from pbem.host.deadlines import DAY_NAMES, DEFAULT_MAX_AWAY
    from pbem.protocol.timeout import TAKEOVER_TURNS
    from pbem.ui.words import span

    if not timing or not timing.get("deadline"):
        return t("no deadlines (the game waits for every move)")
    said = t("deadline {span} per packet", span=span(timing["deadline"]))
    if timing.get("days") and len(timing["days"]) < 7:
        said += t(" (counting {days})", days=",".join(DAY_NAMES[d] for d in timing["days"]))
    if timing.get("grace"):
        said += t(", then {span} of grace", span=span(timing["grace"]))
    reminders = words.listing(timing.get("reminders") or []) or t("none")
    policy = timing.get("on_timeout", "wait")
    if trustless:
        return said + t("; on timeout: {policy}; reminders: {reminders}", policy=policy, reminders=reminders)
    if policy == "bot":  # the search bot's budget a move, which every packet names
        policy = t("bot ({n} simulated turn a move)", n=timing.get("bot_turns", TAKEOVER_TURNS))
    said += t("; on timeout: {policy}; absent after {n} missed; reminders: {reminders}",
              policy=policy, n=timing.get("absent_after", 2), reminders=reminders)
    return said + t("; away at most {span}", span=span(timing.get("max_away", DEFAULT_MAX_AWAY)))


def _host(game: str, store: StoreOptions, keys: KeyOptions) -> GameHost:
    """The game's host, unlocked with the host's key (or the key --as names, which must be it)."""
    return _unlocked(store.host(game), keys)


def _classic_host(game: str, store: StoreOptions, keys: KeyOptions, command: str) -> Host:
    """The referee of a classic game, unlocked as `_host`; a trustless game's blind host is
    refused the command, before any key is asked for (it holds no seat's keys: docs/trustless.md §10)."""
    from pbem.host.referee import Host

    host = store.host(game)
    if not isinstance(host, Host):
        game_id = host.game_id()
        host.close()
        raise UsageError(t("game {game} is trustless: its host cannot {command}", game=game_id, command=command),
                         hint=t("a blind host holds no seat's keys; its deadlines only remind and report "
                                "(docs/trustless.md §10)"))
    return _unlocked(host, keys)


def _unlocked(host: H, keys: KeyOptions) -> H:
    try:
        host.identity = keys.identity(keys.as_name or host.host_name())
    except BaseException:
        host.close()
        raise
    return host


@grouped
def game_config(
    game: GameArg,
    timing: TimingOptions = TimingOptions(),
    webhook: WebhookOptions = WebhookOptions(),
    store: StoreOptions = StoreOptions(),
    keys: KeyOptions = KeyOptions(),
    as_json: JsonOpt = False,
) -> None:
    """Host: show or change the deadline rules (`--deadline none` turns them off) and the
    webhook (`--webhook none` removes it).

    A change applies from the next packet. The packet waiting now keeps what its deadline names
    (policy, bot budget, due time and grace); its clock restarts, never to before that due time.
    """
    host = _host(game, store, keys)
    hook_said = None
    try:
        trustless = host.status()["trustless"]
        if trustless:
            from pbem.host.blind import check_no_seat_rules

            check_no_seat_rules(timing.absent_after, timing.bot_turns)
        hook = webhook.setting(host.settings().webhook)
        if hook is not False:
            if trustless:
                raise UsageError(t("a trustless game has no webhook"), hint=t("its host is blind: it sends no notices"))
            host.set_settings(webhook=hook)
            hook_said = (t("webhook: {url} ({format})", url=hook.url, format=hook.format) if hook
                         else t("webhook removed"))
        waiting, status = host.head()
        rules = host.set_timing(timing.timing(host.settings().timing)) if timing.given() else host.settings().timing
        now = rules.shown(trustless=trustless) if rules is not None else None
        published = host.head()[0] if timing.given() and not trustless and status == "playing" else None
    finally:
        host.close()
    if hook_said and not as_json:
        typer.echo(hook_said)
    typer.echo(json_text(now) if as_json else timing_words(now, trustless=trustless))
    if published is not None and not as_json:  # what became of the packet waiting (renewed: timekeeper.renew)
        typer.echo(t("packet {seq} published: it names the deadline packet {waiting} did not", seq=published,
                     waiting=waiting) if published > waiting else
                   t("the packet waiting now (packet {seq}) keeps its deadline as published; these rules apply from "
                     "the next packet", seq=waiting))


@grouped
def game_pause(game: GameArg, store: StoreOptions = StoreOptions(), keys: KeyOptions = KeyOptions()) -> None:
    """Host: pause the game; deadlines stop counting until 'pbem game resume'."""
    with _classic_host(game, store, keys, t("pause a game")) as host:
        typer.echo(words.render(host.pause().message))


@grouped
def game_resume(game: GameArg, store: StoreOptions = StoreOptions(), keys: KeyOptions = KeyOptions()) -> None:
    """Host: resume a paused game; the time that was left is left again."""
    with _classic_host(game, store, keys, t("resume a game")) as host:
        typer.echo(words.render(host.resume().message))


def _public_key(text: str, home: Path | None):
    from pbem.protocol.crypto import PublicKey
    from pbem.seat import keys

    return PublicKey.decode(text) if text.startswith("pbem1") else keys.load_public(key_home(home), text)


@grouped
def game_reseat(
    game: GameArg,
    seat: Annotated[str, typer.Argument(help="The seat to hand over.")],
    key: Annotated[str, typer.Option("--key", help="The new player's public key line (pbem1...).")],
    store: StoreOptions = StoreOptions(),
    out: Annotated[Path | None, typer.Option("--out", help="Where packets go (default GAME/out/ beside the store).")] = None,
    keys: KeyOptions = KeyOptions(),
) -> None:
    """Host: give SEAT to a new player's key, mid-game.

    The signed handover goes into the next packet (written now): from it on, the seat's hand
    is sealed to the new key, and moves signed by the old key are refused.
    """
    with _classic_host(game, store, keys, t("hand a seat to a new key")) as host:
        document = host.reseat_document(seat.lower(), _public_key(key, keys.home))
        typer.echo(words.render(host.accept(document).message))
        write_packets(host, out or host_out_dir(host))


# --- players ---------------------------------------------------------------------------------


def _submit(target: str, keys: KeyOptions, output: Path | None, reply: Reply, smtp: Smtp, make) -> None:
    """Sign a seat's request with `make(invitation, seat, identity)`; put it in the folder's
    inbox, write it to a file to send to the host, or (TARGET a game joined by mail) mail it
    to the host as mail-move does."""
    from pbem.atomic import write_atomic
    from pbem.cli.transport import packet_for
    from pbem.folder.play import FolderSeat, is_trustless
    from pbem.mail.player_mail import block_mail
    from pbem.mail.trustless import joined_trustless
    from pbem.protocol.documents import Request
    from pbem.seat import player

    me = keys.identity()
    where = keys.where
    folder = (Path(target) / "pbem-folder.json").exists()
    if (is_trustless(Path(target)) if folder else
            joined_trustless(where, target) or (Path(target).is_file() and packet_for(target, where).doc.waiting)):
        raise UsageError(t("a trustless game takes no away, resign or handover: nobody can answer for a seat or "
                           "take it over, as its keys are its own"),
                         hint=t("a blind host holds no seat's keys; its deadlines only remind and report "
                                "(docs/trustless.md §10)"))
    if folder:
        seat = FolderSeat.open(Path(target), me, where)
        latest = seat.latest()
        block = make(seat.invitation, seat.seat, me)
        path = seat.folder.submit_move(seat.seat, latest.doc.seq if latest else 0, block.armored().encode())
        typer.echo(t("{kind} of {seat} submitted: {path}", kind=kind_name(block.kind), seat=seat.seat, path=path))
        return
    p = Path(target)
    if not p.is_file() and (p.exists() or "/" in target):
        raise UsageError(t("{target} is neither a game folder, a packet file nor a game you joined by mail", target=target))
    sp = player.open_packet(packet_for(target, where), me, where)
    block = make(sp.invitation, sp.seat, me)
    if p.is_file():
        what = block.doc.action if isinstance(block.doc, Request) else "seat"
        path = output or Path(f"{block.kind}-{sp.seat}-{what}.pbem")
        write_atomic(path, block.armored().encode())
        typer.echo(t("{kind} file: {path} (send it to the host)", kind=kind_name(block.kind), path=path))
        return
    to = reply.host(where, sp.invitation.game)
    courier, sender = reply.courier(smtp, where, me.name)
    typer.echo(t("{kind} of {seat}: {delivered}", kind=kind_name(block.kind), seat=sp.seat,
                 delivered=courier.deliver(block_mail(block, sender=sender, to=to))))


@grouped
def away(
    target: TargetArg,
    until: Annotated[str, typer.Option("--until", help="Back on: a date (2026-12-10), a time (2026-12-10T18:00Z) "
                                                       "or a duration (3d).")],
    output: OutOpt = None,
    keys: KeyOptions = KeyOptions(),
    reply: Reply = Reply(),
    smtp: Smtp = Smtp(),
) -> None:
    """Tell the host and the table you are away: your deadlines stretch to that date."""
    from pbem.host.clock import stamp
    from pbem.host.deadlines import parse_when
    from pbem.seat import player

    when = parse_when(until, datetime.now(UTC))
    _submit(target, keys, output, reply, smtp,
            lambda inv, seat, me: player.make_request(inv, seat, me, "away", until=stamp(when)))


@grouped
def resign(target: TargetArg, output: OutOpt = None, keys: KeyOptions = KeyOptions(), reply: Reply = Reply(),
           smtp: Smtp = Smtp()) -> None:
    """Leave the game: your seat follows the game's timeout policy from now on."""
    from pbem.seat import player

    _submit(target, keys, output, reply, smtp,
            lambda inv, seat, me: player.make_request(inv, seat, me, "resign"))


@grouped
def back(target: TargetArg, output: OutOpt = None, keys: KeyOptions = KeyOptions(), reply: Reply = Reply(),
         smtp: Smtp = Smtp()) -> None:
    """Tell the host you are back: a seat marked absent is played for no more.

    From your next packet on, the host waits for your deadline again. (Any move you send
    for a packet the host already played for you says the same.)
    """
    from pbem.host.clock import stamp
    from pbem.seat import player

    now = stamp(datetime.now(UTC))
    _submit(target, keys, output, reply, smtp,
            lambda inv, seat, me: player.make_request(inv, seat, me, "back", at=now))


@grouped
def handover(
    target: TargetArg,
    key: Annotated[str, typer.Option("--key", help="The public key line (pbem1...) of whoever takes your seat.")],
    output: OutOpt = None,
    keys: KeyOptions = KeyOptions(),
    reply: Reply = Reply(),
    smtp: Smtp = Smtp(),
) -> None:
    """Hand your own seat to someone else's key (signed by your key; your key stops playing)."""
    from pbem.seat import player

    new = _public_key(key, keys.home)
    _submit(target, keys, output, reply, smtp,
            lambda inv, seat, me: player.make_handover(inv, seat, me, new))


def register(app: typer.Typer, only: str | None = None) -> None:
    """Add this module's commands to `app` and `game`: all, or only those of the word `only`."""
    if not first_time(app, "deadlines"):
        return
    if only in (None, "game") and first_time(game_app, "deadlines"):
        game_app.command("config")(game_config)
        game_app.command("pause")(game_pause)
        game_app.command("resume")(game_resume)
        game_app.command("reseat")(game_reseat)
    for fn in (away, resign, back, handover):
        if only in (None, fn.__name__):
            app.command(fn.__name__)(fn)

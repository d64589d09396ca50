"""Top-level play commands: join, apply, show, move, status, packet, demo (and `pbem games`,
from pbem.cli.games; `game new` is pbem.cli.newgame's)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pbem.atomic import write_atomic
from pbem.cli._common import (
    AsOpt,
    GameArg,
    HintsOpt,
    HomeOpt,
    JsonOpt,
    KeyOptions,
    OptGameArg,
    OutOpt,
    PassOpt,
    StoreOptions,
    argument,
    host_out_dir,
    identity_later,
    identity_named,
    write_packets,
)
from pbem.cli._grouped import grouped
from pbem.cli.jsonout import json_text
from pbem.errors import StaleMove, UsageError
from pbem.seat.home import key_home
from pbem.ui import words
from pbem.ui.words import pad, t

if TYPE_CHECKING:
    from pbem.protocol.crypto import Identity


def join(
    invitation: Annotated[Path, typer.Argument(help="The invitation file (or an email holding it).")],
    as_name: AsOpt = None,
    output: OutOpt = None,
    home: HomeOpt = None,
    passphrase_file: PassOpt = None,
) -> None:
    """Join a game: write a signed join file to send back to the host."""
    from pbem.protocol.crypto import PublicKey
    from pbem.protocol.documents import read_one
    from pbem.seat import player

    inv = read_one(invitation, "invitation")
    me = identity_named(home, as_name, passphrase_file)
    signed = player.join(inv, me, key_home(home))
    target = output or Path(f"join-{signed.doc.seat}-{inv.game}.pbem")
    write_atomic(target, signed.armored().encode())
    host_fp = PublicKey.decode(inv.doc.host.key).fingerprint()
    typer.echo(t("joined {game} as seat {seat}; host key fingerprint {fingerprint}", game=inv.game,
                 seat=signed.doc.seat, fingerprint=host_fp))
    typer.echo(t("join file: {path} (send it to the host)", path=target))


@grouped
def apply(
    game: GameArg,
    files: Annotated[list[Path], typer.Argument(help="Join and move files (or emails holding them).")],
    store: StoreOptions = StoreOptions(),
    out: Annotated[Path | None, typer.Option("--out", help="Where packets go (default saves/GAME/out/).")] = None,
    home: HomeOpt = None,
    passphrase_file: PassOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Host: check and apply join and move files, then write the next packet(s)."""
    with store.unlocked_host(game, home, passphrase_file) as host:
        from pbem.protocol.documents import read_file

        results = []
        failed = None
        for f in files:
            try:
                for block in read_file(f):
                    outcome = host.accept(block)
                    results.append({"file": str(f), "outcome": outcome.kind, "message": words.render(outcome.message), "seq": outcome.seq})
                    if not as_json:
                        typer.echo(words.render(outcome.message))
            except Exception as exc:  # report which file failed, then let the CLI print it
                exc.source = str(f)  # type: ignore[attr-defined]
                failed = (f, exc)
                break
        # A refused file changes nothing, not even the out-dir's delivery mark; packets left
        # unwritten by a crash are written by the next command that applies something.
        written = write_packets(host, out or host_out_dir(host)) if results or not failed else []
        if as_json:
            typer.echo(json_text({"results": results, "packets": [str(p) for p in written]}))
        elif written and any(r["seq"] for r in results):  # not after a refused file alone: no new packet came of it
            typer.echo(t("latest packet: {path}", path=written[-1]))
        if failed:
            raise failed[1]


def not_a_game_folder(packet: Path, command: str) -> Path:
    """`packet`, unless it is a shared game folder: that is what `pbem turn` takes, not a packet's command."""
    if packet.is_dir() and (packet / "pbem-folder.json").is_file():  # folder.layout.MANIFEST, unloaded here
        raise UsageError(t("{path} is a game folder: pbem {command} takes a packet file", path=repr(str(packet)),
                           command=command),
                         hint=t("for a game folder: pbem turn {path} --as NAME", path=packet))
    return packet


@grouped
def show(
    packet: Annotated[Path, typer.Argument(help="A packet file (or an email holding it).")],
    keys: KeyOptions = KeyOptions(),
    as_json: JsonOpt = False,
    hints: HintsOpt = False,
) -> None:
    """Open a packet with your key: the maze, your hand and role, and whose turn it is.

    With --hints, on your turn: each empty cell where a path card of your hand fits is marked
    with the card's number (above the dot as it lies, after ↻ below it turned round), and every
    card's legal targets are listed. --json lists every legal move as "legal"."""
    unlocked = keys.unlocking()  # first: what follows overlaps its scrypt
    from pbem.protocol.documents import read_one
    from pbem.seat import player

    signed = read_one(not_a_game_folder(packet, "show"), "packet")
    if not as_json:
        import pbem.seat.screen  # noqa: F401  # rich, loaded while the key is unlocked
    me = unlocked()
    if signed.doc.waiting is not None:  # a trustless table: its chain, from the packet's folder
        _show_trustless(packet, signed, me, keys.where, as_json, hints)
        return
    sp = player.open_packet(signed, me, keys.where)
    from pbem.seat import talk

    lines = talk.heard(sp, keys.where, talk.beside(packet))
    if as_json:
        typer.echo(json_text({**sp.summary(), "talk": [ln.json() for ln in lines]}))
        return
    from pbem.seat.screen import show_packet

    made = None
    if sp.my_turn and not sp.old:  # a move kept for it (or for the packet it renews): the host's turn
        from pbem.seat.answers import kept

        made = kept(sp, keys.where)
    show_packet(sp, hints=hints, talk=talk.unheard(keys.where, sp.packet.game, sp.seat, lines), answered=made is not None)
    talk.mark_heard(keys.where, sp.packet.game, sp.seat, lines)
    if made is not None:
        typer.echo(made.waiting(sp))
    elif sp.old:  # still shown (a player may look back), said as old, and the newest named
        from pbem.seat.home import packet_path

        newest = packet_path(keys.where, sp.packet.game, sp.newest_seen)
        if newest.is_file():
            typer.echo(t("newest packet seen: {path}", path=newest))
    elif sp.doc.to_move == sp.seat and sp.doc.phase != "game-over":
        typer.echo(t('your move: pbem move {packet} "MOVE" --as {name}', packet=packet, name=me.name))


def _show_trustless(packet: Path, signed: Any, me: Identity, where: Path, as_json: bool, hints: bool) -> None:
    """`pbem show` of a trustless table's packet: its chain read from the packet's folder."""
    from pbem.protocol.table_docs import CHOICES
    from pbem.seat.trustless_client import packet_file_seat
    from pbem.seat.trustless_said import summary

    c = packet_file_seat(packet, signed, me, where, _nowhere)
    if as_json:
        typer.echo(json_text(summary(c.ts)))
        return
    from pbem.seat.screen import trustless_screen
    from pbem.seat.trustless_said import news
    from pbem.ui.terminal import console

    console().print(trustless_screen(c.ts, news(c.ts, signed.doc.seq - 1), hints))  # drawn as any packet
    w = c.ts.table.waiting()
    if c.seat in w.seats and w.step in CHOICES:
        typer.echo(t('your move: pbem move {packet} "MOVE" --as {name}', packet=packet, name=me.name))
    elif c.seat in w.seats:
        typer.echo(t("the table waits for your {step}: pbem move {packet} --as {name} writes it",
                     step=words.step_name(w.step), packet=packet, name=me.name))


def _nowhere(step: str, seq: int, data: bytes) -> Path:
    """Where `pbem show`'s seat would write a block: it never asks (show sends nothing)."""
    return Path(os.devnull)


def move(
    packet: Annotated[Path, typer.Argument(help="The packet you answer.")],
    text: Annotated[str | None, argument("Your move, e.g. \"play cross at 1,0\" (see 'pbem show'). "
                                         "Left out in a trustless game: whatever else the table waits for "
                                         "from you (your shuffle, your tokens).")] = None,
    as_name: AsOpt = None,
    output: OutOpt = None,
    replace: Annotated[bool, typer.Option("--replace", help="Make this your move for the packet instead of the one "
                                          "written before (refused once pbem sent that one to the host).")] = False,
    home: HomeOpt = None,
    passphrase_file: PassOpt = None,
) -> None:
    """Write your signed move for the host (checked against your view first).

    The host takes the first move it receives for a packet, so the move file keeps your
    first move: another one is refused unless you pass --replace before you send it.

    In a trustless game the packet's folder must hold the whole chain (the packets before it);
    without MOVE it writes the block the table waits for from you instead (shuffle, deal
    tokens, goal tokens, owed tokens, your round key).

    To send it by mail instead (an .eml addressed to the host, or straight over SMTP), use
    'pbem mail-move PACKET "MOVE" --to HOST-ADDRESS [--to-dir DIR | --send ...]'.
    """
    unlocked = identity_later(home, as_name, passphrase_file)  # first: what follows overlaps its scrypt
    from pbem.protocol.documents import read_one
    from pbem.seat import answers, player

    signed = read_one(not_a_game_folder(packet, "move"), "packet")
    me = unlocked()
    where = key_home(home)
    if signed.doc.waiting is not None:
        _trustless_move(packet, signed, me, where, text, output)
        return
    if text is None:
        raise UsageError(t("give your move, e.g. {example}", example=f'pbem move {packet} "discard 1"'),
                         hint=t("'pbem show {packet}' shows your hand and the moves you can make", packet=packet))
    sp = player.open_packet(signed, me, where)
    player.refuse_stale(sp)
    target = output or Path(f"move-{sp.seat}-{sp.doc.seq:06d}.pbem")
    _, replaced = answers.write_move_file(sp, where, text, target, replace=replace, packet=packet)
    if replaced:
        typer.echo(t("replaced your move for packet {seq}: send only this file", seq=sp.doc.seq), err=True)
    typer.echo(t("move file: {path} (send it to the host)", path=target))


def _trustless_move(packet: Path, signed: Any, me: Identity, where: Path, text: str | None, output: Path | None) -> None:
    """`pbem move` at a trustless packet: the move (checked on this seat's view) or, without
    one, whatever else the table waits for from this seat, written to a file for the host."""
    from pbem.protocol.table_docs import CHOICES
    from pbem.seat.trustless_client import packet_file_seat

    def write(step: str, seq: int, data: bytes) -> Path:
        target = output or Path(f"{step}-{c.seat}-{seq:06d}.pbem")
        write_atomic(target, data)
        return target

    c = packet_file_seat(packet, signed, me, where, write)
    w = c.ts.table.waiting()
    if text is not None:
        path, _ = c.play(text)  # refused out of turn, or when the table waits for another step
    elif c.seat in w.seats and w.step in CHOICES:
        raise UsageError(t("it is your move: give it, e.g. {example}", example=f'pbem move {packet} "discard 1"'),
                         hint=t("'pbem show {packet}' shows your hand", packet=packet))
    elif (out := c.answer()) is not None:
        path, _ = out
    else:
        raise StaleMove(t("the table waits for nothing from you: it waits for the {step} step from {seats}",
                          step=words.step_name(w.step), seats=words.join(w.seats)))
    typer.echo(t("{step} file: {path} (send it to the host)", step=words.step_name(w.step), path=path))


@grouped
def status(game: OptGameArg = None, store: StoreOptions = StoreOptions(), as_json: JsonOpt = False) -> None:
    """Host: round, packet number, whose turn, and the seats."""
    st = store.status(game)
    if as_json:
        typer.echo(json_text(st))
        return
    typer.echo(t("game {game} ({ruleset}): {status}, round {round}, packet {seq}", game=st["game"],
                 ruleset=t(st["ruleset"]), status=words.game_status(st["status"]), round=st["round"], seq=st["seq"]))
    from datetime import datetime

    from pbem.ui import when  # the times and turns of a status, which the other commands here do not say

    if st["status"] != "over":  # as 'pbem games' says it; a trustless step with deadlines: its due time
        w = st["waiting"]
        line = when.game_turn(st["status"], st["to_move"], w, sum(s["joined"] for s in st["seats"]), len(st["seats"]))
        if w and "due" in w:
            from pbem.ui.words import date, left

            line += t("clause sep") + t("due {when} ({left})", when=date(w["due"]), left=left(w["due"], datetime.now(UTC)))
        typer.echo(line)

    d = st["deadline"]
    gone = st["absent"] if st.get("trustless") else []  # a blind host plays for nobody: the others stand in
    for line in when.table_lines(None, datetime.now(UTC), paused=st["paused"], away=st["away"],
                            absent=[] if gone else st["absent"], deadline=(d["seat"], d["due"]) if d else None):
        typer.echo(line)
    if gone:
        typer.echo(t("gone (the other seats stand in for them; their turns are face-down discards): {list}",
                     list=words.join(sorted(gone))))
    for seat in st["seats"]:
        joined = t("joined") if seat["joined"] else t("not joined")
        gold = st["gold"].get(seat["name"], 0)
        typer.echo("  " + t("{name} {joined} gold {gold} last activity {when}", name=f"{seat['name']:<12}",
                            joined=pad(joined, 10), gold=f"{gold:<3}", when=when.ago(seat["last_activity"])))


@grouped
def packet(
    game: GameArg,
    store: StoreOptions = StoreOptions(),
    output: OutOpt = None,
    seq: Annotated[int | None, typer.Option("--seq", help="Re-issue this packet instead of the latest.")] = None,
) -> None:
    """Host: write the latest packet again (e.g. for a player who lost it)."""
    if output is None and sys.stdout.isatty():  # hundreds of lines of armour are for a file, not for eyes
        raise UsageError(t("a packet is long armour, not for the terminal: pass -o FILE"),
                         hint=t("e.g. {example}, or pipe it: {pipe}", example=f"pbem packet {game} -o packet.pbem",
                                pipe=f"pbem packet {game} > packet.pbem"))
    with store.host(game) as host:
        latest, _ = host.head()
        if latest == 0:
            typer.echo(host.invitation(), nl=False) if output is None else write_atomic(output, host.invitation().encode())
            return
        chosen = latest if seq is None else seq
        armored = host.packet(chosen)
        if armored is None:
            raise UsageError(t("no packet {seq}; packets run 1..{last}", seq=seq, last=latest))
        if output is None:
            sys.stdout.write(armored)
        else:
            write_atomic(output, armored.encode())
            typer.echo(t("packet {seq}: {path}", seq=chosen, path=output))


def demo(
    ruleset: Annotated[str, typer.Option("--ruleset", help="classic or expansion.")] = "classic",
    workdir: Annotated[Path | None, typer.Option("--dir", help="Keep the files here (default: a temp folder).")] = None,
    bot: Annotated[str, typer.Option("--bot", help="smart, search or random bots.")] = "smart",
    trustless: Annotated[bool, typer.Option("--trustless", help="The seats shuffle and deal among themselves; "
                                            "the host holds no secret (docs/trustless.md).")] = False,
    seats: Annotated[int, typer.Option("--seats", help="How many bot seats: classic 3-10, expansion 2-12.")] = 5,
) -> None:
    """Play a whole game: an automatic host and bot seats (5, or --seats), as separate processes, over a shared folder."""
    from pbem.auto.demo import demo_seats, run_demo
    from pbem.ui.terminal import console, unshown

    run_demo(console(file=unshown(sys.stdout)), seats=demo_seats(ruleset, seats), ruleset=ruleset, workdir=workdir,
             bot=bot, trustless=trustless)


def register(app: typer.Typer, only: str | None = None) -> None:
    """Add this module's commands and groups to `app`: all, or only the one called `only` (a
    command line converts only the command it runs)."""
    commands: tuple[tuple[str, Callable[..., None] | None], ...] = (
        ("join", join), ("apply", apply), ("show", show), ("move", move), ("status", status), ("packet", packet),
        ("games", None), ("demo", demo))  # `pbem games`: a module of its own, loaded for a command line that runs it
    for name, fn in commands:
        if only in (None, name):
            if fn is None:
                from pbem.cli.games import games

                fn = games
            app.command(name)(fn)

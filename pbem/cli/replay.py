"""`pbem replay`, `pbem audit`, `pbem archive`: finished rounds, replayed and checked (docs/replay.md)."""

from __future__ import annotations

import sys
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pbem.cli._common import HomeOpt, JsonOpt, PassOpt, argument, identity_named, optional
from pbem.cli.jsonout import json_text
from pbem.errors import Text, UsageError
from pbem.ui import words
from pbem.ui.terminal import printable
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.replay.report import Report

SourceArg = Annotated[str | None, argument(
    "A game name under saves/, a .db file, an archive or packet file, or a folder of received files.")]
DbOpt = Annotated[Path | None, optional("--db", help="The host's store file (instead of SOURCE).")]
RoundOpt = Annotated[int | None, optional("--round", "-r", help="Round number (default: the latest finished round).")]
GameOpt = Annotated[str | None, optional("--game", help="Which game, when the folder holds several.")]


# --- pbem archive ----------------------------------------------------------------------------


def archive(
    game: Annotated[str, argument("The game's name (as given to 'pbem game new').")],
    round_no: RoundOpt = None,
    output: Annotated[Path | None, optional("-o", "--output", help="Write the archive here (default: stdout).")] = None,
    store: Annotated[str | None, optional("--store", help="The host's store (a SQLite file or a URL).")] = None,
    db: DbOpt = None,
) -> None:
    """Host: write a finished round's signed archive (no key needed)."""
    from pbem.cli._common import open_host
    from pbem.replay.sources import NotReplayable, ended_hint

    with open_host(game, store, db) as host:
        archives = host.archives()
        status = host.status()
    if status["trustless"]:
        raise NotReplayable(t("game {game} is trustless: its rounds have no archive, they are audited and replayed "
                              "from the chain", game=status["game"]),
                            hint=t("pbem replay {game} --round N, or pbem audit {game}", game=status["name"]))
    if round_no is None:
        if not archives:
            raise NotReplayable(t("no round of game {game} has ended yet", game=status["game"]), hint=ended_hint())
        round_no = max(archives)
    if round_no not in archives:
        if 1 <= round_no <= status["round"]:
            why = t("round {round} of game {game} has not ended yet: it has no archive", round=round_no,
                    game=status["game"])
        else:
            why = t("round {round} of game {game} has not been played: it has no archive", round=round_no,
                    game=status["game"])
        raise NotReplayable(why, hint=ended_hint())
    if output is None:
        sys.stdout.write(archives[round_no])
        return
    from pbem.atomic import write_atomic

    write_atomic(output, archives[round_no].encode())
    typer.echo(t("archive of round {round} of game {game}: {path}", round=round_no, game=status["game"], path=output))


# --- pbem replay -----------------------------------------------------------------------------


def replay(
    source: SourceArg = None,
    round_no: RoundOpt = None,
    to: Annotated[int | None, optional("--to", help="Print the position after move N (0: the deal).")] = None,
    all_moves: Annotated[bool, typer.Option("--all", help="Print every move, with the maze where it changed.")] = False,
    as_seat: Annotated[str, typer.Option("--as", help="Perspective: 'all' (every card open) or a seat name.")] = "all",
    html: Annotated[Path | None, optional("--html", help="Write the round as one self-contained HTML page.")] = None,
    as_json: JsonOpt = False,
    db: DbOpt = None,
    game: GameOpt = None,
    home: HomeOpt = None,
    passphrase_file: PassOpt = None,
) -> None:
    """Replay a finished round: step through it in a terminal, print it, or export it as a web page.

    The table talk said during the round is shown between the moves; with --as SEAT, when your key
    home holds that seat's key (named SEAT), also the whispers sealed to it."""
    from pbem.replay.load import load_replay
    from pbem.replay.navigator import Navigator, console, frame, print_all

    if sum([to is not None, all_moves, html is not None]) > 1:
        raise UsageError(t("choose one of --to, --all and --html"))
    from pbem.seat.home import key_home

    r = load_replay(source, db=db, round_no=round_no, game=game, reader=_reader(as_seat, home, passphrase_file),
                    home=key_home(home))
    who = r.perspective(as_seat)
    if html is not None:
        from pbem.replay.html import write_html
        from pbem.replay.sources import ALL

        only = None if who == ALL else who  # --as SEAT: that seat's view alone, nothing else in the page
        size = write_html(r, html, only)
        typer.echo(t("wrote {path}: round {round} of game {game}, {frames} frames ({moves} moves and the deal) "
                     "{views}, {size} bytes", path=html, round=r.round, game=r.game, frames=len(r) + 1,
                     moves=len(r), size=size, views=t("as {seat} saw it then", seat=who) if only
                     else t("for each of {n} perspectives", n=len(r.perspectives))))
        if len(r):
            typer.echo(t("each move has a link of its own: {example} opens the page at move {n}",
                         example=f"{html.name}#r{r.round}-m{len(r)}", n=len(r)))
        return
    if to is not None:
        r.state(to)  # checks the number
        if as_json:
            typer.echo(json_text(r.to_json(to, who)))
        else:
            console().print(frame(r, to, who))
        return
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if all_moves or as_json or not interactive:
        if as_json:
            typer.echo(json_text(r.all_json(who)))
        else:
            print_all(r, who)
        return
    Navigator(r, who).run()


def _reader(as_seat: str, home: Path | None, passphrase_file: Path | None) -> tuple[str, Any] | None:
    """The seat of --as and its key, when the key home holds a key of that name: it opens the
    whispers sealed to that seat (None: only the public talk is shown)."""
    from pbem.names import check_identity_name
    from pbem.seat.home import key_home, key_path

    seat = as_seat.lower()
    try:
        check_identity_name(seat)
    except UsageError:
        return None
    if seat == "all" or not key_path(key_home(home), seat).is_file():
        return None
    return seat, identity_named(home, seat, passphrase_file)


# --- pbem audit ------------------------------------------------------------------------------


def audit(
    source: SourceArg = None,
    round_no: RoundOpt = None,
    as_json: JsonOpt = False,
    db: DbOpt = None,
    game: GameOpt = None,
    invitation: Annotated[Path | None, optional(
        "--invitation", help="The invitation to trust (default: the one you joined, from your key home).")] = None,
    as_name: Annotated[str | None, optional(
        "--as", help="Your key: also open every part sealed to your seat and check it.")] = None,
    home: HomeOpt = None,
    passphrase_file: PassOpt = None,
) -> None:
    """Check finished rounds: signatures, packet chain, secret, deal, move commitments, every move, and what
    every packet told the table (with --as, what it told you)."""
    from pbem.replay.audit import audit_source
    from pbem.replay.report import AuditFailed, said_json
    from pbem.replay.sources import NotReplayable, ended_hint, open_source, pick_game, pick_round
    from pbem.replay.trust import Trust, anchor_for, auditor_seat
    from pbem.seat.home import key_home

    src = open_source(source, db, rounds=None if round_no is None else [round_no])
    g = pick_game(src, game)
    if src.trustless(g):  # no archives: the chain itself is audited (docs/trustless.md)
        from pbem.replay import trustless

        anchor, _ = anchor_for(g, key_home(home), invitation, src)
        _audit_chain(trustless.audit_chain(src, g, anchor), round_no, as_json, anchored=anchor is not None)
        return
    rounds = [pick_round(src, g, round_no)] if round_no is not None else src.archived(g)
    if not rounds:
        raise NotReplayable(t("no round of game {game} has ended yet in {source}: there is nothing to audit", game=g,
                              source=src.label), hint=ended_hint())
    anchor, origin = anchor_for(g, key_home(home), invitation, src)
    seat = None
    if as_name is not None:
        if anchor is None:
            raise UsageError(t("--as needs the invitation of game {game} you joined", game=g),
                             hint=t("audit with the key home you joined from (--home), or pass --invitation FILE"))
        me = identity_named(home, as_name, passphrase_file)
        seat = (auditor_seat(src, g, anchor, me), me)
    reports = audit_source(src, g, rounds, Trust(anchor, origin, seat, key_home(home) if seat else None))
    faults = sum(len(rep.faults) for rep in reports)
    if as_json:
        out: dict[str, Any] = {"game": g, "ok": faults == 0, "anchored": anchor is not None,
                               "rounds": [rep.to_json() for rep in reports],
                               "skipped": [said_json(s) for s in src.skipped]}
        typer.echo(json_text(out))
    else:
        _print_reports(reports, src.skipped)
    if anchor is None and not as_json:  # (--json says "anchored": false)
        typer.echo(t("warning: not anchored: you did not join game {game} with this key home and gave no --invitation, "
                     "so the archive is checked only against itself (anyone can sign a consistent archive)", game=g),
                   err=True)
    if faults:
        bad = sorted({rep.round for rep in reports if not rep.ok})
        raise AuditFailed(t("audit failed", n=faults, rounds=", ".join(map(str, bad)), game=g),
                          hint=t("the faults are listed above; do not trust this round's record"))


def _print_reports(reports: list[Report], skipped: list[Text]) -> None:
    """Each round's summary, notes and faults, as lines; they quote the archive and packets,
    which anyone may have written, so only printable characters pass."""
    for what in skipped:
        typer.echo(printable(t("note: skipped {what}", what=what)), err=True)
    for rep in reports:
        if rep.ok:
            typer.echo(printable(rep.summary()))
        for note in rep.notes:
            typer.echo(printable(t("note: round {round}: {note}", round=rep.round, note=note)))
        for f in rep.faults:
            typer.echo(printable(t("FAULT round {round} {fault}", round=rep.round, fault=f.line())))


def stall_line(rep: Any) -> str:
    """Where an unfinished trustless chain stops, naming the seats it waits for (and, with
    deadlines, since when they are late: a trustless table cannot go on without them)."""
    from datetime import datetime

    from pbem.ui.words import date, left

    line = t("the chain stops at packet {seq}: the table waits for the {step} step from {seats} since packet {since}",
             seq=rep.packets, step=words.step_name(rep.step), seats=words.join(rep.waiting), since=rep.since)
    if rep.due:
        line += t("clause sep") + t("due {when} ({left})", when=date(rep.due), left=left(rep.due, datetime.now(UTC)))
    return line


def _audit_chain(rep: Any, round_no: int | None, as_json: bool, *, anchored: bool) -> None:
    """The audit of a trustless game's chain: each ended round, or the packet where it fails."""
    from pbem.replay.report import AuditFailed
    from pbem.replay.sources import NotReplayable, ended_hint

    rounds = [r for r in rep.rounds if round_no is None or r.round == round_no]
    if as_json:
        typer.echo(json_text({**rep.to_json(), "anchored": anchored, "rounds": [r.to_json() for r in rounds]}))
    else:
        for r in rounds:
            typer.echo(printable(r.line()))
        if rep.talk:
            typer.echo(t("{n} line of table talk: signatures and packets checked", n=rep.talk))
        for g in rep.gone:
            typer.echo(printable(t("{seat} declared gone at packet {seq} (late with the {step} step, due {due}): "
                                   "{count} blocks of the others carried stand-in shares, each checked against its keys; "
                                   "{discards} turns taken as face-down discards", seat=g.seat, seq=g.packet,
                                   step=words.step_name(g.step), due=g.due, count=g.stand_ins, discards=g.discards)))
        if rep.failed:
            typer.echo(printable(t("the join failed at packet {seq}: {complainer} complained of the key shares {dealer} "
                                   "dealt it; {fault} was at fault", seq=rep.failed["packet"],
                                   complainer=rep.failed["complainer"], dealer=rep.failed["dealer"],
                                   fault=rep.failed["fault"])))
        if rep.fault:
            typer.echo(printable(t("FAULT {fault}", fault=rep.fault)))
        if rep.waiting:
            typer.echo(printable(stall_line(rep)))
    if not anchored and not as_json:
        typer.echo(t("warning: not anchored: you did not join game {game} with this key home and gave no "
                     "--invitation, so the chain is checked only against the invitation among its files",
                     game=rep.game), err=True)
    if rep.fault:
        raise AuditFailed(t("audit failed at {where} of game {game}", where=words.render(rep.fault).split(":")[0], game=rep.game),
                          hint=t("the fault is listed above; do not trust this game's record from there on"))
    if not rounds and not (rep.failed and round_no is None):  # a failed join: the whole chain is checked
        raise NotReplayable(t("no round of game {game} has ended yet: there is nothing to audit", game=rep.game)
                            if round_no is None else
                            t("round {round} of game {game} has not ended", round=round_no, game=rep.game),
                            hint=ended_hint())


def register(app: typer.Typer, only: str | None = None) -> None:
    """Add this module's commands to `app`: all, or only the one called `only`."""
    for fn in (replay, audit, archive):
        if only in (None, fn.__name__):
            app.command(fn.__name__)(fn)

"""`pbem replay`, `pbem audit`, `pbem archive`: finished rounds, replayed and checked (docs/replay.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pbem.cli.keys import JsonOpt
from pbem.errors import UsageError

if TYPE_CHECKING:
    from rich.console import RenderableType

    from pbem.replay.rounds import Replay

SourceArg = Annotated[str | None, typer.Argument(
    help="A game name under saves/, a .db file, an archive or packet file, or a folder of received files.",
    show_default=False)]
DbOpt = Annotated[Path | None, typer.Option("--db", help="Game database path (instead of SOURCE).", show_default=False)]
RoundOpt = Annotated[int | None, typer.Option("--round", "-r", help="Round number (default: the latest finished round).",
                                              show_default=False)]
GameOpt = Annotated[str | None, typer.Option("--game", help="Which game, when the folder holds several.", show_default=False)]


# --- pbem archive ----------------------------------------------------------------------------


def archive(
    game: Annotated[str | None, typer.Argument(help="Game name under saves/ (or use --db).")] = None,
    round_no: RoundOpt = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write the archive here (default: stdout).",
                                                show_default=False)] = None,
    db: DbOpt = None,
) -> None:
    """Host: write a finished round's signed archive (no key needed)."""
    from pbem.host.paths import db_path
    from pbem.host.referee import Host
    from pbem.replay.rounds import ENDED_HINT, NotReplayable

    host = Host(db_path(game, db))
    try:
        archives = host.archives()
        status = host.status()
    finally:
        host.close()
    if round_no is None:
        if not archives:
            raise NotReplayable(f"no round of game {status['game']} has ended yet", hint=ENDED_HINT)
        round_no = max(archives)
    if round_no not in archives:
        why = "has not ended yet" if 1 <= round_no <= status["round"] else "has not been played"
        raise NotReplayable(f"round {round_no} of game {status['game']} {why}: it has no archive", hint=ENDED_HINT)
    if output is None:
        sys.stdout.write(archives[round_no])
        return
    from pbem.atomic import write_atomic

    write_atomic(output, archives[round_no].encode())
    typer.echo(f"archive of round {round_no} of game {status['game']}: {output}")


# --- pbem replay -----------------------------------------------------------------------------


def replay(
    source: SourceArg = None,
    round_no: RoundOpt = None,
    to: Annotated[int | None, typer.Option("--to", help="Print the position after move N (0: the deal).",
                                           show_default=False)] = None,
    all_moves: Annotated[bool, typer.Option("--all", help="Print every move, with the maze where it changed.")] = False,
    as_seat: Annotated[str, typer.Option("--as", help="Perspective: 'all' (every card open) or a seat name.")] = "all",
    html: Annotated[Path | None, typer.Option("--html", help="Write the round as one self-contained HTML page.",
                                              show_default=False)] = None,
    as_json: JsonOpt = False,
    db: DbOpt = None,
    game: GameOpt = None,
) -> None:
    """Replay a finished round: step through it in a terminal, print it, or export it as a web page."""
    from pbem.replay.rounds import load_replay

    if sum([to is not None, all_moves, html is not None]) > 1:
        raise UsageError("choose one of --to, --all and --html")
    r = load_replay(source, db=db, round_no=round_no, game=game)
    who = r.perspective(as_seat)
    if html is not None:
        from pbem.replay.html import write_html

        size = write_html(r, html)
        typer.echo(f"wrote {html}: round {r.round} of game {r.game}, {len(r) + 1} frames ({len(r)} moves and the deal) "
                   f"for each of {len(r.perspectives)} perspectives, {size} bytes")
        return
    if to is not None:
        r.state(to)  # checks the number
        if as_json:
            typer.echo(json.dumps(r.to_json(to, who), indent=2, ensure_ascii=False))
        else:
            _console().print(frame(r, to, who))
        return
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if all_moves or as_json or not interactive:
        if as_json:
            typer.echo(json.dumps(r.all_json(who), indent=2, ensure_ascii=False))
        else:
            print_all(r, who)
        return
    Navigator(r, who).run()


def _console():
    from rich.console import Console

    return Console(highlight=False)


def _perspective_line(r: Replay, i: int, who: str) -> str:
    from pbem.replay.rounds import ALL

    if who == ALL:
        return "all cards open"
    return f"as {who} saw it then" + (" (the round is over: all cards open)" if r.is_open(i, who) else "")


def frame(r: Replay, i: int, who: str) -> RenderableType:
    """Step i as `who` saw it: the maze, the hands and roles known, and the move in words."""
    from pbem.replay.rounds import ALL
    from pbem.ui.render import render_view

    header = {"replay": f"game {r.game}, round {r.round}",
              "step": f"move {i} of {len(r)}" if i else f"the deal (0 of {len(r)})",
              "perspective": _perspective_line(r, i, who)}
    last: list[str] = []
    if i:
        last = [f"{i}. {r.steps[i - 1].seat}: {r.notation(i, who)}", *r.sentences(i, who)]
    return render_view(r.view(i, who), None if who == ALL else who, last_moves=last, header=header)


def _board_key(r: Replay, i: int, who: str) -> tuple:
    v = r.view(i, who)
    cells = tuple(sorted((pos, t.card, t.rotated, t.hidden) for pos, t in v.board.cells.items()))
    return cells, tuple(map(tuple, v.knowledge.get(who, [])))


def _known_goals(r: Replay, i: int, who: str) -> dict[str, str]:
    return {f[1]: f[2] for f in r.view(i, who).knowledge.get(who, []) if f and f[0] == "map"}


def print_all(r: Replay, who: str) -> None:
    from rich.text import Text

    from pbem.ui import words
    from pbem.ui.render import render_maze

    con = _console()
    con.print(Text(f"game {r.game}, round {r.round}: {len(r)} moves; {_perspective_line(r, 0, who)}", style="bold"))
    con.print(Text("the deal", style="bold underline"))
    con.print(render_maze(r.view(0, who).board, known_goals=_known_goals(r, 0, who)))
    before = _board_key(r, 0, who)
    for n in range(1, len(r) + 1):
        step = r.steps[n - 1]
        con.print(Text(f"{n}. {step.seat}: {r.notation(n, who)}", style="bold"))
        for line in r.sentences(n, who):
            con.print(f"   {line}", highlight=False)
        now = _board_key(r, n, who)
        if now != before:
            con.print(render_maze(r.view(n, who).board, known_goals=_known_goals(r, n, who)))
            before = now
    final = r.final
    winners = words.join(list(final.winners)) if final.winners else words.t("nobody")
    paid = ", ".join(f"{p} +{g}" for p, g in final.payout.items() if g) or "-"
    con.print(Text(f"{words.t('round over')}: {words.t('winners', players=winners)}; {paid}", style="bold"))


# --- the interactive viewer ------------------------------------------------------------------

_SEQUENCES = {
    "\x1b[C": "right", "\x1b[D": "left", "\x1bOC": "right", "\x1bOD": "left",
    "\x1b[H": "home", "\x1b[F": "end", "\x1bOH": "home", "\x1bOF": "end",
    "\x1b[1~": "home", "\x1b[4~": "end", "\x1b[7~": "home", "\x1b[8~": "end",
}
_CHARS = {"\r": "enter", "\n": "enter", "\x7f": "backspace", "\x08": "backspace", "\x1b": "escape",
          "\x03": "q", "\x04": "q", " ": "right"}
HELP = "→/n next · ←/p back · g N Enter: go to move N · g g/Home first · G/End last · v perspective · q quit"


def decode_keys(data: str) -> list[str]:
    """Raw terminal input as key names ('right', 'home', 'enter', or the character itself)."""
    keys: list[str] = []
    i = 0
    while i < len(data):
        for seq, name in _SEQUENCES.items():
            if data.startswith(seq, i):
                keys.append(name)
                i += len(seq)
                break
        else:
            if data[i] == "\x1b" and i + 1 < len(data) and data[i + 1] in "[O":
                j = i + 2  # an unknown escape sequence: skip it whole
                while j < len(data) and not data[j].isalpha() and data[j] != "~":
                    j += 1
                i = j + 1
                continue
            keys.append(_CHARS.get(data[i], data[i]))
            i += 1
    return keys


class Navigator:
    """Where the viewer is (step and perspective), changed one key at a time."""

    def __init__(self, r: Replay, who: str) -> None:
        self.r = r
        self.i = 0
        self.who = who
        self.typing: str | None = None  # digits after 'g'
        self.note = ""

    def handle(self, key: str) -> bool:
        """Apply one key; False when the viewer should quit."""
        self.note = ""
        last = len(self.r)
        if self.typing is not None:
            if key.isdigit() and len(key) == 1:
                self.typing += key
            elif key == "backspace":
                self.typing = self.typing[:-1]
            elif key in ("enter", "g"):
                target = int(self.typing) if self.typing else 0
                if target > last:
                    self.note = f"no move {target}: the round has {last} moves"
                self.i = min(target, last)
                self.typing = None
            else:
                self.typing = None
                return self.handle(key) if key not in ("escape",) else True
            return True
        if key in ("right", "n"):
            self.i = min(self.i + 1, last)
        elif key in ("left", "p"):
            self.i = max(self.i - 1, 0)
        elif key == "home":
            self.i = 0
        elif key in ("end", "G"):
            self.i = last
        elif key == "g":
            self.typing = ""
        elif key.isdigit() and len(key) == 1:
            self.typing = key
        elif key == "v":
            views = self.r.perspectives
            self.who = views[(views.index(self.who) + 1) % len(views)]
        elif key in ("q", "Q"):
            return False
        return True

    def handle_line(self, line: str) -> bool:
        """The fallback without raw keys: n, p, g N (or just N), G, v, q; an empty line is n."""
        words = line.strip().split()
        if not words:
            return self.handle("n")
        if words[0] == "g" and len(words) > 1:
            words = words[1:]
        if words[0].isdigit():
            for ch in words[0]:
                self.handle(ch)
            return self.handle("enter")
        if words[0] == "g":
            self.handle("g")
            return self.handle("enter")
        return self.handle(words[0])

    def screen(self) -> RenderableType:
        from rich.console import Group
        from rich.text import Text

        status = HELP if self.typing is None else f"go to move: {self.typing}_  (Enter)"
        parts = [frame(self.r, self.i, self.who), Text(""), Text(status, style="dim")]
        if self.note:
            parts.append(Text(self.note, style="bold red"))
        return Group(*parts)

    def run(self) -> None:
        con = _console()
        try:
            import termios
            import tty

            fd = sys.stdin.fileno()
            saved = termios.tcgetattr(fd)
        except (ImportError, OSError, ValueError, AttributeError):
            self._run_lines(con)
            return
        import os

        try:
            tty.setcbreak(fd)
            going = True
            while going:
                con.clear()
                con.print(self.screen())
                data = os.read(fd, 32).decode("utf-8", errors="ignore")
                for key in decode_keys(data):
                    going = going and self.handle(key)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)

    def _run_lines(self, con) -> None:
        while True:
            con.print(self.screen())
            try:
                line = input("n/p/g N/v/q> ")
            except EOFError:
                return
            if not self.handle_line(line):
                return


# --- pbem audit ------------------------------------------------------------------------------


def audit(
    source: SourceArg = None,
    round_no: RoundOpt = None,
    as_json: JsonOpt = False,
    db: DbOpt = None,
    game: GameOpt = None,
) -> None:
    """Check finished rounds: signatures, packet chain, secret, deal, move commitments, and every move."""
    from pbem.replay.audit import AuditFailed, audit_source
    from pbem.replay.rounds import ENDED_HINT, NotReplayable, open_source, pick_game, pick_round

    src = open_source(source, db)
    g = pick_game(src, game)
    rounds = [pick_round(src, g, round_no)] if round_no is not None else src.archived(g)
    if not rounds:
        raise NotReplayable(f"no round of game {g} has ended yet in {src.label}: there is nothing to audit", hint=ENDED_HINT)
    reports = audit_source(src, g, rounds)
    faults = sum(len(rep.faults) for rep in reports)
    if as_json:
        out: dict[str, Any] = {"game": g, "ok": faults == 0, "rounds": [rep.to_json() for rep in reports],
                               "skipped": src.skipped}
        typer.echo(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        for skipped in src.skipped:
            typer.echo(f"note: skipped {skipped}", err=True)
        for rep in reports:
            if rep.ok:
                typer.echo(rep.summary())
            for note in rep.notes:
                typer.echo(f"note: round {rep.round}: {note}")
            for f in rep.faults:
                typer.echo(f"FAULT round {rep.round} {f.line()}")
    if faults:
        bad = sorted({rep.round for rep in reports if not rep.ok})
        raise AuditFailed(f"audit failed: {faults} fault{'s' if faults != 1 else ''} in round {', '.join(map(str, bad))} "
                          f"of game {g}", hint="the faults are listed above; do not trust this round's record")


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)
    app.command("audit")(audit)
    app.command("archive")(archive)

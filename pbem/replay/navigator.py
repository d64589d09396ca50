"""The terminal replay: one frame of a round as a seat saw it, every move printed, and the
interactive navigator (arrows, g N, v for perspective, q)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pbem.ui import move_words, words
from pbem.ui.words import t

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from pbem.replay.rounds import Replay


def console():
    from pbem.ui.terminal import console as new_console

    return new_console(highlight=False)


def _perspective_line(r: Replay, i: int, who: str) -> str:
    from pbem.replay.sources import ALL

    if who == ALL:
        return t("all cards open")
    if r.is_open(i, who):
        return t("as {seat} saw it then (the round is over: all cards open)", seat=who)
    return t("as {seat} saw it then", seat=who)


def frame(r: Replay, i: int, who: str) -> RenderableType:
    """Step i as `who` saw it: the maze, the hands and roles known, and the move in words."""
    from pbem.replay.sources import ALL
    from pbem.ui.seatview import render_view

    header = {t("replay"): t("game {game}, round {round}", game=r.game, round=r.round),
              t("step"): t("move {n} of {total}", n=i, total=len(r)) if i else t("the deal (0 of {total})", total=len(r)),
              t("perspective"): _perspective_line(r, i, who)}
    last: list[str] = []
    if i:
        last = [f"{i}. {r.steps[i - 1].seat}: {r.notation(i, who)}", *r.sentences(i, who)]
    last += r.said(i, who)
    return render_view(r.view(i, who), None if who == ALL else who, last_moves=last, header=header)


def _board_key(r: Replay, i: int, who: str) -> tuple:
    v = r.view(i, who)
    cells = tuple(sorted((pos, tile.card, tile.rotated, tile.hidden) for pos, tile in v.board.cells.items()))
    return cells, tuple(map(tuple, v.knowledge.get(who, [])))


def _known_goals(r: Replay, i: int, who: str) -> dict[str, str]:
    return {f[1]: f[2] for f in r.view(i, who).knowledge.get(who, []) if f and f[0] == "map"}


def print_all(r: Replay, who: str) -> None:
    from rich.text import Text

    from pbem.ui.render import render_maze

    con = console()
    con.print(Text(t("game {game}, round {round}: {n} moves; {perspective}", game=r.game, round=r.round, n=len(r),
                     perspective=_perspective_line(r, 0, who)), style="bold"))
    con.print(Text(t("the deal"), style="bold underline"))
    con.print(render_maze(r.view(0, who).board, known_goals=_known_goals(r, 0, who)))
    for line in r.said(0, who):
        con.print(Text(f"   {line}"))
    before = _board_key(r, 0, who)
    for n in range(1, len(r) + 1):
        step = r.steps[n - 1]
        con.print(Text(f"{n}. {step.seat}: {r.notation(n, who)}", style="bold"))
        for line in r.sentences(n, who):
            con.print(Text(f"   {line}"))
        for line in r.said(n, who):
            con.print(Text(f"   {line}"))
        now = _board_key(r, n, who)
        if now != before:
            con.print(render_maze(r.view(n, who).board, known_goals=_known_goals(r, n, who)))
            before = now
    final = r.final
    winners = words.join(list(final.winners)) if final.winners else words.t("nobody")
    paid = words.listing(f"{p} +{g}" for p, g in final.payout.items() if g) or "-"
    con.print(Text(words.labelled(words.t("round over"), words.clauses([words.t("winners", players=winners), paid])),
                   style="bold"))
    for line in move_words.round_outcome(final):
        con.print(Text(line, style="bold"))


# --- the interactive viewer ------------------------------------------------------------------

_SEQUENCES = {
    "\x1b[C": "right", "\x1b[D": "left", "\x1bOC": "right", "\x1bOD": "left",
    "\x1b[H": "home", "\x1b[F": "end", "\x1bOH": "home", "\x1bOF": "end",
    "\x1b[1~": "home", "\x1b[4~": "end", "\x1b[7~": "home", "\x1b[8~": "end",
    "\x1b[A": "up", "\x1b[B": "down", "\x1bOA": "up", "\x1bOB": "down", "\x1b[5~": "pageup", "\x1b[6~": "pagedown",
}
_CHARS = {"\r": "enter", "\n": "enter", "\x7f": "backspace", "\x08": "backspace", "\x1b": "escape",
          "\x03": "q", "\x04": "q", " ": "right"}


# The full screen draws the maze with rows sharing their edge lines when the usual one would leave
# fewer lines than this for the players and hands under it (a round's board grows as it is played).
MIN_DETAILS = 4


def keys_help() -> str:
    return t("→/n next · ←/p back · g N Enter: go to move N · g g/Home first · G/End last · v perspective · q quit")


def screen_keys_help() -> str:
    """The full screen's one status line (its ↑/↓ scroll the hands, not the moves)."""
    return t("←/→ move · ↑/↓ scroll · g N go to · v perspective · q quit")


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
        self.scroll = 0  # the full screen's first line of the scrolling part
        self.page = 10  # rows the scrolling part had at the last redraw (PgUp/PgDn move by that)

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
                    self.note = t("no move {target}: the round has {n} moves", target=target, n=last)
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
        elif key in ("up", "k"):
            self.scroll -= 1
        elif key in ("down", "j"):
            self.scroll += 1
        elif key == "pageup":
            self.scroll -= self.page
        elif key == "pagedown":
            self.scroll += self.page
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

        status = keys_help() if self.typing is None else t("go to move: {digits}_  (Enter)", digits=self.typing)
        parts = [frame(self.r, self.i, self.who), Text(""), Text(status, style="dim")]
        if self.note:
            parts.append(Text(self.note, style="bold red"))
        return Group(*parts)

    def picture(self, rows: int, columns: int, like: Console) -> list[str]:
        """The full screen at rows x columns: the board pinned at the top with the move just made,
        the players and hands under it scrolling (↑/↓), the position and the keys on the last rows."""
        from rich.console import Group
        from rich.text import Text

        from pbem.replay.sources import ALL
        from pbem.ui.fullscreen import fit, render_lines
        from pbem.ui.render import maze_area, render_legend, render_maze
        from pbem.ui.seatview import view_details

        r, i, who = self.r, self.i, self.who
        v = r.view(i, who)
        step = t("move {n} of {total}", n=i, total=len(r)) if i else t("the deal (0 of {total})", total=len(r))
        title = Text(words.labelled(t("replay"), f"{t('game {game}, round {round}', game=r.game, round=r.round)} · {step} · "
                                   f"{_perspective_line(r, i, who)}"), style="bold")
        said = [Text(f"{i}. {r.steps[i - 1].seat}: {r.notation(i, who)}")] if i else []
        sentences = [Text(f"   {line}", style="dim") for line in r.sentences(i, who)] if i else []
        talk = [Text(f"   {line}") for line in r.said(i, who)]  # table talk after this frame
        (_, y0), (_, y1) = maze_area(v.board)
        dense = 1 + 3 * (y1 - y0 + 1) + 3 + 1 + MIN_DETAILS > rows  # title, move, a sentence; the keys
        maze = render_maze(v.board, known_goals=_known_goals(r, i, who), dense=dense)
        details = [*view_details(v, None if who == ALL else who), render_legend(v.ruleset, width=columns - 1)]
        notes = [Text(self.note, style="bold red")] if self.note else []
        head = render_lines(title, columns, like)  # stays pinned when a maze taller than the screen scrolls
        top = head + render_lines(Group(*said, *sentences, maze), columns, like)
        below = render_lines(Group(*talk, *details), columns, like)
        # The status rows: where the scrolling part is, then the keys, on as many rows as they take
        # (never cut); as many rows kept for them as the longest position there can be would take.
        widest = t("lines {first}-{last} of {total}", first=len(top) + len(below), last=len(top) + len(below),
                   total=len(top) + len(below))
        room = rows - len(notes) - len(self.status(widest, columns))
        if len(top) + MIN_DETAILS > room:  # a round's end says much: what it said scrolls with the rest
            top = head + render_lines(Group(*said, maze), columns, like)
            below = render_lines(Group(*sentences, *talk, *details), columns, like)
        shown = fit(top, below, room, self.scroll, len(head))
        self.scroll, self.page = shown.scroll, max(shown.shown - 1, 1)
        status = self.status(shown.position(), columns)
        bars = [Text(line, style="reverse", no_wrap=True, overflow="ellipsis") for line in status]
        spare = [""] * (rows - len(shown.lines) - len(notes) - len(status))
        return shown.lines + spare + render_lines(Group(*notes, *bars), columns, like)

    def status(self, position: str, columns: int) -> list[str]:
        """The status rows at `columns`: `position` ("lines 3-6 of 60", or ""), then the keys (or
        the move number being typed), packed into as few rows as they fit, none cut off."""
        from pbem.ui.render import packed

        keys = (screen_keys_help().split(" · ") if self.typing is None
                else [t("go to move: {digits}_  (Enter)", digits=self.typing)])
        if position:
            keys[0] = f"{position}  {keys[0]}"
        return packed(keys, columns, " · ")

    def run(self) -> None:
        """Full screen on a terminal (like `less`); a numbered prompt where keys cannot be read raw."""
        from pbem.ui.fullscreen import Ended, Terminal

        con = console()
        try:
            term = Terminal()
        except (ImportError, OSError, ValueError, AttributeError):
            self._run_lines(con)
            return
        try:
            with term:
                going = True
                while going:
                    term.draw(self.picture(*term.size(), con))
                    for key in decode_keys(term.keys()):
                        going = going and self.handle(key)
        except EOFError:
            return
        except Ended as end:  # the terminal is back as it was; exit as the signal asked
            raise SystemExit(128 + end.args[0]) from None

    def _run_lines(self, con) -> None:
        while True:
            con.print(self.screen())
            try:
                line = input("n/p/g N/v/q> ")
            except EOFError:
                return
            if not self.handle_line(line):
                return

"""A seat's legal moves (`pbem show --json`'s "legal") and where its cards go (`--hints`),
checked against what `pbem move` takes and the engine's placements, on real packets of
games played by seeded bots (real key files, a real SQLite store, the real CLI)."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path

import pytest
from processes import one_error_line, pbem

from engine.bots import RandomBot
from engine.catalog import card_kind
from engine.moves import parse, shown_hand
from engine.rules import legal_moves, legal_texts
from engine.state import THEFT
from pbem.host import referee as H
from pbem.protocol.documents import read_blocks, read_file
from pbem.seat import keys
from pbem.seat import player as P
from pbem.ui.hints import hints_for

GAMES = {"classic": ["ann", "bob", "cat", "dan"], "expansion": ["ann", "bob", "cat"]}
MOVES_AT_MOST = 400  # a whole game of these tables ends well before


def _positions(root: Path, ruleset: str, seed: int, every: int, count: int) -> dict:
    """A game played by seeded bots; every `every`-th packet kept as a file (up to `count`), and
    the first packet whose mover can place a card turned if none of those can: the deal is new
    on every run, and a run whose positions held no turned placement failed the check of them."""
    seats = GAMES[ruleset]
    homes = {n: root / f"home-{n}" for n in ["referee", *seats]}
    ids = {n: keys.create_identity(h, n, None) for n, h in homes.items()}
    db = root / "g.db"
    inv = H.create_game(db, "g", ids["referee"], ruleset, [(s, ids[s].public) for s in seats], [])
    bots = {s: RandomBot(f"{seed}-{s}") for s in seats}
    kept: list[tuple[Path, str]] = []
    turned = False  # a kept packet's mover can place a card turned
    with H.Host(db, ids["referee"], game="g") as host:
        for s in seats:
            host.accept(read_blocks(P.join(read_blocks(inv.armored())[0], ids[s], homes[s]).armored())[0])
        for i in range(MOVES_AT_MOST):
            packet = read_blocks(host.packets()[-1][1])[0]
            if packet.doc.phase == "game-over" or (len(kept) >= count and turned):
                break
            seat = packet.doc.to_move
            sp = P.open_packet(packet, ids[seat], homes[seat], remember=False)
            turns = any(m.rotated for m in legal_moves(sp.view) if m.at is not None)
            if (i % every == 0 and len(kept) < count) or (turns and not turned):
                path = root / f"packet-{packet.doc.seq:06d}.pbem"
                path.write_text(packet.armored())
                kept.append((path, seat))
                turned = turned or turns
            host.accept(read_blocks(P.make_move(sp, str(bots[seat].choose(sp.view))).armored())[0])
    return {"root": root, "homes": homes, "seats": seats, "packets": kept, "ruleset": ruleset}


@pytest.fixture(scope="module", params=sorted(GAMES))
def played(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return _positions(tmp_path_factory.mktemp(f"hints-{request.param}"), request.param, seed=7, every=4, count=8)


class Seats:
    """The CLI run in this process through its own entry (`here`), each seat in its own copy of
    its key home (a packet opened is remembered as seen: each test starts from homes that saw none)."""

    def __init__(self, played: dict, tmp_path: Path, here) -> None:
        self.here = here
        self.homes = {s: shutil.copytree(played["homes"][s], tmp_path / f"home-{s}") for s in played["seats"]}

    def run(self, seat: str, *args: object, lang: str = "en") -> str:
        """The command's stdout (exit 0, or the test fails with its error), drawn 200 columns wide."""
        return self.here(*args, home=self.homes[seat], env={"PBEM_LANG": lang, "COLUMNS": "200"}, ok=True).stdout

    def show(self, packet: Path, seat: str) -> dict:
        return json.loads(self.run(seat, "show", packet, "--as", seat, "--json"))


def _process_once(played: dict, here):
    """How a test runs a `pbem` command: as a process of its own on the classic game, through
    the command line's entry in this process (`here`) on the other."""
    return pbem if played["ruleset"] == "classic" else here


def test_every_legal_move_is_one_pbem_move_takes(played: dict, tmp_path: Path, here) -> None:
    """Property over the kept packets: every other seat's "legal" is empty; the mover's is
    every move of its view the engine lists, each one that the packet opened as `pbem move`
    opens it takes (a seeded sample of them through `pbem move` itself, exit 0 and a file)."""
    seats = Seats(played, tmp_path, here)
    rng = random.Random(5)
    offered = 0
    for packet, mover in played["packets"]:
        for seat in played["seats"]:
            summary = seats.show(packet, seat)
            if seat != mover:
                assert summary["legal"] == [], (packet, seat)
                continue
            legal = summary["legal"]
            assert legal and legal == sorted(set(legal))
            identity = keys.load_identity(seats.homes[seat], seat, None)
            sp = P.open_packet(read_file(packet)[0], identity, seats.homes[seat], remember=False)
            assert legal == legal_texts(sp.view)
            for text in legal:
                assert str(P.make_move(sp, text).doc.seat) == seat
            for i, text in enumerate(rng.sample(legal, min(4, len(legal)))):
                out = tmp_path / f"move-{packet.stem}-{i}.pbem"
                done = seats.run(seat, "move", packet, text, "--as", seat, "-o", out, "--replace")
                assert out.is_file() and "move file" in done, (text, done)
            offered += len(legal)
    assert offered >= 60
    # an old packet (a newer one was seen) is not the table now: nothing is legal on it
    first, mover = played["packets"][0]
    assert seats.show(first, mover)["legal"] == []


def test_a_move_not_listed_is_refused(played: dict, tmp_path: Path, here) -> None:
    """The list is complete the other way round too: a placement of a path card the mover
    holds at a cell that "legal" does not list is refused by `pbem move`: exit 6, no file.
    (`pbem move` as a process of its own on the classic game, through the command line's
    entry in this process on the other.)"""
    seats = Seats(played, tmp_path, here)
    for packet, mover in played["packets"]:  # (the deal is new on every run: the first with a path card)
        summary = seats.show(packet, mover)
        path_card = next((c for c in summary["hand"] if card_kind(c).category == "path"), None)
        if path_card is not None:
            break
    assert path_card is not None
    text = f"play {path_card} at 5,5"
    assert text not in summary["legal"]
    run = _process_once(played, here)
    refused = run("move", packet, text, "--as", mover, "-o", tmp_path / "m.pbem", home=seats.homes[mover], cwd=tmp_path)
    one_error_line(refused, 6, "5,5")
    assert not (tmp_path / "m.pbem").exists()


_MIDDLE = re.compile(r"^ *(-?\d+) ")  # a maze row's middle line starts with its y


def marks_on_screen(screen: str) -> set[tuple[int, int, int, bool]]:
    """(x, y, hand number, turned) for every number drawn in an empty cell of the maze."""
    lines = screen.splitlines()
    top = next(i for i, line in enumerate(lines) if re.fullmatch(r" {4,}(-?\d+ +)+-?\d+ *", line))
    xs = [int(x) for x in lines[top].split()]
    found = set()
    i = top + 2
    while i < len(lines) and (m := _MIDDLE.match(lines[i])):
        y = int(m[1])
        for k, x in enumerate(xs):
            left = 4 + 7 * k
            if lines[i][left:left + 7].strip() != "·":
                continue
            above, below = lines[i - 1][left:left + 7].strip(), lines[i + 1][left:left + 7].strip()
            for text, turned in ((above, False), (below.removeprefix("↻"), True)):
                nums = text.split() if " " in text else list(text)
                found |= {(x, y, int(n), turned) for n in nums}
            if below and not below.startswith("↻"):
                raise AssertionError(f"a mark below {x},{y} without ↻: {below!r}")
        i += 3
    return found


def expected_marks(summary: dict) -> set[tuple[int, int, int, bool]]:
    """What the maze must mark: each path card's hand number at each cell "legal" plays it at."""
    shown = shown_hand(summary["hand"])
    numbers = {}
    for n, cid in enumerate(shown, 1):
        numbers.setdefault(card_kind(cid).kind, []).append(n)
    out = set()
    for text in summary["legal"]:
        move = parse(text)
        if move.verb == "play" and move.at is not None and card_kind(move.card).category == "path":
            out |= {(move.at[0], move.at[1], n, move.rotated) for n in numbers[card_kind(move.card).kind]}
    return out


@pytest.mark.parametrize("lang", ["en", "zh-Hans"])
def test_the_hints_screen_marks_exactly_the_legal_placements(played: dict, lang: str, tmp_path: Path, here) -> None:
    seats = Seats(played, tmp_path, here)
    marked = turned = 0
    for i, (packet, mover) in enumerate(played["packets"]):
        summary = seats.show(packet, mover)
        screen = seats.run(mover, "show", packet, "--as", mover, "--hints", lang=lang)
        if i == 0 and played["ruleset"] == "classic":  # the same screen from a `pbem` process of its own
            run = pbem("--lang", lang, "show", packet, "--as", mover, "--hints", home=seats.homes[mover],
                       cwd=played["root"], ok=True, env={"COLUMNS": "200"})
            assert run.stdout == screen
        want = expected_marks(summary)
        assert marks_on_screen(screen) == want, screen
        assert ("where your cards go" if lang == "en" else "你的牌能打在哪里") in screen
        marked += len(want)
        turned += sum(1 for m in want if m[3])
        # each card of the hand has its line: its number, then its aims or "nowhere now"
        for n, cid in enumerate(shown_hand(summary["hand"]), 1):
            assert re.search(rf"^(\d+ )*{n}( \d+)* .+[:：]", screen, re.M), (n, cid, screen)
    assert marked and turned, "the positions show no placement (turned) to check"


def test_hints_say_so_when_it_is_not_your_move(played: dict, tmp_path: Path, here) -> None:
    seats = Seats(played, tmp_path, here)
    packet, mover = played["packets"][0]
    other = next(s for s in played["seats"] if s != mover)
    run = _process_once(played, here)("show", packet, "--as", other, "--hints", home=seats.homes[other], cwd=played["root"], ok=True,
               env={"COLUMNS": "200"})
    assert "no hints: the table does not wait for your move" in run.stdout
    assert marks_on_screen(run.stdout) == set()


def test_turn_hints_on_a_packet_file(played: dict, tmp_path: Path, here) -> None:
    """`pbem turn PACKET --hints` draws the same marks as `pbem show --hints`."""
    seats = Seats(played, tmp_path, here)
    # the first packet whose mover has a placement (the deal is new on every run)
    packet, mover = next((p, m) for p, m in played["packets"] if expected_marks(seats.show(p, m)))
    home = seats.homes[mover]
    shown = seats.run(mover, "show", packet, "--as", mover, "--hints")  # as a process: the test above
    turn = _process_once(played, here)("turn", packet, "--as", mover, "--hints", home=home, cwd=played["root"], ok=True,
                                       env={"COLUMNS": "200"})
    assert marks_on_screen(turn.stdout) == marks_on_screen(shown) != set()


def test_the_thief_is_told_whom_it_may_rob() -> None:
    """Saboteur 2's theft phase: the hints list the victims the engine allows, then nobody."""
    from engine.chance import SeededChance
    from engine.game import Game
    from engine.rules import apply, legal_moves
    from engine.views import view

    rng = random.Random(3)
    for seed in range(40):
        game = Game("expansion", ("ann", "bob", "cat", "dan"))
        state = game.start_round(SeededChance(f"thief/{seed}"))
        while state.phase not in (THEFT, "over"):
            apply(state, rng.choice(legal_moves(state)))
        if state.phase == THEFT:
            thief = state.player
            victims = [m.target for m in legal_moves(state) if m.target]
            lines = hints_for(view(state, thief), thief).lines
            assert lines == [f"whom you may rob (steal NAME): {', '.join([*victims, 'nobody'])}"]
            return
    raise AssertionError("no seeded round reached the theft phase")


@pytest.mark.slow  # a trustless round dealt in one process: several seconds
def test_a_trustless_seat_is_offered_its_legal_moves_and_hints(tmp_path: Path, here) -> None:
    """A trustless table waiting for a move: the mover's "legal" is its view's legal moves, one
    of them written by `pbem move`; `--hints` marks the placements; the other seats get none.
    (`show --json` through the command line's entry in this process, the rest as processes.)"""
    from blind_game import BlindGame

    from engine.catalog import HIDDEN
    from pbem.protocol.trustless.public import PublicTable

    game = BlindGame(tmp_path)

    def a_path_card_to_play(table: PublicTable) -> bool:
        if table.round is None or table.waiting().step != "move" or table.round.moves() < 2:
            return False
        seat = table.waiting().seats[0]
        seen = game.seats[seat].view()
        return not seen.blocked(seat) and any(c != HIDDEN and card_kind(c).category == "path" for c in seen.hands[seat])

    game.play(a_path_card_to_play)
    mover = game.table.waiting().seats[0]
    packet = game.packet_file(game.seen)
    home = game.homes[mover]
    summary = json.loads(here("show", packet, "--as", mover, "--json", home=home, ok=True).stdout)
    assert summary["legal"] and summary["legal"] == legal_texts(game.seats[mover].view())
    # through the command line's entry in this process: a test above compares its screen with a process's
    screen = here("show", packet, "--as", mover, "--hints", home=home, ok=True, env={"COLUMNS": "200"}).stdout
    hand = game.seats[mover].view().hands[mover]
    assert marks_on_screen(screen) == expected_marks({"hand": hand, "legal": summary["legal"]}) != set(), screen
    other = next(s for s in game.seats if s != mover)
    assert json.loads(here("show", packet, "--as", other, "--json", home=game.homes[other], ok=True).stdout)["legal"] == []
    text = random.Random(1).choice(summary["legal"])
    pbem("move", packet, text, "--as", mover, "-o", tmp_path / "m.pbem", home=home, cwd=tmp_path, ok=True)
    assert (tmp_path / "m.pbem").is_file()


def test_a_shut_card_keeps_the_numbers_of_the_others() -> None:
    """A trustless seat's card still shut ("?") is numbered first in the hand as shown, so
    every other card's mark is its number in that hand (what `play N ...` reads)."""
    from engine.catalog import HIDDEN
    from engine.chance import SeededChance
    from engine.game import Game
    from engine.views import view

    state = Game("classic", ("ann", "bob", "cat")).start_round(SeededChance("shut"))
    me = state.player
    seen = view(state, me)
    open_marks = hints_for(seen, me).cells
    seen.hands[me] = [HIDDEN, *seen.hands[me]]
    shifted = {pos: (tuple(n + 1 for n in up), tuple(n + 1 for n in turned)) for pos, (up, turned) in open_marks.items()}
    assert open_marks and hints_for(seen, me).cells == shifted
    assert all(parse(f"play {n} at 0,0", hand=seen.hands[me]).card != HIDDEN for n in range(2, len(seen.hands[me]) + 1))

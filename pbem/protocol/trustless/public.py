"""The public table of a trustless game: what the blind host and every seat know alike.

It follows the relayed blocks in chain order (the joins, then the seats' mental blocks),
checks each against the step the table is at and every proof in it, and says what the table
waits for next. It holds no secret: the host keeps one to order the chain, each seat keeps
one beside its own `table.TableSeat`, and both refuse the same blocks for the same reasons.

Steps (docs/trustless.md §5): `join` (every seat, in parallel), `shuffle` (each seat in seat
order), `deal` (every seat's tokens for the others' roles and hands, in parallel), then play:
`move` (the seat to move), `tokens` (the seats the mover still waits for, when they had no
move to carry them), `goal` (every seat's token for the goals a placement reaches, in
parallel), `reveal` (at a round's end, every seat's round key, the nugget cards' tokens and
the next round's deal tokens, in parallel), `steal` (the expansion's thieves, one after the
other on the opened round, when its payout left them someone to rob), and `over`. A block answers a packet (`seq`,
`packet`): that packet must be the one that opened the table's current stage or a later one,
so no block made for an earlier state of the table is taken for a later one.

The public tokens are kept by slot (`pub`): a slot all of whose tokens are public is open to
everyone (a played card, a reached goal, the nugget cards paid out), and the table opens it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from engine.catalog import CLASSIC, HIDDEN
from engine.game import carry_after
from engine.moves import Move
from engine.state import OVER, ROUNDS_PER_GAME
from pbem.errors import N_, BadPacket, Conflict, Msg, StaleMove, goal_word, listed, msg, step_word
from pbem.protocol.documents import Gone, Invitation, Join, Mental, Tokens, Waiting
from pbem.protocol.mental.elgamal import Ciphertext, open_with
from pbem.protocol.mental.group import Point, scalar_bytes
from pbem.protocol.mental.proofs import BadProof
from pbem.protocol.mental.vss import Dealing
from pbem.protocol.trustless import dealing as D
from pbem.protocol.trustless import ending as E
from pbem.protocol.trustless import keys as K
from pbem.protocol.trustless import messages as M
from pbem.protocol.trustless import setup as S
from pbem.protocol.trustless import standin as SI
from pbem.protocol.trustless.complaints import Complaints
from pbem.protocol.trustless.ending import NOBODY, RoundEnd
from pbem.protocol.trustless.round import PublicRound
from pbem.protocol.trustless.stacks import card_of, game_stacks
from pbem.protocol.trustless.table import Layout, TrustlessGame
from pbem.protocol.trustless.tokens import ALL, Slot, bundle_slots, read_bundle
from pbem.protocol.trustless.vanished import PARALLEL, Vanished


def game_of(inv: Invitation) -> TrustlessGame:
    players = inv.seat_names()
    options = frozenset(inv.options)
    return TrustlessGame(inv.game, inv.ruleset, players, options, tuple(game_stacks(inv.ruleset, len(players), options)),
                         inv.threshold or 0)


@dataclass
class PublicTable:
    game: TrustlessGame
    joins: dict[str, Join] = field(default_factory=dict)
    shares: dict[str, dict[int, Point]] = field(default_factory=dict)
    dealings: dict[str, Dealing] = field(default_factory=dict)  # each seat's commitments (a threshold game)
    stacks: S.Stacks = field(default_factory=dict)
    shuffled: int = 0  # seats that have shuffled, in seat order
    dealt: list[str] = field(default_factory=list)  # seats whose round-1 deal tokens are in
    pub: dict[Slot, dict[str, Point]] = field(default_factory=dict)  # public tokens, by slot and maker
    opened: dict[Slot, str] = field(default_factory=dict)  # slots open to everyone, and their cards
    round: PublicRound | None = None  # the round being played
    ended: list[RoundEnd] = field(default_factory=list)
    revealed: dict[str, str] = field(default_factory=dict)  # seat -> its revealed key of this round
    pile: list[Slot] = field(default_factory=list)  # classic: the nugget pile left, top first
    theft: RoundEnd | None = None  # an expansion round opened and paid whose thieves still choose
    opened_at: int = 1  # the packet that opened the current stage
    check_proofs: bool = True
    _cts: tuple[S.Stacks | None, dict[Slot, Ciphertext]] = field(default_factory=lambda: (None, {}), init=False,
                                                                  repr=False, compare=False)
    shuffle_pos: int = 0  # the place in seat order of the next seat to shuffle (a gone seat is passed)
    vanished: Vanished = field(init=False)  # the seats that vanish (docs/trustless.md §11)
    complaints: Complaints = field(init=False)  # about bad dealt shares, and their answers (§11.1)

    def __post_init__(self) -> None:
        self.vanished = Vanished(self)
        self.complaints = Complaints(self)

    @classmethod
    def of(cls, inv: Invitation, *, check_proofs: bool = True) -> PublicTable:
        game = game_of(inv)
        pile = [("nuggets@0", i) for i in range(len(game.stack("nuggets@0").cards))] if game.ruleset == CLASSIC else []
        return cls(game, stacks=S.start(list(game.stacks)), pile=pile, check_proofs=check_proofs)

    # --- where the table is ------------------------------------------------------------------

    @property
    def gone(self) -> dict[str, int]:
        return self.vanished.gone

    @property
    def players(self) -> tuple[str, ...]:
        return self.game.players

    @property
    def round_no(self) -> int:
        return self.round.round_no if self.round is not None else len(self.ended) or 1

    def next_shuffler(self) -> str | None:
        """A shuffle needs no seat in particular: the next seat in seat order that is not gone."""
        return next((p for p in self.players[self.shuffle_pos:] if p not in self.gone), None)

    def step(self) -> str:
        base = self.base_step()
        if base in PARALLEL:
            owing = self.owing(base)
            if owing and all(p in self.gone for p in owing):
                return "stand-in"
        return base

    def base_step(self) -> str:
        if len(self.joins) < len(self.players):
            return "join"
        if self.complaints.failed is not None:  # the join failed (§11.1): nothing is dealt
            return "over"
        if self.complaints.filed:
            return "answer"
        if self.next_shuffler() is not None:
            return "shuffle"
        if len(self.dealt) < len(self.players):
            return "deal"
        if self.theft is not None:
            return "steal"
        r = self.round
        if r is None:
            return "over"
        if r.wanted:
            return "goal"
        if r.over:
            return "reveal"
        if self._debtors():
            return "tokens"
        return "move"

    def _debtors(self) -> list[str]:
        """The seats the mover waits for: it must read its whole hand before it moves (a gone
        seat's tokens for it the mover completes with its own stand-in share, once K - 1 others
        gave theirs: it reads its cards, and its move carries its share)."""
        r = self.round
        assert r is not None
        return [p for p in self.players if p != r.mover and r.ledger.owes(p, r.mover)
                and (p not in self.gone or not self.vanished.covered(p, r.mover))]

    def waiting(self) -> Waiting:
        """The step the table waits for and the seats that owe it (a gone seat owes nothing: at
        a stand-in step the others owe its part)."""
        step = self.step()
        if step == "stand-in" and self.base_step() == "tokens":  # the others than the mover, for its cards
            r = self.round
            assert r is not None
            return Waiting(step=step, seats=[h for h in self.players if h not in self.gone and h != r.mover
                                             and any(self.vanished.missing(v, h, r.mover) for v in self._debtors())])
        if step == "stand-in":
            return Waiting(step=step, seats=[p for p in self.players if p not in self.gone and p not in self.vanished.stand])
        return Waiting(step=step, seats=[p for p in self.owing(step) if p not in self.gone])

    def owing(self, step: str) -> list[str]:
        """The seats that owe the `step` (gone ones too)."""
        r = self.round
        if step == "join":
            seats = [p for p in self.players if p not in self.joins]
        elif step == "shuffle":
            seats = [str(self.next_shuffler())]
        elif step == "deal":
            seats = [p for p in self.players if p not in self.dealt]
        elif step == "goal":
            seats = [p for p in self.players if self.goal_slots(p)]
        elif step == "reveal":
            seats = [p for p in self.players if p not in self.revealed]
        elif step == "tokens":
            seats = self._debtors()
        elif step == "move":
            assert r is not None
            seats = [r.mover]
        elif step == "steal":
            assert self.theft is not None
            seats = [self.theft.state.player]
        elif step == "answer":
            seats = self.complaints.dealers()
        else:
            seats = []
        return seats

    def stage(self) -> tuple[Any, ...]:
        """Changes whenever the table moves on to wait for something new (then `opened_at` moves)."""
        r = self.round
        return (self.step(), self.round_no, self.shuffled, r.moves() if r else 0, tuple(r.wanted) if r else (),
                len(self.theft.played) if self.theft else 0)

    # --- what a seat must send (the checks ask the same) -----------------------------------------

    def goal_slots(self, seat: str) -> list[Slot]:
        """The goals being opened whose token from `seat` is not public yet."""
        r = self.round
        return [s for s in (r.goal_slots() if r else []) if seat not in self.pub.get(s, {})]

    def nugget_slots(self, seat: str | None = None) -> list[Slot]:
        """At a classic round's end, the nugget cards its payout needs opened: the top cards for
        the diggers (as many as there are players, 9 at 10), the whole pile for the saboteurs,
        who choose cards of the values they are owed (engine/payout.py)."""
        r = self.round
        if r is None or self.game.ruleset != CLASSIC:
            return []
        n = len(self.players)
        want = self.pile[:9 if n == 10 else n] if r.state.finder is not None else self.pile
        return [s for s in want if seat is None or seat not in self.pub.get(s, {})]

    def deal_slots(self, round_no: int, seat: str) -> list[Slot]:
        """Round `round_no`'s deal: `seat`'s tokens for every other seat's role and hand."""
        layout = Layout.of(self.game, round_no)
        return [s for p in self.players if p != seat for s in layout.private(p)]

    # --- taking blocks -------------------------------------------------------------------------

    def take_join(self, join: Join) -> None:
        if join.seat not in self.players:
            raise BadPacket(msg("no seat {seat} in game {game}", seat=repr(join.seat), game=self.game.id))
        if join.seat in self.joins:
            raise Conflict(msg("{seat} has already joined", seat=join.seat))
        if join.mental is None:
            raise BadPacket(msg("{seat}'s join carries no key shares: game {game} is trustless", seat=join.seat,
                              game=self.game.id), hint=msg("join with a pbem that plays trustless games"))
        shares = M.join_shares(join)
        if join.dealing is not None and not self.game.threshold:
            raise BadPacket(msg("{seat}'s join carries a key dealing, but game {game} has no threshold", seat=join.seat,
                                game=self.game.id))
        if self.game.threshold:
            self.dealings[join.seat] = D.check_public(msgspec.to_builtins(join.dealing), join.seat, self.players,
                                                      self.game.threshold)
        self.shares[join.seat] = shares
        self.joins[join.seat] = join

    def take(self, doc: Mental, head: int, *, check: bool = True) -> Msg:
        """Check a mental block against the table at packet `head` (hash checked by the caller)
        and follow it; returns a line saying what it did. Its proofs are checked when `check` and
        the table's `check_proofs` say so (not: a chain its follower checked before, or a replay
        of one checked as it was made); each step below is told `check`."""
        check = check and self.check_proofs
        step = self.step()
        sent, wanted = step_word(doc.step), step_word(step)
        if doc.seq > head:
            raise StaleMove(msg("{seat}'s {step} answers packet {seq}, which is not out yet", seat=doc.seat, step=sent,
                              seq=doc.seq))
        if doc.seq < self.opened_at:
            raise StaleMove(msg("{seat}'s {step} answers packet {seq}, from before the {wanted} step (opened by packet "
                              "{opened})", seat=doc.seat, step=sent, seq=doc.seq, wanted=wanted, opened=self.opened_at))
        before = self.stage()
        if doc.step == "complaint":  # out of turn, from any seat (§11.1)
            said = self.complaints.complain(doc, self.base_step(), self.gone, head + 1)
            if self.stage() != before:
                self.opened_at = head + 1
            return said
        back = doc.seat in self.gone
        if back:  # a seat declared gone answers: it comes back (docs/trustless.md §11.2)
            if doc.step != self.returning(doc.seat):
                raise StaleMove(msg("{seat} was declared gone and sends a {step} message: it may come back with its "
                                    "tokens, or the {wanted} step", seat=doc.seat, step=sent, wanted=wanted))
            self.vanished.back(doc.seat, head + 1)
            step = self.step()
        if back and (doc.step != step or doc.seat not in self.waiting().seats):
            step = "back"  # nothing waits for it: its block pays what it still owes
        elif doc.step != step:
            raise StaleMove(msg("{seat} sends a {step} message while the table waits for the {wanted} step",
                              seat=doc.seat, step=sent, wanted=wanted))
        elif doc.seat not in self.waiting().seats:
            raise StaleMove(msg("{seat} sends a {step} message, but the table waits for {seats}", seat=doc.seat,
                              step=sent, seats=listed(self.waiting().seats)))
        self.vanished.stood_in = {}
        doc = self.vanished.since_back(doc)
        if doc.stand_in is not None and step in ("deal", "goal", "reveal"):  # a gone seat's part, riding along
            self.vanished.take_parts(doc, step, check)
        line: Msg = self.complaints.answer(doc, head + 1) if step == "answer" else getattr(
            self, f"_{step.replace('-', '_')}")(doc, check)
        if back:
            line = msg("{seat} is back", seat=doc.seat) + msg("clause sep") + line
        done = self._complete_stand()
        if done is not None:
            line = line + msg("clause sep") + done
        self._settle()
        if self.stage() != before:
            self.opened_at = head + 1
        return line

    def _shuffle(self, doc: Mental, check: bool) -> Msg:
        assert doc.shuffle is not None
        turn = self.shuffled
        body = msgspec.to_builtins(doc.shuffle)
        if check:
            self.stacks = S.check_shuffle_doc(self.game.id, doc.seat, turn, list(self.game.stacks),
                                              K.joint_keys(self.shares), self.stacks, body)
        else:  # a replay of a chain whose proofs were checked when it was made
            self.stacks = {s.label: S.decode_stack(body["stacks"][s.label]["cards"], len(s.cards), s.label)
                           for s in self.game.stacks}
        self.shuffled += 1
        self.shuffle_pos = self.players.index(doc.seat) + 1
        left = len([p for p in self.players[self.shuffle_pos:] if p not in self.gone])
        if left:
            return msg("{seat} shuffled every stack ({n} to go)", seat=doc.seat, n=left)
        return msg("{seat} shuffled every stack (the deck is ready: every seat sends its deal tokens)", seat=doc.seat)

    # --- tokens ---------------------------------------------------------------------------------

    def cts(self) -> dict[Slot, Ciphertext]:
        """Every slot's ciphertext in the stacks as they lie (read only: made again when a shuffle
        replaces the stacks, not at each bundle that reads it)."""
        if self._cts[0] is not self.stacks:
            self._cts = (self.stacks, {(label, i): ct for label, cs in self.stacks.items() for i, ct in enumerate(cs)})
        return self._cts[1]

    def _public(self, given: Tokens, check: bool, want: list[Slot] | None = None, what: str | None = None) -> list[Slot]:
        """Check a public bundle (its slots exactly `want`, if given; its proofs if `check`) and
        keep its tokens; `what` names the bundle in the refusal ("{seat}'s deal tokens")."""
        bundle = M.bundle(given)
        slots = bundle_slots(bundle)
        if given.to != ALL or (want is not None and slots != want):
            raise BadPacket(msg("{tokens} are not one public bundle for the slots the table waits for",
                              tokens=msg(what or "{seat}'s tokens", seat=given.maker)))
        shares = {s.label: self.shares[given.maker][s.round_no] for s in self.game.stacks}
        for slot, tok in read_bundle(self.game.id, bundle, shares, self.cts(), check=check).items():
            self.pub.setdefault(slot, {})[given.maker] = tok.point
        return slots

    def open_public(self, slot: Slot) -> str:
        """The card in `slot`, from every seat's public token for it."""
        if slot in self.opened:
            return self.opened[slot]
        tokens = self.pub.get(slot, {})
        missing = [p for p in self.players if p not in tokens]
        if missing:
            raise BadPacket(msg("slot {slot} cannot be opened: no public token from {seats}", slot=f"{slot[0]} #{slot[1]}",
                              seats=listed(missing)))
        ct = self.stacks[slot[0]][slot[1]]
        card = card_of(open_with(ct, [tokens[p] for p in self.players]), self.game.stack(slot[0]))
        if card is None:  # cannot happen after checked shuffles and tokens; refuse loudly if it does
            raise BadProof(msg("slot {slot} opens to no card of its stack", slot=f"{slot[0]} #{slot[1]}"))
        self.opened[slot] = card
        return card

    def _pay(self, doc: Mental, check: bool) -> None:
        """The debts a message pays (public tokens checked and kept; sealed ones its reader checks)."""
        r = self.round
        assert r is not None
        for given in doc.tokens or []:
            slots = [s.slot for s in given.slots]
            r.ledger.paid(doc.seat, given.to, slots)  # refuses tokens not owed
            if given.to == ALL:
                self._public(given, check)

    # --- steps -----------------------------------------------------------------------------------

    def _deal(self, doc: Mental, check: bool) -> Msg:
        tokens = doc.tokens or []
        if len(tokens) != 1:
            raise BadPacket(msg("{seat}'s deal tokens are not one public bundle for every other seat's role and hand",
                              seat=doc.seat))
        self._public(tokens[0], check, self.deal_slots(1, doc.seat), N_("{seat}'s deal tokens"))
        return self._dealt(doc.seat)

    def _dealt(self, seat: str) -> Msg:
        self.dealt.append(seat)
        if len(self.dealt) == len(self.players):
            self.round = self._new_round(1)
            return msg("{seat} sent its deal tokens; round 1 is dealt, {mover} to move", seat=seat,
                     mover=self.round.mover)
        return msg("{seat} sent its deal tokens; waiting for {seats}", seat=seat, seats=listed(self.waiting().seats))

    def _new_round(self, k: int, **kw: Any) -> PublicRound:
        r = PublicRound.deal(self.game, k, pile=len(self.pile) if self.pile else None, **kw)
        self.vanished.new_round(r)
        return r

    def _move(self, doc: Mental, check: bool) -> Msg:
        r = self.round
        assert r is not None
        r.check_slots(doc.seat, [doc.play.slot.slot] if doc.play else [s.slot for s in doc.discard or []])
        self.vanished.take_shares(doc, check)
        owing = [v for v in self.gone if self.vanished.debts_of(v, doc.seat)]
        if owing:
            raise BadPacket(msg("{seat}'s move must carry its stand-in shares of the tokens {dealer} owes it",
                                seat=doc.seat, dealer=listed(owing)))
        self._pay(doc, check)
        if doc.play is not None:
            slot = doc.play.slot.slot
            if doc.play.open.maker != doc.seat:
                raise BadPacket(msg("{seat}'s opening of slot {slot} is not its own token", seat=doc.seat,
                                  slot=f"{slot[0]} #{slot[1]}"))
            self._public(doc.play.open, check, [slot], N_("{seat}'s opening"))
            for given in doc.play.handed or []:  # tokens that reached the player sealed (swap-hand)
                if given.maker == doc.seat or given.maker not in self.players or given.maker in self.pub.get(slot, {}):
                    raise BadPacket(msg("{seat}'s opening of slot {slot} hands on a token the table does not need",
                                        seat=doc.seat, slot=f"{slot[0]} #{slot[1]}"))
                self._public(given, check, [slot], N_("{seat}'s opening"))
            self.vanished.unseal(doc.seat, slot, doc.play.unsealed or [], check)  # a gone seat's, sealed to the player
            card = self.open_public(slot)
            r.play(doc.seat, slot, card, doc.move)
            line = msg("{seat}: {move} (opened from slot {slot})", seat=doc.seat, move=doc.move,
                     slot=f"{slot[0]} #{slot[1]}")
        else:
            r.discard(doc.seat, [s.slot for s in doc.discard or []], doc.move)
            line = msg("{seat}: {move}", seat=doc.seat, move=doc.move)
        return line + self._after()

    def _tokens(self, doc: Mental, check: bool) -> Msg:
        if not doc.tokens:
            raise BadPacket(msg("{seat}'s {step} message carries no tokens", seat=doc.seat, step=doc.step))
        return self._back(doc, check)

    def _back(self, doc: Mental, check: bool) -> Msg:
        """The tokens a seat owed (a seat that comes back may owe none)."""
        self.vanished.take_shares(doc, check)
        self._pay(doc, check)
        return msg("{seat} sent the tokens it owed", seat=doc.seat) + self._after()

    def returning(self, seat: str) -> str | None:
        """The step gone `seat` answers if it comes back now: the parallel step that waits for
        its part, else in a round a `tokens` block with what it still owes (None: not now)."""
        base = self.base_step()
        if base in ("deal", "goal", "reveal") and seat in self.owing(base):
            return base
        return "tokens" if self.round is not None and base in ("move", "tokens", "goal") else None

    def _goal(self, doc: Mental, check: bool) -> Msg:
        r = self.round
        assert r is not None
        tokens = doc.tokens or []
        want = self.goal_slots(doc.seat)
        if len(tokens) != 1:
            raise BadPacket(msg("{seat}'s goal tokens are not one public bundle for the goals being opened", seat=doc.seat))
        self._public(tokens[0], check, want, N_("{seat}'s goal tokens"))
        return self._goal_sent(doc.seat, want)

    def _goal_sent(self, seat: str, want: list[Slot]) -> Msg:
        r = self.round
        assert r is not None
        r.ledger.published(seat, want)
        if any(self.goal_slots(p) for p in self.players):
            return msg("{seat} sent its goal tokens; waiting for {seats}", seat=seat,
                     seats=listed(self.waiting().seats))
        for name in r.wanted:
            r.know_goal(name, self.open_public(r.ledger.layout.goals[name]))
        opened = listed([goal_word(g) for g in r.wanted])
        r.resume()
        return msg("{seat} sent its goal tokens: the {goal} goal opened", seat=seat, goal=opened) + self._after()

    def _after(self) -> Msg:
        """What the table waits for after a move took effect (or started waiting)."""
        done = self._settle()
        r = self.round
        assert r is not None
        if done:
            return done + self._after()
        if r.wanted:
            return msg("; it reaches the {goal} goal: every seat sends its token for it",
                     goal=listed([goal_word(g) for g in r.wanted]))
        if r.over:
            return msg("; round {round} is over: every seat reveals its round key", round=r.round_no)
        w = self.waiting()
        if w.step == "move":
            return msg("; {mover} to move", mover=w.seats[0])
        return msg("; {mover} waits for tokens from {seats}", mover=r.mover, seats=listed(w.seats))

    def _reveal(self, doc: Mental, check: bool) -> Msg:
        r = self.round
        assert r is not None
        k = r.round_no
        if sorted((doc.reveal or {}).keys()) != [str(k)]:
            raise BadPacket(msg("{seat}'s reveal must hold its key of round {round} and nothing else", seat=doc.seat, round=k))
        key = (doc.reveal or {})[str(k)]
        K.check_revealed(doc.seat, k, self.shares[doc.seat][k], key)
        tokens = list(doc.tokens or [])
        nuggets = self.nugget_slots(doc.seat)
        if nuggets:
            if not tokens:
                raise BadPacket(msg("{seat}'s reveal carries no tokens for the nugget cards", seat=doc.seat))
            self._public(tokens.pop(0), check, nuggets, N_("{seat}'s nugget tokens"))
        if k < ROUNDS_PER_GAME:
            if len(tokens) != 1:
                raise BadPacket(msg("{seat}'s reveal must carry its deal tokens for round {round}", seat=doc.seat, round=k + 1))
            self._public(tokens.pop(0), check, self.deal_slots(k + 1, doc.seat), N_("{seat}'s deal tokens"))
        if tokens:
            raise BadPacket(msg("{seat}'s reveal carries tokens the table does not wait for", seat=doc.seat))
        return self._revealed(doc.seat, key)

    def _revealed(self, seat: str, key: str) -> Msg:
        self.revealed[seat] = key
        if len(self.revealed) < len(self.players):
            return msg("{seat} revealed its round {round} key; waiting for {seats}", seat=seat, round=self.round_no,
                     seats=listed(self.waiting().seats))
        return self._finish()

    def _finish(self) -> Msg:
        """Every key of the round is out: open the round, replay it on its cards, pay, deal the next."""
        r = self.round
        assert r is not None
        k = r.round_no
        orders = E.open_round(self.game, r, self.shares, self.stacks, self.revealed, self.opened)
        for s in self.nugget_slots():
            self.open_public(s)
        end, self.pile = E.replay(r, orders, self.ended[-1] if self.ended else None, self.opened, self.pile)
        self.revealed = {}
        true = end.state
        if true.phase != OVER:  # the thieves choose on the opened round before the next is dealt
            self.theft = end
            if true.player in self.gone:
                return msg("round {round} is paid; {then}", round=k, then=self._rob(true.player, NOBODY))
            return msg("round {round} is paid; {thief} steals first", round=k, thief=true.player)
        return self._close(end)

    def _steal(self, doc: Mental, check: bool) -> Msg:
        """A thief's choice at an expansion round's end (RULES.md §5.2): public, on the opened round."""
        return self._rob(doc.seat, str(doc.move))

    def _rob(self, seat: str, text: str) -> Msg:
        """`seat` steals (`text`, checked by the engine); a gone thief after it robs nobody."""
        assert self.theft is not None
        end = E.rob(self.theft, seat, text)
        state = end.state
        if state.phase == OVER:
            self.theft = None
            return msg("{seat}: {move}; {then}", seat=seat, move=text, then=self._close(end))
        self.theft = end
        if state.player in self.gone:
            return msg("{seat}: {move}; {then}", seat=seat, move=text, then=self._rob(state.player, NOBODY))
        return msg("{seat}: {move}; {thief} steals next", seat=seat, move=text, thief=state.player)

    def _close(self, end: RoundEnd) -> Msg:
        """The round is over, thefts included: say so, and deal the next round (or end the game)."""
        self.ended.append(end)
        k, true = end.round_no, end.state
        line = E.over_line(self.players, end)
        if k == ROUNDS_PER_GAME:
            self.round = None
            return line + msg("; the game is over")
        carried = carry_after(self.players, true)
        self.round = self._new_round(k + 1, first_seat=carried.first_seat, gold=carried.gold)
        return line + msg("; round {round} is dealt, {mover} to move", round=k + 1, mover=self.round.mover)

    # --- a seat that vanishes (docs/trustless.md §11; the bookkeeping is `vanished.Vanished`) -------

    def declare(self, gone: Gone, seq: int) -> Msg:
        """Packet `seq` declares `gone.seats` gone (`Vanished.declare` checks it); the others stand in."""
        before = self.stage()
        if self.base_step() == "answer":  # a dealer late with its answer is named at fault (§11.1)
            line = self.complaints.declare(gone, seq)
            self.opened_at = seq
            return line
        self.vanished.declare(gone, seq, self.waiting())
        self._settle()
        if self.stage() != before:
            self.opened_at = seq
        line = msg("{seats} declared gone (late with the {step} step, due {due}): the others stand in",
                   seats=listed(gone.seats), step=step_word(gone.step), due=gone.due)
        w = self.waiting()
        return line + msg("; the table waits for the {step} step from {seats}", step=step_word(w.step),
                          seats=listed(w.seats))

    def _settle(self) -> Msg | None:
        """A gone seat's turn: the face-down discard of the first slot it holds (then it draws as
        anyone does; nobody reads the card). Returns what it said, if it took one."""
        said = None
        if self.theft is not None and self.theft.state.player in self.gone:  # a gone thief robs nobody
            said = self._rob(self.theft.state.player, NOBODY)
        r = self.round
        text = str(Move("discard", cards=(HIDDEN,)))
        while r is not None and r is self.round and self.step() == "move" and r.mover in self.gone:
            seat = r.mover
            r.discard(seat, r.ledger.holdings[seat][:1], text)
            self.vanished.discarded[seat] = self.vanished.discarded.get(seat, 0) + 1
            line = msg("; {seat} is gone: its turn is a face-down discard", seat=seat)
            said = said + line if said is not None else line
        return said

    def _complete_stand(self) -> Msg | None:
        """Once K holders stood in for the gone seats the step waits for: the step goes on as if
        they had sent their parts."""
        done = self.vanished.complete()
        if done is None:
            return None
        quorum, stood = done
        base = self.base_step()
        line = msg("{seats} stood in for {dealer}", seats=listed(quorum), dealer=listed([n.dealer for n, _ in stood]))
        for need, secret in stood:
            line = line + msg("clause sep") + self._stood(base, need, secret)
        return line

    def _stand_in(self, doc: Mental, check: bool) -> Msg:
        r = self.round
        if self.base_step() == "tokens" and r is not None:
            before = self.waiting().seats
            self.vanished.take_shares(doc, check)
            if self.step() == "stand-in" and doc.seat in self.waiting().seats:
                raise BadPacket(msg("{seat}'s stand-in does not carry its shares of the tokens {mover} waits for",
                                    seat=doc.seat, mover=r.mover))
            return msg("{seat} stood in for {seats}", seat=doc.seat, seats=listed([v for v in self.gone])) + (
                self._after() if self.step() != "stand-in" else msg("; waiting for {seats}", seats=listed(
                    [h for h in before if h != doc.seat])))
        self.vanished.take_parts(doc, self.base_step(), check)
        return msg("{seat} stood in for {seats}", seat=doc.seat, seats=listed([x.dealer for x in doc.stand_in or []]))

    def _stood(self, base: str, need: SI.Need, secret: int | None) -> Msg:
        """The step goes on as if the gone seat had sent its part."""
        v, r = need.dealer, self.round
        if base == "deal":
            return self._dealt(v)
        assert r is not None
        if base == "goal":
            return self._goal_sent(v, need.slots)
        assert secret is not None
        return self._revealed(v, scalar_bytes(secret).hex())

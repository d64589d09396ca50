"""The move a timeout policy makes for a seat: one deterministic choice, which the host plays
and which an audit recomputes once the round's secrets are open (docs/protocol.md,
"Deadlines"). Both read the seat's own view only, as the seat would have.

The policy `bot` plays the search bot (engine/bots/search.py) with the budget the packet's
deadline names (`bot_turns`, simulated turns: a count, not seconds, so every machine finds
the same move), seeded by the game and the packet; a packet that names no budget (written
before budgets existed) meant the smart bot.

A packet's deadline is a promise (`takeovers`, `not_before`): the host plays for its seat only
with the policy and budget it names, and never before the due time and grace it names; a rule
changed while the packet waits applies from the next packet. The host acts on these and the
audit checks against them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

    from engine.state import RoundState
    from pbem.protocol.shapes import Deadline, Packet

POLICIES = ("discard", "bot")  # the policies that play (wait plays nothing)
# The search bot's budget a game sets unless told otherwise: simulated turns a decision (about
# 0.1 s of the compiled engine; the arena's search bot at --think 0.1 spends as much).
TAKEOVER_TURNS = 1000
# The most a game may set (`--bot-turns`): about 13 s a move on the compiled engine, which the
# host spends on each move it plays for a seat and every auditor spends again.
MAX_TAKEOVER_TURNS = 100_000
REASONS = ("timeout", "absent", "resigned")  # why a host move was made (Move.why)


def budget_allowed(turns: int) -> bool:
    """Whether a game may set `turns` as its bot's budget (`--bot-turns`), and so a packet name it."""
    return 1 <= turns <= MAX_TAKEOVER_TURNS


def named_for(deadline: Deadline | None, seat: str) -> Deadline | None:
    """The deadline a packet names for `seat` (None: it names none for that seat)."""
    return deadline if deadline is not None and deadline.seat == seat else None


def takeovers(named: Deadline | None) -> dict[str, int | None]:
    """What may play for a seat at a packet whose deadline for it is `named`: each policy with
    its bot budget. The one the packet names (nothing under `wait`); a packet that names no
    deadline (a game without deadlines, or paused) promised none, so either policy, the bot at
    the default budget."""
    if named is None:
        return {p: TAKEOVER_TURNS if p == "bot" else None for p in POLICIES}
    return {named.on_timeout: named.bot_turns} if named.on_timeout in POLICIES else {}


def not_before(named: Deadline) -> str:
    """The earliest time the host may play for a seat for lack of time: the end of the grace
    the packet names, or its due time when it names none."""
    return named.grace_until or named.due


def policy_move(seen: RoundState, seat: str, policy: str, game: str, seq: int, turns: int | None = None) -> str:
    """The move `policy` makes for `seat` at packet `seq` of `game`, from the seat's view
    `seen`: `discard` throws the first card face down (the first legal move when no discard is
    legal), `bot` asks the search bot seeded by game and packet with `turns` simulated turns
    (None: the smart bot, as packets that name no budget meant)."""
    from engine.rules import legal_moves  # the engine is loaded only where a seat's move is made

    if policy == "discard":
        moves = legal_moves(seen)
        discards = [m for m in moves if m.verb == "discard" and len(m.cards) == 1 and not m.remove]
        return str(discards[0] if discards else moves[0])
    if policy != "bot":
        raise ValueError(policy)
    from engine.bots import make_bot  # the bots are loaded only where a policy lets one play

    if turns is None:
        return str(make_bot("smart", seat, f"{game}/{seq}").choose(seen))
    return str(make_bot("search", seat, f"{game}/{seq}", turns=turns).choose(seen))


def renewed_to(seq: int, renewed: Collection[int]) -> int:
    """The packet a move answering packet `seq` is applied at: `seq`, or the last of the fresh
    packets of the same position that renewed it to name a deadline (`renewed`, the archive's
    list), which a move made for the packet before answers as well (docs/protocol.md, "Move")."""
    while seq + 1 in renewed:
        seq += 1
    return seq


def renewed_from(seq: int, renewed: Collection[int]) -> list[int]:
    """The packets whose moves are applied at packet `seq` (`renewed_to` the other way): `seq`
    and, if it is a renewal, the packets it renewed, newest first."""
    found = [seq]
    while found[-1] in renewed:
        found.append(found[-1] - 1)
    return found


def renews(packet: Packet) -> bool:
    """Whether `packet` is a renewal, by what it signs: a fresh packet of the same position as
    the packet before it (no move between, `moves` empty; no handover, which also publishes
    one), naming the deadline of the same seat to move. Only `timekeeper.renew` publishes such
    a packet (the first packet of a game, also without moves, follows the invitation), and
    a renewal is never renewed itself (it names a deadline already), so a seat holding only
    its newest packet knows which packets a move of its answers (`answered_by`)."""
    return (packet.seq > 1 and not packet.moves and packet.handover is None and packet.waiting is None
            and packet.to_move is not None and named_for(packet.deadline, packet.to_move) is not None)


def answered_by(packet: Packet) -> list[int]:
    """The packets a seat's move made for which the host applies at `packet` (`renewed_from`
    as the seat reads it from the packet alone), newest first: `packet`'s own, and the packet
    before it when `packet` renews that one."""
    return renewed_from(packet.seq, [packet.seq] if renews(packet) else [])


def renewal_of(packet: Packet, before: Packet) -> bool:
    """Whether `packet` renews `before`, the packet right before it: it is a renewal (`renews`)
    of the same seat to move, and `before` names no deadline for that seat (a packet that names
    one is never renewed: the host renews only to name a deadline the packet before did not).
    That `packet` follows `before` in the chain (its `prev`) is the chain's to check."""
    seat = packet.to_move
    return (renews(packet) and seat is not None and packet.seq == before.seq + 1 and before.to_move == seat
            and named_for(before.deadline, seat) is None)

"""The move a timeout policy makes for a seat: one deterministic choice, which the host plays
and which an audit recomputes once the round's secrets are open (docs/protocol.md,
"Deadlines"). Both read the seat's own view only, as the seat would have.

The policy `bot` plays the search bot (engine/bots/search.py) with the budget the packet's
deadline names (`bot_turns`, simulated turns: a count, not seconds, so every machine finds
the same move), seeded by the game and the packet; a packet that names no budget (written
before budgets existed) meant the smart bot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.state import RoundState

POLICIES = ("discard", "bot")  # the policies that play (wait plays nothing)
# The search bot's budget a game sets unless told otherwise: simulated turns a decision (about
# 0.1 s of the compiled engine; the arena's search bot at --think 0.1 spends as much).
TAKEOVER_TURNS = 1000
# The most a game may set (`--bot-turns`): about 13 s a move on the compiled engine, which the
# host spends on each move it plays for a seat and every auditor spends again.
MAX_TAKEOVER_TURNS = 100_000
REASONS = ("timeout", "absent", "resigned")  # why a host move was made (Move.why)


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

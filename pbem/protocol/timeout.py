"""The move a timeout policy makes for a seat: one deterministic choice, which the host plays
and which an audit recomputes once the round's secrets are open (docs/protocol.md,
"Deadlines"). Both read the seat's own view only, as the seat would have.
"""

from __future__ import annotations

from engine.rules import legal_moves
from engine.state import RoundState

POLICIES = ("discard", "bot")  # the policies that play (wait plays nothing)
REASONS = ("timeout", "absent", "resigned")  # why a host move was made (Move.why)


def policy_move(seen: RoundState, seat: str, policy: str, game: str, seq: int) -> str:
    """The move `policy` makes for `seat` at packet `seq` of `game`, from the seat's view
    `seen`: `discard` throws the first card face down (the first legal move when no discard is
    legal), `bot` asks the smart bot seeded by game and packet."""
    if policy == "discard":
        moves = legal_moves(seen)
        discards = [m for m in moves if m.verb == "discard" and len(m.cards) == 1 and not m.remove]
        return str(discards[0] if discards else moves[0])
    if policy != "bot":
        raise ValueError(policy)
    from engine.bots import make_bot  # the bots are loaded only where a policy lets one play

    return str(make_bot("smart", seat, f"{game}/{seq}").choose(seen))

"""One seat's view of a round as text: the heading, the maze (pbem.ui.render), the players,
the counts, the result, the seat's role, knowledge and hand, and every open hand."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from engine.state import OVER, PLAYING, THEFT, RoundState
from pbem.ui import move_words, words
from pbem.ui.hints import Hints
from pbem.ui.render import Packed, render_hand, render_legend, render_maze, text_cells
from pbem.ui.words import t


def _known_goals(view: RoundState, me: str | None) -> dict[str, str]:
    facts = view.knowledge.get(me, []) if me else []
    # a trustless seat knows which goal its map looked at before the card itself is open ("?")
    return {f[1]: f[2] for f in facts if f and f[0] == "map" and f[2] != "?"}


def _players_table(view: RoundState, me: str | None, show_roles: bool) -> Table:
    table = Table(box=None, show_header=True, header_style="dim", pad_edge=False)
    table.add_column(Text(""))
    table.add_column(Text(t("player")))
    if show_roles:
        table.add_column(Text(t("role")))
    table.add_column(Text(t("hand sizes")), justify="right")
    table.add_column(Text(t("gold")), justify="right")
    table.add_column(Text(t("cards in front")))
    turn = view.player if view.phase in (PLAYING, THEFT) else None
    for p in view.players:
        row = ["▶" if p == turn else "", p + (" *" if p == me else "")]
        if show_roles:
            row.append(words.role_name(view.roles.get(p)))
        front = [words.card_name(c) for c in view.in_front.get(p, [])]
        row += [str(len(view.hands.get(p, []))), str(view.gold.get(p, 0)), words.listing(front) or "-"]
        table.add_row(*text_cells(*row), style="bold" if p == turn else None)
    return table


def _counts(view: RoundState) -> list[str]:
    parts = [t("deck", n=len(view.deck)), t("discard pile", n=len(view.discard))]
    if view.removed:
        parts.append(t("removed", n=len(view.removed)))
    if view.nuggets:
        parts.append(t("nuggets", n=len(view.nuggets)))
    if view.aside and view.ruleset != "classic":
        parts.append(t("aside", n=len(view.aside)))  # swap-hat draws from these
    return parts


def _heading(view: RoundState, header: dict | None, answered: bool = False) -> Text:
    bits = [t("title"), t(view.ruleset), t("round", n=view.round_no)]
    if answered:  # the seat to move has sent its move: the host's turn now
        bits.append(t("answered; waiting for the host"))
    elif view.phase == PLAYING:
        bits.append(t("to move", player=view.player))
    elif view.phase == THEFT:
        bits.append(t("thief to move", player=view.player))
    else:
        bits.append(t("round over"))
    text = Text(" · ".join(bits), style="bold")
    for key, value in (header or {}).items():
        text.append("\n" + words.labelled(key, value), style="dim")
    return text


def render_view(
    view: RoundState,
    me: str | None,
    *,
    last_moves: Iterable[str] = (),
    header: dict | None = None,
    answered: bool = False,
    hints: Hints | None = None,
) -> RenderableType:
    """What seat `me` sees. `view` is engine.views.view(state, me), or the full state.
    `answered`: `me` is to move and has sent its move (the heading says so). `hints`
    (pbem.ui.hints.hints_for): where `me`'s cards go, marked on the maze and said under the hand.

    With me=None and a full state (hands not masked) every hand and role is shown, for a
    referee or a replay; with a masked view only what the view holds is shown, so hidden
    cards never reach the page. `last_moves` are sentences (see move_words.describe_move).
    """
    parts: list[RenderableType] = [
        _heading(view, header, answered and me is not None and view.player == me),
        Text(""),
        render_maze(view.board, known_goals=_known_goals(view, me), hints=hints.cells if hints else None),
        render_legend(view.ruleset),
        Text(""),
        *view_details(view, me),
    ]
    if hints is not None:
        parts += [Text(""), Text(t("where your cards go"), style="bold underline")]
        if hints.cells:
            parts.append(Text(t("on the maze, numbers above a dot fit there as the card lies (play N at X,Y); after ↻ "
                                "below it, turned round (play N at X,Y rotated)"), style="dim"))
        parts += [Text(line) for line in hints.lines]
    moves = list(last_moves)
    if moves:
        parts += [Text(""), Text(t("last moves"), style="bold underline")]
        parts += [Text(f"- {m}") for m in moves]
    return Group(*parts)


def view_details(view: RoundState, me: str | None) -> list[RenderableType]:
    """What render_view shows under the maze: the players, the counts, the result, `me`'s role,
    knowledge and hand, and every other open hand (the replay's full screen scrolls these)."""
    open_hands = [p for p in view.players if any(c != "?" for c in view.hands.get(p, []))]
    roles_known = any(r not in (None, "?") for p, r in view.roles.items() if p != me)
    parts: list[RenderableType] = [
        _players_table(view, me, show_roles=roles_known or view.phase != PLAYING),
        Packed(_counts(view), style="dim"),
    ]
    if view.phase != PLAYING:
        roles_open = all(view.role(p) for p in view.players)
        if view.phase == OVER and roles_open:  # all open: the finder and the side
            parts.append(Text(move_words.round_outcome(view)[0]))
        elif view.finder:
            parts.append(Text(t("finder", player=view.finder)))
        if roles_open or view.phase != OVER:  # a round ended on a view with shut roles (trustless) is not paid yet
            parts.append(Text(t("winners", players=words.join(list(view.winners)) if view.winners else t("nobody"))))
            parts.append(Text(move_words.describe_event({"event": "payout", "gold": view.payout}) or ""))
    if me is not None:
        parts += [Text(""), Text(t("your role", role=words.role_name(view.roles.get(me))), style="bold")]
        facts = [line for fact in view.knowledge.get(me, []) if (line := move_words.describe_fact(fact))]
        if facts:
            parts.append(Text(t("you know", facts=t("fact sep").join(facts))))
        parts += [Text(""), Text(t("your hand"), style="bold underline"), render_hand(view.hands.get(me, []))]
    for p in open_hands:
        if p == me:
            continue
        parts += [Text(""), Text(t("hand of", player=p), style="bold underline"), render_hand(view.hands[p])]
    return parts

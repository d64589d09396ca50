"""Moves, engine events, what a seat knows and a round's outcome, in the reader's words
(through pbem.ui.words: its catalogs, card and role names)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from engine.errors import InvalidMove
from pbem.ui.words import article, card_name, goal_name, goal_word, join, kind_of, listing, role_name, t

if TYPE_CHECKING:
    from engine.moves import Move
    from engine.state import RoundState


def describe_fact(fact: list[str]) -> str | None:
    """One entry of RoundState.knowledge (["map", goal, card], ["inspect", player, role],
    ["hat", role]) as its owner reads it."""
    if fact[:1] == ["map"]:  # "?": a trustless seat's map card not open yet (said with the shut cards)
        return t("knows map", goal=goal_name(fact[1]), card=goal_word(fact[2])) if fact[2] != "?" else None
    if fact[:1] == ["inspect"]:
        return t("knows inspect", player=fact[1], a_role=article(role_name(fact[2])))
    if fact[:1] == ["hat"]:
        return t("knows hat", role=role_name(fact[1]))
    return None


# --- moves -------------------------------------------------------------------------------

def describe_move(move_text: str, actor: str, events: Sequence[Mapping[str, Any]] | None = None, *, reveal: bool = False) -> str:
    """A move in words. A discard never names its cards unless `reveal` (they are secret).

    `events` (from engine.rules.apply) add what the text alone does not say, e.g. which
    card a rockfall removed.
    """
    text = " ".join(move_text.strip().lower().split())
    if text in ("pass", "skip"):
        return t("pass", actor=actor)
    from engine.moves import parse

    try:
        move = parse(text, public=True)
    except InvalidMove:
        return t("unknown move", actor=actor, move=move_text)
    if move.verb == "discard":
        return _discard(move, actor, reveal and not move.face_down)
    if move.verb == "steal":
        if move.target is None:
            return t("steal nobody", actor=actor)
        return t("steal", actor=actor, target=move.target)
    return _play(move, actor, events or [])


def _discard(move: Move, actor: str, reveal: bool) -> str:
    n = len(move.cards)
    names = join([article(card_name(c)) for c in move.cards])
    if move.remove:
        kind = card_name(move.remove)
        if reveal:
            return t("discard remove named", actor=actor, cards=names, type=kind)
        return t("discard remove", actor=actor, n=n, type=kind)
    if reveal:
        return t("discard named", actor=actor, cards=names)
    return t("discard", actor=actor, n=n)


def _play(move: Move, actor: str, events: Sequence[Mapping[str, Any]]) -> str:
    assert move.card is not None
    k = kind_of(move.card)
    if k is None:
        return t("unknown move", actor=actor, move=str(move))
    kw: dict[str, object] = {"actor": actor, "card": card_name(k), "a_card": article(card_name(k)), "target": move.target}
    if move.at is not None:
        kw["at"] = f"{move.at[0]},{move.at[1]}"
    if k.category in ("path", "start", "goal"):
        return t("place rotated" if move.rotated else "place", **kw)
    action = k.action
    own = move.target == actor
    if action == "break":
        return t("break self" if own else "break", tool=t(k.tools[0]), **kw)
    if action == "fix":
        return t("fix self" if own else "fix", tool=t(move.tool or k.tools[0]), **kw)
    if action == "rockfall":
        removed = next((e.get("card") for e in events if e.get("event") == "rockfall"), None)
        if isinstance(removed, str):
            return t("rockfall card", removed=card_name(removed), a_removed=article(card_name(removed)), **kw)
        return t("rockfall", **kw)
    if action == "map":
        return t("map", goal=goal_name(move.target or ""), **kw)
    if action == "hands-off":
        return t("hands-off self" if own else "hands-off", theft=card_name("theft"), **kw)
    if action in ("free", "swap-hat"):
        return t(f"{action} self" if own else action, **kw)
    if action in ("theft", "trap", "inspect", "swap-hand"):
        return t(action, **kw)
    return t("unknown move", actor=actor, move=str(move))


# --- events ------------------------------------------------------------------------------

# Events that only repeat what the move's own sentence says, or that are secret (a draw).
_SILENT = frozenset({"place", "rockfall", "remove", "draw", "swap-hand"})
_PRIVATE = frozenset({"map", "inspect", "swap-hat"})
_ROUND_END = frozenset({"round_over", "payout", "winners", "next_start"})


def describe_event(event: Mapping[str, Any], *, reveal: bool = False) -> str | None:
    """An engine event in words, or None when it says nothing new or is secret.

    Private events (map, inspect, swap-hat results) are described only with `reveal`, for
    the one player who may know them. A "move" event is described in its public form.
    """
    kind = event.get("event")
    if kind in _SILENT:
        return None
    if kind in _PRIVATE and not reveal:
        return None
    if kind == "move":
        return _move_event(event, reveal)
    if kind in _PRIVATE:
        return _private_event(kind, event)
    if kind in _ROUND_END:
        return _round_end_event(kind, event)
    if kind == "reveal":
        return t("ev reveal", goal=goal_name(str(event["goal"])), card=goal_word(str(event["card"])))
    if kind == "gold":
        return t("ev gold", player=event["finder"])
    if kind == "skip":
        return t("ev skip", player=event["player"])
    if kind == "passes":
        return t("ev passes")
    if kind == "hands-empty":
        return t("ev hands empty")
    if kind == "nugget":
        value = event.get("value")
        if value is None and isinstance(event.get("card"), str):
            from engine.catalog import card_kind

            value = card_kind(str(event["card"])).value
        return t("ev nugget", player=event["player"], n=value)
    if kind == "teams":
        teams = list(event.get("teams", []))
        if teams:
            return t("ev teams", list=join([t(f"team {x}") for x in teams]))
        return t("ev boss alone") if event.get("lone") == "boss" else t("ev saboteurs")
    if kind == "crystals":
        return t("ev crystals", n=event.get("count", 0), each=event.get("each", 0))
    if kind == "thefts":
        return t("ev thefts", list=join(list(event.get("order", []))))
    if kind == "steal":
        # A real steal is the thief's move; only the engine's skip is news.
        return t("ev steal skipped", player=event["player"]) if event.get("skipped") else None
    return None


def _move_event(event: Mapping[str, Any], reveal: bool) -> str:
    """A "move" event: the move in words, in its public form unless `reveal`."""
    text = str(event.get("move", ""))
    if not reveal:
        from engine.moves import public_text

        try:
            text = public_text(text)
        except InvalidMove:
            text = "?"  # not a move: show nothing of it
    return describe_move(text, str(event.get("player")), reveal=reveal)


def _round_end_event(kind: str, event: Mapping[str, Any]) -> str:
    """How a round ends: gold found or not, the payout, the winners, who starts the next."""
    if kind == "round_over":
        found = event.get("gold_found")
        key = "ev round over" if found is None else "ev round over gold" if found else "ev round over no gold"
        return t(key, n=event.get("round", "?"))
    if kind == "payout":
        paid = [f"{p} {g:+d}" for p, g in dict(event.get("gold", {})).items() if g]
        return t("ev payout", list=join(paid)) if paid else t("ev payout none")
    if kind == "winners":
        players = list(event.get("players", []))
        return t("ev winners", list=join(players)) if players else t("ev no winners")
    return t("ev next start", player=event.get("player"))  # next_start


def _private_event(kind: str, event: Mapping[str, Any]) -> str:
    """What only one player may know: a goal seen with a map, a role inspected or swapped."""
    if kind == "map":
        return t("ev map", player=event["player"], goal=goal_name(str(event["goal"])), card=goal_word(str(event["card"])))
    if kind == "inspect":
        role = str(event.get("role"))
        return t("ev inspect", player=event["player"], target=event["target"], a_role=article(role_name(role)))
    return t("ev swap-hat", player=event["player"], role=role_name(str(event.get("role"))))


def round_outcome(state: RoundState) -> list[str]:
    """A finished round (its full final state) in two lines: who found the gold, or that nobody
    did, and which side won; then every seat's role (the saboteurs named at last)."""
    from engine.payout import winning_side

    if state.ruleset == "classic":
        side = (t("the gold-diggers win") if state.finder else t("ev saboteurs")) if state.winners else t("ev no winners")
    else:
        teams, lone = winning_side(state)
        side = describe_event({"event": "teams", "teams": sorted(teams), "lone": lone}) or ""
    found = (t("{player} found the gold: {side}", player=state.finder, side=side) if state.finder
             else t("the gold was not found: {side}", side=side))
    roles = listing(f"{p} {role_name(state.roles.get(p))}" for p in state.players)
    return [found, t("roles: {list}", list=roles)]

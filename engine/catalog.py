"""Every card of both rulesets, as data.

A card id is `<kind>.<n>` with n = 1..count. Adding cards means adding rows here; the rules
read shapes, modifiers and categories, never kind names (except the fixed start and goals).
The crystal shapes of the expansion are a reconstruction (RULES.md §2.2) and live only here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Final, Literal, TypeGuard, get_args

from .record import Frozen
from .shapes import parse_segments, turned

Ruleset = Literal["classic", "expansion"]
CLASSIC: Final = "classic"
EXPANSION: Final = "expansion"
RULESETS: tuple[Ruleset, ...] = get_args(Ruleset)

Category = Literal["start", "goal", "path", "action", "gold", "dwarf"]
# What an action card does; engine/actions.py holds each one's rule.
Action = Literal["break", "fix", "rockfall", "map", "theft", "hands-off", "trap", "free", "inspect", "swap-hat",
                 "swap-hand"]
ACTIONS: tuple[Action, ...] = get_args(Action)
Tool = Literal["pick", "lamp", "cart"]
TOOLS: tuple[Tool, ...] = get_args(Tool)
# Card types that can lie in front of a player (at most one of each).
FrontType = Literal["break-pick", "break-lamp", "break-cart", "trap", "theft"]
FRONT_TYPES: tuple[FrontType, ...] = get_args(FrontType)
Team = Literal["green", "blue"]
TEAMS: tuple[Team, ...] = get_args(Team)


def is_ruleset(word: object) -> TypeGuard[Ruleset]:
    return word in RULESETS


def is_tool(word: object) -> TypeGuard[Tool]:
    return word in TOOLS


def is_front_type(word: object) -> TypeGuard[FrontType]:
    return word in FRONT_TYPES


def is_team(word: object) -> TypeGuard[Team]:
    return word in TEAMS


class CardKind(Frozen):
    FIELDS = ("kind", "category", "count", "en", "zh", "zh_hant", "ruleset", "segments", "ladder", "door", "crystals",
              "action", "tools", "value", "expansion_count", "openings", "symmetric", "front_type")
    __slots__ = FIELDS

    def __init__(self, kind: str, category: Category, count: int, en: str, zh: str, zh_hant: str,
                 ruleset: Ruleset = CLASSIC, segments: tuple[int, ...] = (), ladder: bool = False,
                 door: str | None = None, crystals: int = 0, action: Action | None = None,
                 tools: tuple[Tool, ...] = (), value: int = 0, expansion_count: int | None = None) -> None:
        self.kind: Final = kind
        self.category: Final = category
        self.count: Final = count
        self.en: Final = en
        self.zh: Final = zh  # 简体
        self.zh_hant: Final = zh_hant  # 繁體
        self.ruleset: Final = ruleset
        self.segments: Final = segments
        self.ladder: Final = ladder  # on the first segment
        self.door: Final = door  # on the first segment
        self.crystals: Final = crystals
        self.action: Final = action
        self.tools: Final = tools  # break: the tool it breaks; fix: the tools it may repair
        self.value: Final = value  # gold nugget value
        # The expansion replaces the base dwarves and nuggets: how many copies it uses, if not all.
        self.expansion_count: Final = expansion_count

        # Derived from the fields above (read in the hot loops):
        mask = 0
        for seg in segments:
            mask |= seg
        self.openings: Final = mask  # the union of the segments' edges
        # turning the card changes nothing ("rotated" is dropped)
        self.symmetric: Final = sorted(segments) == sorted(turned(s) for s in segments)
        front: FrontType | None = None
        if action == "break":
            front = broken(tools[0])
        elif action == "trap" or action == "theft":
            front = action
        self.front_type: Final = front  # its type when it lies in front of a player


def broken(tool: Tool) -> FrontType:
    """The in-front type of a broken `tool`: "pick" -> "break-pick"."""
    return BROKEN[tool]


BROKEN: dict[Tool, FrontType] = {"pick": "break-pick", "lamp": "break-lamp", "cart": "break-cart"}


def _path(kind: str, code: str, count: int, en: str, zh: str, zh_hant: str, ruleset: Ruleset = CLASSIC,
          category: Category = "path") -> CardKind:
    words = code.split()
    return CardKind(
        kind=kind,
        category=category,
        count=count,
        en=en,
        zh=zh,
        zh_hant=zh_hant,
        ruleset=ruleset,
        segments=parse_segments(words[0]),
        ladder="ladder" in words[1:],
        door=next((w.split(":")[1] for w in words[1:] if w.startswith("door:")), None),
        crystals=words[1:].count("crystal"),
    )


def _act(kind: str, action: Action, count: int, en: str, zh: str, zh_hant: str, tools: tuple[Tool, ...] = (),
         ruleset: Ruleset = CLASSIC) -> CardKind:
    return CardKind(kind, "action", count, en, zh, zh_hant, ruleset, action=action, tools=tuple(tools))


X: Final = EXPANSION
_KINDS: tuple[CardKind, ...] = (
    _path("start", "NESW ladder", 1, "start", "起点", "起點", category="start"),
    _path("goal-gold", "NESW", 1, "gold goal", "金矿终点", "金礦終點", category="goal"),
    _path("goal-stone-nw", "NW", 1, "stone goal", "石头终点", "石頭終點", category="goal"),
    _path("goal-stone-ne", "NE", 1, "stone goal", "石头终点", "石頭終點", category="goal"),
    _path("cross", "NESW", 5, "crossing", "十字路", "十字路"),
    _path("tee-new", "NEW", 5, "T-junction", "丁字路", "丁字路"),
    _path("tee-nes", "NES", 5, "T-junction", "丁字路", "丁字路"),
    _path("straight-ns", "NS", 4, "straight", "直路", "直路"),
    _path("straight-ew", "EW", 3, "straight", "直路", "直路"),
    _path("curve-nw", "NW", 4, "curve", "弯路", "彎路"),
    _path("curve-ne", "NE", 5, "curve", "弯路", "彎路"),
    _path("dead-nesw", "N|E|S|W", 1, "dead end", "死路", "死路"),
    _path("dead-new", "N|E|W", 1, "dead end", "死路", "死路"),
    _path("dead-nes", "N|E|S", 1, "dead end", "死路", "死路"),
    _path("dead-ns", "N|S", 1, "dead end", "死路", "死路"),
    _path("dead-ew", "E|W", 1, "dead end", "死路", "死路"),
    _path("dead-nw", "N|W", 1, "dead end", "死路", "死路"),
    _path("dead-ne", "N|E", 1, "dead end", "死路", "死路"),
    _path("dead-n", "N", 1, "dead end", "死路", "死路"),
    _path("dead-e", "E", 1, "dead end", "死路", "死路"),
    _act("break-pick", "break", 3, "broken pick", "损坏的丁字镐", "損壞的丁字鎬", ("pick",)),
    _act("break-lamp", "break", 3, "broken lamp", "熄灭的提灯", "熄滅的提燈", ("lamp",)),
    _act("break-cart", "break", 3, "broken cart", "损毁的推车", "損毀的推車", ("cart",)),
    _act("fix-pick", "fix", 2, "pick repair", "修好的丁字镐", "修好的丁字鎬", ("pick",)),
    _act("fix-lamp", "fix", 2, "lamp repair", "修好的提灯", "修好的提燈", ("lamp",)),
    _act("fix-cart", "fix", 2, "cart repair", "修好的推车", "修好的推車", ("cart",)),
    _act("fix-pick-lamp", "fix", 1, "pick or lamp repair", "丁字镐或提灯", "丁字鎬或提燈", ("pick", "lamp")),
    _act("fix-pick-cart", "fix", 1, "pick or cart repair", "丁字镐或推车", "丁字鎬或推車", ("pick", "cart")),
    _act("fix-lamp-cart", "fix", 1, "lamp or cart repair", "提灯或推车", "提燈或推車", ("lamp", "cart")),
    _act("rockfall", "rockfall", 3, "rockfall", "塌方", "塌方"),
    _act("map", "map", 6, "map", "地图", "地圖"),
    CardKind("gold-1", "gold", 16, "1 gold nugget", "金块", "金塊", value=1, expansion_count=0),
    CardKind("gold-2", "gold", 8, "2 gold nuggets", "金块", "金塊", value=2, expansion_count=0),
    CardKind("gold-3", "gold", 4, "3 gold nuggets", "金块", "金塊", value=3, expansion_count=0),
    CardKind("digger", "dwarf", 7, "gold-digger", "好矮人", "好矮人", expansion_count=0),
    # Saboteur 2 brings 3 saboteurs of its own; they share the kind (and ids 1-3).
    CardKind("saboteur", "dwarf", 4, "saboteur", "坏胚子", "壞胚子", expansion_count=3),
    # Saboteur 2
    _path("bridge", "NS|EW", 2, "bridge", "桥梁", "橋樑", X),
    _path("double-curve", "NW|SE", 2, "double curve", "双弯道", "雙彎道", X),
    _path("ladder-w", "W ladder", 1, "ladder", "梯子", "梯子", X),
    _path("ladder-n", "N ladder", 1, "ladder", "梯子", "梯子", X),
    _path("ladder-nw", "NW ladder", 1, "ladder", "梯子", "梯子", X),
    _path("ladder-sw", "SW ladder", 1, "ladder", "梯子", "梯子", X),
    _path("door-green-ew", "EW door:green", 1, "green door", "绿门", "綠門", X),
    _path("door-green-nw", "NW door:green", 1, "green door", "绿门", "綠門", X),
    _path("door-green-ns-w", "NS|W door:green", 1, "green door", "绿门", "綠門", X),
    _path("door-blue-ns", "NS door:blue", 1, "blue door", "蓝门", "藍門", X),
    _path("door-blue-ew", "EW door:blue", 1, "blue door", "蓝门", "藍門", X),
    _path("door-blue-sw", "SW door:blue", 1, "blue door", "蓝门", "藍門", X),
    _path("crystal-n", "N crystal", 1, "crystal", "水晶", "水晶", X),
    _path("crystal-w", "W crystal", 1, "crystal", "水晶", "水晶", X),
    _path("crystal-cross", "NESW crystal", 1, "crystal", "水晶", "水晶", X),
    _path("crystal-tee-new", "NEW crystal", 3, "crystal", "水晶", "水晶", X),
    _path("crystal-tee-nes", "NES crystal", 1, "crystal", "水晶", "水晶", X),
    _path("crystal-nes-w", "NES|W crystal", 1, "crystal", "水晶", "水晶", X),
    _path("crystal-new-s", "NEW|S crystal", 1, "crystal", "水晶", "水晶", X),
    _path("crystal-ew-n", "EW|N crystal", 1, "crystal", "水晶", "水晶", X),
    _path("crystal-ew", "EW crystal", 2, "crystal", "水晶", "水晶", X),
    _path("crystal-ns", "NS crystal", 1, "crystal", "水晶", "水晶", X),
    _path("crystal-ne", "NE crystal", 1, "crystal", "水晶", "水晶", X),
    _path("crystal-nw", "NW crystal", 1, "crystal", "水晶", "水晶", X),
    _path("crystal-dead", "N|E|S|W crystal", 1, "crystal", "水晶", "水晶", X),
    _act("theft", "theft", 4, "theft", "偷窃", "偷竊", ruleset=X),
    _act("hands-off", "hands-off", 3, "hands off", "防盗", "防盜", ruleset=X),
    _act("swap-hand", "swap-hand", 2, "swap hands", "交换手牌", "交換手牌", ruleset=X),
    _act("inspect", "inspect", 2, "inspect", "侦察", "偵察", ruleset=X),
    _act("swap-hat", "swap-hat", 2, "swap hats", "换角", "換角", ruleset=X),
    _act("trap", "trap", 3, "trap", "圈套", "圈套", ruleset=X),
    _act("free", "free", 4, "free", "解套", "解套", ruleset=X),
    CardKind("green", "dwarf", 4, "green gold-digger", "绿队掘金者", "綠隊掘金者", X),
    CardKind("blue", "dwarf", 4, "blue gold-digger", "蓝队掘金者", "藍隊掘金者", X),
    CardKind("boss", "dwarf", 1, "boss", "老板", "老闆", X),
    CardKind("profiteer", "dwarf", 1, "profiteer", "奸商", "奸商", X),
    CardKind("geologist", "dwarf", 2, "geologist", "地质学家", "地質學家", X),
)

KINDS: dict[str, CardKind] = {k.kind: k for k in _KINDS}
HIDDEN: Final = "?"  # a card one may not see, in a view (engine/views.py) or a move's public form
GOAL_KINDS = ("goal-gold", "goal-stone-nw", "goal-stone-ne")


def ids_of(kind: str) -> list[str]:
    k = KINDS[kind]
    return [f"{kind}.{n}" for n in range(1, k.count + 1)]


_KIND_OF: dict[str, str] = {cid: k.kind for k in _KINDS for cid in ids_of(k.kind)}
_CARD_KIND: dict[str, CardKind] = {cid: KINDS[k] for cid, k in _KIND_OF.items()}
_FRONT_OF: dict[str, FrontType | None] = {cid: KINDS[k].front_type for cid, k in _KIND_OF.items()}

# The lookups below are the tables' own __getitem__: the engine asks them thousands of times
# per simulated round, and a bound method of a dict runs no Python code. KeyError for an unknown id.
card_kind: Callable[[str], CardKind] = _CARD_KIND.__getitem__
"""`cross.3` -> the cross kind."""
kind_name: Callable[[str], str] = _KIND_OF.__getitem__
"""`cross.3` -> "cross"."""
# The cards that forbid placing path cards while they lie in front of a player: broken tools and traps.
BLOCKERS: frozenset[str] = frozenset(cid for cid, k in _KIND_OF.items() if KINDS[k].action in ("break", "trap"))


front_type_of: Callable[[str], FrontType | None] = _FRONT_OF.__getitem__
"""`card_kind(card_id).front_type`."""


def is_card_id(text: str) -> bool:
    return text in _KIND_OF


@cache
def deck_ids(ruleset: Ruleset) -> tuple[str, ...]:
    """The tunnel and action cards shuffled into the deck, in catalog order."""
    return tuple(
        cid
        for k in _KINDS
        if k.category in ("path", "action")
        for cid in ids_of(k.kind)[: _count_in(k, ruleset)]
    )


def _count_in(k: CardKind, ruleset: Ruleset) -> int:
    if k.ruleset == EXPANSION:
        return k.count if ruleset == EXPANSION else 0
    if ruleset == EXPANSION and k.expansion_count is not None:
        return k.expansion_count
    return k.count


@cache
def dwarf_ids(ruleset: Ruleset) -> tuple[str, ...]:
    """The dwarf (role) cards of a ruleset, in catalog order."""
    return tuple(
        f"{k.kind}.{n}" for k in _KINDS if k.category == "dwarf" for n in range(1, _count_in(k, ruleset) + 1)
    )


@cache
def nugget_ids() -> tuple[str, ...]:
    return tuple(cid for k in _KINDS if k.category == "gold" for cid in ids_of(k.kind))


_SORT_KEY: dict[str, tuple[str, int]] = {
    cid: (cid.rpartition(".")[0], int(cid.rpartition(".")[2])) for cid in _KIND_OF
}


_RANK: dict[str, int] = {cid: i for i, cid in enumerate(sorted(_SORT_KEY, key=_SORT_KEY.__getitem__))}
# The place of a card id in the order of `card_sort_key`, for sorting real ids fast (KeyError otherwise).
card_rank: Callable[[str], int] = _RANK.__getitem__


def card_sort_key(card_id: str) -> tuple[str, int]:
    """Order of card ids: by kind, then copy number (cross.2 before cross.10)."""
    key = _SORT_KEY.get(card_id)
    if key is None:
        kind, _, n = card_id.rpartition(".")
        return (kind, int(n))
    return key

"""pbem.ui.words: message tables, names, moves and events in English, 简体 and 繁體."""

from __future__ import annotations

import re

import pytest

from engine.catalog import KINDS
from pbem.ui import words
from pbem.ui.move_words import describe_event, describe_move
from pbem.ui.words import card_name, role_name, t

HAN = re.compile(r"[\u4e00-\u9fff]")


def test_language_from_env_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    assert words.language() == "en"
    monkeypatch.setenv("PBEM_LANG", "zh_TW.UTF-8")
    assert words.language() == "zh-Hant"
    monkeypatch.setenv("PBEM_LANG", "zh-CN")
    assert words.language() == "zh-Hans"
    monkeypatch.setenv("PBEM_LANG", "klingon")
    assert words.language() == "en"  # a bad variable falls back, never breaks
    words.set_language("zh-Hant")
    assert words.language() == "zh-Hant"
    with words.using("en"):
        assert t("your hand") == "your hand"
    assert words.language() == "zh-Hant"
    with pytest.raises(ValueError):
        words.set_language("klingon")


def test_plurals() -> None:
    assert t("deck", n=1) == "deck: 1 card"
    assert t("deck", n=0) == "deck: 0 cards"
    with words.using("zh-Hans"):
        assert t("deck", n=2) == "牌库：2 张"


def test_names_from_the_catalog() -> None:
    assert card_name("cross.3") == "crossing"
    assert card_name("cross") == "crossing"
    assert card_name(KINDS["bridge"]) == "bridge"
    assert card_name("?") == "face-down card"
    assert role_name("saboteur") == "saboteur"
    assert role_name("digger.2") == "gold-digger"
    assert role_name(None) == "?"
    with words.using("zh-Hans"):
        assert card_name("break-lamp.1") == "损坏的提灯"  # one word (损坏) for every broken tool
        assert role_name("boss") == "老板"
    with words.using("zh-Hant"):
        assert card_name("break-lamp") == "損壞的提燈"
        assert role_name("boss") == "老闆"


ENGLISH = [
    ("play cross.1 at 3,0", "ann", "ann placed a crossing at 3,0"),
    ("play curve-ne.2 at 3,-1 rotated", "ann", "ann placed a curve at 3,-1, turned around"),
    ("play break-lamp.1 on ann", "bob", "bob broke ann's lamp"),
    ("play break-cart on bob", "bob", "bob broke their own cart"),
    ("play fix-pick.1 on dan pick", "dan", "dan repaired their pick"),
    ("play fix-pick-lamp.1 on ann lamp", "dan", "dan repaired ann's lamp"),
    ("play rockfall.1 at 4,1", "cat", "cat caused a rockfall at 4,1"),
    ("play map.2 on top", "cat", "cat looked at the top goal"),
    ("play theft.1", "ann", "ann put a theft in front of them"),
    ("play hands-off.1 on bob", "ann", "ann removed bob's theft"),
    ("play trap.1 on bob", "ann", "ann trapped bob"),
    ("play free.1 on bob", "cat", "cat freed bob"),
    ("play free.1 on cat", "cat", "cat freed themself"),
    ("play inspect.1 on bob", "ann", "ann looked at bob's dwarf card"),
    ("play swap-hat.1 on bob", "ann", "ann made bob swap hats"),
    ("play swap-hat.1 on ann", "ann", "ann swapped hats"),
    ("play swap-hand.1 on bob", "ann", "ann swapped hands with bob"),
    ("discard cross.1 map.2", "ann", "ann discarded 2 cards"),
    ("discard map.2", "ann", "ann discarded 1 card"),
    ("discard 2 cards", "ann", "ann discarded 2 cards"),
    ("discard cross.1 map.2 remove trap", "eve", "eve removed the trap in front of them by discarding 2 cards"),
    ("discard 2 cards remove break-pick", "eve", "eve removed the broken pick in front of them by discarding 2 cards"),
    ("steal ann", "bob", "bob stole 1 gold from ann"),
    ("steal nobody", "bob", "bob stole from nobody"),
    ("pass", "cat", "cat passed"),
]


@pytest.mark.parametrize("move, actor, expected", ENGLISH, ids=[m for m, _, _ in ENGLISH])
def test_describe_move_english(move: str, actor: str, expected: str) -> None:
    assert describe_move(move, actor) == expected


def test_discarded_cards_only_with_reveal() -> None:
    assert describe_move("discard cross.1 map.2", "ann", reveal=True) == "ann discarded a crossing and a map"
    assert "crossing" not in describe_move("discard cross.1 map.2", "ann")


def test_events_enrich_a_rockfall() -> None:
    events = [{"event": "rockfall", "at": [4, 1], "card": "curve-ne.3"}]
    assert describe_move("play rockfall.1 at 4,1", "cat", events) == "cat caused a rockfall at 4,1, removing a curve"


def test_unknown_text_does_not_raise() -> None:
    assert describe_move("dance wildly", "ann") == "ann: dance wildly"


# One sentence per move kind, each with the catalog name it must carry.
CHINESE = [
    ("play cross.1 at 3,0", "ann", "cross"),
    ("play break-lamp.1 on ann", "bob", "break-lamp"),
    ("play fix-pick-lamp.1 on ann lamp", "dan", "fix-pick-lamp"),
    ("play rockfall.1 at 4,1", "cat", "rockfall"),
    ("play map.2 on top", "cat", "map"),
    ("play theft.1", "ann", "theft"),
    ("play hands-off.1 on bob", "ann", "hands-off"),
    ("play trap.1 on bob", "ann", "trap"),
    ("play free.1 on bob", "cat", "free"),
    ("play inspect.1 on bob", "ann", "inspect"),
    ("play swap-hat.1 on bob", "ann", "swap-hat"),
    ("play swap-hand.1 on bob", "ann", "swap-hand"),
    ("discard 2 cards remove trap", "eve", "trap"),
]


@pytest.mark.parametrize("lang", ["zh-Hans", "zh-Hant"])
def test_describe_move_chinese(lang: str) -> None:
    for move, actor, kind in CHINESE:
        with words.using(lang):
            text = describe_move(move, actor)
            name = card_name(kind)
        assert name in text and HAN.search(name), (lang, move, text)
        assert text.startswith(actor) and HAN.search(text)
    with words.using("zh-Hans"):
        assert describe_move("discard 2 cards", "ann") == "ann 弃掉了 2 张牌"
        assert describe_move("steal ann", "bob") == "bob 从 ann 那里偷走了 1 块金子"
        assert describe_move("play fix-pick.1 on dan pick", "dan") == "dan 用「修好的丁字镐」修好了自己的丁字镐"
    with words.using("zh-Hant"):
        assert describe_move("discard 2 cards", "ann") == "ann 棄掉了 2 張牌"
        assert describe_move("play map.2 on top", "cat") == "cat 用「地圖」查看了上方的終點"


def test_describe_event() -> None:
    assert describe_event({"event": "reveal", "goal": "top", "card": "goal-stone-nw.1"}) == (
        "the top goal is turned over: stone"
    )
    assert describe_event({"event": "reveal", "goal": "middle", "card": "goal-gold.1"}) == (
        "the middle goal is turned over: gold"
    )
    assert describe_event({"event": "gold", "finder": "ann"}) == "ann found the gold!"
    assert describe_event({"event": "round_over", "round": 2, "gold_found": False}) == (
        "round 2 is over: the gold was not found"
    )
    assert describe_event({"event": "payout", "gold": {"ann": 3, "bob": 0}}) == "payout: ann +3"
    assert describe_event({"event": "payout", "gold": {"ann": 0}}) == "nobody gets gold"
    assert describe_event({"event": "skip", "player": "dan"}) == "dan has no cards and passes"
    assert describe_event({"event": "nugget", "player": "ann", "card": "gold-3.2"}) == "ann gets 3 gold"
    assert describe_event({"event": "winners", "players": ["ann", "cat"]}) == "winners: ann and cat"
    assert describe_event({"event": "draw", "player": "ann", "card": "cross.1"}) is None


def test_private_events_need_reveal() -> None:
    event = {"event": "map", "player": "ann", "goal": "top", "card": "goal-gold.1", "private": True}
    assert describe_event(event) is None
    assert describe_event(event, reveal=True) == "ann saw the top goal: gold"
    move = {"event": "move", "player": "ann", "move": "discard cross.1 map.2"}
    assert describe_event(move) == "ann discarded 2 cards"


def test_events_in_chinese() -> None:
    with words.using("zh-Hans"):
        assert describe_event({"event": "reveal", "goal": "top", "card": "goal-stone-nw.1"}) == "上方的终点翻开了：石头"
        assert describe_event({"event": "winners", "players": ["ann", "cat"]}) == "获胜者：ann 和 cat"
    with words.using("zh-Hant"):
        assert describe_event({"event": "gold", "finder": "ann"}) == "ann 找到了金礦！"

"""Every word the player reads, in English, 简体 and 繁體.

Card and role names come from the engine catalog; everything else is a template in MESSAGES.
The language is chosen by `set_language`, else by the environment variable PBEM_LANG (read
on each call, so tests and per-recipient mails can switch), else English.

A template is a str.format string, or a (one, many) pair picked by the keyword `n`, because
English needs plurals and Chinese does not.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from collections.abc import Mapping, Sequence
from typing import Any, Iterator

from engine.catalog import KINDS, CardKind, card_kind, is_card_id
from engine.errors import InvalidMove
from engine.moves import Move, parse, public_text

LANGUAGES = ("en", "zh-Hans", "zh-Hant")
_chosen: str | None = None

# Keys shared by the three tables; a test checks that none is missing in any language.
MESSAGES: dict[str, dict[str, str | tuple[str, str]]] = {
    "en": {
        # --- the table ---
        "title": "Saboteur",
        "classic": "classic",
        "expansion": "Saboteur 2",
        "round": "round {n}",
        "to move": "to move: {player}",
        "old packet": "packet {seq} is an old one: you have already seen packet {newest}; this is not the table now",
        "old packet hint": "show the newest packet ({newest} or later) instead",
        "thief to move": "{player} chooses whom to rob",
        "your hand": "your hand",
        "hand of": "{player}'s hand",
        "trustless table": "trustless game {game}, packet {seq}: nobody, host included, sees a card that is not theirs",
        "trustless waits": "the table waits for the {step} step from {seats}",
        "trustless step shuffle": "shuffle", "trustless step deal": "deal tokens", "trustless step join": "join", "trustless step move": "move",
        "card waits": "{slot}: waiting for tokens from {seats}",
        "not open yet": "not open yet",
        "your role": "your role: {role}",
        "role": "role",
        "player": "player",
        "card": "card",
        "name": "name",
        "shape": "shape",
        "hand sizes": "cards in hand",
        "cards in front": "cards in front",
        "gold": "gold",
        "deck": ("deck: {n} card", "deck: {n} cards"),
        "discard pile": ("discard pile: {n} card", "discard pile: {n} cards"),
        "removed": ("out of this round: {n} card", "out of this round: {n} cards"),
        "nuggets": ("nugget cards left: {n}", "nugget cards left: {n}"),
        "aside": ("dwarf cards aside: {n}", "dwarf cards aside: {n}"),
        "last moves": "last moves",
        "you know": "what you know: {facts}",
        "fact sep": "; ",
        "knows map": "the {goal} goal is {card}",
        "knows inspect": "{player} is {a_role}",
        "knows hat": "your role is now {role}",
        "nothing": "nothing",
        "nobody": "nobody",
        "empty hand": "no cards",
        "unknown": "?",
        "round over": "the round is over",
        "winners": "winners: {players}",
        "finder": "the gold was found by {player}",
        # Legend items; render.py puts the glyph in front of each.
        "lg start": "start",
        "lg goal": "face-down goal",
        "lg gold": "gold",
        "lg stone": "stone",
        "lg dead end": "dead end",
        "lg ladder": "ladder",
        "lg door": "door",
        "lg crystal": "crystal",
        "lg bridge": "bridge",
        "lg double curve": "two curves",
        "face-down card": "face-down card",
        "and": " and ",
        "list sep": ", ",
        # --- words used inside sentences ---
        "top": "top",
        "middle": "middle",
        "bottom": "bottom",
        "pick": "pick",
        "lamp": "lamp",
        "cart": "cart",
        "goal gold": "gold",
        "goal stone": "stone",
        # --- moves ---
        "place": "{actor} placed {a_card} at {at}",
        "place rotated": "{actor} placed {a_card} at {at}, turned around",
        "break": "{actor} broke {target}'s {tool}",
        "break self": "{actor} broke their own {tool}",
        "fix": "{actor} repaired {target}'s {tool}",
        "fix self": "{actor} repaired their {tool}",
        "rockfall": "{actor} caused a rockfall at {at}",
        "rockfall card": "{actor} caused a rockfall at {at}, removing {a_removed}",
        "map": "{actor} looked at the {goal} goal",
        "theft": "{actor} put a theft in front of them",
        "hands-off": "{actor} removed {target}'s theft",
        "hands-off self": "{actor} removed their own theft",
        "trap": "{actor} trapped {target}",
        "free": "{actor} freed {target}",
        "free self": "{actor} freed themself",
        "inspect": "{actor} looked at {target}'s dwarf card",
        "swap-hat": "{actor} made {target} swap hats",
        "swap-hat self": "{actor} swapped hats",
        "swap-hand": "{actor} swapped hands with {target}",
        "discard": ("{actor} discarded {n} card", "{actor} discarded {n} cards"),
        "discard named": "{actor} discarded {cards}",
        "discard remove": (
            "{actor} removed the {type} in front of them by discarding {n} card",
            "{actor} removed the {type} in front of them by discarding {n} cards",
        ),
        "discard remove named": "{actor} removed the {type} in front of them by discarding {cards}",
        "steal": "{actor} stole 1 gold from {target}",
        "steal nobody": "{actor} stole from nobody",
        "pass": "{actor} passed",
        "unknown move": "{actor}: {move}",
        "hint did you mean": "did you mean: {move}",
        "hint notation": "moves read like 'play 3 at 1,0' (card 3 of your hand), 'play cross.1 at 1,0 rotated', 'play fix-pick on bob', 'discard 2'; see docs/playing.md",
        # --- events ---
        "ev reveal": "the {goal} goal is turned over: {card}",
        "ev gold": "{player} found the gold!",
        "ev round over": "round {n} is over",
        "ev round over gold": "round {n} is over: the gold was found",
        "ev round over no gold": "round {n} is over: the gold was not found",
        "ev payout": "payout: {list}",
        "ev payout none": "nobody gets gold",
        "ev winners": "winners: {list}",
        "ev no winners": "nobody wins",
        "ev next start": "{player} starts the next round",
        "ev skip": "{player} has no cards and passes",
        "ev passes": "everyone passed",
        "ev hands empty": "all hands are empty",
        "ev nugget": "{player} gets {n} gold",
        "ev teams": "winning team: {list}",
        "ev boss alone": "the boss wins alone",
        "ev saboteurs": "the saboteurs win",
        "ev crystals": ("{n} crystal in the maze: {each} gold per geologist",
                        "{n} crystals in the maze: {each} gold per geologist"),
        "ev thefts": "thieves, in order: {list}",
        "ev steal skipped": "{player} has nobody to rob",
        "ev map": "{player} saw the {goal} goal: {card}",
        "ev inspect": "{player} saw that {target} is {a_role}",
        "ev swap-hat": "{player}'s role is now {role}",
        "team green": "green",
        "team blue": "blue",
        # --- deadlines and the table's news (pbem/ui/when.py) ---
        "weekdays": "Mon Tue Wed Thu Fri Sat Sun",
        "months": "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec",
        "date": "{wd} {d} {mon} {hm} UTC",
        "span day": ("{n} day", "{n} days"),
        "span hour": ("{n} hour", "{n} hours"),
        "span minute": ("{n} minute", "{n} minutes"),
        "span second": ("{n} second", "{n} seconds"),
        "span sep": " ",
        "in span": "in {span}",
        "late by": "{span} late",
        "due mine": "your move, due {when}, {left}",
        "due other": "{player} to move, due {when}, {left}",
        "paused": "the game is paused: deadlines do not count",
        "absent list": "absent (the host plays for them): {list}",
        "away list": "away: {list}",
        "away until": "{player} until {when}",
        "since your turn": "since your last turn",
        "news": "news from the host",
        "by host": "{line} (played by the host: {why})",
        "why timeout": "no move in time",
        "why absent": "absent",
        "why resigned": "resigned",
        "nt reminder": "reminder: {player} to move in packet {seq}, due {when}, {left}",
        "nt late": "{player} is late: packet {seq} was due {when}",
        "nt absent": "{player} is now absent after {n} missed deadlines: the host plays for them",
        "nt away": "{player} is away until {when}; their deadlines stretch to then",
        "nt back": "{player} is back",
        "nt paused": "the host paused the game",
        "nt resumed": "the host resumed the game",
        "nt due": "{player}'s move in packet {seq} is now due {when}",
        "nt resigned": "{player} resigned; the host follows the timeout policy ({policy}) for that seat",
        "nt handover": "seat {player} was handed over to a new key ({fingerprint})",
        # --- mail ---
        "mail turn subject": "{tag} your turn, {seat}: round {round}, packet {seq}",
        "mail digest subject": ("{tag} {n} move; {player} to move (round {round}, packet {seq})",
                                "{tag} {n} moves; {player} to move (round {round}, packet {seq})"),
        "mail round subject": "{tag} round {done} over; round {round}, packet {seq}: {player} to move",
        "mail over subject": "{tag} game over, won by {winners}",
        "mail head": "pbem game {game}, round {round}, packet {seq}",
        "mail since": ("Since your last mail, {n} move:", "Since your last mail, {n} moves:"),
        "mail round over": "Round {n} is over. Winners: {winners}.",
        "mail finder": "The gold was found by {player}.",
        "mail payout": "Payout: {list}.",
        "mail gold so far": "Gold so far: {list}.",
        "mail game over": "The game is over. Gold: {list}. Winner(s): {winners}.",
        "mail your turn": "It is YOUR turn.",
        "mail now": "Now: {player} to move.",
        "mail sealed": "The packet is attached and also below; your hand is sealed inside it for your key only.",
        "mail to play": "To play (with 'pbem mail setup' done once):",
        "mail digest note": "You get a mail when it is your turn, and otherwise at most one summary every {period}.",
        "mail every": "every packet",
    },
    "zh-Hans": {
        "title": "矮人矿坑",
        "classic": "基础版",
        "expansion": "扩充版",
        "round": "第 {n} 轮",
        "to move": "轮到：{player}",
        "old packet": "第 {seq} 号包是旧的：你已经看过第 {newest} 号包，这不是现在的牌桌",
        "old packet hint": "请改为查看最新的包（第 {newest} 号或更新的）",
        "thief to move": "{player} 选择偷谁",
        "your hand": "你的手牌",
        "hand of": "{player} 的手牌",
        "trustless table": "无信任游戏 {game}，第 {seq} 个数据包：任何人（包括主持人）都看不到别人的牌",
        "trustless waits": "牌桌在等待 {seats} 完成{step}",
        "trustless step shuffle": "洗牌", "trustless step deal": "发牌令牌", "trustless step join": "加入", "trustless step move": "出牌",
        "card waits": "{slot}：等待 {seats} 的令牌",
        "not open yet": "尚未打开",
        "your role": "你的身份：{role}",
        "role": "身份",
        "player": "玩家",
        "card": "牌",
        "name": "名称",
        "shape": "形状",
        "hand sizes": "手牌数",
        "cards in front": "面前的牌",
        "gold": "金子",
        "deck": "牌库：{n} 张",
        "discard pile": "弃牌堆：{n} 张",
        "removed": "本轮移除：{n} 张",
        "nuggets": "剩余金块卡：{n} 张",
        "aside": "未发的矮人牌：{n} 张",
        "last moves": "最近的行动",
        "you know": "你知道的：{facts}",
        "fact sep": "；",
        "knows map": "{goal}的终点是{card}",
        "knows inspect": "{player} 是{a_role}",
        "knows hat": "你现在的身份是{role}",
        "nothing": "无",
        "nobody": "无人",
        "empty hand": "没有牌",
        "unknown": "?",
        "round over": "本轮结束",
        "winners": "获胜者：{players}",
        "finder": "{player} 挖到了金子",
        "lg start": "起点",
        "lg goal": "未翻开的终点",
        "lg gold": "金矿",
        "lg stone": "石头",
        "lg dead end": "死路",
        "lg ladder": "梯子",
        "lg door": "门",
        "lg crystal": "水晶",
        "lg bridge": "桥梁",
        "lg double curve": "双弯道",
        "face-down card": "背面朝上的牌",
        "and": "和",
        "list sep": "、",
        "top": "上方",
        "middle": "中间",
        "bottom": "下方",
        "pick": "丁字镐",
        "lamp": "提灯",
        "cart": "推车",
        "goal gold": "金矿",
        "goal stone": "石头",
        "place": "{actor} 在 {at} 放置了「{card}」",
        "place rotated": "{actor} 在 {at} 放置了倒转的「{card}」",
        "break": "{actor} 对 {target} 打出「{card}」",
        "break self": "{actor} 对自己打出「{card}」",
        "fix": "{actor} 用「{card}」修好了 {target} 的{tool}",
        "fix self": "{actor} 用「{card}」修好了自己的{tool}",
        "rockfall": "{actor} 在 {at} 打出「{card}」",
        "rockfall card": "{actor} 在 {at} 打出「{card}」，移除了「{removed}」",
        "map": "{actor} 用「{card}」查看了{goal}的终点",
        "theft": "{actor} 在自己面前打出「{card}」",
        "hands-off": "{actor} 用「{card}」移除了 {target} 的「{theft}」",
        "hands-off self": "{actor} 用「{card}」移除了自己的「{theft}」",
        "trap": "{actor} 对 {target} 打出「{card}」",
        "free": "{actor} 用「{card}」解救了 {target}",
        "free self": "{actor} 用「{card}」解救了自己",
        "inspect": "{actor} 用「{card}」查看了 {target} 的矮人牌",
        "swap-hat": "{actor} 用「{card}」让 {target} 换了身份",
        "swap-hat self": "{actor} 用「{card}」给自己换了身份",
        "swap-hand": "{actor} 用「{card}」与 {target} 交换了手牌",
        "discard": "{actor} 弃掉了 {n} 张牌",
        "discard named": "{actor} 弃掉了{cards}",
        "discard remove": "{actor} 弃掉 {n} 张牌，移除了自己面前的「{type}」",
        "discard remove named": "{actor} 弃掉{cards}，移除了自己面前的「{type}」",
        "steal": "{actor} 从 {target} 那里偷走了 1 块金子",
        "steal nobody": "{actor} 没有偷任何人",
        "pass": "{actor} 跳过了回合",
        "unknown move": "{actor}：{move}",
        "hint did you mean": "你是不是想写：{move}",
        "hint notation": "走法写作 'play 3 at 1,0'（手牌第 3 张）、'play cross.1 at 1,0 rotated'、'play fix-pick on bob'、'discard 2'；见 docs/playing.md",
        "ev reveal": "{goal}的终点翻开了：{card}",
        "ev gold": "{player} 挖到了金子！",
        "ev round over": "第 {n} 轮结束",
        "ev round over gold": "第 {n} 轮结束：金子被挖到了",
        "ev round over no gold": "第 {n} 轮结束：没有挖到金子",
        "ev payout": "分配金子：{list}",
        "ev payout none": "没有人得到金子",
        "ev winners": "获胜者：{list}",
        "ev no winners": "没有人获胜",
        "ev next start": "下一轮由 {player} 先开始",
        "ev skip": "{player} 没有手牌，跳过",
        "ev passes": "所有玩家都跳过了",
        "ev hands empty": "所有手牌都已出完",
        "ev nugget": "{player} 得到 {n} 块金子",
        "ev teams": "获胜的队伍：{list}",
        "ev boss alone": "老板独自获胜",
        "ev saboteurs": "坏胚子获胜",
        "ev crystals": "矿坑里有 {n} 颗水晶：每位地质学家得到 {each} 块金子",
        "ev thefts": "偷窃顺序：{list}",
        "ev steal skipped": "{player} 没有可偷的人",
        "ev map": "{player} 看到{goal}的终点是{card}",
        "ev inspect": "{player} 看到 {target} 是{a_role}",
        "ev swap-hat": "{player} 现在的身份是{role}",
        "team green": "绿队",
        "team blue": "蓝队",
        # --- deadlines and the table's news (pbem/ui/when.py) ---
        "weekdays": "周一 周二 周三 周四 周五 周六 周日",
        "months": "1 2 3 4 5 6 7 8 9 10 11 12",
        "date": "{mon}月{d}日（{wd}）{hm} UTC",
        "span day": ("{n}天", "{n}天"),
        "span hour": ("{n}小时", "{n}小时"),
        "span minute": ("{n}分钟", "{n}分钟"),
        "span second": ("{n}秒", "{n}秒"),
        "span sep": "",
        "in span": "还有{span}",
        "late by": "已超时{span}",
        "due mine": "轮到你了，截止 {when}，{left}",
        "due other": "轮到 {player}，截止 {when}，{left}",
        "paused": "游戏已暂停：期限不计时",
        "absent list": "缺席（由主持人代打）：{list}",
        "away list": "请假：{list}",
        "away until": "{player} 至 {when}",
        "since your turn": "你上次出牌以来",
        "news": "主持人通知",
        "by host": "{line}（由主持人代打：{why}）",
        "why timeout": "超时未出牌",
        "why absent": "缺席",
        "why resigned": "已退出",
        "nt reminder": "提醒：第 {seq} 包轮到 {player}，截止 {when}，{left}",
        "nt late": "{player} 超时了：第 {seq} 包截止于 {when}",
        "nt absent": "{player} 连续 {n} 次超时，现为缺席：由主持人代打",
        "nt away": "{player} 请假至 {when}，期限顺延至那时",
        "nt back": "{player} 回来了",
        "nt paused": "主持人暂停了游戏",
        "nt resumed": "主持人恢复了游戏",
        "nt due": "第 {seq} 包 {player} 的截止时间现为 {when}",
        "nt resigned": "{player} 已退出；该座位按超时规则（{policy}）处理",
        "nt handover": "座位 {player} 已交给新的密钥（{fingerprint}）",
        # --- mail ---
        "mail turn subject": "{tag} 轮到你了，{seat}：第 {round} 轮，第 {seq} 个数据包",
        "mail digest subject": "{tag} {n} 步；轮到 {player}（第 {round} 轮，第 {seq} 个数据包）",
        "mail round subject": "{tag} 第 {done} 轮结束；第 {round} 轮，第 {seq} 个数据包：轮到 {player}",
        "mail over subject": "{tag} 游戏结束，获胜者：{winners}",
        "mail head": "pbem 游戏 {game}，第 {round} 轮，第 {seq} 个数据包",
        "mail since": "自你上一封邮件以来的 {n} 步：",
        "mail round over": "第 {n} 轮结束。获胜者：{winners}。",
        "mail finder": "金子由 {player} 挖到。",
        "mail payout": "分配金子：{list}。",
        "mail gold so far": "目前金子：{list}。",
        "mail game over": "游戏结束。金子：{list}。获胜者：{winners}。",
        "mail your turn": "现在轮到你了。",
        "mail now": "现在轮到 {player}。",
        "mail sealed": "数据包在附件中，也在下方；你的手牌已加密，只有你的密钥能打开。",
        "mail to play": "出牌（先运行一次 'pbem mail setup'）：",
        "mail digest note": "轮到你时你会收到邮件，其余时候每 {period} 最多一封摘要。",
        "mail every": "每个数据包",
    },
    "zh-Hant": {
        "title": "矮人礦坑",
        "classic": "基礎版",
        "expansion": "擴充版",
        "round": "第 {n} 輪",
        "to move": "輪到：{player}",
        "old packet": "第 {seq} 號封包是舊的：你已經看過第 {newest} 號封包，這不是現在的牌桌",
        "old packet hint": "請改為查看最新的封包（第 {newest} 號或更新的）",
        "thief to move": "{player} 選擇偷誰",
        "your hand": "你的手牌",
        "hand of": "{player} 的手牌",
        "trustless table": "無信任遊戲 {game}，第 {seq} 個資料包：任何人（包括主持人）都看不到別人的牌",
        "trustless waits": "牌桌在等待 {seats} 完成{step}",
        "trustless step shuffle": "洗牌", "trustless step deal": "發牌令牌", "trustless step join": "加入", "trustless step move": "出牌",
        "card waits": "{slot}：等待 {seats} 的令牌",
        "not open yet": "尚未打開",
        "your role": "你的身份：{role}",
        "role": "身份",
        "player": "玩家",
        "card": "牌",
        "name": "名稱",
        "shape": "形狀",
        "hand sizes": "手牌數",
        "cards in front": "面前的牌",
        "gold": "金子",
        "deck": "牌庫：{n} 張",
        "discard pile": "棄牌堆：{n} 張",
        "removed": "本輪移除：{n} 張",
        "nuggets": "剩餘金塊卡：{n} 張",
        "aside": "未發的矮人牌：{n} 張",
        "last moves": "最近的行動",
        "you know": "你知道的：{facts}",
        "fact sep": "；",
        "knows map": "{goal}的終點是{card}",
        "knows inspect": "{player} 是{a_role}",
        "knows hat": "你現在的身份是{role}",
        "nothing": "無",
        "nobody": "無人",
        "empty hand": "沒有牌",
        "unknown": "?",
        "round over": "本輪結束",
        "winners": "獲勝者：{players}",
        "finder": "{player} 挖到了金子",
        "lg start": "起點",
        "lg goal": "未翻開的終點",
        "lg gold": "金礦",
        "lg stone": "石頭",
        "lg dead end": "死路",
        "lg ladder": "梯子",
        "lg door": "門",
        "lg crystal": "水晶",
        "lg bridge": "橋樑",
        "lg double curve": "雙彎道",
        "face-down card": "背面朝上的牌",
        "and": "和",
        "list sep": "、",
        "top": "上方",
        "middle": "中間",
        "bottom": "下方",
        "pick": "丁字鎬",
        "lamp": "提燈",
        "cart": "推車",
        "goal gold": "金礦",
        "goal stone": "石頭",
        "place": "{actor} 在 {at} 放置了「{card}」",
        "place rotated": "{actor} 在 {at} 放置了倒轉的「{card}」",
        "break": "{actor} 對 {target} 打出「{card}」",
        "break self": "{actor} 對自己打出「{card}」",
        "fix": "{actor} 用「{card}」修好了 {target} 的{tool}",
        "fix self": "{actor} 用「{card}」修好了自己的{tool}",
        "rockfall": "{actor} 在 {at} 打出「{card}」",
        "rockfall card": "{actor} 在 {at} 打出「{card}」，移除了「{removed}」",
        "map": "{actor} 用「{card}」查看了{goal}的終點",
        "theft": "{actor} 在自己面前打出「{card}」",
        "hands-off": "{actor} 用「{card}」移除了 {target} 的「{theft}」",
        "hands-off self": "{actor} 用「{card}」移除了自己的「{theft}」",
        "trap": "{actor} 對 {target} 打出「{card}」",
        "free": "{actor} 用「{card}」解救了 {target}",
        "free self": "{actor} 用「{card}」解救了自己",
        "inspect": "{actor} 用「{card}」查看了 {target} 的矮人牌",
        "swap-hat": "{actor} 用「{card}」讓 {target} 換了身份",
        "swap-hat self": "{actor} 用「{card}」給自己換了身份",
        "swap-hand": "{actor} 用「{card}」與 {target} 交換了手牌",
        "discard": "{actor} 棄掉了 {n} 張牌",
        "discard named": "{actor} 棄掉了{cards}",
        "discard remove": "{actor} 棄掉 {n} 張牌，移除了自己面前的「{type}」",
        "discard remove named": "{actor} 棄掉{cards}，移除了自己面前的「{type}」",
        "steal": "{actor} 從 {target} 那裡偷走了 1 塊金子",
        "steal nobody": "{actor} 沒有偷任何人",
        "pass": "{actor} 跳過了回合",
        "unknown move": "{actor}：{move}",
        "hint did you mean": "你是不是想寫：{move}",
        "hint notation": "走法寫作 'play 3 at 1,0'（手牌第 3 張）、'play cross.1 at 1,0 rotated'、'play fix-pick on bob'、'discard 2'；見 docs/playing.md",
        "ev reveal": "{goal}的終點翻開了：{card}",
        "ev gold": "{player} 挖到了金子！",
        "ev round over": "第 {n} 輪結束",
        "ev round over gold": "第 {n} 輪結束：金子被挖到了",
        "ev round over no gold": "第 {n} 輪結束：沒有挖到金子",
        "ev payout": "分配金子：{list}",
        "ev payout none": "沒有人得到金子",
        "ev winners": "獲勝者：{list}",
        "ev no winners": "沒有人獲勝",
        "ev next start": "下一輪由 {player} 先開始",
        "ev skip": "{player} 沒有手牌，跳過",
        "ev passes": "所有玩家都跳過了",
        "ev hands empty": "所有手牌都已出完",
        "ev nugget": "{player} 得到 {n} 塊金子",
        "ev teams": "獲勝的隊伍：{list}",
        "ev boss alone": "老闆獨自獲勝",
        "ev saboteurs": "壞胚子獲勝",
        "ev crystals": "礦坑裡有 {n} 顆水晶：每位地質學家得到 {each} 塊金子",
        "ev thefts": "偷竊順序：{list}",
        "ev steal skipped": "{player} 沒有可偷的人",
        "ev map": "{player} 看到{goal}的終點是{card}",
        "ev inspect": "{player} 看到 {target} 是{a_role}",
        "ev swap-hat": "{player} 現在的身份是{role}",
        "team green": "綠隊",
        "team blue": "藍隊",
        # --- deadlines and the table's news (pbem/ui/when.py) ---
        "weekdays": "週一 週二 週三 週四 週五 週六 週日",
        "months": "1 2 3 4 5 6 7 8 9 10 11 12",
        "date": "{mon}月{d}日（{wd}）{hm} UTC",
        "span day": ("{n}天", "{n}天"),
        "span hour": ("{n}小時", "{n}小時"),
        "span minute": ("{n}分鐘", "{n}分鐘"),
        "span second": ("{n}秒", "{n}秒"),
        "span sep": "",
        "in span": "還有{span}",
        "late by": "已逾時{span}",
        "due mine": "輪到你了，截止 {when}，{left}",
        "due other": "輪到 {player}，截止 {when}，{left}",
        "paused": "遊戲已暫停：期限不計時",
        "absent list": "缺席（由主持人代打）：{list}",
        "away list": "請假：{list}",
        "away until": "{player} 至 {when}",
        "since your turn": "你上次出牌以來",
        "news": "主持人通知",
        "by host": "{line}（由主持人代打：{why}）",
        "why timeout": "逾時未出牌",
        "why absent": "缺席",
        "why resigned": "已退出",
        "nt reminder": "提醒：第 {seq} 包輪到 {player}，截止 {when}，{left}",
        "nt late": "{player} 逾時了：第 {seq} 包截止於 {when}",
        "nt absent": "{player} 連續 {n} 次逾時，現為缺席：由主持人代打",
        "nt away": "{player} 請假至 {when}，期限順延至那時",
        "nt back": "{player} 回來了",
        "nt paused": "主持人暫停了遊戲",
        "nt resumed": "主持人恢復了遊戲",
        "nt due": "第 {seq} 包 {player} 的截止時間現為 {when}",
        "nt resigned": "{player} 已退出；該座位按逾時規則（{policy}）處理",
        "nt handover": "座位 {player} 已交給新的金鑰（{fingerprint}）",
        # --- mail ---
        "mail turn subject": "{tag} 輪到你了，{seat}：第 {round} 輪，第 {seq} 個資料包",
        "mail digest subject": "{tag} {n} 步；輪到 {player}（第 {round} 輪，第 {seq} 個資料包）",
        "mail round subject": "{tag} 第 {done} 輪結束；第 {round} 輪，第 {seq} 個資料包：輪到 {player}",
        "mail over subject": "{tag} 遊戲結束，獲勝者：{winners}",
        "mail head": "pbem 遊戲 {game}，第 {round} 輪，第 {seq} 個資料包",
        "mail since": "自你上一封郵件以來的 {n} 步：",
        "mail round over": "第 {n} 輪結束。獲勝者：{winners}。",
        "mail finder": "金子由 {player} 挖到。",
        "mail payout": "分配金子：{list}。",
        "mail gold so far": "目前金子：{list}。",
        "mail game over": "遊戲結束。金子：{list}。獲勝者：{winners}。",
        "mail your turn": "現在輪到你了。",
        "mail now": "現在輪到 {player}。",
        "mail sealed": "資料包在附件中，也在下方；你的手牌已加密，只有你的金鑰能打開。",
        "mail to play": "出牌（先執行一次 'pbem mail setup'）：",
        "mail digest note": "輪到你時你會收到郵件，其餘時候每 {period} 最多一封摘要。",
        "mail every": "每個資料包",
    },
}


# --- the language ------------------------------------------------------------------------


def _normalise(lang: str) -> str | None:
    """Map the usual spellings (zh_CN.UTF-8, zh-TW, zh-hant, en_GB ...) to a LANGUAGES entry."""
    code = lang.strip().split(".")[0].replace("_", "-").lower()
    if code in ("zh-hant", "zh-tw", "zh-hk", "zh-mo") or code.startswith("zh-hant"):
        return "zh-Hant"
    if code == "zh" or code.startswith(("zh-hans", "zh-cn", "zh-sg")):
        return "zh-Hans"
    if code == "en" or code.startswith("en-"):
        return "en"
    return None


def set_language(lang: str | None) -> None:
    """Choose the language; None goes back to PBEM_LANG. Raises ValueError when unknown."""
    global _chosen
    if lang is None:
        _chosen = None
        return
    norm = _normalise(lang)
    if norm is None:
        raise ValueError(f"unknown language {lang!r}; choose one of {', '.join(LANGUAGES)}")
    _chosen = norm


def language() -> str:
    if _chosen is not None:
        return _chosen
    # A bad PBEM_LANG must not break every command: fall back to English.
    return _normalise(os.environ.get("PBEM_LANG", "en")) or "en"


@contextmanager
def using(lang: str) -> Iterator[None]:
    """Temporarily write in `lang` (e.g. one mail per recipient)."""
    global _chosen
    before = _chosen
    set_language(lang)
    try:
        yield
    finally:
        _chosen = before


def t(key: str, **kw: object) -> str:
    """The message `key` in the current language, formatted with `kw` (English if missing)."""
    template = MESSAGES[language()].get(key, MESSAGES["en"][key])
    if isinstance(template, tuple):
        template = template[0] if kw.get("n") == 1 else template[1]
    return template.format(**kw)


# --- names -------------------------------------------------------------------------------


def _kind(card: str | CardKind) -> CardKind | None:
    if isinstance(card, CardKind):
        return card
    if is_card_id(card):
        return card_kind(card)
    return KINDS.get(card)


def card_name(card: str | CardKind) -> str:
    """The catalog name of a card id (`cross.3`), a kind (`cross`) or a CardKind."""
    k = _kind(card)
    if k is None:
        return t("face-down card") if card == "?" else str(card)
    lang = language()
    return k.en if lang == "en" else k.zh if lang == "zh-Hans" else k.zh_hant


def role_name(kind: str | CardKind | None) -> str:
    """A role (dwarf kind or dwarf card id); None or "?" is unknown."""
    if kind is None or kind == "?" or kind == "none":
        return t("unknown")
    return card_name(kind)


def article(name: str) -> str:
    """English indefinite article; Chinese needs none."""
    if language() != "en":
        return name
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def join(items: list[str]) -> str:
    """`a, b and c` / `a、b和c`."""
    if not items:
        return t("nothing")
    if len(items) == 1:
        return items[0]
    head, last = t("list sep").join(items[:-1]), items[-1]
    sep = t("and")
    # Chinese runs words together, but a Latin name ("ann和cat") needs air around 和.
    if sep.strip() == sep and (head[-1:].isascii() or last[:1].isascii()):
        sep = f" {sep} "
    return head + sep + last


def goal_name(goal: str) -> str:
    return t(goal) if goal in ("top", "middle", "bottom") else goal


def goal_word(card: str) -> str:
    """gold / stone for a goal card id or kind."""
    k = _kind(card)
    return t("goal gold") if k is not None and k.kind == "goal-gold" else t("goal stone")


def describe_fact(fact: list[str]) -> str | None:
    """One entry of RoundState.knowledge (["map", goal, card], ["inspect", player, role],
    ["hat", role]) as its owner reads it."""
    if fact[:1] == ["map"]:
        return t("knows map", goal=goal_name(fact[1]), card=goal_word(fact[2]))
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
    k = _kind(move.card)
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
        text = str(event.get("move", ""))
        if not reveal:
            try:
                text = public_text(text)
            except InvalidMove:
                text = "?"  # not a move: show nothing of it
        return describe_move(text, str(event.get("player")), reveal=reveal)
    if kind == "reveal":
        return t("ev reveal", goal=goal_name(str(event["goal"])), card=goal_word(str(event["card"])))
    if kind == "gold":
        return t("ev gold", player=event["finder"])
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
    if kind == "next_start":
        return t("ev next start", player=event.get("player"))
    if kind == "skip":
        return t("ev skip", player=event["player"])
    if kind == "passes":
        return t("ev passes")
    if kind == "hands-empty":
        return t("ev hands empty")
    if kind == "nugget":
        value = event.get("value")
        if value is None and isinstance(event.get("card"), str):
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
    if kind == "map":
        return t("ev map", player=event["player"], goal=goal_name(str(event["goal"])), card=goal_word(str(event["card"])))
    if kind == "inspect":
        role = str(event.get("role"))
        return t("ev inspect", player=event["player"], target=event["target"], a_role=article(role_name(role)))
    if kind == "swap-hat":
        return t("ev swap-hat", player=event["player"], role=role_name(str(event.get("role"))))
    return None

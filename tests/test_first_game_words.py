"""What a newcomer reads at the end of a round and of a game, and in `pbem status`."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from processes import pbem
from table_games import make_table, play_until

from pbem.protocol.documents import Result, Standings
from pbem.seat import player as P
from pbem.seat.screen import packet_renderable, result_lines
from pbem.ui import when, words
from pbem.ui.render import plain_text


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory):
    table = make_table(tmp_path_factory.mktemp("game"), ["ann", "bob", "cat"])
    play_until(table, lambda p: p.doc.phase == "game-over", seed=3, limit=5000)
    _, last = table.latest()
    return table, last


@pytest.mark.slow
def test_the_last_packet_names_the_winners_once_and_no_next_round(finished) -> None:
    table, last = finished
    sp = P.open_packet(last, table.ids["ann"], table.homes["ann"])
    text = plain_text(packet_renderable(sp), width=100)
    st = last.doc.standings
    assert st is not None
    one = len(st.winners) == 1
    assert re.search(r"game over: .+ (wins|win) with \d+ gold", text)
    assert (" wins with " in text) == one and (" win with " in text and " each" in text) == (not one)
    assert "starts the next round" not in text  # round 3 of 3 is the last
    assert "to move" not in text.split("game over")[-1]
    with words.using("zh-Hans"):
        chinese = plain_text(packet_renderable(sp), width=100)
    assert "游戏结束" in chinese and "下一轮由" not in chinese and "牌包" in chinese


def test_result_lines_grammar() -> None:
    st = Standings(winners=["bob"], gold={"ann": 3, "bob": 8})
    assert result_lines(None, st) == ["game over: bob wins with 8 gold"]
    st = Standings(winners=["ann", "bob"], gold={"ann": 8, "bob": 8})
    assert result_lines(None, st) == ["game over: ann and bob win with 8 gold each"]
    with words.using("zh-Hant"):
        assert result_lines(None, st) == ["遊戲結束：ann 和 bob 以 8 塊金子獲勝"]
    result = Result(round=2, secret="00", finder=None, winners=[], payout={"ann": 0}, gold={"ann": 0},
                    next_start="ann", final={})
    assert result_lines(result, None) == ["round 2 is over: winners nobody; nobody gets gold"]


def test_times_in_words() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    ago = lambda **kw: (now - timedelta(**kw)).isoformat()  # noqa: E731
    assert when.ago(ago(seconds=20), now) == "just now"
    assert when.ago(ago(minutes=1), now) == "1 minute ago"
    assert when.ago(ago(hours=3, minutes=5), now) == "3 hours ago"
    assert when.ago(ago(days=2), now) == "2 days ago"
    assert when.ago(None, now) == "-"
    with words.using("zh-Hans"):
        assert when.ago(ago(hours=3), now) == "3 小时前"


def test_pad_counts_wide_characters() -> None:
    assert words.pad("已加入", 10) == "已加入    "  # 6 cells + 4 spaces
    assert words.pad("joined", 10) == "joined    "


def test_status_in_words(tmp_path: Path) -> None:

    table = make_table(tmp_path, ["ann", "bob", "cat"])
    table.host.close()
    run = pbem("status", "--db", tmp_path / "game.db", env={"PBEM_LANG": "zh-Hans"})
    assert run.returncode == 0, run.stderr
    assert "进行中" in run.stdout and "已加入" in run.stdout and "刚刚" in run.stdout, run.stdout
    assert "joined" not in run.stdout and "last activity" not in run.stdout

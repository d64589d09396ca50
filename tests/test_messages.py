"""Words not yet said (pbem.errors.Msg): an error carries a message id, its values and a stable
code; only the edges say it, in a language they pass (pbem.ui.words.render)."""

from __future__ import annotations

from pathlib import Path

import processes
from source_trees import nodes

from pbem.errors import BadName, BadPacket, CannotRead, Msg, kind_word, listed, msg
from pbem.ui import words


def test_a_message_is_said_in_the_language_passed_whatever_the_current_one() -> None:
    m = msg("a {kind} block", kind=kind_word("packet"))
    with words.using("zh-Hant"):
        assert words.render(m, "zh-Hans") == "一个牌包块"
        assert words.render(m, "en") == "a packet block"
        assert words.render(m) == "一個牌包塊"
    assert str(m) == "a packet block"  # plain English without the catalogs, for logs
    assert words.render(listed(["a", "b", "c"]), "zh-Hans") == "a、b 和 c"
    assert Msg("x", {"n": 1}) == msg("x", n=1) != msg("x", n=2)


def test_an_error_has_a_code_english_str_and_words_in_each_language() -> None:
    bad = BadName("seat", "Bob!")
    assert bad.code == "bad-name" and BadPacket(msg("the packet is unusable: {error}", error="x")).code == "bad-packet"
    assert BadPacket("said", code="forked").code == "forked"
    assert str(bad) == "bad seat name 'Bob!'"
    assert words.render(bad.message, "zh-Hans") == "玩家名 'Bob!' 不对"
    gone = CannotRead("/nowhere", "os", reason="No such file or directory", errno=2)
    assert words.render(gone.message, "zh-Hant") == "無法讀取 '/nowhere'：沒有這個檔案或資料夾"
    assert str(gone) == "cannot read '/nowhere': No such file or directory"
    # an error handed to t() as a value is said in t()'s language, not in English
    outer = msg("packet {seq}: {error}", seq=3, error=gone)
    assert words.render(outer, "zh-Hans") == "牌包 3：无法读取 '/nowhere'：没有这个文件或文件夹"


def test_the_cli_says_an_inner_error_in_the_readers_language(tmp_path: Path) -> None:
    """The CLI's printer is an edge: the same refusal in 简体 and in English, one line each."""
    for lang, said in (("zh-Hans", "错误：无法读取 "), ("en", "error: cannot read ")):
        run = processes.pbem("--lang", lang, "show", tmp_path / "missing.txt", home=tmp_path)
        assert run.returncode == 3, run.stderr
        assert run.stderr.startswith(said) and run.stderr.count("\n") == 1, run.stderr
        assert "Traceback" not in run.stderr


def test_a_language_passed_in_stays_with_its_call_and_never_becomes_the_process_language() -> None:
    """Two mails said at once in two threads keep their own words; the CLI's language is untouched."""
    import threading

    from pbem.errors import date_word

    said: dict[str, list[str]] = {}
    barrier = threading.Barrier(2)

    def mail(lang: str) -> None:
        def words_of_one_mail() -> list[str]:
            barrier.wait()  # both threads inside in_language at once
            return [words.t("title"), words.render(date_word("2026-12-03T18:00:00+00:00"))]

        said[lang] = words.in_language(lang, words_of_one_mail)

    threads = [threading.Thread(target=mail, args=(lang,)) for lang in ("zh-Hans", "zh-Hant")]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert said["zh-Hans"][0] == "矮人矿坑" and said["zh-Hant"][0] == "矮人礦坑"
    assert said["zh-Hans"][1] != said["zh-Hant"][1] and "12月3日" in said["zh-Hans"][1]
    assert words.language() == "en" and words.t("title") == "Saboteur"


def test_words_said_in_a_given_language_are_still_collected_for_the_catalogs() -> None:
    """scripts/i18n collects the literal first argument of t(), msg() and N_(): a message handed to
    t_in(lang, "...") would be missed (and pruned), so the code says a literal through those."""
    import ast

    root = Path(__file__).resolve().parents[1]
    hidden = []
    for path in sorted((root / "pbem").rglob("*.py")):
        for node in nodes(path):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "t_in" \
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                hidden.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not hidden, hidden

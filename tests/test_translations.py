"""The gettext catalogs: well formed, complete, and used for every line a person reads."""

from __future__ import annotations

import ast
import gettext
import re
import shutil
import subprocess
from datetime import UTC
from pathlib import Path

import pytest
from source_trees import nodes, sources

from pbem.ui import catalog, words
from pbem.ui.words import t

ROOT = Path(__file__).resolve().parents[1]
ARG = re.compile(r"(?<!\{)\{(\w+)")
HAN = re.compile(r"[\u4e00-\u9fff]")


def _args(text: str) -> set[str]:
    return set(ARG.findall(text))


def _also_given(entry: catalog.Entry) -> set[str]:
    """Placeholders a translator may use beyond the English ones (`#. also given: {card}`)."""
    return {a for c in entry.comments if c.startswith("#. also given:") for a in _args(c)}


@pytest.mark.parametrize("path", [catalog.SOURCE, *catalog.CATALOGS.values()], ids=lambda p: p.name)
def test_catalog_compiles_as_gnu_msgfmt_does(path: Path, tmp_path: Path) -> None:
    """Our in-memory compiler and GNU msgfmt (the reference tool) give the same catalog."""
    msgfmt = shutil.which("msgfmt")
    assert msgfmt, "GNU gettext's msgfmt is needed to check the catalogs (apt-get install gettext)"
    mo = tmp_path / "x.mo"
    run = subprocess.run([msgfmt, "--check", "-o", str(mo), str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    with mo.open("rb") as f:
        reference = gettext.GNUTranslations(f)
    ours = gettext.GNUTranslations(__import__("io").BytesIO(catalog.compile_mo(catalog.read_po(path))))
    assert ours._catalog == reference._catalog  # type: ignore[attr-defined]
    assert ours.plural(1) == reference.plural(1) and ours.plural(5) == reference.plural(5)  # type: ignore[attr-defined]


def test_po_round_trip() -> None:
    for path in [catalog.SOURCE, *catalog.CATALOGS.values()]:
        text = path.read_text(encoding="utf-8")
        assert catalog.format_po(catalog.read_po(path)).strip() == text.strip(), path.name


def test_parse_po_handles_continuations_escapes_and_fuzzy() -> None:
    text = '''# header
msgid ""
msgstr "Content-Type: text/plain; charset=UTF-8\\n"
"Plural-Forms: nplurals=1; plural=0;\\n"

#, fuzzy
msgid "old"
msgstr "旧"

msgctxt "k"
msgid ""
"two "
"lines \\"quoted\\""
msgstr "两行"

msgid "one"
msgid_plural "many"
msgstr[0] "多"
'''
    entries = catalog.parse_po(text)
    assert [e.key for e in entries] == [(None, ""), (None, "old"), ("k", 'two lines "quoted"'), (None, "one")]
    assert not entries[1].translated and entries[2].msgstr == ["两行"] and entries[3].plural == "many"
    tr = gettext.GNUTranslations(__import__("io").BytesIO(catalog.compile_mo(entries)))
    assert tr.gettext("old") == "old"  # fuzzy entries are not used, as msgfmt does
    assert tr.pgettext("k", 'two lines "quoted"') == "两行"
    assert tr.ngettext("one", "many", 7) == "多"
    with pytest.raises(catalog.PoError, match=":2:"):
        catalog.parse_po('msgid ""\nmsgstr unquoted\n')


def test_commands_read_a_catalog_as_parse_po_and_compile_mo_do() -> None:
    """A command reads its words with a few regular expressions (catalog.keys_of, compile_po),
    not through parse_po: the same .mo bytes and the same keys, for every catalog, and for a
    catalog laid out otherwise (continued strings, escapes, fuzzy and untranslated entries, a
    plural with and without a context)."""
    odd = '''msgid ""
msgstr "Content-Type: text/plain; charset=UTF-8\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

#, python-brace-format, fuzzy
msgid "old {x}"
msgstr "旧"

msgid "not yet"
msgstr ""

msgctxt "k"
msgid "two "
"lines \\"quoted\\""
msgstr "两\\n行"

msgctxt "deck"
msgid "one"
msgid_plural "many"
msgstr[0] "一"
msgstr[1] "多"

msgid "one"
msgid_plural "many"
msgstr[0] "1"
msgstr[1] "n"
'''
    one_line_each = catalog.format_po(catalog.parse_po(odd))
    for text in (odd, one_line_each, *(p.read_text(encoding="utf-8") for p in [catalog.SOURCE, *catalog.CATALOGS.values()])):
        entries = catalog.parse_po(text)
        assert catalog.compile_po(text) == catalog.compile_mo(entries)
        assert catalog.keys_of(text) == {e.msgctxt or e.msgid: (e.msgctxt, e.msgid, e.plural) for e in entries
                                         if e.msgid and (e.msgctxt or e.plural)}
    assert catalog.keys_of(odd)["deck"] == ("deck", "one", "many") and catalog.keys_of(odd)["one"] == (None, "one", "many")
    said = gettext.GNUTranslations(__import__("io").BytesIO(catalog.compile_po(one_line_each)))
    assert (said.pgettext("k", 'two lines "quoted"'), said.gettext("old {x}"), said.npgettext("deck", "one", "many", 1),
            said.ngettext("one", "many", 2)) == ("两\n行", "old {x}", "一", "n")


@pytest.mark.parametrize("lang", list(catalog.CATALOGS))
def test_every_source_entry_is_translated(lang: str) -> None:
    source = catalog.source()
    entries = {e.key: e for e in catalog.read_po(catalog.CATALOGS[lang]) if e.msgid}
    missing = [k for k in source if k not in entries or not entries[k].translated]
    assert not missing, f"{lang}: untranslated (run scripts/i18n update, then translate): {missing[:10]}"
    assert not set(entries) - set(source), f"{lang}: entries the source no longer has: {set(entries) - set(source)}"
    for key, entry in entries.items():
        allowed = _args(source[key].msgid) | _args(source[key].plural or "") | _also_given(source[key])
        for s in entry.msgstr:
            assert _args(s) <= allowed, (lang, key, s)
            assert HAN.search(s) or not re.search(r"[a-z]{3}", re.sub(r"\{\w+\}|pbem[\w -]*|--?[\w-]+", "", s)), \
                f"{lang}: {key} looks English: {s!r}"


def _t_calls(path: Path):
    for node in nodes(path):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in ("t", "msg") and node.args and isinstance(node.args[0], ast.Constant):
                yield node


def _sources() -> list[Path]:
    return sources("pbem")


def test_every_message_the_code_asks_for_is_in_the_source() -> None:
    known_contexts = set(catalog.by_context())
    known_ids = {e.msgid for e in catalog.source().values() if e.msgctxt is None}
    missing = []
    for path in _sources():
        for call in _t_calls(path):
            msg = call.args[0].value  # type: ignore[attr-defined]
            if msg not in known_contexts and msg not in known_ids:
                missing.append(f"{path.relative_to(ROOT)}:{call.lineno}: {msg!r}")
    assert not missing, "not in pbem/ui/locale/pbem.pot (run scripts/i18n update):\n" + "\n".join(missing)


# Calls whose string arguments a person reads.
_SPEAKERS = {"echo", "print", "secho", "Text", "UsageError", "BadPacket", "BadSignature", "WrongKey",
             "WrongPassphrase", "KeyNotFound", "StaleMove", "Conflict", "PbemError", "_fail", "warn", "say",
             "fault", "note", "log", "prompt", "confirm", "BadProof", "BadPoint", "BadPosition"}
# Files still speaking English directly; each must leave this list, never join it.
NOT_YET_TRANSLATED: set[str] = set()

# Errors about a broken .po file are for translators, who read the English source.
# The key agent's socket protocol ("ready", "does not open") is for pbem itself; its errors for
# people are in t() all the same.
ENGLISH_BY_DESIGN = {"pbem/ui/catalog.py", "pbem/seat/agent.py"}


def _english_literals(call: ast.Call) -> list[ast.AST]:
    """String arguments of `call` with words in them that are not a t(...) call."""
    found = []
    for arg in [*call.args, *(k.value for k in call.keywords if k.arg in ("hint", "message"))]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            text = arg.value
        elif isinstance(arg, ast.JoinedStr):
            text = "".join(v.value for v in arg.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
        else:
            continue
        if re.search(r"[A-Za-z]{2}", text):
            found.append(arg)
    return found


def _untranslated(path: Path) -> list[str]:
    hits = []
    for node in nodes(path):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in _SPEAKERS or (name or "").endswith("Error"):
                hits += [f"{path.relative_to(ROOT)}:{a.lineno}" for a in _english_literals(node)]
    return hits


def test_no_english_literal_reaches_a_person() -> None:
    """Words a person reads go through t(); a literal in echo/print/Text/an error is a bug."""
    hits = []
    for path in _sources():
        rel = str(path.relative_to(ROOT))
        if rel not in NOT_YET_TRANSLATED | ENGLISH_BY_DESIGN:
            hits += _untranslated(path)
    assert not hits, "untranslated words (wrap them in t(...) and run scripts/i18n update):\n" + "\n".join(hits)


def test_the_not_yet_list_only_shrinks() -> None:
    done = [rel for rel in sorted(NOT_YET_TRANSLATED) if (ROOT / rel).exists() and not _untranslated(ROOT / rel)]
    assert not done, f"translated now; take them off NOT_YET_TRANSLATED: {done}"


def test_card_names_one_word_for_one_thing() -> None:
    """Every broken tool is 损坏的 / 損壞的, every card has a name in every language."""
    from engine.catalog import KINDS

    with words.using("zh-Hans"):
        assert {words.card_name(k) for k in ("break-pick", "break-lamp", "break-cart")} == {
            "损坏的丁字镐", "损坏的提灯", "损坏的推车"}
        names = {k: words.card_name(k) for k in KINDS}
    with words.using("zh-Hant"):
        assert words.card_name("break-cart") == "損壞的推車"
    assert all(HAN.search(n) for n in names.values()), names


def test_t_picks_plural_and_falls_back_to_english() -> None:
    assert t("deck", n=1) == "deck: 1 card" and t("deck", n=3) == "deck: 3 cards"
    with words.using("zh-Hant"):
        assert t("deck", n=3) == "牌庫：3 張"
        assert t("an English sentence nobody translated {x}", x=1) == "an English sentence nobody translated 1"


def test_every_help_text_is_in_the_catalogs() -> None:
    from pbem.cli import app
    from pbem.cli.helptext import help_texts

    known = {e.msgid for e in catalog.source().values() if e.msgctxt is None}
    missing = [h for h in help_texts(app) if h not in known]
    assert not missing, "--help texts not in pbem.pot (run scripts/i18n update): " + repr(missing[:5])


def test_help_is_translated_and_flags_show_no_type() -> None:
    from processes import pbem

    run = pbem("--lang", "zh-Hans", "move", "--help", env={"COLUMNS": "100"}, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "显示此帮助并退出" in run.stdout and "你要回应的牌包" in run.stdout and "选项" in run.stdout
    assert "Show this message" not in run.stdout and "The packet you answer" not in run.stdout
    run = pbem("show", "--help", env={"COLUMNS": "100", "PBEM_LANG": "zh-Hant"}, cwd=ROOT)
    assert "顯示此說明並結束" in run.stdout and "<bool>" not in run.stdout and "--json" in run.stdout


NOTICE_KINDS = ["absent", "away", "back", "due", "handover", "late", "paused", "reminder", "resigned", "resumed"]


@pytest.mark.parametrize("lang", list(catalog.CATALOGS))
def test_deadline_notices_and_host_moves_speak_every_language(lang: str) -> None:
    """The deadlines' words live in the catalogs: every notice kind the host makes
    and every reason it moves for a seat is a sentence in each language, not the key."""
    from datetime import datetime

    from pbem.host import requests, timekeeper

    made = {kind for module in (timekeeper, requests)
            for kind in re.findall(r'\bnotice\(ch, "([a-z]+)"', Path(module.__file__).read_text())}
    assert made == set(NOTICE_KINDS)
    now = datetime(2026, 12, 2, 14, 0, tzinfo=UTC)
    fields = {"seat": "ann", "seq": 7, "missed": 2, "policy": "bot", "fingerprint": "ab12", "due": "2026-12-03T18:00:00+00:00"}
    with words.using(lang):
        for kind in NOTICE_KINDS:
            line = words.notice_line(kind, now, **fields)  # type: ignore[arg-type]
            assert HAN.search(line) and not line.startswith(kind), (kind, line)
        for why in ("timeout", "absent", "resigned"):
            assert HAN.search(words.reason(why)), why
        assert words.span(90061) in ("1天1小时", "1天1小時")


def _glossary(term: str) -> tuple[str, str]:
    """The 简体 and 繁體 words docs/translating.md's table gives for `term`."""
    for line in (ROOT / "docs" / "translating.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].split(" (")[0] == term:
            return cells[1], cells[2]
    raise AssertionError(f"docs/translating.md has no glossary row for {term!r}")


def test_one_word_for_the_store() -> None:
    """The host's store (a SQLite file or a URL) is 存储库 / 儲存庫 wherever the English names it
    (not the verb "store the ...", not a {store} placeholder or the --store option)."""
    noun = re.compile(r"(?<![{-])\bstores?\b(?!\})", re.IGNORECASE)
    verbs = ("Store the ", "Store your ", "store an ")
    for lang, word in zip(catalog.CATALOGS, _glossary("store")):
        said = [e for e in catalog.read_po(catalog.CATALOGS[lang])
                if e.msgid and noun.search(e.msgid) and not any(v in e.msgid for v in verbs)]
        assert len(said) > 20, said
        other = [(e.msgid, e.msgstr[0]) for e in said if word not in "".join(e.msgstr)]
        assert not other, f"{lang}: the store is {word} (docs/translating.md): {other}"


def test_one_word_for_each_document_kind() -> None:
    """A document's kind is said through words.kind_name, one word per kind (the glossary's),
    never the English kind inside a Chinese sentence ("packet 块")."""
    for kind in words.DOCUMENT_KINDS:
        english = words.kind_name(kind)
        said = []
        for lang in catalog.CATALOGS:
            with words.using(lang):
                said.append(words.kind_name(kind))
        assert tuple(said) == _glossary(english), (kind, english, said)
    # every t() call handed a document's kind (`block.kind`, `cls.KIND`) passes it through kind_name
    raw = []
    for path in _sources():
        for call in _t_calls(path):
            for k in call.keywords:
                if isinstance(k.value, ast.Attribute) and k.value.attr in ("kind", "KIND") \
                        and not call.args[0].value.endswith("bot"):  # type: ignore[attr-defined]
                    raw.append(f"{path.relative_to(ROOT)}:{call.lineno}")
    assert not raw, "a document kind said in English (use words.kind_name): " + ", ".join(raw)
    with words.using("zh-Hans"):
        assert t("a {kind} block", kind=words.kind_name("packet")) == "一个牌包块"


PACKET_N = re.compile(r"packet \{(\w+)\}")


@pytest.mark.parametrize("lang", list(catalog.CATALOGS))
def test_one_way_to_number_a_packet(lang: str) -> None:
    """Packet 12 is 牌包 12 (the number a packet file and --seq carry), never 第 12 号牌包."""
    ordinal = re.compile(r"第 ?\{?\w*\}? ?[号號](牌包)?")
    entries = [e for e in catalog.read_po(catalog.CATALOGS[lang]) if e.msgid]
    assert not [e.msgstr for e in entries if any(ordinal.search(s) for s in e.msgstr)]
    said = 0
    for e in entries:
        for field in PACKET_N.findall(e.msgid + (e.plural or "")):
            for s in e.msgstr:
                if "牌包" in s and "{" + field + "}" in s:
                    said += 1
                    assert f"牌包 {{{field}}}" in s, (e.msgid, s)
    assert said > 60


def test_the_armour_header_is_the_same_bytes_in_every_language() -> None:
    """The armour's Comment/Seq lines are wire format, English by design (docs/translating.md)."""
    from types import SimpleNamespace

    from pbem.protocol.armor import armor
    from pbem.protocol.documents import _headers

    doc = SimpleNamespace(game="friday-1a2b3c4d", seq=5)
    english = armor("PACKET", b"\x00" * 40, _headers("packet", doc))  # type: ignore[arg-type]
    for lang in catalog.CATALOGS:
        with words.using(lang):
            assert armor("PACKET", b"\x00" * 40, _headers("packet", doc)) == english  # type: ignore[arg-type]
    assert "Comment: pbem packet for game friday-1a2b3c4d\nSeq: 5\n" in english and english.isascii()


AVOIDED = {  # words the glossary (docs/translating.md) replaced, and what says them now
    "zh-Hans": {"赢家": "获胜者", "挖到": "找到金矿", "目标令牌": "终点令牌", "走法": "行动", "密牌": "牌桌消息"},
    "zh-Hant": {"贏家": "獲勝者", "挖到": "找到金礦", "目標令牌": "終點令牌", "走法": "行動", "密牌": "牌桌訊息"},
}


@pytest.mark.parametrize("lang", list(catalog.CATALOGS))
def test_one_word_for_one_thing_and_chinese_punctuation(lang: str) -> None:
    """No second word for a thing the glossary names once, and a Chinese sentence separates its
    parts with Chinese punctuation (words.listing, words.clauses, words.labelled)."""
    said = [(e.msgid, s) for e in catalog.read_po(catalog.CATALOGS[lang]) if e.msgid for s in e.msgstr]
    for avoided, word in AVOIDED[lang].items():
        assert not [m for m, s in said if avoided in s], f"{lang}: {avoided} is {word} now"
    han_then_ascii = re.compile(r"[\u4e00-\u9fff）][;,:] ")
    assert not [(m, s) for m, s in said if han_then_ascii.search(s)]
    with words.using(lang):
        assert words.listing(["ann", "bob"]) == "ann、bob" and words.clauses(["甲", "乙"]) == "甲；乙"
        assert words.labelled("游戏", "x") == "游戏：x" if lang == "zh-Hans" else words.labelled("遊戲", "x") == "遊戲：x"
    assert words.listing(["ann", "bob"]) == "ann, bob" and words.clauses(["a", "b"]) == "a; b"


@pytest.mark.parametrize("lang", list(catalog.CATALOGS))
def test_a_chinese_pointer_to_the_docs_says_they_are_in_english(lang: str) -> None:
    """docs/ is written in English only: a Chinese hint or help text that sends the reader
    there says so (`见 docs/playing.md（英文）`), rather than leave them to find out."""
    said = [s for e in catalog.read_po(catalog.CATALOGS[lang]) if e.msgid for s in e.msgstr if "docs/" in s]
    assert len(said) >= 8
    pointer = re.compile(r"docs/[\w.-]+(?:\s*(?:§\d+|第 \d+ [节節]))?(?:（英文）|，英文）)")
    assert not [s for s in said if len(pointer.findall(s)) != s.count("docs/")]


def test_no_ascii_semicolon_is_put_between_translated_words() -> None:
    """A clause added to a translated line takes the language's separator (`t("clause sep")`,
    words.clauses: `；` in Chinese): no `"; "` literal is concatenated to words of the catalog,
    nor written between them in an f-string."""
    def calls_t(node: ast.AST) -> bool:
        return any(isinstance(c, ast.Call) and getattr(c.func, "id", getattr(c.func, "attr", None)) in ("t", "msg")
                   for c in ast.walk(node))

    found = []
    for path in _sources():
        for node in nodes(path):
            glued = isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and any(
                isinstance(side, ast.Constant) and isinstance(side.value, str) and side.value.strip() == ";"
                for side in (node.left, node.right))
            between = isinstance(node, ast.JoinedStr) and calls_t(node) and any(
                isinstance(v, ast.Constant) and "; " in str(v.value) for v in node.values)
            if glued or between:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found

"""What a start of pbem needs of the catalogs is kept beside them (locale/__pycache__/, like
Python's compiled modules) and never used stale: an edited catalog is read again, a damaged
kept file is rebuilt, and nothing is written when Python writes no bytecode."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.ui import catalog, words

CACHED = (catalog.source, catalog.by_context, catalog.english, catalog.translations)


def _forget() -> None:
    for f in CACHED:
        f.cache_clear()
    words._singular.clear()


@pytest.fixture
def locale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the catalogs that pbem reads instead of its own, bytecode writing on."""
    where = tmp_path / "locale"
    shutil.copytree(catalog.LOCALE_DIR, where, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(catalog, "SOURCE", where / "pbem.pot")
    monkeypatch.setattr(catalog, "CATALOGS", {lang: where / p.name for lang, p in catalog.CATALOGS.items()})
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    _forget()
    yield where
    _forget()  # the next test reads pbem's own catalogs again


def _parsed_english() -> dict:
    entries = [e for e in catalog.read_po(catalog.SOURCE) if e.msgid]
    found = {e.msgid: (None, e.msgid, e.plural) for e in entries if e.msgctxt is None}
    found.update({e.msgctxt: (e.msgctxt, e.msgid, e.plural) for e in entries if e.msgctxt is not None})
    return found


def test_the_kept_words_are_the_parsed_ones_and_are_read_without_parsing(locale: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    english = catalog.english()
    assert english == _parsed_english() and english["to move"] == ("to move", "to move: {player}", None)
    mo = catalog.compile_mo(catalog.read_po(locale / "zh_Hans.po"))
    zh = catalog.translations("zh-Hans").pgettext("to move", "to move: {player}")
    kept = sorted(p.name for p in (locale / "__pycache__").iterdir())
    assert kept == ["pbem.pot.english.marshal", "zh_Hans.po.mo.marshal"]
    _forget()

    def no_parsing(*args: object) -> None:
        raise AssertionError("parsed a catalog that was kept")

    monkeypatch.setattr(catalog, "parse_po", no_parsing)
    assert catalog.english() == english
    assert catalog.translations("zh-Hans").pgettext("to move", "to move: {player}") == zh != "to move: {player}"
    words.set_language("zh-Hans")
    try:
        assert words.t("to move", player="ann") == zh.format(player="ann")
    finally:
        words.set_language(None)
    import marshal

    assert marshal.loads((locale / "__pycache__" / "zh_Hans.po.mo.marshal").read_bytes())[1] == mo


def test_an_edited_catalog_is_read_again(locale: Path) -> None:
    assert "bench word" not in catalog.english()
    source = locale / "pbem.pot"
    source.write_text(source.read_text() + '\nmsgctxt "bench word"\nmsgid "a new word"\nmsgstr ""\n')
    _forget()
    assert catalog.english()["bench word"] == ("bench word", "a new word", None) and words.t("bench word") == "a new word"
    assert catalog.english() == _parsed_english()


def test_a_damaged_kept_file_is_rebuilt(locale: Path) -> None:
    catalog.english()
    kept = locale / "__pycache__" / "pbem.pot.english.marshal"
    for junk in (b"", b"\x00not marshal", __import__("marshal").dumps("a string, not a stamp and data")):
        kept.write_bytes(junk)
        _forget()
        assert catalog.english() == _parsed_english()
        assert kept.read_bytes() != junk


def test_nothing_is_kept_without_bytecode_and_a_folder_that_cannot_be_written_is_no_error(
        locale: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert catalog.english() == _parsed_english()
    assert not (locale / "__pycache__").exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    _forget()
    (locale / "__pycache__").write_text("a file where the folder would go")  # (root writes into read-only folders)
    assert catalog.english() == _parsed_english()
    assert catalog.translations("zh-Hans").pgettext("to move", "to move: {player}") != "to move: {player}"
    assert sorted(p.name for p in locale.iterdir()) == ["__pycache__", "pbem.pot", "zh_Hans.po", "zh_Hant.po"]


def test_a_kept_path_that_is_not_a_regular_file_is_never_read_nor_replaced(locale: Path, tmp_path: Path) -> None:
    (locale / "__pycache__").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"somebody else's file")
    kept = locale / "__pycache__" / "pbem.pot.english.marshal"
    kept.symlink_to(elsewhere)
    assert catalog.english() == _parsed_english()
    assert kept.is_symlink() and elsewhere.read_bytes() == b"somebody else's file"
    mo = locale / "__pycache__" / "zh_Hans.po.mo.marshal"
    mo.mkdir()
    assert catalog.translations("zh-Hans").pgettext("to move", "to move: {player}") != "to move: {player}"
    assert mo.is_dir() and not any(mo.iterdir())

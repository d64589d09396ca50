"""Extract messages from the code into the catalogs (like xgettext + msgmerge, in one step).

A message is the literal first argument of a `t(...)` or `msg(...)` call that is not a msgctxt key of the
source, or a --help text of the command line. New ones are added to pbem/ui/locale/pbem.pot
and, untranslated, to every .po file; `check` lists what still needs a translator.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pbem.ui import catalog  # noqa: E402
from pbem.ui.catalog import Entry  # noqa: E402


def code_messages() -> dict[str, str]:
    """msgid -> first place it is used, for every literal t("...") (or N_("...") or msg("...")) in pbem/."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "pbem").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            arg = node.args[0]
            if name in ("t", "N_", "msg") and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.setdefault(arg.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    for text, where in help_messages().items():
        found.setdefault(text, where)
    return found


def help_messages() -> dict[str, str]:
    try:
        from pbem.cli import app
        from pbem.cli.helptext import help_texts
    except ImportError:  # before the CLI translates its help
        return {}
    return {text: "--help" for text in help_texts(app)}


def _flags(msgid: str) -> list[str]:
    return ["#, python-brace-format"] if re.search(r"(?<!\{)\{\w", msgid) else []


def update(prune: bool) -> int:
    source = catalog.read_po(catalog.SOURCE)
    keys = {e.key for e in source}
    contexts = {e.msgctxt for e in source if e.msgctxt}
    used = code_messages()
    added = 0
    for msgid, where in used.items():
        if msgid in contexts or (None, msgid) in keys:
            continue
        source.append(Entry(msgid=msgid, comments=[f"#: {where}", *_flags(msgid)]))
        added += 1
    obsolete = [e for e in source if e.msgid and e.msgctxt is None and e.msgid not in used]
    if prune:
        source = [e for e in source if e not in obsolete]
    catalog.SOURCE.write_text(catalog.format_po(source), encoding="utf-8")
    wanted = [e for e in source if e.msgid]
    for path in catalog.CATALOGS.values():
        entries = catalog.read_po(path)
        have = {e.key: e for e in entries}
        merged = [entries[0]]  # the header
        for e in wanted:
            if e.key in have:
                mine = have[e.key]
                mine.plural = e.plural  # the source decides whether there is a plural
                mine.comments = [c for c in mine.comments if not c.startswith(("#:", "#,", "#."))] + \
                    [c for c in e.comments if c.startswith(("#:", "#,", "#."))]
                if "fuzzy" in mine.flags:
                    mine.comments.append("#, fuzzy")
                merged.append(mine)
            else:
                merged.append(Entry(msgid=e.msgid, msgctxt=e.msgctxt, plural=e.plural, comments=list(e.comments)))
        path.write_text(catalog.format_po(merged), encoding="utf-8")
    print(f"{added} new message(s) in {catalog.SOURCE.relative_to(ROOT)}")
    for e in obsolete:
        print(f"{'removed' if prune else 'no longer used (--prune removes it)'}: {e.msgid!r}")
    return check()


def check() -> int:
    todo = 0
    for path in catalog.CATALOGS.values():
        for e in catalog.read_po(path):
            if e.msgid and not e.translated:
                todo += 1
                print(f"{path.relative_to(ROOT)}:{e.line}: untranslated: {e.msgid!r}")
    return 1 if todo else 0


def main() -> int:
    p = argparse.ArgumentParser(prog="scripts/i18n", description=__doc__)
    p.add_argument("command", choices=["update", "check"])
    p.add_argument("--prune", action="store_true", help="drop messages the code no longer uses")
    a = p.parse_args()
    return update(a.prune) if a.command == "update" else check()


if __name__ == "__main__":
    sys.exit(main())

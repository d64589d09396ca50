"""Write the table talk vectors (docs/protocol.md, "Golden vectors"): talk.pbem holds ann's
public line and bob's whisper to ann and cat, both at the packet of packet.pbem. Run by hand:

    .venv/bin/python tests/vectors/protocol/make_talk.py

HPKE's ephemeral keys are random, so a rerun writes a different (equally valid) whisper.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[2]), str(HERE.parents[1])]

from make import identity  # noqa: E402

from pbem.protocol import talk  # noqa: E402
from pbem.protocol.documents import read_blocks, unb64  # noqa: E402


def main() -> None:
    inv = read_blocks((HERE / "invitation.pbem").read_text(encoding="utf-8"))[0].doc
    packet = read_blocks((HERE / "packet.pbem").read_text(encoding="utf-8"))[0]
    keys = inv.seat_keys()
    said = talk.make(inv.game, "ann", packet.doc.seq, packet.hash, 1, "2026-12-01T10:00:00+00:00",
                     "cat broke my lamp: cat is a saboteur", [], keys, identity("ann"))
    whisper = talk.make(inv.game, "bob", packet.doc.seq, packet.hash, 1, "2026-12-01T10:01:00+00:00",
                        "I saw the map: the top one is stone", ["ann", "cat"], keys, identity("bob"))
    text = said.armored() + whisper.armored()
    (HERE / "talk.pbem").write_text(text, encoding="utf-8")
    manifest = json.loads((HERE / "documents.json").read_text(encoding="utf-8"))
    sizes = sorted({len(unb64(box, "box")) for box in (whisper.doc.sealed or {}).values()})
    manifest["talk.pbem"] = {"bytes": len(text.encode()), "hash": [said.hash, whisper.hash], "sealed_talk_bytes": sizes}
    (HERE / "documents.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
                                         encoding="utf-8")


if __name__ == "__main__":
    main()

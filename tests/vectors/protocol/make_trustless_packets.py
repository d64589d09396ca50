"""Write the golden vectors of a blind host's packets in format 2 (tests/vectors/protocol/
trustless-packets.*). By hand only:

    .venv/bin/python tests/vectors/protocol/make_trustless_packets.py

Two packets signed by the fixed referee of make.py, relaying the blocks of trustless.pbem:
packet 1 the three joins, packet 2 ann's shuffle, each block as its signature and its JSON
document. Ed25519 is deterministic, so a rerun writes the same bytes. trustless-packets.json
keeps their armoured sizes, and the sizes the same packets have in format 1 (every block in
base64 inside the packet) for the comparison.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[2]), str(HERE)]

from make import identity  # noqa: E402

from pbem.protocol.documents import Packet, Relayed, RelayPacket, Waiting, b64, read_blocks, relay, sign  # noqa: E402


def build() -> tuple[list[str], dict]:
    blocks = read_blocks((HERE / "trustless.pbem").read_text(encoding="utf-8"))
    host = identity("referee")
    relayed = [blocks[:3], blocks[3:4]]
    waits = [Waiting(step="shuffle", seats=["ann"]), Waiting(step="shuffle", seats=["bob"])]
    new, old = [], []
    prev = hashlib.sha256(b"vector trustless invitation").hexdigest()
    for seq, (rel, wait) in enumerate(zip(relayed, waits), 1):
        fields = {"game": blocks[0].game, "seq": seq, "prev": prev, "round": 1, "phase": "playing", "to_move": None,
                  "public": {}, "moves": [], "events": [], "parts": {}, "waiting": wait}
        packet = sign(RelayPacket(**fields, relayed=[relay(b) for b in rel]), host)
        new.append(packet.armored())
        old.append(sign(Packet(**fields, relayed=[Relayed(kind=b.kind, block=b64(b.payload)) for b in rel]), host)
                   .armored())
        prev = packet.hash
    return new, {"bytes": [len(p.encode()) for p in new], "format 1 bytes": [len(p.encode()) for p in old]}


def main() -> None:
    packets, facts = build()
    (HERE / "trustless-packets.pbem").write_text("\n".join(packets), encoding="utf-8")
    (HERE / "trustless-packets.json").write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

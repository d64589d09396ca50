"""Audits of finished rounds: is a round's archive the honest record of the round?

Every check of docs/replay.md ("What the audit checks") runs; each fault found is reported
with its move number (0: the deal; None: the archive as a whole) instead of stopping at the
first, so a report says everything that is wrong. `AuditFailed` (exit code 8) is raised by
the CLI when a report holds any fault.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.errors import BadPosition, MoveError
from engine.position import dump, load
from engine.rules import apply as apply_move
from engine.state import OVER, deal
from pbem.errors import BadPacket, BadSignature, PbemError
from pbem.protocol import fairness
from pbem.protocol.crypto import PublicKey
from pbem.protocol.documents import Signed, move_commitment, parse, unb64
from pbem.replay.rounds import Source, invitation_of, peek

EXIT_AUDIT_FAILED = 8
DEAL_KEYS = ("ruleset", "options", "players", "roles", "goals", "hands", "deck", "removed", "aside", "nuggets", "gold",
             "to_move", "round")


class AuditFailed(PbemError):
    exit_code = EXIT_AUDIT_FAILED


@dataclass
class Fault:
    move: int | None  # 0: the deal and the starting position; n: move n; None: the archive as a whole
    check: str  # signature, invitation, join, secret, deal, chain, envelope, commit, engine, final
    message: str

    def line(self) -> str:
        where = "archive" if self.move is None else "deal" if self.move == 0 else f"move {self.move}"
        return f"{where}: {self.message}"


@dataclass
class Report:
    game: str
    round: int
    origin: str
    host: str = "?"  # the host's name and key fingerprint, from the invitation
    moves: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # checks passed, by kind
    notes: list[str] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.faults

    def fault(self, move: int | None, check: str, message: str) -> None:
        self.faults.append(Fault(move, check, message))

    def passed(self, check: str, n: int = 1) -> None:
        self.counts[check] = self.counts.get(check, 0) + n

    def summary(self) -> str:
        c = self.counts
        return (f"audit ok: game {self.game} round {self.round}: archive signed by host {self.host}; "
                f"{c.get('join', 0)} joins; secret matches its commitment; deal recomputed; "
                f"{self.moves} moves: {c.get('envelope', 0)} signatures, {c.get('commit', 0)} commitments, "
                f"{c.get('engine', 0)} re-applied to the final position; chain of {c.get('chain', 0)} packets"
                + (f" ({c['packet-file']} matched to packet files)" if c.get("packet-file") else "")
                + (f"; {c['host-move']} moves made by the host for a silent seat" if c.get("host-move") else "")
                + (f"; {c['handover']} seat handover(s) checked" if c.get("handover") else ""))

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "round": self.round, "origin": self.origin, "ok": self.ok, "host": self.host,
                "moves": self.moves, "counts": self.counts, "notes": self.notes,
                "faults": [asdict(f) for f in self.faults]}


def audit_source(src: Source, game: str, rounds: list[int]) -> list[Report]:
    """Audit the given rounds of `game` in a source (packet files found there are cross-checked)."""
    reports = []
    packets = src.packets.get(game, {})
    for r in rounds:
        previous = None
        if (game, r - 1) in src.archives and len(src.archives[(game, r - 1)]) == 1:
            prev_payload, _ = src.archive(game, r - 1)
            previous = (peek(prev_payload) or {}).get("final")
        versions = src.archives[(game, r)]
        for payload, origin in versions.values():
            report = audit(payload, origin=origin, previous_final=previous, packets=packets)
            if len(versions) > 1:
                report.fault(None, "chain", f"{src.label} holds {len(versions)} different archives of this round")
            reports.append(report)
    return reports


def audit(payload: bytes, *, origin: str = "", previous_final: dict[str, Any] | None = None,
          packets: dict[int, dict[str, str]] | None = None) -> Report:
    """Check one archive block (its raw payload, so that a broken signature is a fault, not a crash)."""
    doc = peek(payload) or {}
    rep = Report(str(doc.get("game", "?")), int(doc["round"]) if isinstance(doc.get("round"), int) else 0, origin)
    try:
        parse("archive", payload)
        rep.passed("signature")
    except BadSignature:
        rep.fault(None, "signature", "the archive's signature does not verify: it was changed after the host signed it")
    except BadPacket as exc:
        rep.fault(None, "signature", f"the archive is malformed: {exc}")
        if not doc:
            return rep
    shape = _shape_fault(doc)
    if shape:
        rep.fault(None, "archive", f"the archive is malformed: {shape}")
        return rep
    try:
        invitation = invitation_of(doc)
    except PbemError as exc:
        rep.fault(None, "invitation", f"the invitation inside the archive is unusable: {exc}")
        return rep
    try:
        _check_all(rep, doc, invitation, previous_final, packets)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # Nonsense inside a well-shaped archive is a fault to report, not a crash.
        rep.fault(None, "archive", f"the archive holds data that cannot be checked: {type(exc).__name__}: {exc}")
    return rep


ARCHIVE_SHAPE: dict[str, tuple[type, ...]] = {
    "round": (int,), "invitation": (str,), "joins": (list,), "secret": (str,), "start": (dict,),
    "moves": (list,), "chain": (list,), "final": (dict,),
}
MOVE_SHAPE: dict[str, tuple[type, ...]] = {"n": (int,), "seat": (str,), "text": (str,), "nonce": (str,),
                                           "envelope": (str,)}
LINK_SHAPE: dict[str, tuple[type, ...]] = {"seq": (int,), "hash": (str,), "prev": (str,)}


def _shape_fault(doc: dict[str, Any]) -> str | None:
    """What is structurally wrong with an archive document, or None."""
    def bad(obj: Any, shape: dict[str, tuple[type, ...]]) -> str | None:
        if not isinstance(obj, dict):
            return "an entry is not an object"
        for key, types in shape.items():
            if not isinstance(obj.get(key), types) or isinstance(obj.get(key), bool):
                return f"{key!r} is missing or of the wrong type"
        return None

    why = bad(doc, ARCHIVE_SHAPE)
    if why:
        return why
    if "carried" in doc and not isinstance(doc["carried"], dict):
        return "'carried' is not an object"
    if not all(isinstance(j, str) for j in doc["joins"]):
        return "a join is not base64 text"
    for i, m in enumerate(doc["moves"], 1):
        why = bad(m, MOVE_SHAPE)
        if why:
            return f"move {i}: {why}"
    for link in doc["chain"]:
        why = bad(link, LINK_SHAPE)
        if why:
            return f"chain: {why}"
    return None


def _check_all(rep: Report, doc: dict[str, Any], invitation: Signed, previous_final: dict[str, Any] | None,
               packets: dict[int, dict[str, str]] | None) -> None:
    _check_invitation(rep, doc, invitation)
    seats = {s["name"]: s["key"] for s in invitation.doc.get("seats", [])}
    contributions = _check_joins(rep, doc, invitation, seats)
    keys = _check_handovers(rep, doc, invitation, seats)
    secret = _check_secret(rep, doc, invitation)
    if secret is not None and contributions is not None:
        _check_deal(rep, doc, invitation, secret, contributions, previous_final)
    chain = _check_chain(rep, doc, invitation, packets or {})
    _check_moves(rep, doc, keys, chain)


Keys = Callable[[Any, Any], "str | None"]  # (seat, packet it answers) -> the key that seat held then


def _check_handovers(rep: Report, doc: dict[str, Any], invitation: Signed, seats: dict[str, str]) -> Keys:
    """Each handover's signed document (by the host, or by the seat's key before it), and from
    which packet on each key held its seat."""
    host_key = invitation.doc.get("host", {}).get("key")
    current = dict(seats)
    spans: dict[str, list[tuple[int, str]]] = {name: [(0, key)] for name, key in seats.items()}
    handovers = doc.get("handovers", [])
    if not isinstance(handovers, list):
        rep.fault(None, "handover", "'handovers' is not a list")
        handovers = []
    for h in handovers:
        seat, at = (h.get("seat"), h.get("at")) if isinstance(h, dict) else (None, None)
        if seat not in current or not isinstance(at, int):
            rep.fault(None, "handover", f"a handover names seat {seat!r} at packet {at!r}, which the game does not have")
            continue
        try:
            block = parse("handover", unb64(h.get("document"), f"{seat}'s handover"))
        except PbemError as exc:
            rep.fault(None, "handover", f"the handover of seat {seat} at packet {at} is unusable: {exc}")
            continue
        if block.game != invitation.game or block.doc.get("seat") != seat or block.doc.get("key") != h.get("key"):
            rep.fault(None, "handover", f"the handover of seat {seat} at packet {at} does not match its signed document")
            continue
        signer = block.signer.encode()
        if signer not in (host_key, current[seat]):
            rep.fault(None, "handover", f"the handover of seat {seat} at packet {at} is signed by key "
                                        f"{block.signer.fingerprint()}, neither the host's nor the seat's")
            continue
        current[seat] = str(h["key"])
        spans[seat].append((at, current[seat]))
        by = "the host" if signer == host_key else "the seat's old key"
        rep.notes.append(f"seat {seat} was handed over to key {PublicKey.decode(current[seat]).fingerprint()} "
                         f"from packet {at} on (signed by {by})")
        rep.passed("handover")

    def key_at(seat: Any, seq: Any) -> str | None:
        if not isinstance(seq, int):
            seq = 0
        held = [key for start, key in spans.get(seat, []) if start <= seq]
        return held[-1] if held else None

    return key_at


def _check_invitation(rep: Report, doc: dict[str, Any], invitation: Signed) -> None:
    host = invitation.doc.get("host", {})
    try:
        rep.host = f"{host.get('name')} ({PublicKey.decode(host.get('key', '')).fingerprint()})"
    except PbemError:
        rep.host = str(host.get("name"))
    if invitation.signer.encode() != host.get("key"):
        rep.fault(None, "invitation", "the invitation is not signed by the host it names")
    if doc.get("signer") != host.get("key"):
        rep.fault(None, "signature", f"the archive is not signed by the game's host {host.get('name')!r}")
    if invitation.game != doc.get("game"):
        rep.fault(None, "invitation", f"the archive of game {doc.get('game')} holds the invitation of game {invitation.game}")


def _check_joins(rep: Report, doc: dict[str, Any], invitation: Signed, seats: dict[str, str]) -> list[bytes] | None:
    found: dict[str, bytes] = {}
    for i, text in enumerate(doc.get("joins", []), 1):
        try:
            join = parse("join", unb64(text, f"join {i}"))
        except PbemError as exc:
            rep.fault(0, "join", f"join {i} is unusable: {exc}")
            continue
        seat = join.doc.get("seat")
        if seat not in seats:
            rep.fault(0, "join", f"join {i} is for seat {seat!r}, which the invitation does not have")
        elif join.signer.encode() != seats[seat]:
            rep.fault(0, "join", f"{seat}'s join is signed by key {join.signer.fingerprint()}, not the seat's key")
        elif join.doc.get("invitation") != invitation.hash or join.game != invitation.game:
            rep.fault(0, "join", f"{seat}'s join answers another invitation")
        elif seat in found:
            rep.fault(0, "join", f"{seat} has two joins")
        else:
            try:
                found[seat] = unb64(join.doc.get("contribution"), f"{seat}'s contribution")
                rep.passed("join")
            except PbemError as exc:
                rep.fault(0, "join", str(exc))
    missing = [s for s in seats if s not in found]
    if missing:
        rep.fault(0, "join", f"no valid join of {', '.join(missing)}: the deal cannot be recomputed")
        return None
    return [found[s] for s in seats]


def _check_secret(rep: Report, doc: dict[str, Any], invitation: Signed) -> bytes | None:
    commitments = invitation.doc.get("commitments", [])
    if not 1 <= rep.round <= len(commitments):
        rep.fault(None, "secret", f"the invitation commits to {len(commitments)} rounds, not to round {rep.round}")
        return None
    try:
        secret = bytes.fromhex(str(doc.get("secret")))
    except ValueError:
        rep.fault(0, "secret", "the revealed secret is not hex")
        return None
    if not fairness.secret_matches(invitation.game, rep.round, secret, commitments[rep.round - 1]):
        rep.fault(0, "secret", f"the revealed secret does not match the invitation's commitment for round {rep.round}")
        return None
    rep.passed("secret")
    return secret


def _check_deal(rep: Report, doc: dict[str, Any], invitation: Signed, secret: bytes, contributions: list[bytes],
                previous: dict[str, Any] | None) -> None:
    start: dict[str, Any] = doc["start"] if isinstance(doc.get("start"), dict) else {}
    players = tuple(s["name"] for s in invitation.doc.get("seats", []))
    carried = doc.get("carried") if isinstance(doc.get("carried"), dict) else None
    if rep.round == 1:
        gold, nuggets, first = None, None, 0
    elif carried is not None:
        # The archive names what round k-1 handed over; check it against k-1 when we have it.
        gold, nuggets = carried.get("gold"), carried.get("nuggets")
        first = players.index(carried["first"]) if carried.get("first") in players else 0
        if previous is not None and (previous.get("gold") != gold or previous.get("nuggets") != nuggets
                                     or previous.get("next_start") != carried.get("first")):
            rep.fault(0, "deal", f"what round {rep.round} says it carried over differs from how round {rep.round - 1} ended")
    elif previous is not None:
        gold, nuggets = previous.get("gold"), previous.get("nuggets")
        first = players.index(previous["next_start"]) if previous.get("next_start") in players else 0
    else:
        # Without the previous round's archive, the pile that was shuffled is unknown: take the
        # carried gold and first seat from `start` and compare the pile only as a set of cards.
        gold, nuggets = start.get("gold"), start.get("nuggets")
        first = players.index(start["to_move"]) if start.get("to_move") in players else 0
        rep.notes.append(f"round {rep.round - 1}'s archive is not in the source: the order of the nugget pile, "
                         "the carried gold and the first player were taken from the archive, not checked")
    try:
        dealt = dump(deal(invitation.doc["ruleset"], players,
                          fairness.round_chance(invitation.game, rep.round, secret, contributions),
                          options=frozenset(invitation.doc.get("options", [])), round_no=rep.round, first_seat=first,
                          gold=gold, nuggets=nuggets))
    except (KeyError, ValueError, TypeError) as exc:
        rep.fault(0, "deal", f"the deal cannot be recomputed: {exc}")
        return
    if rep.round > 1 and previous is None and carried is None:
        dealt["nuggets"] = sorted(dealt["nuggets"])
        start = {**start, "nuggets": sorted(start.get("nuggets", []))}
    differ = []
    for key in DEAL_KEYS:
        if dealt.get(key) != start.get(key):
            if isinstance(dealt.get(key), dict) and isinstance(start.get(key), dict):
                who = sorted(k for k in set(dealt[key]) | set(start[key]) if dealt[key].get(k) != start[key].get(k))
                differ.append(f"{key} ({', '.join(who)})")
            else:
                differ.append(key)
    if differ:
        rep.fault(0, "deal", f"the starting position is not the deal of the secret and the contributions: "
                             f"{'; '.join(differ)} differ")
    else:
        rep.passed("deal")


def _check_chain(rep: Report, doc: dict[str, Any], invitation: Signed, packets: dict[int, dict[str, str]]) -> dict[int, str]:
    """seq -> hash of the chain's packets; each links to the one before it."""
    chain: dict[int, str] = {}
    before: dict[str, Any] | None = None
    for entry in doc.get("chain", []):
        seq, h, prev = entry.get("seq"), entry.get("hash"), entry.get("prev")
        if before is None:
            if seq == 1 and prev != invitation.hash:
                rep.fault(None, "chain", "packet 1 does not follow the invitation")
        elif seq != before.get("seq", 0) + 1 or prev != before.get("hash"):
            rep.fault(None, "chain", f"packet {seq} does not follow packet {before.get('seq')} in the archive's chain")
        chain[seq] = h
        before = entry
        rep.passed("chain")
        for other, where in packets.get(seq, {}).items():
            if other != h:
                rep.fault(None, "chain", f"packet {seq} in {where} is not the packet {seq} of the archive's chain")
            else:
                rep.passed("packet-file")
    if not chain:
        rep.fault(None, "chain", "the archive holds no packet chain")
    return chain


def _check_moves(rep: Report, doc: dict[str, Any], key_at: Keys, chain: dict[int, str]) -> None:
    moves = doc.get("moves", [])
    rep.moves = len(moves)
    host_key = doc.get("signer")
    # A handover publishes a new packet at once: the packet before it is answered by no move.
    raw = doc.get("handovers")
    handovers: list[Any] = raw if isinstance(raw, list) else []
    handed = {h["at"] - 1 for h in handovers if isinstance(h, dict) and isinstance(h.get("at"), int)}
    try:
        state = load(doc["start"])
    except (BadPosition, KeyError, TypeError) as exc:
        rep.fault(0, "engine", f"the starting position is unreadable: {exc}")
        state = None
    last_seq: int | None = None
    i = 0
    for m in moves:
        seat, text = m.get("seat"), str(m.get("text"))
        n = m.get("n")
        if n != i + 1:
            what = f"missing: the archive goes from move {i} to move {n}" if isinstance(n, int) and n > i + 1 \
                else f"out of order: the archive numbers it {n!r}"
            rep.fault(i + 1, "order", f"move {i + 1} is {what}")
        i = n if isinstance(n, int) and n > i else i + 1
        seq = _check_envelope(rep, i, m, key_at, chain, doc.get("game"), host_key)
        if seq is not None:
            if last_seq is not None and seq != last_seq + 1 and not set(range(last_seq + 1, seq)) <= handed:
                rep.fault(i, "chain", f"answers packet {seq}, but the move before it answered packet {last_seq}"
                                      + (": a move between them is missing" if seq > last_seq + 1 else ""))
            last_seq = seq
        if state is None:
            continue
        if state.phase == OVER or state.player != seat:
            rep.fault(i, "engine", f"is by {seat}, but {'nobody' if state.phase == OVER else state.player} was to move")
            state = None
            continue
        try:
            apply_move(state, text)
            rep.passed("engine")
        except MoveError as exc:
            rep.fault(i, "engine", f"{text!r} is illegal here: {exc}")
            state = None
    if state is None:
        return
    if last_seq is not None and last_seq + 1 != max(chain, default=0):
        rep.fault(i, "chain", "the chain does not end with the packet of the last move")
    final: dict[str, Any] = doc["final"] if isinstance(doc.get("final"), dict) else {}
    got = dump(state)
    if state.phase != OVER:
        rep.fault(i, "final", "the moves do not end the round")
    elif got != final:
        keys = sorted(k for k in set(got) | set(final) if got.get(k) != final.get(k))
        rep.fault(i, "final", f"the moves do not lead to the archive's final position ({', '.join(keys)} differ)")
    else:
        rep.passed("final")


def _check_envelope(rep: Report, i: int, m: dict[str, Any], key_at: Keys, chain: dict[int, str],
                    game: Any, host_key: Any) -> int | None:
    """The seat's signed move file (or the host's, for a seat that did not move in time): its
    signer, commitment and packet. Returns the packet it answers."""
    seat = m.get("seat")
    try:
        env = parse("move", unb64(m.get("envelope"), f"move {i}'s envelope"))
    except PbemError as exc:
        rep.fault(i, "envelope", f"the signed move file is unusable: {exc}")
        return None
    ok = True
    by_host = env.doc.get("by") == "host"
    if by_host != (m.get("by") == "host"):
        rep.fault(i, "envelope", "the archive and the move file disagree on who made the move")
        ok = False
    if by_host:
        if env.signer.encode() != host_key:
            rep.fault(i, "envelope", f"a move marked as the host's is signed by key {env.signer.fingerprint()}, not the host's")
            ok = False
        else:
            rep.passed("host-move")
            rep.notes.append(f"move {i}: played by the host for {seat} ({env.doc.get('why')})")
    elif env.signer.encode() != key_at(seat, env.doc.get("seq")):
        rep.fault(i, "envelope", f"the move file is signed by key {env.signer.fingerprint()}, not by seat {seat}'s key")
        ok = False
    if env.doc.get("seat") != seat or env.game != game:
        rep.fault(i, "envelope", f"the move file is {env.doc.get('seat')}'s in game {env.game}, not {seat}'s in {game}")
        ok = False
    try:
        if move_commitment(unb64(m.get("nonce"), "nonce"), str(m.get("text"))) != env.doc.get("commit"):
            rep.fault(i, "commit", f"the text {m.get('text')!r} is not the move the seat committed to")
        else:
            rep.passed("commit")
    except PbemError as exc:
        rep.fault(i, "commit", str(exc))
    seq = env.doc.get("seq")
    if not isinstance(seq, int) or chain.get(seq) != env.doc.get("packet"):
        rep.fault(i, "chain", f"answers packet {seq}, which is not in the archive's chain")
    if ok:
        rep.passed("envelope")
    return seq if isinstance(seq, int) else None

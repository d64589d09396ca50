"""An audit's findings: the checks passed, by kind, and the faults, each with where it lies (the
deal, a move, a packet or the archive as a whole); pbem.replay.audit and hostmoves add to it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pbem.errors import EXIT_AUDIT_FAILED, Msg, PbemError, Text
from pbem.ui.words import render, t

# The checks a fault names (Fault.check; `pbem audit --json` shows them as they are).
(ANCHOR, ARCHIVE, CHAIN, COMMIT, DEAL, ENGINE, ENVELOPE, FINAL, HANDOVER, INVITATION, JOIN, ORDER, SECRET,
 SIGNATURE) = ("anchor", "archive", "chain", "commit", "deal", "engine", "envelope", "final", "handover", "invitation",
               "join", "order", "secret", "signature")
TALK = "talk"  # a line of table talk: its seat's signature and its packet


class AuditFailed(PbemError):
    exit_code = EXIT_AUDIT_FAILED


@dataclass
class Fault:
    move: int | None  # 0: the deal and the starting position; n: move n; None: the archive as a whole
    check: str  # signature, anchor, invitation, join, secret, deal, chain, envelope, commit, engine, final,
    #             packet, table, result, moves, part (the last five: a packet's content against the replay), talk,
    #             renewal
    message: Text
    packet: int | None = None  # the packet that holds the fault, for a packet's content
    code: str = "audit-failed"  # the error's code (pbem.errors) when an error is the fault

    def line(self) -> str:
        if self.packet is not None:
            return t("packet {seq}: {fault}", seq=self.packet, fault=self.message)
        if self.move is None:
            return t("archive: {fault}", fault=self.message)
        if self.move == 0:
            return t("deal: {fault}", fault=self.message)
        return t("move {n}: {fault}", n=self.move, fault=self.message)

    def to_json(self) -> dict[str, Any]:
        """The fault for scripts, the same in every language: where, which check, its code, the
        message id and values (docs/translating.md) and the English text."""
        return {"move": self.move, "check": self.check, "packet": self.packet, "code": self.code,
                **said_json(self.message)}


def said_json(message: Text) -> dict[str, Any]:
    """A message as data: its id, its values (a message among them as data too) and its English."""
    if isinstance(message, str):  # words said already: no id to give
        return {"id": None, "params": {}, "text": message}
    return {"id": message.id, "params": {k: _value(v) for k, v in message.params.items()},
            "text": render(message, "en")}


def _value(v: object) -> Any:
    if isinstance(v, PbemError):
        return {"code": v.code, **said_json(v.message)}
    if isinstance(v, Msg):
        return said_json(v)
    if isinstance(v, tuple | list):
        return [_value(x) for x in v]
    return v if v is None or isinstance(v, bool | int | float | str) else str(v)


@dataclass
class Report:
    game: str
    round: int
    origin: str
    host: str = "?"  # the host's name and key fingerprint, from the invitation
    moves: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # checks passed, by kind
    notes: list[Text] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    anchor: str | None = None  # where the trusted invitation came from, or None (not anchored)
    seat: str | None = None  # whose sealed parts were opened (audit --as)

    @property
    def ok(self) -> bool:
        return not self.faults

    def fault(self, move: int | None, check: str, message: Text | PbemError) -> None:
        """A fault the audit found, in words (a Msg) or as the error that says it."""
        self.faults.append(_fault(move, check, message))

    def fault_at_packet(self, seq: int, check: str, message: Text | PbemError) -> None:
        self.faults.append(_fault(None, check, message, packet=seq))

    def passed(self, check: str, n: int = 1) -> None:
        self.counts[check] = self.counts.get(check, 0) + n

    def summary(self) -> str:
        c = self.counts
        said = [t("audit ok: game {game} round {round}: archive signed by host {host}", game=self.game,
                  round=self.round, host=self.host),
                t("{n} join", n=c.get("join", 0)), t("secret matches its commitment"), t("deal recomputed"),
                t("{n} move: {signatures} signatures, {commitments} commitments, {engine} re-applied to the final "
                  "position", n=self.moves, signatures=c.get("envelope", 0), commitments=c.get("commit", 0),
                  engine=c.get("engine", 0))]
        if c.get("packet-file"):
            said.append(t("chain of {n} packet ({files} matched to packet files)", n=c.get("chain", 0),
                          files=c["packet-file"]))
        else:
            said.append(t("chain of {n} packet", n=c.get("chain", 0)))
        if c.get("host-move"):
            said.append(t("{n} move made by the host for a silent seat", n=c["host-move"]))
        if c.get("handover"):
            said.append(t("{n} seat handover checked", n=c["handover"]))
        if c.get("renewal"):
            said.append(t("{n} renewal checked against its packet", n=c["renewal"]))
        if c.get("talk"):
            said.append(t("{n} line of table talk: signatures and packets checked", n=c["talk"]))
        if c.get("packet-table"):
            said.append(t("{tables} packets' tables, {moves} packets' moves and {results} result checked against "
                          "the replay", tables=c["packet-table"], moves=c.get("packet-moves", 0),
                          results=c.get("packet-result", 0)))
        if self.seat:
            said.append(t("{n} of {seat}'s sealed parts opened and checked", n=c.get("part", 0), seat=self.seat))
        if self.anchor:
            said.append(t("anchored to {anchor}", anchor=self.anchor))
        return t("; ").join(said)

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "round": self.round, "origin": self.origin, "ok": self.ok, "host": self.host,
                "moves": self.moves, "counts": self.counts, "notes": [render(n, "en") for n in self.notes], "anchor": self.anchor,
                "seat": self.seat, "faults": [f.to_json() for f in self.faults]}


def _fault(move: int | None, check: str, message: Text | PbemError, packet: int | None = None) -> Fault:
    if isinstance(message, PbemError):
        return Fault(move, check, message.message, packet, message.code)
    return Fault(move, check, message, packet)

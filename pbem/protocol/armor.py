"""ASCII armour: binary packets as mail-safe text, and back again.

    -----BEGIN PBEM MOVE-----
    Comment: game x seq 5          (optional, untrusted, ends at a blank line)

    base64, 64 columns
    -----END PBEM MOVE-----

Reading is deliberately forgiving (see docs/keys-and-armor.md, "Tolerance"):
mail clients quote, re-wrap, re-encode and re-indent. Integrity is not the
armour's job: the payload is signed, so anything that decodes but was altered
fails later with BadSignature.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping

from pbem.errors import BadPacket, Msg, UsageError, msg
from pbem.protocol.limits import MAX_BLOCK, MAX_BLOCKS, MAX_TEXT, check_size

WIDTH = 64
MAX_LINE = 76
_KIND_RE = re.compile(r"[A-Z][A-Z0-9]{0,23}")
_HEADER_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,31}")
# \s+ between words: a re-flowing client may break a marker line at a space.
_MARKER_RE = re.compile(r"-----(BEGIN|END)\s+PBEM\s+([A-Z][A-Z0-9]*)-----")
# The tolerant path's patterns, as strings: re compiles each the first time it is used (most
# commands read only blocks as armor() writes them, which _WRITTEN_BLOCK_RE reads).
_QUOTE = r"^[ \t]*(?:>[ \t]*)*"
_B64 = r"[A-Za-z0-9+/]*"
_NOT_B64 = r"[^A-Za-z0-9+/]"
# Quoted-printable escape of "=", the only character of base64 that QP escapes.
_QP_EQUALS = r"=3[dD]"
# A block exactly as armor() writes it (headers optional, LF or CRLF line ends): read with one
# scan and one binascii call. Anything else (quoted, re-wrapped, re-encoded) takes the tolerant
# path, which cleans every line, and would dominate an audit's time.
_WRITTEN_BLOCK_RE = re.compile(
    r"-----BEGIN PBEM ([A-Z][A-Z0-9]{0,23})-----\r?\n"
    r"(?:[A-Za-z][A-Za-z0-9-]{0,31}:[^\r\n]*\r?\n)*(?:\r?\n)?"
    r"((?:[A-Za-z0-9+/=]{1,76}\r?\n)*)"
    r"-----END PBEM \1-----"
)


def _check_kind(kind: str) -> str:
    up = kind.upper()
    if not _KIND_RE.fullmatch(up):
        raise UsageError(msg("armour kind must be one word of letters and digits: {kind}", kind=repr(kind)))
    return up


def armor(kind: str, payload: bytes, headers: Mapping[str, str] | None = None) -> str:
    """Armour `payload`; `headers` are shown to humans and never trusted on read."""
    kind = _check_kind(kind)
    lines = [f"-----BEGIN PBEM {kind}-----"]
    if headers:
        for name, value in headers.items():
            line = f"{name}: {value}"
            if (
                not _HEADER_NAME_RE.fullmatch(name)
                or len(line) > WIDTH
                or not line.isprintable()
            ):
                raise UsageError(msg("armour header must be 'Name: value' on one printable line of at most {width} "
                                   "characters: {line}", width=WIDTH, line=repr(line)))
            lines.append(line)
        lines.append("")
    data = base64.b64encode(payload).decode("ascii")
    lines.extend(data[i : i + WIDTH] for i in range(0, len(data), WIDTH))
    lines.append(f"-----END PBEM {kind}-----")
    return "\n".join(lines) + "\n"


def _clean_lines(text: str) -> list[str]:
    # splitlines() also handles CRLF and lone CR.
    return [re.sub(_QUOTE, "", line).strip() for line in text.splitlines()]


def _body_lines(lines: list[str]) -> list[str]:
    """Drop the untrusted header block, keep the base64 lines."""
    first = next((i for i, line in enumerate(lines) if line), None)
    if first is None or ":" not in lines[first]:
        return lines
    blank = next((i for i in range(first, len(lines)) if not lines[i]), None)
    if blank is not None:
        return lines[blank + 1 :]
    # The blank separator was lost (re-flowed); base64 never holds ':'.
    i = first
    while i < len(lines) and ":" in lines[i]:
        i += 1
    return lines[i:]


def _decode_body(kind: str, body: str, line_no: int) -> bytes:
    def where() -> Msg:  # only for an error: this runs for every block read
        return msg("PBEM {kind} block at line {line}", kind=kind, line=line_no)

    body = re.sub(_QP_EQUALS, "=", body)
    lines = ["".join(line.split()) for line in _body_lines(_clean_lines(body))]
    lines = [line for line in lines if line]
    # A trailing '=' is a quoted-printable soft break unless it is padding at
    # the very end of the data; padding is settled below from the length.
    last_data = max((i for i, line in enumerate(lines) if line.strip("=")), default=-1)
    data = "".join(
        line[:-1] if i < last_data and line.endswith("=") else line for i, line in enumerate(lines)
    )
    core = data.rstrip("=")
    if not re.fullmatch(_B64, core):  # one linear scan; find the culprit only to name it
        bad = re.search(_NOT_B64, core)
        ch = core[bad.start()] if bad else "?"
        what = msg("padding '=' before the end") if ch == "=" else msg("{char}, which is not base64", char=repr(ch))
        raise BadPacket(msg("{where} holds {what}", where=where(), what=what),
                        hint=msg("the block was damaged in transit; ask the sender to resend it as an attachment"))
    if len(core) % 4 == 1:
        raise BadPacket(msg("{where} has an impossible base64 length (truncated?)", where=where()), hint=_resend())
    if len(core) * 3 // 4 > MAX_BLOCK:
        check_size(len(core) * 3 // 4, MAX_BLOCK, where())
    try:
        return binascii.a2b_base64(core + "=" * (-len(core) % 4), strict_mode=True)
    except (binascii.Error, ValueError) as exc:
        raise BadPacket(msg("{where} does not decode: {error}", where=where(), error=exc)) from None


def _dearmor_written(text: str) -> list[tuple[str, bytes]] | None:
    """The blocks of `text` when every one is as armor() wrote it, else None (read tolerantly).

    Without '>' in the text, line cleaning only strips spaces, which shows no marker a raw
    search misses; so when the raw markers are exactly the written blocks' own, both readings
    find the same blocks, and each body (base64 only, '=' only at its end) decodes the same."""
    if ">" in text:
        return None
    blocks: list[tuple[str, bytes]] = []
    for m in _WRITTEN_BLOCK_RE.finditer(text):
        data = "".join(m.group(2).split())
        core = data.rstrip("=")
        if "=" in core or len(data) % 4 or len(data) - len(core) > 2 or len(data) // 4 * 3 > MAX_BLOCK:
            return None
        try:
            blocks.append((m.group(1), binascii.a2b_base64(data, strict_mode=True)))
        except binascii.Error:
            return None  # the tolerant reading says what is wrong, and where
    if len(blocks) > MAX_BLOCKS or len(_MARKER_RE.findall(text)) != 2 * len(blocks):
        return None
    return blocks


def dearmor_all(text: str) -> list[tuple[str, bytes]]:
    """Every armoured block in `text`, in order, as (KIND, payload). Linear in the text's length."""
    if len(text) > MAX_TEXT:
        check_size(len(text), MAX_TEXT, msg("the text"))
    written = _dearmor_written(text)
    if written is not None:
        return written
    return _dearmor_tolerant(text)


def _dearmor_tolerant(text: str) -> list[tuple[str, bytes]]:
    # Quote markers are stripped before searching so that markers and bodies
    # quoted at any depth look the same as unquoted ones.
    cleaned = "\n".join(_clean_lines(text))
    blocks: list[tuple[str, bytes]] = []
    open_kind: str | None = None
    open_end = 0
    open_line = 0
    line_no, counted = 1, 0  # line numbers counted on from the last marker, never from the top
    for m in _MARKER_RE.finditer(cleaned):
        which, kind = m.group(1), m.group(2)
        line_no += cleaned.count("\n", counted, m.start())
        counted = m.start()
        if which == "BEGIN":
            if open_kind is not None:
                raise BadPacket(msg("PBEM {kind} block at line {line} has no END line before the next block "
                                  "(truncated?)", kind=open_kind, line=open_line), hint=_resend())
            open_kind, open_end, open_line = kind, m.end(), line_no
        elif open_kind is None:
            # A lone END: the top of a quoted block was cut away in a reply;
            # there is nothing to decode and nothing to trust.
            continue
        elif kind != open_kind:
            raise BadPacket(msg("PBEM {kind} block at line {line} ends with END PBEM {other} at line {end}",
                              kind=open_kind, line=open_line, other=kind, end=line_no))
        else:
            if len(blocks) >= MAX_BLOCKS:
                raise BadPacket(msg("the text holds more than {n} blocks", n=MAX_BLOCKS),
                                hint=msg("pbem never writes this many into one file or mail"))
            blocks.append((kind, _decode_body(kind, cleaned[open_end : m.start()], open_line)))
            open_kind = None
    if open_kind is not None:
        raise BadPacket(msg("PBEM {kind} block at line {line} has no END line (truncated?)", kind=open_kind,
                          line=open_line), hint=_resend())
    return blocks


def _resend() -> Msg:
    return msg("ask the sender to resend the whole block")


def dearmor_one(text: str, kind: str | None = None) -> tuple[str, bytes]:
    """The single block in `text` (of `kind`, if given); identical repeats count once."""
    want = _check_kind(kind) if kind is not None else None
    blocks = [b for b in dearmor_all(text) if want is None or b[0] == want]
    label = f"PBEM {want}" if want else "PBEM"
    if not blocks:
        raise BadPacket(msg("no armoured {label} block found", label=label),
                        hint=msg("paste the whole text from -----BEGIN {label}... to -----END {label}...", label=label))
    if any(b != blocks[0] for b in blocks[1:]):
        raise BadPacket(msg("found {n} different {label} blocks, expected one", n=len(blocks), label=label))
    return blocks[0]

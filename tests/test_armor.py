from __future__ import annotations

import quopri
import re
from email import message_from_bytes, policy
from email.message import EmailMessage

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.errors import BadPacket, UsageError
from pbem.protocol.armor import MAX_LINE, _dearmor_tolerant, _dearmor_written, armor, dearmor_all, dearmor_one

KINDS = ["PACKET", "MOVE", "JOIN", "INVITATION", "ARCHIVE"]
PROSE = "Hi all,\n\nhere is my move: I play a path card.\nCheers, Ann\n"


# ---- what mail clients do to text ------------------------------------------


def quote(text: str, prefixes: list[str]) -> str:
    for prefix in prefixes:
        text = "\n".join(prefix + line if line else prefix.rstrip() for line in text.split("\n"))
    return text


def rewrap(text: str, width: int) -> str:
    """Join each run of base64 lines and re-cut it at `width` (a re-flowing client)."""
    out: list[str] = []
    run: list[str] = []
    for line in text.split("\n") + [""]:
        if re.fullmatch(r"[A-Za-z0-9+/=]+", line) and not line.startswith("-"):
            run.append(line)
            continue
        if run:
            joined = "".join(run)
            out.extend(joined[i : i + width] for i in range(0, len(joined), width))
            run = []
        out.append(line)
    return "\n".join(out[:-1])


def soft_breaks(text: str, every: int) -> str:
    """Insert QP-style '=\\n' soft breaks inside long base64 lines (not decoded)."""
    out = []
    for line in text.split("\n"):
        if re.fullmatch(r"[A-Za-z0-9+/]{8,}=*", line):
            pieces = [line[i : i + every] for i in range(0, len(line), every)]
            out.append("=\n".join(pieces))
        else:
            out.append(line)
    return "\n".join(out)


def real_qp(text: str) -> str:
    """Genuine quoted-printable of one long line: '=3D' for padding, soft breaks at 76."""
    long = rewrap(text, 500)
    return quopri.encodestring(long.encode()).decode()


# ---- round trips ----------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    payload=st.binary(max_size=700),
    kind=st.sampled_from(KINDS),
    comment=st.booleans(),
    quotes=st.lists(st.sampled_from(["> ", ">", ">> ", "> > "]), max_size=3),
    width=st.one_of(st.none(), st.integers(40, 76)),
    qp=st.sampled_from([None, "soft", "real"]),
    crlf=st.booleans(),
    indent=st.sampled_from(["", "  ", "\t"]),
    trailing=st.sampled_from(["", " ", "   "]),
)
def test_round_trip_through_mail_damage(
    payload: bytes,
    kind: str,
    comment: bool,
    quotes: list[str],
    width: int | None,
    qp: str | None,
    crlf: bool,
    indent: str,
    trailing: str,
) -> None:
    headers = {"Comment": "game x seq 5"} if comment else None
    block = armor(kind, payload, headers)
    assert all(len(line) <= MAX_LINE for line in block.splitlines())
    text = PROSE + "\n" + block + "\n-- \nsent from my phone\n"
    if width is not None:
        text = rewrap(text, width)
    if qp == "soft":
        text = soft_breaks(text, 23)
    elif qp == "real":
        text = real_qp(text)
    text = "\n".join(indent + line + trailing for line in text.split("\n"))
    text = quote(text, quotes)
    if crlf:
        text = text.replace("\n", "\r\n")
    assert dearmor_all(text) == [(kind, payload)]
    assert dearmor_one(text, kind.lower()) == (kind, payload)
    # both readings agree wherever the quick one answers
    assert _dearmor_tolerant(text) == [(kind, payload)]
    assert _dearmor_written(text) in (None, [(kind, payload)])


@given(st.binary(max_size=300))
def test_plain_round_trip_and_format(payload: bytes) -> None:
    text = armor("move", payload)
    lines = text.splitlines()
    assert lines[0] == "-----BEGIN PBEM MOVE-----" and lines[-1] == "-----END PBEM MOVE-----"
    assert all(len(line) <= 64 for line in lines[1:-1])
    assert text.endswith("\n")
    assert dearmor_all(text) == [("MOVE", payload)]


# ---- the quick reading of text as armor() writes it ----------


@given(payloads=st.lists(st.binary(max_size=400), min_size=1, max_size=3), comment=st.booleans(),
       crlf=st.booleans())
def test_written_text_is_read_in_one_scan(payloads: list[bytes], comment: bool, crlf: bool) -> None:
    blocks = [armor(k, p, {"Comment": "game x seq 5"} if comment else None) for k, p in zip(KINDS, payloads)]
    text = PROSE + "\n".join(blocks) + "-- \nAnn\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    want = list(zip(KINDS, payloads))
    assert _dearmor_written(text) == want  # the quick path answers (it is what pbem writes) ...
    assert _dearmor_tolerant(text) == want  # ... and says what the tolerant reading says


@settings(max_examples=400, deadline=None)
@given(payload=st.binary(min_size=1, max_size=200), comment=st.booleans(), data=st.data())
def test_the_quick_reading_never_accepts_what_the_tolerant_one_would_not(payload: bytes, comment: bool,
                                                                         data: st.DataObject) -> None:
    text = armor("move", payload, {"Comment": "game x"} if comment else None) + armor("join", payload[::-1])
    for _ in range(data.draw(st.integers(1, 3))):  # damage: replace, insert or delete one character
        at = data.draw(st.integers(0, len(text) - 1))
        new = data.draw(st.sampled_from(["", "=", "A", "-", ":", "\n", " ", ">", "*", "3D"]))
        text = text[:at] + new + text[at + data.draw(st.integers(0, 1)):]
    quick = _dearmor_written(text)
    if quick is None:
        return
    assert _dearmor_tolerant(text) == quick


def test_damaged_or_quoted_blocks_take_the_tolerant_reading() -> None:
    good, other = armor("move", b"x" * 100), armor("join", b"y" * 100)
    quoted = "\n".join("> " + line for line in other.splitlines())
    assert _dearmor_written(good + quoted) is None
    assert dearmor_all(good + quoted) == [("MOVE", b"x" * 100), ("JOIN", b"y" * 100)]
    rewrapped = good + rewrap(other, 100)  # lines longer than mail allows
    assert _dearmor_written(rewrapped) is None
    assert dearmor_all(rewrapped)[1] == ("JOIN", b"y" * 100)
    with pytest.raises(BadPacket, match="not base64"):
        dearmor_all(good + other.replace("eXl5", "eX*5", 1))


def test_padding_at_end_with_soft_break_before_it() -> None:
    # "...xyz=" then "=" on its own line: the first "=" is a soft break or
    # padding; either reading must give the same bytes.
    payload = b"\x00\x01\x02\x03"  # base64 AAECAw==
    for body in ("AAECAw=\n==", "AAECAw==", "AAECAw", "AAEC=\nAw==", "AAEC=\nAw=\n="):
        text = f"-----BEGIN PBEM MOVE-----\n{body}\n-----END PBEM MOVE-----"
        assert dearmor_all(text) == [("MOVE", payload)], body


def test_header_is_ignored_even_when_quoted_and_blank_line_lost() -> None:
    block = armor("JOIN", b"hello world", {"Comment": "seat 2: bob", "Game": "x"})
    assert "Comment: seat 2: bob\nGame: x\n\n" in block
    assert dearmor_all(quote(block, ["> "])) == [("JOIN", b"hello world")]
    assert dearmor_all(block.replace("\n\n", "\n")) == [("JOIN", b"hello world")]


def test_reflowed_into_one_paragraph() -> None:
    block = armor("MOVE", bytes(range(200)))
    flowed = "see below " + " ".join(block.split("\n")) + " thanks"
    assert dearmor_all(flowed) == [("MOVE", bytes(range(200)))]


def test_survives_a_real_quoted_printable_email() -> None:
    payload = bytes(range(256)) * 3
    msg = EmailMessage()
    msg["Subject"] = "pbem move"
    msg.set_content(PROSE + armor("MOVE", payload), cte="quoted-printable")
    raw = msg.as_bytes()
    parsed = message_from_bytes(raw, policy=policy.default)
    assert dearmor_one(parsed.get_content(), "MOVE") == ("MOVE", payload)  # type: ignore[attr-defined]
    # Someone pastes the still-encoded body.
    assert dearmor_one(raw.decode("ascii"), "MOVE") == ("MOVE", payload)


def test_two_blocks_in_one_text() -> None:
    text = "first\n" + armor("MOVE", b"one") + "\nand\n> " + armor("JOIN", b"two").replace("\n", "\n> ")
    assert dearmor_all(text) == [("MOVE", b"one"), ("JOIN", b"two")]
    assert dearmor_one(text, "JOIN") == ("JOIN", b"two")
    with pytest.raises(BadPacket):
        dearmor_one(text)


def test_dearmor_one() -> None:
    with pytest.raises(BadPacket) as exc:
        dearmor_one("no armour here", "MOVE")
    assert "PBEM MOVE" in str(exc.value)
    twice = armor("MOVE", b"same") + "\n> " + armor("MOVE", b"same").replace("\n", "\n> ")
    assert dearmor_one(twice) == ("MOVE", b"same")
    with pytest.raises(BadPacket):
        dearmor_one(armor("MOVE", b"a") + armor("MOVE", b"b"), "MOVE")


def test_no_block() -> None:
    assert dearmor_all("") == []
    assert dearmor_all("hello\n-----BEGIN PGP MESSAGE-----\nabc\n-----END PGP MESSAGE-----\n") == []
    # A reply that quotes only the tail of an earlier block.
    assert dearmor_all("> AAAA\n> -----END PBEM MOVE-----\n") == []


def test_truncation_detected() -> None:
    block = armor("MOVE", bytes(range(256)))
    lines = block.splitlines()
    with pytest.raises(BadPacket) as exc:
        dearmor_all("\n".join(lines[:-1]))
    assert "no END line" in str(exc.value) and "MOVE" in str(exc.value)
    with pytest.raises(BadPacket):
        dearmor_all("\n".join(lines[:3]))
    with pytest.raises(BadPacket):
        # Next block starts before this one ended.
        dearmor_all("\n".join(lines[:-1]) + "\n" + block)
    with pytest.raises(BadPacket):
        # Cut mid-quantum: one base64 char too many.
        body = "".join(lines[1:-1])[:9]
        dearmor_all(f"{lines[0]}\n{body}\n{lines[-1]}")
    with pytest.raises(BadPacket):
        dearmor_all(block.replace("END PBEM MOVE", "END PBEM JOIN"))


def test_garbage_in_body() -> None:
    block = armor("MOVE", bytes(range(100)))
    lines = block.splitlines()
    lines[2] = lines[2][:10] + "!" + lines[2][11:]
    with pytest.raises(BadPacket) as exc:
        dearmor_all("\n".join(lines))
    assert "'!'" in str(exc.value)
    # Padding in the middle means two blocks were glued together.
    glued = f"{lines[0]}\nAAECAw==\nAAECAw==\n{lines[-1]}"
    with pytest.raises(BadPacket):
        dearmor_all(glued)


def test_armor_rejects_bad_kind_and_headers() -> None:
    for kind in ("", "two words", "MO-VE", "x" * 30):
        with pytest.raises(UsageError):
            armor(kind, b"")
    for headers in ({"Comment": "x" * 70}, {"Comment": "a\nb"}, {"Bad name": "x"}):
        with pytest.raises(UsageError):
            armor("MOVE", b"", headers)
    assert dearmor_all(armor("ARCHIVE", b"")) == [("ARCHIVE", b"")]


def test_marker_split_at_a_space() -> None:
    block = armor("INVITATION", b"come play")
    split = block.replace("PBEM INVITATION", "PBEM\n> INVITATION")
    assert dearmor_all("> " + split) == [("INVITATION", b"come play")]

from __future__ import annotations

import quopri
import re
from email import message_from_bytes, policy
from email.message import EmailMessage

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.errors import BadPacket, UsageError
from pbem.protocol.armor import MAX_LINE, armor, dearmor_all, dearmor_one

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


@given(st.binary(max_size=300))
def test_plain_round_trip_and_format(payload: bytes) -> None:
    text = armor("move", payload)
    lines = text.splitlines()
    assert lines[0] == "-----BEGIN PBEM MOVE-----" and lines[-1] == "-----END PBEM MOVE-----"
    assert all(len(line) <= 64 for line in lines[1:-1])
    assert text.endswith("\n")
    assert dearmor_all(text) == [("MOVE", payload)]


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

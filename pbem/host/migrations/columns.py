"""The columns the migrations share: each shape written once, for every migration that makes it.

Frozen. A migration must go on meaning what it meant when it was written (a store made by any
older pbem upgrades to the same schema), and the migrations call these functions: so none of
them may ever change what it makes. A new shape is a new function (or stays in its migration);
the tables of today are pbem/host/tables.py, not this.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.schema import SchemaItem


def serial() -> sa.Column:
    """The row's own number: `id`, an integer primary key."""
    return sa.Column("id", sa.Integer(), primary_key=True)


def game(games: str = "games", *, primary_key: bool = False) -> sa.Column:
    """The row's game, `game_id` (`games`.id): part of the primary key, or a plain reference."""
    return sa.Column("game_id", sa.String(), sa.ForeignKey(f"{games}.id"), primary_key=primary_key, nullable=False)


def strings(*names: str, nullable: bool = False) -> list[sa.Column]:
    """A string column for each of `names`, in that order."""
    return [sa.Column(name, sa.String(), nullable=nullable) for name in names]


def texts(*names: str, nullable: bool = False) -> list[sa.Column]:
    """A text column for each of `names`, in that order."""
    return [sa.Column(name, sa.Text(), nullable=nullable) for name in names]


def integers(*names: str, nullable: bool = False) -> list[sa.Column]:
    """An integer column for each of `names`, in that order."""
    return [sa.Column(name, sa.Integer(), nullable=nullable) for name in names]


def notice_columns(games: str) -> list[sa.Column]:
    """A host's signed notice to a table of `games`: the packet it is about, its kind, the seat
    it names (if any), the armoured notice."""
    return [serial(), game(games), *integers("seq"), *strings("kind"), *strings("seat", nullable=True),
            *texts("armored")]


def talk_columns(games: str) -> list[SchemaItem]:
    """A seat's line of table talk at a table of `games`, as it came: the seat's count `n`, the
    packet it answers, each (game, seat, n) once."""
    return [serial(), game(games), *strings("seat"), *integers("n", "seq"),
            sa.Column("file_hash", sa.String(), nullable=False, unique=True), *texts("armored"),
            *strings("created_at"), sa.UniqueConstraint("game_id", "seat", "n")]

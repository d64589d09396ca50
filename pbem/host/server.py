"""How pbem uses a database server (PostgreSQL) as a store: its engine, and a pooled connection
checked without a round trip each time it is taken from the pool.

A daemon takes a connection from the pool for every read and every change, several times a
move. SQLAlchemy's `pool_pre_ping` would ask the server first each time (`SELECT 1`: a round
trip, and as much CPU as a small query on both sides) so that a connection the server closed
(a restart ends every session) is replaced rather than failing. A session the server ends is
told so on its socket (a last error message, then the end of the stream), and an idle session
is sent nothing else: so a socket with something to read, or closed, is a session ended. That
is checked with `select` at no cost to the server, and such a connection, and every connection
pooled before it (`InvalidatePoolError`: the server went away for all of them), is replaced.
A connection cut off without a word (the network dropped, the machine down) is found by its
first statement, whose error fails that step, and the pool is renewed for the next one.
"""

from __future__ import annotations

import select
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import InvalidatePoolError

CONNECT_TIMEOUT = 10  # seconds


def engine(url: str) -> Engine:
    made = create_engine(url, connect_args={"connect_timeout": CONNECT_TIMEOUT})
    event.listen(made, "checkout", _ended_by_server)
    return made


def _ended_by_server(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    """A pooled connection the server has ended (InvalidatePoolError: the pool connects anew)."""
    if ended(dbapi_connection):
        raise InvalidatePoolError()  # the pool's signal to reconnect, caught by the pool: nobody reads it


def ended(dbapi_connection: Any) -> bool:
    """Whether an idle psycopg connection's session is over: closed, or with something to read."""
    if dbapi_connection.closed:
        return True
    try:
        readable, _, _ = select.select([dbapi_connection.fileno()], [], [], 0)
    except (OSError, ValueError):  # no socket any more
        return True
    return bool(readable)

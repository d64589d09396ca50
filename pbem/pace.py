"""How often Python's cyclic collector runs: seldom while a command starts, as usual in a long run.

A command's start-up makes ~90,000 objects the collector tracks (modules, classes, functions:
SQLAlchemy's are most of them) that live as long as the process. At the collector's default
threshold (700 new objects) it went through them ~100 times while they were imported (~20-30 ms
of a store's command), finding almost nothing to free; so during start-up it runs after
START_UP_OBJECTS instead, which no command's start-up reaches. A process that then runs for
hours (the automatic host, a seat bot) goes back to the usual pace once it is started, so the
garbage of each step is collected as it would be anywhere else, not 200,000 objects late.
"""

from __future__ import annotations

import gc

START_UP_OBJECTS = 200_000
USUAL = gc.get_threshold()  # the interpreter's own, read before pbem changes it


def for_start_up() -> None:
    gc.set_threshold(START_UP_OBJECTS, *USUAL[1:])


def for_long_run() -> None:
    gc.set_threshold(*USUAL)

"""The watch loop shared by the automatic host and the seat bots."""

from __future__ import annotations

import time
from typing import Any, Callable

Log = Callable[[str], None]


def run(stepper: Any, *, poll: float, once: bool, log: Log,
        retry: tuple[type[BaseException], ...] = (Exception,)) -> None:
    """Call `stepper.step()` until it returns True (or once).

    A step that fails with one of `retry` is logged and tried again after `poll` seconds
    (a half-synced file, SMTP down); anything else, or any failure with `once`, propagates.
    """
    while True:
        try:
            done = stepper.step()
        except retry as exc:
            if once:
                raise
            log(f"step failed ({type(exc).__name__}: {exc}); retrying in {poll}s")
            done = False
        if done or once:
            return
        time.sleep(poll)

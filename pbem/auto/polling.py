"""The watch loop shared by the automatic host and the seat bots, and their time-stamped log."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pbem.errors import CertificateFailure, MailServerRefused, UsageError
from pbem.ui import zone
from pbem.ui.terminal import printable
from pbem.ui.words import t

Log = Callable[[str], None]
_LASTING = (UsageError, MailServerRefused, CertificateFailure)  # waiting does not mend these
BACKOFF_MAX = 60.0  # seconds between tries of a step that keeps failing (a mail server down)


def stamp_log(prefix: str = "host") -> Log:
    """A log that prints time-stamped lines; the lines quote what strangers sent, so they go
    through the one terminal sanitiser."""
    def log(message: str) -> None:
        print(printable(f"{zone.clock()} {prefix}: {message}"), flush=True)

    return log


def backoff(poll: float, failures: int) -> float:
    """poll, 2 poll, 4 poll ... up to a minute, after the 1st, 2nd, 3rd ... failure in a row."""
    return min(max(poll, 0.05) * 2 ** max(failures - 1, 0), max(BACKOFF_MAX, poll))


def run(stepper: Any, *, poll: float, once: bool, log: Log,
        retry: tuple[type[BaseException], ...] = (Exception,)) -> None:
    """Call `stepper.step()` until it returns True (or once).

    Between steps it waits `poll` seconds, or, when the stepper has a `wait(poll)` (a
    mailbox that can IDLE), until that returns. A step that fails with one of `retry` is
    logged and tried again with back-off (a half-synced file, a mail server down); anything
    else, what waiting does not mend (a UsageError: a wrong password or URL; a mail server
    that refuses pbem's folders; a certificate that does not verify), or any failure with
    `once`, propagates.
    """
    with _stopped_by_sigterm() as stop:
        try:
            _loop(stepper, poll=poll, once=once, log=log, retry=retry, stop=stop)
        except Stopped:
            log(t("stopped ({signal}); what was done is kept, and a new start goes on from there", signal="SIGTERM"))


class Stopped(BaseException):
    """A SIGTERM (systemd's stop, kill): the watch loop ends; a state change under way is whole or not made."""


@dataclass
class _Stop:
    """A SIGTERM seen (`seen`), and whether the loop waits between steps (`idle`), where the
    signal may end it at once."""
    seen: bool = False
    idle: bool = False

    @contextmanager
    def idling(self) -> Iterator[None]:
        self.idle = True  # first: a signal from here on raises; one before it is seen below
        try:
            if self.seen:
                raise Stopped()
            yield
        finally:
            self.idle = False


@contextmanager
def _stopped_by_sigterm() -> Iterator[_Stop]:
    """While a watch loop runs (in the main thread), SIGTERM ends it as Ctrl-C would end a
    command, but as the normal way to stop a daemon: it says so and the command exits 0.

    Waiting between steps, the signal ends the wait at once. During a step it is only noted,
    and the loop stops when the step is done: raised there, it could land inside a finaliser
    Python runs mid-step (a database connection collected), where it would be printed as a
    traceback and dropped. Each state change is one transaction either way."""
    import signal
    import threading

    state = _Stop()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return

    def stop(signum: int, frame: Any) -> None:
        state.seen = True
        if state.idle:
            raise Stopped()

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield state
    finally:
        signal.signal(signal.SIGTERM, before)


def _loop(stepper: Any, *, poll: float, once: bool, log: Log, retry: tuple[type[BaseException], ...],
          stop: _Stop) -> None:
    failures = 0
    wait = getattr(stepper, "wait", None)
    while True:
        if stop.seen:  # a SIGTERM during the step just done
            raise Stopped()
        try:
            done = stepper.step()
            if done or once:
                return
            with stop.idling():
                if wait is not None:
                    wait(poll)
                else:
                    time.sleep(poll)
            failures = 0
        except retry as exc:
            if once or isinstance(exc, _LASTING):
                raise
            failures += 1
            delay = backoff(poll, failures)
            log(t("step failed ({kind}: {error}); retrying in {seconds}s", kind=type(exc).__name__, error=exc,
                  seconds=f"{delay:g}"))
            with stop.idling():
                time.sleep(delay)

"""The watch loop of the automatic host and the seat bots (pbem/auto/polling.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pbem import pace
from pbem.auto import polling
from pbem.errors import UsageError


class Steps:
    """A stepper that fails or finishes as told, one outcome per step, and notes the collector's pace."""

    def __init__(self, *outcomes: object) -> None:
        self.outcomes, self.paces = list(outcomes), []

    def step(self) -> bool:
        self.paces.append(gc.get_threshold())
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return bool(outcome)


@pytest.fixture
def started_as_a_command() -> Iterator[None]:
    pace.for_start_up()  # as pbem.entry leaves it for the command
    yield
    gc.set_threshold(*pace.USUAL)


def test_a_long_run_collects_at_the_usual_pace_once_started(started_as_a_command: None) -> None:
    assert gc.get_threshold()[0] == pace.START_UP_OBJECTS
    steps = Steps(False, True)
    polling.run(steps, poll=0, once=False, log=print)
    assert steps.paces == [pace.USUAL, pace.USUAL] and pace.USUAL[0] < pace.START_UP_OBJECTS


def test_a_single_step_keeps_the_start_up_pace(started_as_a_command: None) -> None:
    steps = Steps(False)
    polling.run(steps, poll=0, once=True, log=print)
    assert steps.paces == [(pace.START_UP_OBJECTS, *pace.USUAL[1:])]


def test_a_failing_step_is_logged_and_tried_again() -> None:
    logged: list[str] = []
    steps = Steps(OSError("mail server down"), OSError("still down"), False, True)
    polling.run(steps, poll=0.01, once=False, log=logged.append)  # waits 0.05 + 0.1 + 0.01 s
    assert steps.outcomes == [] and len(logged) == 2
    assert "mail server down" in logged[0] and "retrying in 0.05s" in logged[0] and "0.1s" in logged[1]


@pytest.mark.parametrize("failure,once", [(UsageError("wrong password"), False), (OSError("down"), True)])
def test_what_waiting_cannot_mend_propagates(failure: Exception, once: bool) -> None:
    with pytest.raises(type(failure)):
        polling.run(Steps(failure, True), poll=0, once=once, log=print)


def test_back_off_doubles_up_to_a_minute() -> None:
    assert [polling.backoff(1, n) for n in (1, 2, 3, 7, 8)] == [1, 2, 4, 60, 60]
    assert polling.backoff(120, 3) == 120  # a poll longer than the cap is its own cap

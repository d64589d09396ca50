"""The watch loop of the automatic host and the seat bots (pbem/auto/polling.py)."""

from __future__ import annotations

import pytest

from pbem.auto import polling
from pbem.errors import UsageError


class Steps:
    """A stepper that fails or finishes as told, one outcome per step."""

    def __init__(self, *outcomes: object) -> None:
        self.outcomes = list(outcomes)

    def step(self) -> bool:
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return bool(outcome)


def test_the_loop_steps_until_a_step_says_it_is_done() -> None:
    steps = Steps(False, False, True, False)
    polling.run(steps, poll=0, once=False, log=print)
    assert steps.outcomes == [False]


def test_once_takes_one_step() -> None:
    steps = Steps(False, True)
    polling.run(steps, poll=0, once=True, log=print)
    assert steps.outcomes == [True]


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

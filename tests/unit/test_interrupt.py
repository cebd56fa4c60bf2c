"""How a command tells a cancellation from the Prefect UI from its own run's stop."""

from __future__ import annotations

from flows.interrupt import Stop, cancelled_from_outside


def test_a_run_cancelled_by_its_own_hook_after_ctrl_c_is_not_interrupted_again() -> None:
    # Ctrl-C set how; the run's hook then marks the flow run Cancelled, which the watch sees
    assert not cancelled_from_outside(Stop(how="SIGINT", after="collect"))
    assert not cancelled_from_outside(Stop(how="SIGTERM"))


def test_a_run_cancelled_while_nothing_stopped_it_was_cancelled_from_the_ui() -> None:
    assert cancelled_from_outside(Stop())

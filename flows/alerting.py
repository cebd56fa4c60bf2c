"""Alerts around the runs: after a run, from its hooks, and the check that finds what nobody said.

A run sends its own day's alerts when it ends (``alert_safely``), from its ``on_failure`` and
``on_crashed`` hooks too. A run whose process was killed (SIGKILL, the out-of-memory killer, a
reboot) runs no hook: ``check`` finds it. It is what ``brief alerts --check`` does, what
``brief serve`` does when it starts and what the ``deliver-held`` deployment does every few
minutes: daily runs the log says are running whose process is gone (on this host), or that
Prefect marked crashed, are recorded ``run.crashed`` and marked Crashed in Prefect (the UI
stops saying "running"); then yesterday's and today's causes are sent where they are still
owed, and today's brief is checked against ``[alerting] late_after``.

What is decided and sent is the service's (``ops/alerts.py``); here is what only Prefect knows (a
flow run's state, marking it crashed), and the wrapper that never raises into a run: an alert that
cannot be checked or sent is logged (and a refused send recorded as ``alert.failed``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime
from functools import partial
from typing import TypeVar

from ops import alerts
from ops.alerts import AlertOutcome, CheckOutcome
from ops.workspace import Resources
from tasks.settings import Settings

UUID_TEXT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
T = TypeVar("T")

__all__ = ["CheckOutcome", "alert_safely", "check"]


def alert_safely(
    settings: Settings,
    resources: Resources,
    day: date | None,
    say: Callable[[str], None],
    *,
    run_id: str | None = None,
    now: datetime | None = None,
) -> AlertOutcome | None:
    """The day's alerts, sent (``ops.alerts.send_day``); a failure to check or send them is said,
    never raised."""
    if day is None or not settings.alerts:
        return None
    try:
        outcome = alerts.send_day(settings, resources, day, run_id=run_id, now=now)
    except Exception as exc:  # the alerts are a side channel: the run's outcome stands
        say(f"alerts of {day} could not be checked: {type(exc).__name__}: {exc}")
        return None
    for cause, channel, reason in outcome.failed:
        say(f"alert {cause} to {channel} failed: {reason}; the next check tries again")
    return outcome


def check(
    settings: Settings,
    resources: Resources,
    *,
    now: datetime | None = None,
    say: Callable[[str], None] = print,
) -> CheckOutcome:
    """``ops.alerts.check`` with what Prefect knows: the states of the runs the log says are
    running, and a crashed one marked Crashed in Prefect."""
    return alerts.check(
        settings,
        resources,
        now=now,
        states=lambda run_ids: _prefect(lambda: _states(run_ids), {}, say),
        mark_crashed=lambda run_id, how: _prefect(partial(_mark_crashed, run_id, how), None, say),
        say=say,
    )


def _prefect(call: Callable[[], T], fallback: T, say: Callable[[str], None]) -> T:
    """A call to the Prefect API; without a server or with one that fails, ``fallback`` (and why)."""
    from prefect.settings import PREFECT_API_URL

    if not PREFECT_API_URL.value():
        return fallback  # a run by hand had its own temporary server: only its process tells
    try:
        return call()
    except Exception as exc:  # the server is down or refuses: the log still says what it can
        say(f"the Prefect server did not answer ({type(exc).__name__}: {exc}); its runs are not checked")
        return fallback


def _states(run_ids: list[str]) -> dict[str, tuple[str, str]]:
    """The Prefect states of the runs the server knows (one call)."""
    from flows.fanout import flow_run_states

    ids = [r for r in run_ids if UUID_TEXT.match(r)]
    return flow_run_states(ids, unknown=None) if ids else {}


def _mark_crashed(run_id: str, how: str) -> None:
    from uuid import UUID

    from prefect.client.orchestration import get_client
    from prefect.states import Crashed

    with get_client(sync_client=True) as client:
        client.set_flow_run_state(UUID(run_id), Crashed(message=f"dailybrief: {how}"), force=True)

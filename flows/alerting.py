"""Alerts around the runs: after a run, from its hooks, and the check that finds what nobody said.

A run sends its own day's alerts when it ends (``alert_safely``), from its ``on_failure`` and
``on_crashed`` hooks too. A run whose process was killed (SIGKILL, the out-of-memory killer, a
reboot) runs no hook: ``check`` finds it. It is what ``brief alerts --check`` does, what
``brief serve`` does when it starts and what the ``deliver-held`` deployment does every few
minutes: daily runs the log says are running whose process is gone (on this host), or that
Prefect marked crashed, are recorded ``run.crashed`` and marked Crashed in Prefect (the UI
stops saying "running"); then yesterday's and today's causes are sent where they are still
owed, and today's brief is checked against ``[alerting] late_after``.

Nothing here raises into a run: an alert that cannot be checked or sent is logged (and a
refused send recorded as ``alert.failed``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import partial
from typing import TypeVar

from tasks.settings import Settings
from tasks.steps.alert import AlertOutcome, raise_alerts, recent
from tasks.steps.liveness import OpenRun, crashed_event, open_runs, process_gone

UUID_TEXT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
T = TypeVar("T")
GONE = "its process is gone: killed (SIGKILL, out of memory) or its machine restarted"


@dataclass
class CheckOutcome:
    crashed: list[tuple[OpenRun, str]] = field(default_factory=list)  # (run, how it ended)
    alerts: list[AlertOutcome] = field(default_factory=list)

    @property
    def sent(self) -> list[tuple[str, str]]:
        return [s for o in self.alerts for s in o.sent]

    @property
    def failed(self) -> list[tuple[str, str, str]]:
        return [f for o in self.alerts for f in o.failed]


def alert_safely(
    settings: Settings,
    day: date | None,
    say: Callable[[str], None],
    *,
    run_id: str | None = None,
    now: datetime | None = None,
) -> AlertOutcome | None:
    """The day's alerts, sent; a failure to check or send them is said, never raised."""
    if day is None or not settings.alerts:
        return None
    try:
        outcome = raise_alerts(settings, day, run_id=run_id, now=now)
    except Exception as exc:  # the alerts are a side channel: the run's outcome stands
        say(f"alerts of {day} could not be checked: {type(exc).__name__}: {exc}")
        return None
    for cause, channel, reason in outcome.failed:
        say(f"alert {cause} to {channel} failed: {reason}; the next check tries again")
    return outcome


def check(
    settings: Settings, *, now: datetime | None = None, say: Callable[[str], None] = print
) -> CheckOutcome:
    """Runs killed without a word recorded as crashed; the alerts still owed sent; today's lateness."""
    from storage.events import utcnow

    moment = now or utcnow()
    today = moment.astimezone(settings.zone).date()
    store = settings.storage.event_store()
    around = [today + timedelta(days=k) for k in (-2, -1, 0, 1)]
    outcome = CheckOutcome(crashed=sweep_crashed(store, around, say))
    for run, how in outcome.crashed:
        say(f"the run {run.run_id} of {run.day} crashed: {how}")
    days = {today - timedelta(days=1), today}
    days |= {run.day for run, _ in outcome.crashed if recent(run.day, moment, settings)}
    for day in sorted(days):
        outcome.alerts.append(raise_alerts(settings, day, now=moment, late=day == today))
    return outcome


def sweep_crashed(store, days: list[date], say: Callable[[str], None]) -> list[tuple[OpenRun, str]]:
    """Daily runs of ``days`` with no end in the log whose process is gone, or that Prefect marked
    crashed: each recorded ``run.crashed`` (and marked Crashed in Prefect when it still says running)."""
    running = open_runs(store, days)
    if not running:
        return []
    none: dict[str, tuple[str, str]] = {}
    states = _prefect(lambda: _states([r.run_id for r in running]), none, say)
    crashed = []
    for run in running:
        gone = process_gone(run.process)
        kind, message = states.get(run.run_id, ("", ""))
        if gone and run.process:
            how, text = GONE, f"no process {run.process['pid']} on {run.process['host']}"
        elif gone is None and kind == "CRASHED":
            how, text = "Prefect marked it crashed", message
        else:
            continue
        store.append([crashed_event(run.run_id, run.day, how, text, "check")])
        if kind in ("RUNNING", "PENDING"):
            _prefect(partial(_mark_crashed, run.run_id, how), None, say)
        crashed.append((run, how))
    return crashed


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

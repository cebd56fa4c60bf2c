"""Alerts, as services: a day's alerts sent, the check that finds what nobody said, and the alerts
of the last days for a person to read.

Each takes the settings and the process's ``Resources`` (the store, and the clock that says which
days are yesterday, today and tomorrow, and whether a brief is late). What only Prefect knows (a flow
run's state, marking it crashed) is given by the caller (``flows/alerting.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import Settings
from tasks.steps.alert import AlertOutcome, raise_alerts, recent_alerts
from tasks.steps.alert import recent as speaks_of
from tasks.steps.liveness import OpenRun, crashed_event, open_runs, process_gone

GONE = "its process is gone: killed (SIGKILL, out of memory) or its machine restarted"

States = Callable[[list[str]], dict[str, tuple[str, str]]]
"""The Prefect states (kind, message) of the flow runs named, by run id (those Prefect knows)."""
MarkCrashed = Callable[[str, str], None]
"""Mark a flow run Crashed in Prefect (its run id, how it ended)."""


@dataclass(frozen=True)
class Alert:
    at: datetime  # when it was sent (or refused), in the configured timezone
    date: date  # the brief date it is about
    cause: str
    channel: str
    status: str  # sent or FAILED
    what: str  # its subject, or why it could not be sent


def recent(
    settings: Settings, resources: steps.Resources, days: int, now: datetime | None = None
) -> list[Alert]:
    """The alerts of the last ``days`` brief dates (judged at ``now``, default the clock's), newest first."""
    moment = now or resources.clock.now()
    return [Alert(**row) for row in recent_alerts(settings, resources.store, days, moment)]


def send_day(
    settings: Settings,
    resources: steps.Resources,
    day: date,
    *,
    now: datetime | None = None,
    late: bool = False,
    run_id: str | None = None,
) -> AlertOutcome:
    """What ``day``'s causes still owe the alert channels, sent, judged at ``now`` (default: the
    clock's); ``late`` also asks whether its brief is missing then."""
    moment = now or resources.clock.now()
    return raise_alerts(settings, resources.store, day, now=moment, late=late, run_id=run_id)


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


def check(
    settings: Settings,
    resources: steps.Resources,
    *,
    now: datetime | None = None,
    states: States = lambda run_ids: {},
    mark_crashed: MarkCrashed = lambda run_id, how: None,
    say: Callable[[str], None] = print,
) -> CheckOutcome:
    """Runs killed without a word recorded as crashed; the alerts still owed sent; today's lateness,
    all judged at ``now`` (default: the clock's)."""
    moment = now or resources.clock.now()
    today = moment.astimezone(settings.zone).date()
    around = [today + timedelta(days=k) for k in (-2, -1, 0, 1)]
    outcome = CheckOutcome(crashed=sweep_crashed(resources.store, around, states, mark_crashed))
    for run, how in outcome.crashed:
        say(f"the run {run.run_id} of {run.day} crashed: {how}")
    days = {today - timedelta(days=1), today}
    days |= {run.day for run, _ in outcome.crashed if speaks_of(run.day, moment, settings)}
    for day in sorted(days):
        outcome.alerts.append(send_day(settings, resources, day, now=moment, late=day == today))
    return outcome


def sweep_crashed(
    store: ParquetEventStore, days: list[date], states: States, mark_crashed: MarkCrashed
) -> list[tuple[OpenRun, str]]:
    """Daily runs of ``days`` with no end in the log whose process is gone, or that Prefect marked
    crashed: each recorded ``run.crashed`` (and marked Crashed in Prefect when it still says running)."""
    running = open_runs(store, days)
    if not running:
        return []
    known = states([r.run_id for r in running])
    crashed = []
    for run in running:
        gone = process_gone(run.process)
        kind, message = known.get(run.run_id, ("", ""))
        if gone and run.process:
            how, text = GONE, f"no process {run.process['pid']} on {run.process['host']}"
        elif gone is None and kind == "CRASHED":
            how, text = "Prefect marked it crashed", message
        else:
            continue
        store.append([crashed_event(run.run_id, run.day, how, text, "check")])
        if kind in ("RUNNING", "PENDING"):
            mark_crashed(run.run_id, how)
        crashed.append((run, how))
    return crashed

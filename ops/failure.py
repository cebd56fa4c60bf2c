"""What a failed run leaves behind: a ``run.failed`` event and an explanation a person can act on.

Each takes the process's ``Resources``: the store it records in and the clock that says what today
is (a run's day after tomorrow is refused, not recorded)."""

from __future__ import annotations

import re
from datetime import date, timedelta

import polars as pl

from storage.events import new_event, utcnow
from tasks.settings import Settings
from tasks.steps import Clock, Resources, latest_day, resolve_day, today
from tasks.steps.liveness import cancelled_event, crashed_event


def recorded_day(store, settings, run_id: str, clock: Clock) -> date | None:
    """The brief date a run resolved when it started (its ``run.started`` event), if it got that far.

    A scheduled run has no date parameter: it resolves "today" when it starts, and a failure
    hours later (past midnight) must speak of that day, not of the day it fails on. Only the
    days around today are read (partition-pruned).
    """
    now = today(settings, clock)
    days = [d for d in store.days() if now - timedelta(days=2) <= d <= now + timedelta(days=1)]
    started = store.query(
        lambda: store.scan(days, event_types=["run.started"]).filter(pl.col("run_id") == run_id)
    )
    return started["brief_date"][0] if started.height else None


def run_day(resources: Resources, settings: Settings, date_text: str | None, run_id: str) -> date | None:
    """The brief date of a run: its parameter, else the day it recorded when it started."""
    if date_text:
        return resolve_day(date_text, settings, resources.clock)
    return recorded_day(resources.store, settings, run_id, resources.clock)


def recordable_day(
    resources: Resources, settings: Settings, date_text: str | None, run_id: str
) -> date | None:
    """A run's day (``run_day``) that the log may hold: None when it had none yet, or names a day after
    tomorrow by the clock (nothing is recorded for it)."""
    day = run_day(resources, settings, date_text, run_id)
    return None if day is None or day > latest_day(settings, resources.clock) else day


def record_crash(
    settings: Settings, resources: Resources, date_text: str | None, run_id: str, message: str
) -> date | None:
    """Record ``run.crashed`` for a run Prefect saw crash (its ``on_crashed`` hook); its brief date,
    or None when the run crashed before it knew its day (nothing is recorded then)."""
    store = resources.store
    day = recordable_day(resources, settings, date_text, run_id)
    if day is None:
        return None
    how = message.strip().splitlines()[0][:200] if message.strip() else "Prefect marked it crashed"
    store.append([crashed_event(run_id, day, how, message, "hook")])
    return day


def server_gone_how(url: str) -> str:
    """How a run ended when the kept Prefect server it reported to stopped under it."""
    return f"the local Prefect server it reported to ({url}) stopped while it ran"


def record_server_gone(
    settings: Settings, resources: Resources, date_text: str | None, run_id: str, url: str
) -> date | None:
    """Record ``run.crashed`` for a run whose kept Prefect server stopped under it (``brief serve
    --stop`` in another shell); its brief date, or None when it had none yet (nothing recorded)."""
    day = recordable_day(resources, settings, date_text, run_id)
    if day is None:
        return None
    how = server_gone_how(url)
    resources.store.append([crashed_event(run_id, day, how, how, "hook")])
    return day


def record_cancel(
    settings: Settings,
    resources: Resources,
    date_text: str | None,
    run_id: str,
    how: str,
    after: str,
    message: str,
) -> date | None:
    """Record ``run.cancelled`` for a run stopped on purpose (``how``: SIGINT, SIGTERM or prefect-ui;
    ``after``: the last step that ended); its brief date, or None when it stopped before it knew its day
    (nothing is recorded then: the log has no day for it)."""
    day = recordable_day(resources, settings, date_text, run_id)
    if day is None:
        return None
    resources.store.append([cancelled_event(run_id, day, how, after, message)])
    return day


def explain_failure(
    settings: Settings, resources: Resources, date_text: str | None, run_id: str, message: str
) -> tuple[str, date | None]:
    """Record ``run.failed`` for the run; return the Markdown explanation and the run's brief date.

    The date is the parameter, else the day the run recorded when it started; None when the run
    failed before it knew its day (then nothing is recorded in the log, which has no day for it).
    """
    store, clock = resources.store, resources.clock
    day = run_day(resources, settings, date_text, run_id)
    match = re.search(r"step '([a-z_-]+)' failed: (.*)", message, re.DOTALL)
    step, error = (match.group(1), match.group(2).strip()) if match else ("flow", message.strip())
    if day is not None and day > latest_day(settings, clock):
        return (
            f"# Daily brief of {day.isoformat()} refused\n\n**Why:** {error}\n\nNothing was written.\n",
            None,
        )
    if day is None:
        return (
            f"# Daily brief failed before it resolved its date\n\n**Why:** {error}\n\n"
            "Fix the cause above and run it again (`brief run`).\n",
            None,
        )
    written = dict(
        store.query(
            lambda: store.scan([day]).filter(pl.col("run_id") == run_id).group_by("event_type").len()
        ).iter_rows()
    )
    store.append(
        [
            new_event(
                "run.failed",
                {"step": step, "error": error.split(":", 1)[0][:80], "message": error[:2000]},
                brief_date=day,
                run_id=run_id,
                subject_id=run_id,
                produced_by="flow.daily@1",
                occurred_at=utcnow(),
            )
        ]
    )
    rerun = f"brief run --date {day.isoformat()}{settings.config_option}"
    rows = "\n".join(f"| `{t}` | {n} |" for t, n in sorted(written.items())) or "| (none) | 0 |"
    return (
        f"# Daily brief of {day.isoformat()} failed\n\n"
        f"**Step:** `{step}`\n\n**Why:** {error}\n\n"
        f"## Events this run wrote before it stopped\n\n| event type | count |\n|---|---|\n{rows}\n\n"
        f"## How to rerun\n\nFix the cause above, then run:\n\n```\n{rerun}\n```\n\n"
        "Rerunning is safe: facts already in the log are not written again.\n"
    ), day


def stopped_run(store, day: date, run_id: str | None, since) -> tuple[str | None, bool]:
    """What an interrupted command's run left in the log of ``day``: the run's id (``run_id``, else
    that of a run started there since ``since``, the command's start), or None when no run started;
    and whether it is recorded cancelled."""
    kept = store.query(
        lambda: store.scan([day], event_types=["run.started", "run.cancelled"]).select(
            "run_id", "event_type", "occurred_at"
        )
    )
    if run_id is None:
        started = kept.filter((pl.col("event_type") == "run.started") & (pl.col("occurred_at") >= since))
        run_id = started["run_id"][-1] if started.height else None
    if run_id is None:
        return None, False
    cancelled = kept.filter((pl.col("event_type") == "run.cancelled") & (pl.col("run_id") == run_id))
    return run_id, cancelled.height > 0

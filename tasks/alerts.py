"""Alerts: what an operator must hear of, found in the log (pure: no clock, no store, no network).

``[[alerts]]`` entries are endpoints like the delivery channels (``tasks/channels.py``: secrets
from the environment, never in the file); ``[alerting]`` holds the thresholds. ``causes`` reads
the events of a brief date (and of the days before it that a threshold reaches) and returns
what went wrong, each a ``Cause`` with a key that is unique within the day: a failed or
crashed run, a withheld brief, a gate quarantine, a delivery that failed after its retries, a
source failing run after run or silent for days, and no brief by ``late_after``. An alert is
sent once per cause, channel and day; the ``alert.sent`` event's natural key says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, field_validator

from storage.events import Event
from tasks.channels import Endpoint, clock_time
from tasks.nouns import counted

# what ``causes`` reads
INPUT_TYPES = (
    "run.started",
    "run.failed",
    "run.crashed",
    "brief.published",
    "brief.withheld",
    "validation.completed",
    "delivery.failed",
    "feed.fetched",
    "feed.failed",
    "article.collected",
)
FAILED_RUN = ("withheld", "run-failed", "run-crashed")  # causes that already say why a brief is missing


class AlertChannel(Endpoint):
    """An ``[[alerts]]`` entry: a name and an Apprise URL where an operator hears that something broke."""


class AlertingSettings(BaseModel):
    """``[alerting]``: when a missing brief or a source is worth an alert."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    late_after: str = Field(
        default="09:00",
        description="HH:MM in the configured timezone: a day on which the schedule runs and no brief "
        "is published by then is late",
    )
    failing_runs: int = Field(
        default=3, ge=0, description="a source that failed this many runs in a row (0: never)"
    )
    silent_days: int = Field(
        default=3,
        ge=0,
        description="a source fetched fine whose newest item is this many days old (0: never)",
    )

    @field_validator("late_after")
    @classmethod
    def _clock(cls, value: str) -> str:
        return clock_time(value) or value

    def reach(self) -> int:
        """How many days before a brief date ``causes`` reads (runs in a row, silence, lookback)."""
        return max(self.failing_runs, self.silent_days) + 2


@dataclass(frozen=True)
class Cause:
    """One thing gone wrong on a brief date; ``key`` is unique within the day."""

    key: str
    day: date
    summary: str  # one line
    details: tuple[str, ...] = ()
    look: str = ""  # the command that shows more

    @property
    def severity(self) -> Literal["failure", "warning"]:
        """How a channel should file it: ``failure`` when readers got no brief or a channel refused
        one, ``warning`` for what may still come right (a late brief, a quiet or failing source,
        quarantined rows)."""
        return "failure" if self.key in FAILED_RUN or self.key.startswith("delivery-failed") else "warning"

    def message(self, config_option: str = "") -> tuple[str, str]:
        """The alert's subject and its plain-text body; ``config_option`` (`` --config PATH``) ends
        the command that shows more, so that it runs as printed."""
        subject = f"dailybrief alert: {self.summary}"
        body = "\n".join([self.summary, *([""] if self.details else []), *self.details])
        if self.look:
            body += f"\n\nMore: {self.look}{config_option}"
        return " ".join(subject.split())[:200], body


def causes(
    events: Sequence[Event],
    day: date,
    rules: AlertingSettings,
    *,
    sources: Sequence[str],
    zone: ZoneInfo,
    now: datetime | None = None,
    schedule: str | None = None,
) -> list[Cause]:
    """What went wrong on ``day``, from its events and those of the ``rules.reach()`` days before it.

    ``now`` (with the daily ``schedule``) asks whether the brief is late as well: that needs a
    clock, which the caller passes in.
    """
    ordered = sorted(events, key=lambda e: (e.occurred_at, e.seq, e.event_id))
    today = [e for e in ordered if e.brief_date == day]
    found = _run_outcomes(today, day) + _gate(today, day) + _deliveries(today, day)
    failing = _failing_sources(ordered, day, rules.failing_runs, sources)
    found += failing
    quiet = [s for s in sources if f"source-failing:{s}" not in {c.key for c in failing}]
    found += _silent_sources(ordered, today, day, rules.silent_days, quiet, zone)
    if now is not None and not any(c.key in FAILED_RUN for c in found):
        found += _late(today, day, rules.late_after, zone, now, schedule)
    return found


def _run_outcomes(today: list[Event], day: date) -> list[Cause]:
    from storage.payloads import BriefWithheld, RunCrashed, RunFailed
    from storage.typed import payload_of

    out = []
    withheld = [e for e in today if e.event_type == "brief.withheld"]
    if withheld:
        p = payload_of(withheld[-1], BriefWithheld)
        out.append(
            Cause(
                "withheld",
                day,
                f"the brief of {day} is withheld: {p.reason}",
                ("Readers got nothing new for this day.",),
                f"brief events --date {day} --type brief.withheld",
            )
        )
    # a withheld brief fails its run: that failure is the withholding, said above
    failed = [
        f
        for e in today
        if e.event_type == "run.failed" and (f := payload_of(e, RunFailed)).error != "BriefWithheld"
    ]
    if failed:
        f = failed[-1]
        out.append(
            Cause(
                "run-failed",
                day,
                f"the run of {day} failed in step '{f.step}': {f.error}",
                (f.message[:600], f"Rerun: brief run --date {day}"),
                f"brief events --date {day} --type run.failed",
            )
        )
    crashed = [e for e in today if e.event_type == "run.crashed"]
    if crashed:
        c = payload_of(crashed[-1], RunCrashed)
        out.append(
            Cause(
                "run-crashed",
                day,
                f"the run of {day} crashed: {c.how}",
                (c.message[:600], f"Rerun: brief run --date {day}"),
                f"brief events --date {day} --type run.crashed",
            )
        )
    return out


def _gate(today: list[Event], day: date) -> list[Cause]:
    from storage.payloads import ValidationCompleted
    from storage.typed import payload_of

    counts: dict[str, int] = {}
    for e in today:
        if e.event_type == "validation.completed" and (v := payload_of(e, ValidationCompleted)).quarantined:
            counts[v.suite] = max(counts.get(v.suite, 0), len(v.quarantined))
    if not counts:
        return []
    listed = ", ".join(f"{suite}: {n}" for suite, n in sorted(counts.items()))
    return [
        Cause(
            "quarantine",
            day,
            f"the gate quarantined rows of {day} ({listed})",
            ("Quarantined rows left the brief.",),
            f"brief events --date {day} --type validation.completed",
        )
    ]


def _deliveries(today: list[Event], day: date) -> list[Cause]:
    from storage.payloads import DeliveryFailed
    from storage.typed import payload_of

    last: dict[str, DeliveryFailed] = {}
    for e in today:
        if e.event_type == "delivery.failed" and not (d := payload_of(e, DeliveryFailed)).will_retry:
            last[d.channel] = d
    return [
        Cause(
            f"delivery-failed:{channel}",
            day,
            f"delivery of {day} to {channel} failed after {counted(p.attempt, 'attempt')}",
            (p.reason[:600], f"Resend: {p.resend}"),
            f"brief events --date {day} --type delivery.failed",
        )
        for channel, p in sorted(last.items())
    ]


def _failing_sources(ordered: list[Event], day: date, runs: int, sources: Sequence[str]) -> list[Cause]:
    """Sources with a ``feed.failed`` in each of the last ``runs`` daily runs up to ``day``."""
    from storage.payloads import FeedFailed, RunStarted
    from storage.typed import payload_of

    if runs <= 0:
        return []
    started = [
        e.run_id
        for e in ordered
        if e.event_type == "run.started"
        and payload_of(e, RunStarted).flow == "daily-brief"
        and e.brief_date <= day
    ]
    recent = list(dict.fromkeys(reversed(started)))[:runs]
    if len(recent) < runs:
        return []
    failures: dict[tuple[str, str], FeedFailed] = {}
    for e in ordered:
        if e.event_type == "feed.failed" and e.run_id in recent:
            failed = payload_of(e, FeedFailed)
            failures[(e.run_id, failed.source)] = failed
    out = []
    for source in sources:
        if all((run, source) in failures for run in recent):
            p = failures[(recent[0], source)]
            out.append(
                Cause(
                    f"source-failing:{source}",
                    day,
                    f"source {source} failed in the last {runs} runs",
                    (f"{p.error}: {p.message[:300]}",),
                    f"brief events --type feed.failed --date {day}",
                )
            )
    return out


def _silent_sources(
    ordered: list[Event], today: list[Event], day: date, days: int, sources: Sequence[str], zone: ZoneInfo
) -> list[Cause]:
    """Sources fetched fine on ``day`` whose newest item is older than its ``days`` last dates."""
    from storage.payloads import ArticleCollectedV4, FeedFetchedV2
    from storage.typed import payload_of

    if days <= 0:
        return []
    fetched = {payload_of(e, FeedFetchedV2).source for e in today if e.event_type == "feed.fetched"}
    newest: dict[str, date] = {}
    for e in ordered:
        if e.event_type != "article.collected":
            continue
        article = payload_of(e, ArticleCollectedV4)
        if article.published_at is None:
            continue
        published = article.published_at.astimezone(zone).date()
        source = article.source
        if published <= day and published > newest.get(source, date.min):
            newest[source] = published
    out = []
    for source in sources:
        if source not in fetched:
            continue
        last = newest.get(source)
        if last is not None and last > day - timedelta(days=days):
            continue
        since = f"since {last}" if last else f"in the {days} days up to {day}"
        out.append(
            Cause(
                f"source-silent:{source}",
                day,
                f"source {source} has published nothing {since}",
                ("It is fetched without an error; is the feed still updated?",),
                f"brief replay --date {day} --projection articles",
            )
        )
    return out


def _late(
    today: list[Event], day: date, late_after: str, zone: ZoneInfo, now: datetime, schedule: str | None
) -> list[Cause]:
    deadline = datetime.combine(day, time.fromisoformat(late_after), tzinfo=zone)
    if now < deadline or any(e.event_type == "brief.published" for e in today):
        return []
    if schedule is not None and not runs_before(schedule, day, deadline, zone):
        return []  # no run is due by then (a weekday schedule on a Sunday)
    started = [e for e in today if e.event_type == "run.started"]
    state = (
        f"A run started at {started[-1].occurred_at.astimezone(zone):%H:%M} and has not published."
        if started
        else "No run of this day has started: is the scheduler (brief serve, or a worker) running?"
    )
    return [
        Cause(
            "late",
            day,
            f"no brief of {day} by {late_after} ({zone.key})",
            (state,),
            f"brief stats --start {day} --end {day}",
        )
    ]


def runs_before(schedule: str, day: date, deadline: datetime, zone: ZoneInfo) -> bool:
    """Whether the cron ``schedule`` (in ``zone``) fires on ``day`` before ``deadline``."""
    from cronsim import CronSim, CronSimError

    start = datetime.combine(day, time(0, 0), tzinfo=zone) - timedelta(seconds=1)
    try:
        first = next(iter(CronSim(schedule, start)))
    except (CronSimError, StopIteration):
        return True  # a line cronsim cannot read: judge the day as if a run were due
    return first.date() == day and first < deadline

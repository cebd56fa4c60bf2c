"""The alert step: the causes the log holds for a brief date, each sent once to every ``[[alerts]]``
channel, each send an event.

Alerts concern the days a schedule runs: yesterday, today and tomorrow in the configured
timezone. A backfill of older dates reports on the screen and in the Prefect UI, not to the
alert channels. A channel that refuses never fails the caller: each failed attempt is an
``alert.failed`` event, and a later check tries again (at most ``MAX_REFUSALS`` times a day).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from storage.events import Event, new_event
from storage.payloads import AlertFailed, AlertSent
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks import alerts
from tasks.alerts import AlertChannel
from tasks.channels import redact
from tasks.deliver import Attempt, Message
from tasks.settings import Settings
from tasks.steps.send import send

PRODUCER = "alert@1"
MAX_REFUSALS = 3  # a cause a channel refused this many times (after its retries) waits for tomorrow


@dataclass
class AlertOutcome:
    day: date
    sent: list[tuple[str, str]] = field(default_factory=list)  # (cause, channel)
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (cause, channel, reason)
    causes: list[alerts.Cause] = field(default_factory=list)


def recent(day: date, now: datetime, settings: Settings) -> bool:
    """Whether ``day`` is one the alerts speak of at ``now``: yesterday, today or tomorrow."""
    today = now.astimezone(settings.zone).date()
    return today - timedelta(days=1) <= day <= today + timedelta(days=1)


def raise_alerts(
    settings: Settings,
    store: ParquetEventStore,
    day: date,
    *,
    now: datetime,
    late: bool = False,
    run_id: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> AlertOutcome:
    """Send what ``day``'s causes still owe the alert channels; ``late`` also asks whether its
    brief is missing at ``now`` (``[alerting] late_after``). ``now``: the caller's clock's."""
    outcome = AlertOutcome(day)
    moment = now
    if not settings.alerts or not recent(day, moment, settings):
        return outcome
    reach = settings.alerting.reach()
    events = store.read(
        days=[day - timedelta(days=k) for k in range(reach, -1, -1)], event_types=alerts.INPUT_TYPES
    )
    outcome.causes = alerts.causes(
        events,
        day,
        settings.alerting,
        sources=[s.name for s in settings.sources],
        zone=settings.zone,
        now=moment if late else None,
        schedule=settings.schedule,
    )
    if not outcome.causes:
        return outcome
    run = run_id or f"alerts-{moment.strftime('%Y%m%dT%H%M%S%f')}"
    hidden = secrets(settings)
    with store.tree.briefs.alerts_lock(day):
        done = store.read(days=[day], event_types=["alert.sent", "alert.failed"])
        sent = {
            (a.cause, a.channel)
            for e in done
            if e.event_type == "alert.sent"
            for a in [payload_of(e, AlertSent)]
        }
        refused = Counter(
            (f.cause, f.channel)
            for e in done
            if e.event_type == "alert.failed" and not (f := payload_of(e, AlertFailed)).will_retry
        )
        for cause in outcome.causes:
            subject, body = (redact(text, hidden) for text in cause.message(settings.config_option))
            for channel in settings.alerts:
                key = (cause.key, channel.name)
                if key in sent or refused[key] >= MAX_REFUSALS:
                    continue
                last = _send(
                    store, channel, cause.key, Message(subject, body, "text", cause.severity), day, run, sleep
                )
                if last.ok:
                    outcome.sent.append(key)
                else:
                    outcome.failed.append((*key, last.reason))
    return outcome


def _send(
    store: ParquetEventStore,
    channel: AlertChannel,
    cause: str,
    message: Message,
    day: date,
    run_id: str,
    sleep: Callable[[float], None],
) -> Attempt:
    """One alert to one channel, with the channel's retries; each outcome an event."""
    tried: list[Attempt] = []

    def failed(attempt: Attempt, will_retry: bool) -> None:
        tried.append(attempt)
        payload = {
            "cause": cause,
            "channel": channel.name,
            "target": channel.target,
            "reason": attempt.reason,
            "attempt": len(tried),
            "attempted_at": attempt.at,
            "will_retry": will_retry,
        }
        store.append([_emit("alert.failed", payload, day, run_id, attempt.at)])

    attempts = send(channel, message, sleep=sleep, on_failure=failed)
    last = attempts[-1]
    if last.ok:
        payload = {
            "cause": cause,
            "channel": channel.name,
            "target": channel.target,
            "subject": message.subject,
            "attempts": len(attempts),
        }
        store.append([_emit("alert.sent", payload, day, run_id, last.at)])
    return last


def secrets(settings: Settings) -> list[str]:
    """Every value a delivery or alert URL takes from the environment: no alert shows one."""
    found = {s for e in [*settings.delivery.channels, *settings.alerts] for s in e.secrets()}
    return sorted(found, key=len, reverse=True)


def _emit(event_type: str, alert: dict, day: date, run_id: str, at: datetime) -> Event:
    return new_event(
        event_type,
        alert,
        brief_date=day,
        run_id=run_id,
        subject_id=alert["cause"],
        produced_by=PRODUCER,
        occurred_at=at,
    )


def recent_alerts(settings: Settings, store: ParquetEventStore, days: int, now: datetime) -> list[dict]:
    """The alerts of the last ``days`` brief dates at ``now``, newest first: sent, or refused (and why)."""
    today = now.astimezone(settings.zone).date()
    wanted = [today + timedelta(days=1) - timedelta(days=k) for k in range(days + 1)]
    rows = []
    for e in store.read(days=wanted, event_types=["alert.sent", "alert.failed"]):
        said = payload_of(e, AlertSent) if e.event_type == "alert.sent" else payload_of(e, AlertFailed)
        if isinstance(said, AlertFailed) and said.will_retry:
            continue  # the attempt after it says how it ended
        rows.append(
            {
                "at": e.occurred_at.astimezone(settings.zone),
                "date": e.brief_date,
                "cause": said.cause,
                "channel": said.channel,
                "status": "sent" if isinstance(said, AlertSent) else "FAILED",
                "what": said.subject.removeprefix("dailybrief alert: ")
                if isinstance(said, AlertSent)
                else said.reason,
            }
        )
    return sorted(rows, key=lambda r: r["at"], reverse=True)

"""The alerts of the last days, for a person to read: what went wrong, sent where, or why not."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from tasks.settings import Settings
from tasks.steps.alert import recent_alerts


@dataclass(frozen=True)
class Alert:
    at: datetime  # when it was sent (or refused), in the configured timezone
    date: date  # the brief date it is about
    cause: str
    channel: str
    status: str  # sent or FAILED
    what: str  # its subject, or why it could not be sent


def recent(settings: Settings, days: int, now: datetime | None = None) -> list[Alert]:
    """The alerts of the last ``days`` brief dates (judged at ``now``), newest first."""
    return [Alert(**row) for row in recent_alerts(settings, days, now)]

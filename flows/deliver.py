"""Delivery outside the daily run: resending by hand, approving a held brief, releasing at the deadline.

``brief deliver`` and ``brief approve`` call these functions in the command's process (no
Prefect server needed); the ``deliver-held`` deployment runs ``deliver_held`` every few minutes
so that a held brief nobody approved goes out at its ``hold_until``, and a crashed run or a
late brief raises its alert (``flows/alerting.py:check``).
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from datetime import date, datetime

from prefect import flow, get_run_logger

from tasks import steps
from tasks.settings import Settings, load_settings


def resend(settings: Settings, day: date, channel: str | None = None) -> steps.DeliveryOutcome:
    """What the day's current brief still owes its channels (all, or ``channel``), sent now."""
    return steps.deliver_day(_context(settings, day, "deliver"), only=channel)


def approve(
    settings: Settings, day: date, by: str | None = None, via: str = "approve"
) -> steps.DeliveryOutcome:
    """A person's approval of the day's held brief (a fact), then its delivery to readers."""
    from storage.errors import InputError

    if not settings.delivery.hold:
        raise InputError(
            "nothing is held: [delivery] hold is not true in the config; 'brief deliver' sends a brief"
        )
    return steps.deliver_day(_context(settings, day, "approve"), approve_by=by or approver(), via=via)


def release_due(
    settings: Settings, now: datetime | None = None, say: Callable[[str], None] = print
) -> list[steps.DeliveryOutcome]:
    """Every held brief whose deadline has passed without an approval, delivered with a note."""
    from storage.events import utcnow

    if not settings.delivery.hold:
        return []
    moment = now or utcnow()
    store = settings.storage.event_store()
    outcomes = []
    for day in steps.due_days(store, moment):
        outcome = steps.deliver_day(_context(settings, day, "deadline"), now=moment)
        sent = [s.channel for s in outcome.sent if s.ok]
        say(f"{day}: nobody approved it by the deadline; delivered to {', '.join(sent) or 'no channel'}")
        outcomes.append(outcome)
    return outcomes


def approver() -> str:
    try:
        return os.environ.get("BRIEF_USER") or getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _context(settings: Settings, day: date, what: str) -> steps.RunContext:
    """Under the policy a run would use now (``ops.policy.governing``), as every re-render is."""
    from ops.policy import governed_context
    from storage.events import utcnow

    return governed_context(settings, day, f"{what}-{utcnow().strftime('%Y%m%dT%H%M%S%f')}")[0]


@flow(name="deliver-held", log_prints=True)
def deliver_held(config: str | None = None, now: str | None = None) -> list[dict]:
    """Release held briefs whose ``hold_until`` has passed, and check for crashed runs and alerts
    still owed, a late brief among them (the ``deliver-held`` deployment, every 5 min).

    ``now``: an ISO time to judge the deadlines at (default: now), as ``--now`` does.
    """
    from flows.alerting import check

    settings = load_settings(config)
    log = get_run_logger()
    moment = datetime.fromisoformat(now.replace("Z", "+00:00")) if now else None
    outcomes = release_due(settings, now=moment, say=log.info)
    if not outcomes and settings.delivery.hold:
        log.info("no held brief is past its deadline")
    checked = check(settings, now=moment, say=log.warning)
    for cause, channel in checked.sent:
        log.info(f"alert {cause} sent to {channel}")
    for cause, channel, reason in checked.failed:
        log.warning(f"alert {cause} to {channel} failed: {reason}; the next check tries again")
    return [{"date": o.day.isoformat(), "delivered": [s.channel for s in o.sent if s.ok]} for o in outcomes]

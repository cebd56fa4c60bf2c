"""The ``deliver-held`` deployment: held briefs released at their deadline, runs and alerts checked.

Resending, approving and releasing are acts of the service layer (``ops.acts``: ``deliver``,
``approve``, ``release_due``), which ``brief deliver``, ``brief approve`` and the desk call without
Prefect; the deployment runs ``deliver_held`` every few minutes so that a held brief nobody approved
goes out at its ``hold_until``, and a crashed run or a late brief raises its alert
(``flows/alerting.py:check``).
"""

from __future__ import annotations

from datetime import datetime

from prefect import flow, get_run_logger

from ops.acts import approver, release_due
from ops.acts import deliver as resend
from tasks.settings import load_settings

__all__ = ["approver", "deliver_held", "release_due", "resend"]


@flow(name="deliver-held", log_prints=True)
def deliver_held(config: str | None = None, now: str | None = None) -> list[dict]:
    """Release held briefs whose ``hold_until`` has passed and updates whose ``[delivery]
    update_after`` window has closed, and check for crashed runs and alerts still owed, a late
    brief among them (the ``deliver-held`` deployment, every 5 min).

    ``now``: an ISO time to judge the deadlines at (default: now), as ``--now`` does.
    """
    from flows.alerting import check
    from ops.workspace import resources_of

    settings = load_settings(config)
    resources = resources_of(settings, must_exist=False)  # one store and one clock for both
    log = get_run_logger()
    moment = datetime.fromisoformat(now.replace("Z", "+00:00")) if now else None
    outcomes = release_due(settings, resources, moment, log.info)
    if not outcomes:
        log.info("no held brief is past its deadline, and no update is due")
    checked = check(settings, resources, now=moment, say=log.warning)
    for cause, channel in checked.sent:
        log.info(f"alert {cause} sent to {channel}")
    for cause, channel, reason in checked.failed:
        log.warning(f"alert {cause} to {channel} failed: {reason}; the next check tries again")
    return [{"date": o.day.isoformat(), "delivered": [s.channel for s in o.sent if s.ok]} for o in outcomes]

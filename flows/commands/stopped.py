"""What ``brief run`` says and does when it is interrupted (Ctrl-C, SIGTERM, the Prefect UI): the
line that says where the run stopped, as its log of events has it, and the exit of a run whose
tasks outlast the interruption."""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datetime import datetime

    from flows.interrupt import Interrupted, Stop
    from ops.runs import RunPlan

AFTER_PUBLISHING = ("publish", "deliver", "alerts", "compact")  # a run stopped after these has published


def stopped_line(
    plan: RunPlan, config: str | None, stop: Stop, since: datetime, log: str | None = None
) -> str:
    """What an interrupted run says, as its log of events has it: that it had not started and wrote
    nothing, or the step it stopped in and that it is recorded cancelled; and the command that runs
    it again."""
    from ops.failure import stopped_run

    rerun = f"brief run --date {plan.day}" + (f" --config {shlex.quote(config)}" if config else "")
    try:
        run_id, cancelled = stopped_run(plan.store, plan.day, stop.run_id, since)
    except Exception:  # the store unreadable now: what this process knows
        run_id, cancelled = stop.run_id, False
    if run_id is None:
        written = f"no event was written (its log: {log})" if log else "nothing was written"
        return f"interrupted before the run of {plan.day} started: {written}; run it with {rerun}"
    when = f"after {stop.after}" if stop.after else "during collect"
    published = "its brief was published before" if stop.after in AFTER_PUBLISHING else "nothing published"
    recorded = "recorded as cancelled" if cancelled else f"not recorded as cancelled (see its log: {log})"
    return f"interrupted {when}: run {run_id} {recorded}, {published}; rerun with {rerun}"


def stop_error(
    plan: RunPlan, config: str | None, stop: Stop, since: datetime, log: str | None = None
) -> Interrupted:
    """What a stopped run ends with: ``ServerGone`` when the kept Prefect server stopped under it
    (the run recorded as crashed here, when it had started), else ``Interrupted``."""
    from flows.interrupt import Interrupted, ServerGone

    if stop.server_gone:
        return ServerGone(gone_line(plan, config, stop, since, log))
    return Interrupted(stopped_line(plan, config, stop, since, log))


def gone_line(plan: RunPlan, config: str | None, stop: Stop, since: datetime, log: str | None = None) -> str:
    """What a run says when the kept Prefect server it reported to stopped under it (``brief serve
    --stop`` in another shell): which server, where the run was, that it is recorded as crashed,
    and the command that runs it again (which starts a new server). Records the crash (once)."""
    from ops.failure import record_server_gone, stopped_run
    from ops.workspace import resources_of

    rerun = f"brief run --date {plan.day}" + (f" --config {shlex.quote(config)}" if config else "")
    said = f"error: the local Prefect server this run reported to ({stop.server_gone}) stopped"
    try:
        run_id, _ = stopped_run(plan.store, plan.day, stop.run_id, since)
        if run_id is not None:
            resources = resources_of(plan.settings, must_exist=False)
            record_server_gone(plan.settings, resources, str(plan.day), run_id, stop.server_gone)
    except Exception:  # the store unreadable now: what this process knows
        run_id = stop.run_id
        recorded = f"not recorded (see its log: {log})"
    else:
        recorded = "recorded as crashed"
    if run_id is None:
        return f"{said} before the run of {plan.day} started: nothing was written; run it again with {rerun}"
    when = f"after {stop.after}" if stop.after else "during collect"
    published = "its brief was published before" if stop.after in AFTER_PUBLISHING else "nothing published"
    return (
        f"{said} {when}: run {run_id} {recorded}, {published}; "
        f"run it again with {rerun} (it starts a new server)"
    )


def ended_overdue(plan: RunPlan, stop: Stop, line: Callable[[], str]) -> None:
    """Prefect still waits for a task after the interruption: record the stop, and exit now."""
    from flows.interrupt import mark_cancelled, stop_now
    from ops.failure import record_cancel
    from ops.workspace import resources_of

    if stop.server_gone:  # Prefect waits on a server that is gone: the crash is recorded by the line
        print(line(), file=sys.__stderr__, flush=True)
        stop_now(1)
    if stop.run_id:
        why = "its tasks had not ended within seconds: the command ended them"
        with contextlib.suppress(Exception):
            resources = resources_of(plan.settings, must_exist=False)
            how = stop.how or "SIGINT"
            record_cancel(plan.settings, resources, str(plan.day), stop.run_id, how, stop.after, why)
        with contextlib.suppress(Exception):
            mark_cancelled(stop.run_id, f"stopped by {stop.how}")
    print(line(), file=sys.__stderr__, flush=True)  # the screen's: sys.stderr is the run's log now
    stop_now(130)

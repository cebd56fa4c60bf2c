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

    from flows.interrupt import Stop
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


def ended_overdue(plan: RunPlan, stop: Stop, line: Callable[[], str]) -> None:
    """Prefect still waits for a task after the interruption: record the stop, and exit now."""
    from flows.interrupt import mark_cancelled, stop_now
    from ops.failure import record_cancel
    from ops.workspace import resources_of

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

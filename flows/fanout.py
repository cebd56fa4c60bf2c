"""A backfill shared by many workers: each date its own ``daily-brief`` flow run, from a deployment.

The ``backfill`` flow with ``fan_out=True`` (as its deployment in ``prefect.yaml`` is set)
creates one flow run of the ``daily-brief`` deployment per date, all at once, scheduled in
date order, and any worker of the pool picks them up: N workers on N machines share a range.

**How a day waits for what its brief depends on.** A day's brief reads the facts of its own
window, which its own run collects, and the briefs of the days before it (an article briefed
yesterday is not news today; a story continued keeps yesterday's id). So each run is given the
flow run ids of the earlier dates of the range that its window reaches (``RunContext.reach``),
collects its own date, computes its embeddings, and then waits until every one of those runs
has ended (completed or failed: a failed day is that day's outcome, as in a one-process
backfill) before it decides anything. The heavy, independent work (fetching, parsing,
embedding) runs in parallel; the decisions run in date order, as a daily schedule would have
made them. Whatever order the runs finish in, the facts and the briefs are those of a
one-process backfill. Runs are scheduled a second apart in date order, so workers pick the
earliest date first and a waiting run never holds the slot its predecessor needs (with one
slot per worker, ``prefect worker start --limit 1``, at least one runnable date always runs).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from uuid import UUID

from tasks.nouns import counted

FINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}
DEFAULT_DEPLOYMENT = "daily-brief/daily-brief"
PAGE = 200  # the most runs one API call returns (the server's default limit)
WAIT_S = 6 * 3600  # a fanned-out backfill gives up on a date after this long


def flow_run_states(
    ids: Sequence[str], unknown: tuple[str, str] | None = ("PENDING", "")
) -> dict[str, tuple[str, str]]:
    """Flow run id -> (state type, message), from the Prefect API: one filtered call per 200 runs.

    A run the server does not know is ``unknown`` (not yet visible: pending), or left out when
    ``unknown`` is None.
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    out: dict[str, tuple[str, str]] = {} if unknown is None else dict.fromkeys(ids, unknown)
    with get_client(sync_client=True) as client:
        for k in range(0, len(ids), PAGE):
            chunk = [UUID(i) for i in ids[k : k + PAGE]]
            found = client.read_flow_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=chunk)), limit=len(chunk)
            )
            for run in found:
                if run.state is not None:
                    out[str(run.id)] = (run.state.type.value, run.state.message or "")
    return out


def wait_for_runs(
    ids: Sequence[str], say: Callable[[str], None], poll_s: float = 1.0, timeout_s: float = WAIT_S
) -> None:
    """Return when every flow run in ``ids`` has ended; raise after ``timeout_s``."""
    pending = list(ids)
    deadline, told = time.monotonic() + timeout_s, 0.0
    while pending:
        states = flow_run_states(pending)
        pending = [i for i in pending if states[i][0] not in FINAL]
        if not pending:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"waited {timeout_s:.0f} s for the runs of earlier dates {pending}; are workers running?"
            )
        if time.monotonic() - told > 30:
            say(f"waiting for {counted(len(pending), 'earlier date')} of the backfill to finish")
            told = time.monotonic()
        time.sleep(poll_s)


def _check_deployment(name: str) -> None:
    """One clear error before anything is created when the deployment is not on the server."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound
    from prefect.settings import PREFECT_API_URL

    from storage.errors import InputError

    with get_client(sync_client=True) as client:
        try:
            client.read_deployment_by_name(name)
        except ObjectNotFound:
            where = PREFECT_API_URL.value() or "this process"
            raise InputError(
                f"no deployment {name!r} on the Prefect server at {where}; "
                "run 'prefect deploy --all' there and start workers of its pool first"
            ) from None


def fan_out(
    days: Sequence[date],
    config: str | None,
    reach: int,
    say: Callable[[str], None],
    progress: Callable[[int, int], object],
    deployment: str = DEFAULT_DEPLOYMENT,
    batch: str = "",
    poll_s: float = 1.0,
    deliver: bool = False,
    timeout_s: float = WAIT_S,
) -> list[dict]:
    """One ``deployment`` flow run per date, each waiting for the earlier dates its window reaches.

    A date whose run has not ended ``timeout_s`` after the runs were created is that date's
    failure (no worker took it, or one died holding it), so the backfill always ends.
    """
    from prefect.client.schemas.objects import FlowRun
    from prefect.deployments import run_deployment

    _check_deployment(deployment)
    runs: dict[date, str] = {}
    start = datetime.now(UTC)
    for k, day in enumerate(days):
        after_runs = [runs[d] for d in days if day - timedelta(days=reach) <= d < day]
        run: FlowRun = run_deployment(  # type: ignore[assignment]  # sync in a sync flow
            deployment,
            parameters={
                "date_": day.isoformat(),
                "config": config,
                "after_runs": after_runs,
                "deliver": deliver,
            },
            scheduled_time=start + timedelta(seconds=k),
            flow_run_name=f"brief-{day.isoformat()}",
            idempotency_key=f"{batch}:{day.isoformat()}" if batch else None,
            timeout=0,
        )
        runs[day] = str(run.id)
    say(f"created {counted(len(runs), 'flow run')} of {deployment}; workers of its pool run them")
    outcomes: dict[date, dict] = {}
    deadline = time.monotonic() + timeout_s
    while len(outcomes) < len(runs):
        states = flow_run_states([runs[d] for d in days if d not in outcomes])
        late = time.monotonic() > deadline
        for day in days:
            if day in outcomes or (states[runs[day]][0] not in FINAL and not late):
                continue
            kind, message = states[runs[day]]
            ok = kind == "COMPLETED"
            if kind not in FINAL:
                message = (
                    f"still {kind.lower()} after {timeout_s:.0f} s: no worker of the deployment's "
                    "pool finished it; start workers ('prefect worker start --pool …') and rerun the date"
                )
            outcomes[day] = {
                "date": day.isoformat(),
                "status": "completed" if ok else "failed",
                "flow_run_id": runs[day],
                "error": "" if ok else message[:300],
            }
            failed = sum(o["status"] == "failed" for o in outcomes.values())
            say(f"[{len(outcomes)}/{len(runs)}] {day}: {outcomes[day]['status']}; {failed} failed so far")
            progress(len(outcomes), len(runs))
        if len(outcomes) < len(runs):
            time.sleep(poll_s)
    return [outcomes[d] for d in days]

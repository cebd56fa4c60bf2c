"""A backfill's decisions: which dates are settled, whether each date is kept or run again, and
what each date's outcome is (completed, withheld or failed).

The ``backfill`` flow (``flows/backfill.py``) only sequences these and records them (its tasks,
its progress, its table); ``brief backfill`` calls ``run_backfill``, which runs the flow it is
given (the service layer imports no flow). Every function here takes typed inputs and returns
``DateOutcome``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import partial
from typing import Protocol

from ops.policy import governing
from ops.runs import BackfillPlan, BriefWithheld, DateOutcome, RunResult
from ops.workspace import resources_of
from storage.payloads import BriefPublished
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks.settings import Settings
from tasks.steps import RunContext, Settled, open_run, record_unchanged, settled

ERROR_CHARS = 300  # an outcome's error is cut here: a line of the table, not a traceback


class Standing:
    """The backfill's look at its dates' standing outcomes: one store, and the policy the dates'
    runs decide under (``ops.policy.governing``), for every date."""

    def __init__(self, settings: Settings, run_id: str) -> None:
        self.resources = resources_of(settings, must_exist=False)  # the process's: models made once
        self.policy = governing(settings, self.resources.store)
        self.run_id = run_id

    def context(self, day: date) -> RunContext:
        return open_run(self.resources, self.policy.settings, day, self.run_id, origin=self.policy.record)

    def settled(self, day: date) -> Settled | None:
        """The date's standing outcome when its run would read what its last run read
        (``tasks/steps/unchanged.py``), else None."""
        return settled(self.context(day))

    def keep(self, found: Settled) -> DateOutcome:
        """The date's standing outcome, recorded (``run.unchanged``) as this backfill's look at it."""
        record_unchanged(self.context(found.day), found)
        if not found.published:
            return DateOutcome(found.day, "withheld", error=found.reason[:ERROR_CHARS], unchanged=True)
        return DateOutcome(
            found.day,
            "completed",
            version=found.version,
            items=found.items,
            policy=self.policy.line,
            unchanged=True,
        )


def settled_dates(days: Sequence[date], settings: Settings, run_id: str) -> dict[date, Settled]:
    """The dates whose run would read what their last run read: their outcome stands; they need
    no embedding and, unless a date before them is run again, no run."""
    standing = Standing(settings, run_id)
    return {day: found for day in days if (found := standing.settled(day)) is not None}


def completed(day: date, result: RunResult) -> DateOutcome:
    """A date whose run ended: its version, items, whether the version is new, its seconds."""
    return DateOutcome(
        day,
        "completed",
        version=result.version,
        items=result.items,
        changed=result.changed,
        seconds=result.seconds,
        policy=result.policy,
    )


def not_completed(day: date, exc: BaseException) -> DateOutcome:
    """A date whose run raised: ``withheld`` when the run withheld its brief (the run's outcome,
    as designed: not a crash), else ``failed``; the error cut to a line."""
    cause = getattr(exc, "cause", exc)
    withheld = isinstance(cause, BriefWithheld)
    return DateOutcome(
        day, "withheld" if withheld else "failed", error=str(cause if withheld else exc)[:ERROR_CHARS]
    )


def run_date(day: date, run: Callable[[date], RunResult]) -> DateOutcome:
    """The outcome of the date's run (``run``: the daily flow): one date's failure is that date's
    outcome, not the backfill's."""
    try:
        return completed(day, run(day))
    except Exception as exc:
        return not_completed(day, exc)


def date_outcome(
    day: date,
    standing: Standing,
    found: dict[date, Settled],
    run_before: bool,
    run: Callable[[date], RunResult],
) -> DateOutcome:
    """The date's standing outcome when its inputs are unchanged (looked at again when a date before
    it was run in this backfill: its reach may hold what that run wrote), else its run's."""
    kept = found.get(day)
    if kept is not None and run_before:
        kept = standing.settled(day)
    if kept is not None:
        return standing.keep(kept)
    return run_date(day, run)


def any_run(outcomes: Sequence[DateOutcome]) -> bool:
    """Whether a date of these was run (not kept unchanged): the dates after it are looked at again."""
    return any(not o.unchanged for o in outcomes)


@dataclass(frozen=True)
class FannedOut:
    """A fanned-out date's flow run as it ended (``flows/fanout.py``): its status, error and id."""

    day: date
    status: str
    error: str
    flow_run_id: str | None


def with_versions(store: ParquetEventStore, outcomes: Sequence[FannedOut]) -> list[DateOutcome]:
    """A fanned-out date's outcome with its version, items and whether its run published a new
    version, from the log."""
    out = []
    for o in outcomes:
        rows = store.query(partial(store.scan, [o.day], event_types=["brief.published"]))
        published = [(r["run_id"], payload_of(r, BriefPublished)) for r in rows.iter_rows(named=True)]
        latest = max((p for _, p in published), key=lambda p: p.version, default=None)
        done = latest is not None and o.status == "completed"
        out.append(
            DateOutcome(
                o.day,
                o.status,
                version=latest.version if done and latest else None,
                items=latest.items if done and latest else 0,
                changed=any(run == o.flow_run_id for run, _ in published),
                error=o.error,
                flow_run_id=o.flow_run_id,
            )
        )
    return out


class BackfillFlow(Protocol):
    """The ``backfill`` flow's call (``flows/backfill.py:backfill``)."""

    def __call__(
        self,
        start: str,
        end: str,
        config: str | None = ...,
        concurrency: int = ...,
        *,
        fan_out: bool = ...,
        deliver: bool = ...,
        settings: Settings | None = ...,
    ) -> list[DateOutcome]: ...


@dataclass(frozen=True)
class BackfillResult:
    """Every date's outcome, in date order, and the dates failed and withheld among them."""

    outcomes: list[DateOutcome]

    @property
    def failed(self) -> list[date]:
        return [o.day for o in self.outcomes if o.status == "failed"]

    @property
    def withheld(self) -> list[date]:
        return [o.day for o in self.outcomes if o.status == "withheld"]


@dataclass(frozen=True)
class BackfillRequest:
    """What a backfill is asked: the range as given, the config's path, archives at once, whether
    each date is a flow run of the deployment's workers, whether briefs are delivered."""

    start: str
    end: str
    config: str | None
    concurrency: int = 2
    fan_out: bool = False
    deliver: bool = False


def run_backfill(plan: BackfillPlan, request: BackfillRequest, flow: BackfillFlow) -> BackfillResult:
    """The planned backfill, run by ``flow`` (the ``backfill`` flow) on the plan's settings."""
    outcomes = flow(
        request.start,
        request.end,
        request.config,
        request.concurrency,
        fan_out=request.fan_out,
        deliver=request.deliver,
        settings=plan.settings,
    )
    return BackfillResult(outcomes)

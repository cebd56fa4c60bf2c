"""The ``backfill`` flow: ``daily_brief`` for every date of a range.

First every dated archive of every date is collected, ``concurrency`` fetches at a time
(the slow, I/O-bound part), and the texts of every date embedded at once (models loaded once,
large batches); then each date's brief is made in date order, each its own
``daily-brief`` flow run (so the UI shows each one, failed or not). In date order, a brief
sees the briefs of the days before it exactly as a daily schedule would have, so a backfill
gives the same briefs as the daily runs, however it is repeated. Live feeds replay the
facts already stored for a past date. A failed date does not stop the others; the result
lists every date's outcome. Running the same range again appends no fact events.

What is decided (which dates are settled, whether a date is kept or run again, a date's outcome:
completed, withheld or failed) is the service's, ``ops/backfill.py``; this flow sequences it and
records it (its tasks, each date's run, its progress and table).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import date
from functools import partial
from uuid import UUID

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_progress_artifact, create_table_artifact, update_progress_artifact
from prefect.cache_policies import NO_CACHE

from flows.daily import current_run_id, daily_brief, unwalked
from flows.fanout import DEFAULT_DEPLOYMENT
from flows.fanout import fan_out as fanned_out
from flows.lifetime import without_heartbeats
from ops.backfill import FannedOut, Standing, any_run, date_outcome, settled_dates, with_versions
from ops.runs import DateOutcome, RunResult, date_range
from storage.store import ParquetEventStore
from tasks.nouns import counted
from tasks.settings import Settings, load_settings
from tasks.steps import Settled

PROGRESS_LINE = (
    "brief_backfill"  # a record with this attribute is a date's line (``brief backfill`` prints it)
)


def daily_brief_of(day: date, settings: Settings, config: str | None, deliver: bool) -> RunResult:
    """The date's run: a ``daily-brief`` flow run of its own, on the backfill's settings."""
    return daily_brief(day.isoformat(), config, deliver=deliver, settings=settings)


@task(name="settled-dates", cache_policy=NO_CACHE)
def settled_task(days: list[date], settings: Settings, run_id: str) -> dict[date, Settled]:
    """The dates whose outcome stands (``ops.backfill.settled_dates``)."""
    return settled_dates(days, settings, run_id)


def left(done: int, total: int, started: float) -> str:
    """'about 1 min 20 s left' from the pace so far."""
    if not done or done >= total:
        return "done" if done >= total else "estimating"
    seconds = (time.perf_counter() - started) / done * (total - done)
    minutes, rest = divmod(round(seconds), 60)
    return f"about {minutes} min {rest} s left" if minutes else f"about {rest} s left"


@task(name="collect-archives", cache_policy=NO_CACHE)
def collect_archives_task(
    days: list[date], settings: Settings, concurrency: int, run_id: str, progress: UUID | None = None
) -> int:
    """Every dated archive of every date, ``concurrency`` at a time; returns new events.

    One store for the whole backfill (on S3, one check of the bucket) and one context per date,
    shared by that date's sources. Says how far it is every tenth of the way (and moves the
    backfill's progress bar over its first fifth).
    """
    from ops.workspace import resources_of
    from tasks.collect import Source
    from tasks.steps import collect_one, open_run
    from tasks.steps.collect import archive_collected

    log = get_run_logger()
    archives = [s.name for s in settings.sources if Source(s.name, s.url).is_archive]
    resources = resources_of(settings, must_exist=False)  # the process's: one store and models for all
    contexts = {day: open_run(resources, settings, day, run_id) for day in days} if archives else {}
    known: dict[date, set[tuple[str, str]]] = {}
    every = [(day, name) for day in days for name in archives]
    jobs = [(day, name) for day, name in every if not archive_collected(contexts[day], name, known)]
    if len(jobs) < len(every):
        log.info(
            f"{len(every) - len(jobs)} of {counted(len(every), 'archive')} collected already, as they are now"
        )
    started, step = time.perf_counter(), max(1, len(jobs) // 10)
    total = 0
    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, 8))) as pool:
        outcomes = pool.map(lambda job: collect_one(contexts[job[0]], job[1]), jobs)
        for done, outcome in enumerate(outcomes, start=1):
            total += outcome.new_events
            if done % step == 0 or done == len(jobs):
                log.info(
                    f"collecting archives: {done}/{len(jobs)} files of {counted(len(days), 'date')}, "
                    f"{counted(total, 'new event')}, {left(done, len(jobs), started)}"
                )
                if progress is not None:
                    update_progress_artifact(progress, COLLECT_SHARE * done / len(jobs))
    return total


@task(name="embed-archives", cache_policy=NO_CACHE)
def embed_archives_task(days: list[date], settings: Settings, run_id: str) -> str:
    """The texts every date's run will embed, embedded at once, each date's vectors cached under it
    (``tasks/steps/embed_range.py``): the dates' runs then find them and compute none."""
    from ops.workspace import resources_of
    from tasks.steps import open_run
    from tasks.steps.embed_range import embed_range

    resources = resources_of(settings, must_exist=False)  # the models every date's run then uses
    done = embed_range([open_run(resources, settings, day, run_id) for day in days])
    return (
        f"{counted(done.texts, 'text')} of {counted(done.dates, 'date')} to embed, "
        f"{done.computed} computed (the rest were cached)"
    )


def fanned(store: ParquetEventStore, outcomes: list[dict]) -> list[DateOutcome]:
    """The fanned-out dates' outcomes (``flows/fanout.py``), each with its version, items and
    whether its run published a new version (``ops.backfill.with_versions``)."""
    runs = [
        FannedOut(date.fromisoformat(o["date"]), o["status"], o["error"], o["flow_run_id"]) for o in outcomes
    ]
    return with_versions(store, runs)


@contextmanager
def one_process(files: int) -> Iterator[None]:
    """What the dates of a backfill share in its process.

    A date's run sends Prefect no heartbeats of its own: the backfill's run sends them for the
    process (a run's heartbeat thread sleeps a second at a time, and the run waited for it to
    wake up as it ended: half a second of each date, on average). The feeds of the range's
    ``files`` archive files are kept parsed once the collection of every date has parsed them
    (``tasks.collect.keeping_parsed``): each date's run reads its own files again.
    """
    from tasks.collect import keeping_parsed

    with without_heartbeats(), keeping_parsed(files):
        yield


COLLECT_SHARE = 20.0  # percent of the progress bar the collection phase takes


def moves_bar(outcome: DateOutcome, done: int, total: int) -> bool:
    """Whether the progress bar moves after this date: after a date that was run, and every tenth
    of the way through dates kept unchanged (each move is a call to the Prefect API, and a kept
    date takes a few milliseconds)."""
    return not outcome.unchanged or done == total or done % max(1, total // 10) == 0


def dates_here(
    days: list[date],
    settings: Settings,
    config: str | None,
    concurrency: int,
    deliver: bool,
    progress: UUID,
) -> list[DateOutcome]:
    """The backfill in this process: every date's archives collected, the texts of the dates to
    run embedded at once, then each date kept or run in order (its line logged as it ends)."""
    log = get_run_logger()
    # the backfill's own record (the archives it collects, the dates it finds unchanged), named so:
    # the dates' runs are flow runs of their own, each with its life recorded
    run_id = f"backfill-{current_run_id()}"
    new_events = collect_archives_task(days, unwalked(settings), concurrency, run_id, progress)
    log.info(f"collected the archives of {counted(len(days), 'date')}: {counted(new_events, 'new event')}")
    settled = settled_task(days, unwalked(settings), run_id)
    standing = Standing(settings, run_id)
    log.info(f"{len(settled)} of {counted(len(days), 'date')} unchanged since their last run")
    if len(settled) < len(days):
        log.info(embed_archives_task([d for d in days if d not in settled], unwalked(settings), run_id))
    dated: list[DateOutcome] = []
    started = time.perf_counter()
    run = partial(daily_brief_of, settings=settings, config=config, deliver=deliver)
    for done, day in enumerate(days, start=1):
        outcome = date_outcome(day, standing, settled, any_run(dated), run)
        dated.append(outcome)
        failed = sum(o.status != "completed" for o in dated)
        log.info(
            f"[{done}/{len(days)}] {outcome.day}: {outcome.status}"
            + (" (unchanged since its last run)" if outcome.unchanged else "")
            + (f" in {outcome.seconds} s" if outcome.seconds is not None else "")
            + f"; {failed} failed or withheld so far, {left(done, len(days), started)}",
            extra={PROGRESS_LINE: True},
        )
        if moves_bar(outcome, done, len(days)):
            update_progress_artifact(progress, COLLECT_SHARE + (100.0 - COLLECT_SHARE) * done / len(days))
    return dated


@flow(name="backfill", log_prints=True)
def backfill(
    start: str,
    end: str,
    config: str | None = None,
    concurrency: int = 2,
    fan_out: bool = False,
    deployment: str = DEFAULT_DEPLOYMENT,
    deliver: bool = False,
    settings: Settings | None = None,
) -> list[DateOutcome]:
    """Briefs for every date from ``start`` to ``end`` (inclusive).

    Past dates are not delivered to the ``[[delivery]]`` channels unless ``deliver`` (nobody
    wants a month of briefs in their inbox at once); their briefs and the feed are written.

    In this process by default (archives ``concurrency`` at a time, then the dates in order);
    with ``fan_out`` each date is a flow run of the ``deployment`` that any worker of its pool
    runs (``flows/fanout.py`` says how a date waits for the dates before it).

    ``settings``: the config already parsed (``brief backfill``), else ``config`` is parsed here,
    once: every date of the range runs on these settings. A fanned-out date runs in a worker's
    process, which parses ``config`` for itself.
    """
    days = date_range(start, end)
    if settings is None:
        settings = load_settings(config)  # a bad config fails the backfill at once, not once per date
    log = get_run_logger()
    progress: UUID = create_progress_artifact(  # type: ignore[assignment]
        0.0, key="backfill-progress", description=f"backfill {start} .. {end}"
    )
    if fan_out:
        from tasks.steps.context import read_days

        outcomes = fanned_out(
            days,
            config,
            read_days(settings.policy.lookback_hours),
            lambda line: log.info(line, extra={PROGRESS_LINE: True}),
            lambda done, total: update_progress_artifact(progress, 100.0 * done / total),
            deployment=deployment,
            batch=current_run_id(),
            deliver=deliver,
        )
        dates = fanned(settings.storage.event_store(), outcomes)
        table = [o.row() for o in dates]
        create_table_artifact(key="backfill-summary", table=table, description=f"backfill {start} .. {end}")
        return dates
    with one_process((len(days) + 3) * len(settings.sources)):  # and the first date's lookback
        dated = dates_here(days, settings, config, concurrency, deliver, progress)
    table = [o.row() for o in dated]
    create_table_artifact(key="backfill-summary", table=table, description=f"backfill {start} .. {end}")
    return dated

"""Running days: what a run, a backfill or a collection is given, checked before anything starts.

The Prefect flows (``flows/daily.py``, ``flows/backfill.py``) run the days; these functions
decide what they run on, so that a bad config, a date after tomorrow or a config without sources
is one line before Prefect starts. Collecting a day's sources outside a run is here whole.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path

from ops import workspace
from storage.errors import InputError
from storage.events import Event
from storage.payloads import FeedFailed
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks import steps
from tasks.collect import Source
from tasks.dates import given_day
from tasks.settings import Settings, SourceSettings, config_path
from tasks.steps.collect import collect_kept
from tasks.steps.hosts import host_slots
from tasks.steps.publish import BriefWithheld

__all__ = ["BriefWithheld"]  # a withheld brief: the run's outcome, exit 1 at the command line

MAX_DAYS = 366
NO_SOURCES = "the config has no [[sources]]; add one with name = … and url = …"


def date_range(start: str, end: str) -> list[date]:
    """Every date from ``start`` to ``end``, inclusive, at most ``MAX_DAYS`` of them."""
    first, last = given_day(start, "--start"), given_day(end, "--end")
    if last < first:
        raise InputError(f"--end {end} is before --start {start}; give the earlier date first")
    days = (last - first).days + 1
    if days > MAX_DAYS:
        raise InputError(f"{days} days is more than {MAX_DAYS}; backfill a year at a time")
    return [first + timedelta(days=k) for k in range(days)]


@dataclass(frozen=True)
class RunResult:
    """What a day's run did (``flows/daily.py:daily_brief``): the version it published and its files
    (extension -> path), its items, whether the version is new, the sources not fetched (name ->
    why), the channels delivered to and those that failed, its steps' seconds, the policy it ran
    under and where an operator reads why stories were left out."""

    day: date
    run_id: str
    version: int
    files: Mapping[str, str]
    items: int
    changed: bool
    skipped: Mapping[str, str]
    delivered: tuple[str, ...]
    delivery_failed: tuple[str, ...]
    seconds: float
    policy: str
    left_out: str | None = None
    review: str | None = None  # "3 questions for review: 'brief review --date D' asks them"

    def row(self) -> dict[str, object]:
        """Its dict form, for a JSON file (the date as YYYY-MM-DD)."""
        return {"date": self.day.isoformat(), **{k: v for k, v in asdict(self).items() if k != "day"}}


@dataclass(frozen=True)
class DateOutcome:
    """One date of a backfill: ``completed``, ``failed`` or ``withheld`` (and why, ``error``); the
    version, items and whether it is new, of a completed one; a fanned-out date's flow run; whether
    the outcome is its last run's, found ``unchanged`` (``tasks/steps/unchanged.py``)."""

    day: date
    status: str
    version: int | None = None
    items: int = 0
    changed: bool = False
    seconds: float | None = None
    error: str = ""
    policy: str = ""
    flow_run_id: str | None = None
    unchanged: bool = False  # its inputs were as its last run left them: that run's outcome stands

    def row(self) -> dict[str, object]:
        """Its dict form, for a table artifact or a JSON line (the date as YYYY-MM-DD)."""
        return {"date": self.day.isoformat(), **{k: v for k, v in asdict(self).items() if k != "day"}}


@dataclass(frozen=True)
class RunPlan:
    """A day's run, checked: its settings, its day (the given one, else today) and the store they
    name, opened once for the command (its run log, the brief it shows)."""

    settings: Settings
    day: date
    store: ParquetEventStore


def plan_run(settings: Settings, day: date | None, clock: steps.Clock = steps.SYSTEM_CLOCK) -> RunPlan:
    """The run of ``day`` (default today by ``clock``) with the settings the command loaded: refused
    when the day is after tomorrow, the config has no sources or its store root is not writable."""
    if day is not None:
        workspace.refuse_future(day, settings, "--date", clock)
    if not settings.sources:
        raise InputError(NO_SOURCES)
    store = workspace.store_of(settings, must_exist=False)
    workspace.writable(settings, store)
    return RunPlan(settings, day or workspace.today(settings, clock), store)


@dataclass(frozen=True)
class BackfillPlan:
    """A backfill, checked: its settings, every date of its range and the store, opened once for
    the command (its log)."""

    settings: Settings
    days: list[date]
    store: ParquetEventStore


def plan_backfill(
    settings: Settings, start: str, end: str, clock: steps.Clock = steps.SYSTEM_CLOCK
) -> BackfillPlan:
    """The dates of ``start`` .. ``end`` with the settings the command loaded, refused when the
    range is not one or ends after tomorrow by ``clock``."""
    days = date_range(start, end)
    workspace.refuse_future(days[-1], settings, "--end", clock)
    store = workspace.store_of(settings, must_exist=False)
    workspace.writable(settings, store)
    return BackfillPlan(settings, days, store)


@dataclass(frozen=True)
class ServePlan:
    """What ``brief serve`` serves: the config by its absolute path (deployments name it so, from
    any working folder), checked; and Prefect's home (``PREFECT_HOME``, else ``~/.prefect``)."""

    config: str
    prefect_home: Path
    settings: Settings


def plan_serve(config: str | None, settings: Settings) -> ServePlan:
    """``config`` by its whole path, and the settings the command loaded from it, whose root is
    refused here when nothing can be written under it, before the server starts."""
    path = str(config_path(config).resolve())
    workspace.writable(settings)
    return ServePlan(path, Path(os.environ.get("PREFECT_HOME", Path.home() / ".prefect")), settings)


@dataclass(frozen=True)
class CollectPlan:
    """A collection of every source of a day into the log, under one run id."""

    settings: Settings
    store: ParquetEventStore
    day: date
    run_id: str


def plan_collect(
    settings: Settings, day: date | None, clock: steps.Clock = steps.SYSTEM_CLOCK
) -> CollectPlan:
    store = workspace.store_of(settings, must_exist=False)
    wanted = workspace.brief_day(settings, day, "--date", clock)
    if not settings.sources:
        raise InputError(NO_SOURCES)
    workspace.writable(settings, store)
    return CollectPlan(settings, store, wanted, f"collect-{wanted.isoformat()}-{workspace.run_tag()}")


@dataclass(frozen=True)
class Collected:
    """One source collected: events written and already held, items read, or why it failed."""

    source: str
    written: int
    skipped: int
    items: int
    failure: str | None  # "error: message" of its feed.failed


def collect_source(plan: CollectPlan, source: SourceSettings) -> Collected:
    """One source of the plan's day fetched, its events appended to the log."""
    return _appended(plan, source, _fetched(plan, source))


def collect_sources(plan: CollectPlan) -> Iterator[Collected]:
    """Every source of the plan's day fetched at once within its ``[collect]`` limits, each
    appended to the log, in the order of the sources, as soon as it and those before it are in."""
    limits = plan.settings.collect
    sources = plan.settings.sources
    with ThreadPoolExecutor(max_workers=max(1, min(len(sources), limits.max_fetches))) as pool:
        fetched = pool.map(lambda source: _fetched(plan, source), sources)
        for source, events in zip(sources, fetched, strict=True):
            yield _appended(plan, source, events)


def _fetched(plan: CollectPlan, source: SourceSettings) -> list[Event]:
    limits = plan.settings.collect
    slots = host_slots(limits.per_host, limits.max_fetches)
    kept = Source(source.name, source.url, source.language, source.kind)
    return collect_kept(plan.store, kept, plan.day, plan.run_id, timeout_s=limits.timeout_s, slots=slots)


def _appended(plan: CollectPlan, source: SourceSettings, events: list[Event]) -> Collected:
    result = plan.store.append(events)
    failed = [e for e in events if e.event_type == "feed.failed"]
    first = payload_of(failed[0], FeedFailed) if failed else None
    failure = f"{first.error}: {first.message}" if first else None
    items = sum(e.event_type == "article.collected" for e in events)
    return Collected(source.name, result.written, result.skipped, items, failure)

"""Reading the log for a person: its events filtered, and a day's projection as it stood."""

from __future__ import annotations

from datetime import date, datetime

import polars as pl

from storage.errors import InputError
from storage.projections import get_projection, materialize
from storage.registry import REGISTRY
from storage.store import ParquetEventStore


def check_types(types: list[str] | None) -> None:
    """Unknown event types are a mistake, said in one line."""
    for t in types or []:
        REGISTRY.spec(t)


def events(
    store: ParquetEventStore, day: date | None, types: list[str] | None, run: str | None
) -> pl.DataFrame:
    """The stored events, oldest first: of ``day``, of ``types``, of the runs whose id starts ``run``."""

    def scan() -> pl.LazyFrame:
        frame = store.scan([day] if day else None, event_types=types or None)
        return frame.filter(pl.col("run_id").str.starts_with(run)) if run else frame

    return store.query(scan)


def version_published(store: ParquetEventStore, day: date, version: int) -> datetime:
    """When version ``version`` of the day's brief was published (``--as-of vN``)."""
    from storage.payloads import BriefPublished
    from storage.typed import payload_of

    published = store.read(days=[day], event_types=["brief.published"])
    for event in published:
        if payload_of(event, BriefPublished).version == version:
            return event.occurred_at
    if not published:
        raise InputError(
            f"--as-of v{version}: no brief is published for {day}; give a time instead "
            "(e.g. --as-of 2025-08-06T18:00:00Z), or 'brief run --date DAY' to publish one"
        )
    raise InputError(
        f"--as-of v{version}: no version {version} of the brief of {day}; "
        f"'brief replay --date {day} --projection briefs' lists them"
    )


def first_recorded(store: ParquetEventStore, day: date) -> datetime | None:
    """When the first event of ``day`` was written."""
    times = store.query(lambda: store.scan([day]).select(pl.col("occurred_at").min()))
    return times.item() if times.height else None


def check_projection(name: str) -> None:
    get_projection(name)


def projection(store: ParquetEventStore, name: str, day: date, as_of: datetime | None) -> pl.DataFrame:
    """The projection ``name`` of ``day`` from the events up to ``as_of``."""
    if day not in store.days():
        raise InputError(f"no events for {day}; 'brief events' lists what the log holds")
    return materialize(store, name, days=[day], as_of=as_of)

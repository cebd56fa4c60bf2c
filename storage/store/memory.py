"""The event store in memory: for unit tests and throwaway replays."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import date

import polars as pl
import pyarrow as pa

from storage.events import Event
from storage.store.base import (
    ARROW_SCHEMA,
    POLARS_SCHEMA,
    AppendResult,
    CompactResult,
    EventStore,
    RewriteResult,
    Transform,
    by_day,
    dedup_ordered,
    events_to_table,
    fresh_events,
)


class InMemoryEventStore(EventStore):
    """The same contract, in memory: for unit tests and throwaway replays."""

    def __init__(self) -> None:
        self._tables: dict[date, dict[str, pa.Table]] = {}
        self._ids: dict[date, set[str]] = {}
        self._counter = 0
        self._compacted: set[str] = set()
        self._lock = threading.Lock()

    def _add(self, day: date, table: pa.Table) -> str:
        self._counter += 1
        unit = f"{day.isoformat()}#{self._counter:012d}"
        self._tables.setdefault(day, {})[unit] = table
        return unit

    def is_compacted(self, unit: str) -> bool:
        return unit in self._compacted

    def append(self, events: Sequence[Event]) -> AppendResult:
        written = skipped = 0
        with self._lock:
            for day, batch in by_day(events).items():
                known = self._ids.setdefault(day, set())
                fresh, ids = fresh_events(batch, known)
                skipped += len(batch) - len(fresh)
                if fresh:
                    self._add(day, events_to_table(fresh))
                    known |= ids
                    written += len(fresh)
        return AppendResult(written, skipped)

    def days(self) -> list[date]:
        return sorted(self._tables)

    def units(self, day: date) -> list[str]:
        return sorted(self._tables.get(day, {}))

    def raw_units(self, units: Sequence[str]) -> pl.LazyFrame:
        tables = [self._tables[date.fromisoformat(u.split("#")[0])][u] for u in units]
        if not tables:
            return pl.LazyFrame(schema=POLARS_SCHEMA)
        return pl.from_arrow(pa.concat_tables(tables)).lazy()  # type: ignore[union-attr]

    def compact(self, day: date) -> CompactResult:
        with self._lock:
            tables = list(self._tables.get(day, {}).values())
            before = len(tables)
            if not self.needs_compaction(day):
                return CompactResult(day, before, before, sum(t.num_rows for t in tables))
            merged = dedup_ordered(pl.from_arrow(pa.concat_tables(tables)).lazy()).collect()  # type: ignore[union-attr]
            self._tables[day] = {}
            self._compacted.add(self._add(day, merged.to_arrow().cast(ARROW_SCHEMA)))
            return CompactResult(day, before, 1, merged.height)

    def rewrite(self, day: date, transform: Transform) -> RewriteResult:
        with self._lock:
            tables = list(self._tables.get(day, {}).values())
            if not tables:
                return RewriteResult(day, 0, 0, False)
            merged = dedup_ordered(pl.from_arrow(pa.concat_tables(tables)).lazy()).collect()  # type: ignore[union-attr]
            changed = transform(merged)
            if changed is None:
                return RewriteResult(day, merged.height, merged.height, False)
            self._tables[day] = {}
            self._compacted.add(self._add(day, changed.to_arrow().cast(ARROW_SCHEMA)))
            self._ids[day] = set(changed.get_column("event_id").to_list())
            return RewriteResult(day, merged.height, changed.height, True)

"""A store's log with events not yet written: what the log would read like if they were appended.

An act's next version is composed over it: the act's events and every event the composition
appends stay here, in memory, in the batches they came in, and read as the log would read with
them; an act whose brief could not be published (``[delivery] min_core``) is refused with nothing
written, and one that can be is written (``commit``) and published from that same composition.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import polars as pl

from storage.events import Event
from storage.store.base import AppendResult, by_day, events_to_table, fresh_events
from storage.store.parquet import ParquetEventStore

PENDING = "pending:"  # the unit names of a day's unwritten batches: pending:DAY:N


class WithPending(ParquetEventStore):
    """``store`` as it reads, plus ``events`` and what is appended to it since, each batch one more
    unit of its days; nothing reaches ``store`` until ``commit``."""

    def __init__(self, store: ParquetEventStore, events: Sequence[Event]) -> None:
        self.__dict__.update(store.__dict__)  # the same root, filesystem, briefs and index of ids
        self._store = store
        self._batches: list[list[Event]] = []
        self._pending: dict[date, list[pl.LazyFrame]] = {}
        self._held: dict[date, set[str]] = {}  # the ids of each day's pending events
        self.append(events)

    def append(self, events: Sequence[Event]) -> AppendResult:
        """Keep the events the log does not hold yet (as the store's append would write them)."""
        written = skipped = 0
        kept = []
        for day, batch in by_day(events).items():
            with self._lock:
                known = self._refresh(day).ids | self._held.setdefault(day, set())
            fresh, ids = fresh_events(batch, known)
            skipped += len(batch) - len(fresh)
            if fresh:
                self._pending.setdefault(day, []).append(_frame(fresh))
                self._held[day] |= ids
                kept += fresh
                written += len(fresh)
        if kept:
            self._batches.append(kept)
        return AppendResult(written, skipped)

    @property
    def events(self) -> list[Event]:
        """Every pending event, in the order it was appended."""
        return [e for batch in self._batches for e in batch]

    def commit(self) -> int:
        """Append the pending batches to the store, in their order (one append each, as if they
        had been appended there); how many events it wrote. Nothing is pending afterwards."""
        written = sum(self._store.append(batch).written for batch in self._batches)
        self._batches, self._pending, self._held = [], {}, {}
        return written

    def days(self) -> list[date]:
        return sorted(set(super().days()) | set(self._pending))

    def units(self, day: date) -> list[str]:
        pending = [f"{PENDING}{day.isoformat()}:{k}" for k in range(len(self._pending.get(day, ())))]
        return super().units(day) + pending

    def is_compacted(self, unit: str) -> bool:
        return not unit.startswith(PENDING) and super().is_compacted(unit)

    def raw_units(self, units: Sequence[str]) -> pl.LazyFrame:
        stored = super().raw_units([u for u in units if not u.startswith(PENDING)])
        pending = []
        for unit in units:
            if unit.startswith(PENDING):
                day, k = unit.removeprefix(PENDING).split(":")
                pending.append(self._pending[date.fromisoformat(day)][int(k)])
        return pl.concat([stored, *pending], how="vertical_relaxed") if pending else stored


def _frame(events: Sequence[Event]) -> pl.LazyFrame:
    return pl.from_arrow(events_to_table(events)).lazy()  # type: ignore[union-attr]

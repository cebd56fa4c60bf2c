"""A store's log with events not yet written: what the log would read like if they were appended.

An act's next version is composed from it before the act is recorded, so that an act whose brief
could not be published (``[delivery] min_core``) is refused with nothing written. Nothing is ever
appended through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import polars as pl

from storage.events import Event
from storage.store.base import AppendResult, by_day, events_to_table
from storage.store.parquet import ParquetEventStore

PENDING = "pending:"  # the unit name of a day's unwritten events


class WithPending(ParquetEventStore):
    """``store`` as it reads, plus ``events`` as one more batch of their days; appending is refused."""

    def __init__(self, store: ParquetEventStore, events: Sequence[Event]) -> None:
        self.__dict__.update(store.__dict__)  # the same root, filesystem and briefs
        self._pending = {day: _frame(batch) for day, batch in by_day(events).items()}

    def append(self, events: Sequence[Event]) -> AppendResult:
        raise RuntimeError("a store with pending events is read, never written")

    def days(self) -> list[date]:
        return sorted(set(super().days()) | set(self._pending))

    def units(self, day: date) -> list[str]:
        return super().units(day) + ([f"{PENDING}{day.isoformat()}"] if day in self._pending else [])

    def is_compacted(self, unit: str) -> bool:
        return not unit.startswith(PENDING) and super().is_compacted(unit)

    def raw_units(self, units: Sequence[str]) -> pl.LazyFrame:
        stored = super().raw_units([u for u in units if not u.startswith(PENDING)])
        days = [date.fromisoformat(u.removeprefix(PENDING)) for u in units if u.startswith(PENDING)]
        pending = [self._pending[day] for day in days]
        return pl.concat([stored, *pending], how="vertical_relaxed") if pending else stored


def _frame(events: Sequence[Event]) -> pl.LazyFrame:
    return pl.from_arrow(events_to_table(events)).lazy()  # type: ignore[union-attr]

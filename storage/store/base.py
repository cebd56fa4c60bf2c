"""The event store's interface, its schema and what every backend shares.

``EventStore`` is the small interface (append, days, units, raw_units, compact) every backend
offers, with the reading it builds on top (``scan``, ``query``, ``read``);
``tests/unit/test_store_contract.py`` holds every backend to it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from operator import attrgetter
from typing import Any

import polars as pl
import pyarrow as pa
from polars._typing import EngineType

from storage.errors import StoreError
from storage.events import Event, canonical_json, event_from_row
from storage.store.vanished import rereading

ARROW_SCHEMA = pa.schema(
    [
        ("event_id", pa.string()),
        ("event_type", pa.string()),
        ("schema_version", pa.int32()),
        ("occurred_at", pa.timestamp("us", tz="UTC")),
        ("seq", pa.int32()),
        ("brief_date", pa.date32()),
        ("run_id", pa.string()),
        ("subject_id", pa.string()),
        ("source_event_ids", pa.list_(pa.string())),
        ("produced_by", pa.string()),
        ("policy_version", pa.string()),
        ("payload", pa.string()),
    ]
)
# (an empty table from batches: ``Schema.empty_table`` imports pandas, about 0.3 s of every command)
POLARS_SCHEMA = pl.Schema(pl.from_arrow(pa.Table.from_batches([], schema=ARROW_SCHEMA)).schema)  # type: ignore[union-attr]
# a segment line keeps times as integers (microseconds, days since 1970): cast after reading
SEGMENT_SCHEMA = pl.Schema(
    [
        (n, pl.Int64() if n == "occurred_at" else pl.Int32() if n == "brief_date" else t)
        for n, t in POLARS_SCHEMA.items()
    ]
)
SEGMENT, PARQUET, COMPACTED = ".jsonl.zst", ".parquet", ".compacted.parquet"
SEGMENT_CODEC = pa.Codec("zstd", compression_level=1)  # a standard zstd frame: `zstd -dc` reads it
APPEND_FORMATS = ("jsonl", "parquet")
ORDER = ["occurred_at", "seq", "event_id", "run_id"]  # run_id only breaks ties between racing copies


@dataclass(frozen=True)
class AppendResult:
    written: int
    skipped: int
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class RewriteResult:
    day: date
    events_before: int
    events_after: int
    changed: bool


# A rewrite's transform: the day's events (each id once, in event order) -> the events the day is
# to hold instead, in the store's schema, or None when nothing is to change.
Transform = Callable[[pl.DataFrame], "pl.DataFrame | None"]


@dataclass(frozen=True)
class CompactResult:
    day: date
    files_before: int
    files_after: int
    events: int


def events_to_table(events: Sequence[Event]) -> pa.Table:
    """Events to an Arrow table, one typed array per column (no per-event dicts)."""
    arrays = []
    for field_ in ARROW_SCHEMA:
        if field_.name == "payload":
            values: list[Any] = [canonical_json(e.payload) for e in events]
        else:
            values = [getattr(e, field_.name) for e in events]
        arrays.append(pa.array(values, type=field_.type))
    return pa.Table.from_arrays(arrays, schema=ARROW_SCHEMA)


def events_to_segment(events: Sequence[Event]) -> pa.Buffer:
    """Events as a log segment: one stored line each, zstd-compressed."""
    return SEGMENT_CODEC.compress(b"".join(map(_STORED_LINE, events)))  # type: ignore[no-any-return]


_STORED_LINE = attrgetter("stored_line")


def read_segments(sources: Sequence[Any]) -> pl.LazyFrame:
    """Segments (paths or bytes buffers) as a lazy frame in the store's schema."""
    return pl.scan_ndjson(list(sources), schema=SEGMENT_SCHEMA).with_columns(
        pl.col("occurred_at").cast(pl.Datetime("us", "UTC")), pl.col("brief_date").cast(pl.Date)
    )


def dedup_ordered(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Order events totally and keep the first occurrence of each ``event_id``."""
    return frame.sort(ORDER).unique(subset="event_id", keep="first", maintain_order=True)


class EventStore(ABC):
    """The small interface every store offers; ``tests/unit/test_store_contract.py`` holds it."""

    @abstractmethod
    def append(self, events: Sequence[Event]) -> AppendResult: ...

    @abstractmethod
    def days(self) -> list[date]:
        """Days that hold at least one event, oldest first."""

    @abstractmethod
    def units(self, day: date) -> list[str]:
        """Names of the immutable batches (files) that hold a day's events, in write order."""

    @abstractmethod
    def raw_units(self, units: Sequence[str]) -> pl.LazyFrame:
        """Every stored row of those batches, duplicates included."""

    def position(self) -> dict[str, tuple[str, ...]]:
        """Where the log stands: every day's batches. Snapshots keep it as their watermark."""
        return {d.isoformat(): tuple(self.units(d)) for d in self.days()}

    @abstractmethod
    def compact(self, day: date) -> CompactResult: ...

    @abstractmethod
    def rewrite(self, day: date, transform: Transform) -> RewriteResult:
        """Replace a day's events by what ``transform`` makes of them, as one compacted batch.

        The one exception to immutability, for a takedown (``brief purge``) and for retention
        (``[retention]`` on ``brief compact``): events keep their ids, and the day is rewritten
        whole or not at all, under the same lock compaction takes, so neither undoes the other.
        """

    def needs_compaction(self, day: date) -> bool:
        units = self.units(day)
        return len(units) > 1 or (len(units) == 1 and not self.is_compacted(units[0]))

    def compact_pending(self) -> list[CompactResult]:
        """Compact every day that needs it (the daily run does this when it ends)."""
        return [self.compact(d) for d in self.days() if self.needs_compaction(d)]

    def scan(
        self,
        days: Iterable[date] | None = None,
        *,
        as_of: datetime | None = None,
        event_types: Sequence[str] | None = None,
        ordered: bool = True,
    ) -> pl.LazyFrame:
        """Events of ``days`` (all days when None) as a lazy frame, each ``event_id`` once, in event order.

        ``ordered=False``: for a reader that orders what it needs itself (a fold whose result does not
        depend on the order of its rows), compacted days come as their files hold them, without the
        sort of every row and column into event order (days not yet compacted are still sorted, to
        keep the first of an id's copies)."""
        wanted = self.days() if days is None else sorted(set(days) & set(self.days()))
        if not wanted:
            return pl.LazyFrame(schema=POLARS_SCHEMA)
        units = [u for d in wanted for u in self.units(d)]
        return self.ordered(units, len(wanted), event_types=event_types, as_of=as_of, in_order=ordered)

    def ordered(
        self,
        units: Sequence[str],
        days: int,
        *,
        event_types: Sequence[str] | None = None,
        as_of: datetime | None = None,
        in_order: bool = True,
    ) -> pl.LazyFrame:
        """The events of ``units`` (the batches of ``days`` days), each ``event_id`` once, in their
        total order; only ``event_types`` and those up to ``as_of`` when given. ``in_order=False``:
        compacted days as their files hold them (``scan``'s ``ordered``)."""
        frame = self.raw_units(units)
        if event_types:
            frame = frame.filter(pl.col("event_type").is_in(list(event_types)))
        if as_of is not None:
            frame = frame.filter(pl.col("occurred_at") <= as_of)
        if len(units) == days and all(map(self.is_compacted, units)):
            # one compacted file per day: each id once (ids hash their day) and each file in event order
            return frame if len(units) == 1 or not in_order else frame.sort(ORDER)
        return dedup_ordered(frame)

    def is_compacted(self, unit: str) -> bool:
        """Whether a batch was written by compaction: in event order, each ``event_id`` once."""
        return False

    def query(
        self, build: Callable[[], pl.LazyFrame], attempts: int = 8, engine: EngineType = "auto"
    ) -> pl.DataFrame:
        """Collect a query built over ``scan``; retried when compaction removed a file under it."""
        return rereading(lambda: build().collect(engine=engine), attempts)

    def read(
        self,
        days: Iterable[date] | None = None,
        *,
        as_of: datetime | None = None,
        event_types: Sequence[str] | None = None,
    ) -> list[Event]:
        """Events as models, upcast to the latest schema, in their total order."""
        frame = self.query(lambda: self.scan(days, as_of=as_of, event_types=event_types))
        return [event_from_row(row) for row in frame.iter_rows(named=True)]


def by_day(events: Sequence[Event]) -> dict[date, list[Event]]:
    kinds = set(map(type, events))
    if kinds != {Event}:
        strangers = [k for k in kinds if not issubclass(k, Event)]
        if strangers:
            raise StoreError(f"append takes Event objects made by new_event, got {strangers[0].__name__}")
    days = set(map(_BRIEF_DATE, events))
    if len(days) == 1:
        return {days.pop(): list(events)}
    grouped: dict[date, list[Event]] = {}
    for event in events:
        grouped.setdefault(event.brief_date, []).append(event)
    return grouped


def fresh_events(batch: list[Event], known: set[str]) -> tuple[list[Event], set[str]]:
    """The events of ``batch`` not in ``known``, each id once, in batch order; and their ids."""
    ids = set(map(_EVENT_ID, batch))
    if len(ids) == len(batch) and ids.isdisjoint(known):
        return batch, ids
    seen: set[str] = set()
    out = []
    for event in batch:
        if event.event_id in known or event.event_id in seen:
            continue
        seen.add(event.event_id)
        out.append(event)
    return out, seen


_EVENT_ID, _BRIEF_DATE = attrgetter("event_id"), attrgetter("brief_date")

"""Append-only event stores: day-partitioned Parquet files, and an in-memory twin.

One module per backend: ``base`` (the interface and what every backend shares), ``memory``,
``parquet`` (files on any pyarrow filesystem), ``objectstore`` (local, S3, fsspec roots) and
``vanished`` (a file that compaction removed under a reader).


Layout: ``{root}/events/date=YYYY-MM-DD/part-<write-time>-<random>.{jsonl,parquet}``.
An append writes one new immutable file per day it touches; locally it is written under a
hidden temporary name and renamed, on an object store it is one PUT, so a crash never
leaves half a file visible. Readers list ``part-*`` files only and never see an
``event_id`` twice: a rerun's events are skipped on append, and duplicates that two racing
writers could still leave are dropped on read (first by ``occurred_at``, ``seq``).

Two tiers, like a log-structured store. An append writes a *segment*: the events' stored
lines (``Event.stored_line``, JSON made once when the event was made), so appending costs a
join and one write. Compaction folds a day's segments and small files into one zstd Parquet
file, which DuckDB, Spark or Trino read as it is; the daily run compacts the days it wrote
when it ends. ``append_format="parquet"`` writes zstd Parquet on every append instead
(every file readable by other engines at once, appends about five times slower).
"""

from storage.store.base import (
    APPEND_FORMATS,
    ARROW_SCHEMA,
    POLARS_SCHEMA,
    AppendResult,
    CompactResult,
    EventStore,
    dedup_ordered,
    events_to_segment,
    events_to_table,
    read_segments,
)
from storage.store.memory import InMemoryEventStore
from storage.store.objectstore import resolve_filesystem
from storage.store.parquet import ParquetEventStore

__all__ = [
    "APPEND_FORMATS",
    "ARROW_SCHEMA",
    "POLARS_SCHEMA",
    "AppendResult",
    "CompactResult",
    "EventStore",
    "InMemoryEventStore",
    "ParquetEventStore",
    "dedup_ordered",
    "events_to_segment",
    "events_to_table",
    "read_segments",
    "resolve_filesystem",
]

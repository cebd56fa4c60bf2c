"""Append-only event stores: day-partitioned Parquet files, and an in-memory twin.

One module per backend: ``base`` (the interface and what every backend shares), ``memory``,
``parquet`` (files on any pyarrow filesystem), ``objectstore`` (local, S3, fsspec roots) and
``vanished`` (a file that compaction removed under a reader).


The layout, the two tiers (segments and compacted Parquet) and what readers see are
described in ``storage/store/parquet.py``.
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

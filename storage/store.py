"""Append-only event stores: day-partitioned Parquet files, and an in-memory twin.

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

from __future__ import annotations

import contextlib
import io
import os
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from operator import attrgetter
from typing import Any, TypeVar

import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from polars._typing import EngineType

from storage.atomic import write_bytes
from storage.errors import StoreError
from storage.events import Event, canonical_json, event_from_row

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
POLARS_SCHEMA = pl.Schema(pl.from_arrow(ARROW_SCHEMA.empty_table()).schema)  # type: ignore[union-attr]
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
T = TypeVar("T")


@dataclass(frozen=True)
class AppendResult:
    written: int
    skipped: int
    files: tuple[str, ...] = ()


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
    ) -> pl.LazyFrame:
        """Events of ``days`` (all days when None) as a lazy frame, each ``event_id`` once."""
        wanted = self.days() if days is None else sorted(set(days) & set(self.days()))
        if not wanted:
            return pl.LazyFrame(schema=POLARS_SCHEMA)
        units = [u for d in wanted for u in self.units(d)]
        frame = self.raw_units(units)
        if event_types:
            frame = frame.filter(pl.col("event_type").is_in(list(event_types)))
        if as_of is not None:
            frame = frame.filter(pl.col("occurred_at") <= as_of)
        if len(units) == len(wanted) and all(map(self.is_compacted, units)):
            # one compacted file per day: each id once (ids hash their day) and each file in event order
            return frame if len(units) == 1 else frame.sort(ORDER)
        return dedup_ordered(frame)

    def is_compacted(self, unit: str) -> bool:
        """Whether a batch was written by compaction: in event order, each ``event_id`` once."""
        return False

    def query(
        self, build: Callable[[], pl.LazyFrame], attempts: int = 8, engine: EngineType = "auto"
    ) -> pl.DataFrame:
        """Collect a query built over ``scan``; retried when compaction removed a file under it."""
        return _rereading(lambda: build().collect(engine=engine), attempts)

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
            for day, batch in _by_day(events).items():
                known = self._ids.setdefault(day, set())
                fresh, ids = _fresh(batch, known)
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


@dataclass
class _DayIndex:
    """What this process knows of one day's files: names seen and the ids they hold."""

    files: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)


class ParquetEventStore(EventStore):
    """Day-partitioned Parquet on any pyarrow filesystem (local disk, S3, fsspec, …)."""

    def __init__(
        self,
        root: str,
        filesystem: pafs.FileSystem | None = None,
        *,
        append_format: str = "jsonl",
        endpoint_url: str | None = None,
        region: str | None = None,
    ) -> None:
        if append_format not in APPEND_FORMATS:
            raise StoreError(
                f"append_format {append_format!r} is not one of {', '.join(APPEND_FORMATS)}; "
                "fix [storage] append_format in the config"
            )
        self.root = root
        self.append_format = append_format
        self.fs, self.base = (
            (filesystem, root)
            if filesystem is not None
            else resolve_filesystem(root, endpoint_url=endpoint_url, region=region)
        )
        self.events_dir = f"{self.base.rstrip('/')}/events"
        self.is_local = isinstance(self.fs, pafs.LocalFileSystem)
        self._index: dict[date, _DayIndex] = {}
        self._lock = threading.Lock()

    # -- layout ------------------------------------------------------------------------

    def day_dir(self, day: date) -> str:
        return f"{self.events_dir}/date={day.isoformat()}"

    def files(self, day: date) -> list[str]:
        """The visible part files (segments and Parquet) of a day, in write order."""
        directory = self.day_dir(day)
        if self.is_local:  # a plain listing: no stat per file
            try:
                names = os.listdir(directory)
            except FileNotFoundError:
                return []
        else:
            selector = pafs.FileSelector(directory, allow_not_found=True)
            names = [i.base_name for i in self.fs.get_file_info(selector) if i.type == pafs.FileType.File]
        parts = (n for n in names if n.startswith("part-") and n.endswith((SEGMENT, PARQUET)))
        return sorted(f"{directory}/{n}" for n in parts)

    def days(self) -> list[date]:
        selector = pafs.FileSelector(self.events_dir, allow_not_found=True)
        found = []
        for info in self.fs.get_file_info(selector):
            if info.type == pafs.FileType.Directory and info.base_name.startswith("date="):
                try:
                    found.append(date.fromisoformat(info.base_name[5:]))
                except ValueError:
                    continue
        return sorted(found)

    # -- writing -----------------------------------------------------------------------

    def append(self, events: Sequence[Event]) -> AppendResult:
        written = skipped = 0
        paths = []
        for day, batch in _by_day(events).items():
            with self._lock:
                index = self._refresh(day)
                fresh, ids = _fresh(batch, index.ids)
            skipped += len(batch) - len(fresh)
            if not fresh:
                continue
            path = self._write(day, fresh)
            with self._lock:
                index.files.add(path)
                index.ids |= ids
            written += len(fresh)
            paths.append(path)
        return AppendResult(written, skipped, tuple(paths))

    def _refresh(self, day: date) -> _DayIndex:
        """Learn the ids of files this process has not seen yet (other writers' files)."""
        index = self._index.setdefault(day, _DayIndex())

        def learn() -> tuple[list[str], list[str]]:
            current = self.files(day)
            new = [p for p in current if p not in index.files]
            if not new:
                return current, []
            return current, self.raw_units(new).select("event_id").collect().get_column("event_id").to_list()

        current, ids = _rereading(learn)
        index.ids.update(ids)
        index.files = set(current)
        return index

    def _write(self, day: date, events: Sequence[Event]) -> str:
        """One new immutable file holding ``events`` (all of ``day``), in the append format."""
        if self.append_format == "parquet":
            return self._write_parquet(day, events_to_table(events))
        return self._put(day, SEGMENT, events_to_segment(events))

    def _write_parquet(self, day: date, table: pa.Table, *, compacted: bool = False) -> str:
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        return self._put(day, COMPACTED if compacted else PARQUET, sink.getvalue())

    def is_compacted(self, unit: str) -> bool:
        return unit.endswith(COMPACTED)

    def _put(self, day: date, suffix: str, data: bytes | pa.Buffer) -> str:
        """Make ``data`` visible under a new part name all at once (rename, or one PUT)."""
        name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:16]}{suffix}"
        final = f"{self.day_dir(day)}/{name}"
        write_bytes(self.fs, final, data)
        return final

    # -- reading -----------------------------------------------------------------------

    def units(self, day: date) -> list[str]:
        return self.files(day)

    def raw_units(self, paths: Sequence[str]) -> pl.LazyFrame:
        parquet = [p for p in paths if p.endswith(PARQUET)]
        segments = [p for p in paths if p.endswith(SEGMENT)]
        parts = []
        if parquet:
            if self.is_local:
                parts.append(pl.scan_parquet(parquet, schema=POLARS_SCHEMA, hive_partitioning=False))
            else:
                tables = [pq.read_table(p, filesystem=self.fs) for p in parquet]
                parts.append(pl.from_arrow(pa.concat_tables(tables)).lazy())  # type: ignore[union-attr]
        if segments:
            if self.is_local:
                parts.append(read_segments(segments))
            else:
                buffers = []
                for path in segments:
                    with self.fs.open_input_stream(path) as src:
                        buffers.append(io.BytesIO(src.read()))
                parts.append(read_segments(buffers))
        if not parts:
            return pl.LazyFrame(schema=POLARS_SCHEMA)
        return parts[0] if len(parts) == 1 else pl.concat(parts, how="vertical")

    # -- maintenance -------------------------------------------------------------------

    def compact(self, day: date) -> CompactResult:
        """Merge a day's part files into one zstd Parquet file, same events, readers undisturbed.

        The merged file becomes visible before the old ones go; a reader that lists in
        between sees every event twice and drops the copies, and a reader whose file
        vanished under it retries (``EventStore.query``). Two compactions of one day at once
        are safe too: the one that finds a file gone starts again from a fresh listing.
        """

        def merge() -> tuple[list[str], pl.DataFrame, bool]:
            before = self.files(day)
            done = len(before) == 0 or (len(before) == 1 and self.is_compacted(before[0]))
            if done:
                return before, self.raw_units(before).select("event_id").collect(), done
            return before, dedup_ordered(self.raw_units(before)).collect(), done

        before, merged, done = _rereading(merge)
        if done:
            return CompactResult(day, len(before), len(before), merged.height)
        table = merged.to_arrow().cast(ARROW_SCHEMA)
        self._write_parquet(day, table, compacted=True)
        for old in before:
            with contextlib.suppress(FileNotFoundError):  # another compaction removed it already
                self.fs.delete_file(old)
        with self._lock:
            self._index.pop(day, None)
        return CompactResult(day, len(before), len(self.files(day)), table.num_rows)

    def remove_stale_temporaries(self, day: date, older_than_s: float = 3600) -> int:
        """Delete temporary files a crashed writer left behind (never visible to readers)."""
        selector = pafs.FileSelector(self.day_dir(day), allow_not_found=True)
        cutoff = time.time() - older_than_s
        removed = 0
        for info in self.fs.get_file_info(selector):
            if info.base_name.endswith(".tmp") and info.mtime and info.mtime.timestamp() < cutoff:
                self.fs.delete_file(info.path)
                removed += 1
        return removed


def resolve_filesystem(
    root: str, *, endpoint_url: str | None = None, region: str | None = None
) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem and base path for a local path or any pyarrow/fsspec URL.

    ``s3://bucket/prefix`` takes its credentials from the standard AWS chain (environment,
    shared config and credentials files, instance or task roles); ``endpoint_url`` points it
    at an S3-compatible server (MinIO, Ceph, R2, moto).
    """
    if "://" not in root:
        return pafs.LocalFileSystem(), os.path.abspath(os.path.expanduser(root))
    if root.startswith("file://"):
        return pafs.LocalFileSystem(), root[len("file://") :]
    if root.startswith("s3://"):
        return _s3(root, endpoint_url, region)
    try:
        return pafs.FileSystem.from_uri(root)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    try:
        import fsspec
    except ImportError as exc:  # pragma: no cover - fsspec ships with the project
        raise StoreError(f"storage root {root!r}: install fsspec to use this URL scheme") from exc
    try:
        fs, path = fsspec.core.url_to_fs(root)
    except (ImportError, ValueError) as exc:
        raise StoreError(f"storage root {root!r}: no filesystem for this URL ({exc})") from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), path


def _s3(root: str, endpoint_url: str | None, region: str | None) -> tuple[pafs.FileSystem, str]:
    base = root[len("s3://") :].strip("/")
    bucket = base.split("/", 1)[0]
    if not bucket:
        raise StoreError(f"storage root {root!r} names no bucket; use s3://bucket/prefix")
    options: dict[str, Any] = {
        "region": region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    }
    if endpoint_url:
        options["endpoint_override"] = endpoint_url
    fs = pafs.S3FileSystem(**{k: v for k, v in options.items() if v})
    where = f" at {endpoint_url}" if endpoint_url else ""
    try:
        found = fs.get_file_info(bucket).type
    except OSError as exc:
        reason = str(exc).splitlines()[0][:200]
        raise StoreError(
            f"storage root {root!r}: cannot reach the bucket{where} ({reason}); check [storage] "
            "endpoint_url and the AWS credentials in the environment"
        ) from None
    if found == pafs.FileType.NotFound:
        raise StoreError(
            f"storage root {root!r}: bucket {bucket!r} does not exist{where}; create it "
            "(the store needs s3:ListBucket, s3:GetObject, s3:PutObject, s3:DeleteObject on it)"
        )
    return fs, base


_VANISHED = (
    "no such file",
    "not found",  # pyarrow S3 says "AWS Error RESOURCE_NOT_FOUND during GetObject operation"
    "does not exist",
    "nosuchkey",
    "no such key",
    "404",
    "path does not exist",
)


def _vanished(exc: Exception) -> bool:
    """Whether an error says a file was not there (compaction removed it under a reader).

    Local disks raise ``FileNotFoundError``; object stores say it in words (S3 ``NoSuchKey``,
    HTTP 404, fsspec's "not found"), which reach us as ``OSError`` or a Polars compute error.
    """
    if isinstance(exc, FileNotFoundError):
        return True
    text = str(exc).lower().replace("_", " ")  # "NO_SUCH_KEY", "RESOURCE_NOT_FOUND": words with underscores
    return any(marker in text for marker in _VANISHED)


def _rereading(read: Callable[[], T], attempts: int = 8) -> T:
    """Run ``read`` (which lists, then reads); when a file it listed vanished, list and read again.

    Compaction writes its merged file before it deletes the old ones, so a new listing finds
    every event; the pauses (5 ms, 10 ms, … 0.6 s) let a compaction in progress finish.
    """
    for attempt in range(attempts):
        try:
            return read()
        except (FileNotFoundError, OSError, pl.exceptions.ComputeError) as exc:
            if attempt == attempts - 1 or not _vanished(exc):
                raise
            time.sleep(0.005 * 2**attempt)
    raise AssertionError("unreachable")


def _by_day(events: Sequence[Event]) -> dict[date, list[Event]]:
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


def _fresh(batch: list[Event], known: set[str]) -> tuple[list[Event], set[str]]:
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

"""The event store on files: day-partitioned segments and Parquet on any pyarrow filesystem.

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
import functools
import io
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from storage.atomic import exclusive, write_bytes
from storage.errors import StoreError
from storage.events import Event
from storage.root import StoreRoot
from storage.store.base import (
    APPEND_FORMATS,
    ARROW_SCHEMA,
    COMPACTED,
    PARQUET,
    POLARS_SCHEMA,
    SEGMENT,
    AppendResult,
    CompactResult,
    EventStore,
    RewriteResult,
    Transform,
    by_day,
    dedup_ordered,
    events_to_segment,
    events_to_table,
    fresh_events,
    read_segments,
)
from storage.store.decoded import DecodedBatches
from storage.store.objectstore import resolve_filesystem
from storage.store.vanished import rereading


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
        self.tree = StoreRoot(self.fs, self.base)  # every other place under the root, by name
        self.events_dir = f"{self.base.rstrip('/')}/events"
        self.is_local = isinstance(self.fs, pafs.LocalFileSystem)
        self._index: dict[date, _DayIndex] = {}
        self._lock = threading.Lock()
        self._decoded: DecodedBatches | None = None  # none until keep_decoded

    def keep_decoded(self, limit_bytes: int) -> bool:
        """Keep the part files this process reads decoded in memory, up to ``limit_bytes``
        (``storage/store/decoded.py``): a long-lived reader of the same days, such as the desk,
        decodes each file once. A local store only: whether this store keeps them."""
        if self.is_local and self._decoded is None:
            self._decoded = DecodedBatches(limit_bytes)
        return self._decoded is not None

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
        listed = sorted(f"{directory}/{n}" for n in parts)
        if self._decoded is not None:
            self._decoded.keep_listed(directory, set(listed))
        return listed

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
        for day, batch in by_day(events).items():
            with self._lock:
                index = self._refresh(day)
                fresh, ids = fresh_events(batch, index.ids)
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

        current, ids = rereading(learn)
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
        if self._decoded is not None and paths:
            frames = [self._decoded.get(p, functools.partial(self._decode, p)) for p in paths]
            return pl.concat([f.lazy() for f in frames], how="vertical")
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

    def ordered(
        self,
        units: Sequence[str],
        days: int,
        *,
        event_types: Sequence[str] | None = None,
        as_of: datetime | None = None,
        in_order: bool = True,
    ) -> pl.LazyFrame:
        """As the base store's; with the files kept decoded (``keep_decoded``), the batches' events
        ordered and each id once are kept too, by the batches' names (a batch never changes: a new
        one is a new name), so a page that reads a month again filters that frame, not the files."""
        if self._decoded is None or not units:
            return super().ordered(units, days, event_types=event_types, as_of=as_of, in_order=in_order)
        whole = self._decoded.merged(
            tuple(units), lambda: super(ParquetEventStore, self).ordered(units, days)
        )
        frame = whole.lazy()
        if event_types:
            frame = frame.filter(pl.col("event_type").is_in(list(event_types)))
        if as_of is not None:
            frame = frame.filter(pl.col("occurred_at") <= as_of)
        return frame

    def derived(
        self,
        name: str,
        event_types: Sequence[str],
        build: Callable[[pl.LazyFrame], pl.LazyFrame],
        narrow: pl.Expr | None = None,
    ) -> pl.DataFrame:
        """``build`` (a projection's fold, say) over every day's events of ``event_types``, collected.
        With the files kept decoded, the result is kept beside the merged frames, by ``name`` and
        the files it was built from: asked again before a new file is written, it is not built
        again; after, it is built from the new files. A store that keeps nothing builds it from the
        events ``narrow`` selects (what the one reader asking needs), not from every event."""

        def read() -> pl.DataFrame:
            days = self.days()
            units = [u for d in days for u in self.units(d)]
            events = self.ordered(units, len(days), event_types=event_types)
            if self._decoded is None or not units:
                return build(events if narrow is None else events.filter(narrow)).collect()
            return self._decoded.merged((f"derived:{name}", *units), lambda: build(events))

        return rereading(read)

    def _decode(self, path: str) -> pl.DataFrame:
        """One local part file, read whole (for ``keep_decoded``)."""
        if path.endswith(PARQUET):
            return pl.read_parquet(path, schema=POLARS_SCHEMA, hive_partitioning=False)
        return read_segments([path]).collect()

    # -- maintenance -------------------------------------------------------------------

    @contextlib.contextmanager
    def day_lock(self, day: date) -> Iterator[None]:
        """The day's lock, which compaction and rewrites hold: ``events/.locks/D.lock`` (a lock
        file on a disk, a lease object on S3; ``storage/atomic.py:exclusive``)."""
        with exclusive(self.fs, f"{self.events_dir}/.locks/{day.isoformat()}.lock") as held:
            held.check()
            yield

    def compact(self, day: date) -> CompactResult:
        """Merge a day's part files into one zstd Parquet file, same events, readers undisturbed.

        The merged file becomes visible before the old ones go; a reader that lists in
        between sees every event twice and drops the copies, and a reader whose file
        vanished under it retries (``EventStore.query``). Two compactions of one day at once
        wait for each other (the day's lock, which a rewrite holds too, so a compaction never
        writes back what a purge just took out).
        """
        if not self.files(day):
            return CompactResult(day, 0, 0, 0)
        with self.day_lock(day):
            return self._compact(day)

    def rewrite(self, day: date, transform: Transform) -> RewriteResult:
        """The day as ``transform`` makes it, in one compacted file written before the old ones go."""
        if not self.files(day):
            return RewriteResult(day, 0, 0, False)
        with self.day_lock(day):
            before = rereading(lambda: self.files(day))
            merged = rereading(lambda: dedup_ordered(self.raw_units(before)).collect())
            changed = transform(merged)
            if changed is None:
                return RewriteResult(day, merged.height, merged.height, False)
            self._write_parquet(day, changed.to_arrow().cast(ARROW_SCHEMA), compacted=True)
            for old in before:
                with contextlib.suppress(FileNotFoundError):
                    self.fs.delete_file(old)
            with self._lock:
                self._index.pop(day, None)
            return RewriteResult(day, merged.height, changed.height, True)

    def _compact(self, day: date) -> CompactResult:

        def merge() -> tuple[list[str], pl.DataFrame, bool]:
            before = self.files(day)
            done = len(before) == 0 or (len(before) == 1 and self.is_compacted(before[0]))
            if done:
                return before, self.raw_units(before).select("event_id").collect(), done
            return before, dedup_ordered(self.raw_units(before)).collect(), done

        before, merged, done = rereading(merge)
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

"""One contract, five stores: in memory; Parquet on local disk (segment or Parquet appends); fsspec
memory; Parquet on a real S3-compatible server (moto's server mode, started by the tests)."""

from __future__ import annotations

import json
import uuid
from datetime import date, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storage.errors import StoreError
from storage.store import EventStore, InMemoryEventStore, ParquetEventStore
from tests.factories import DAY, T0, collected, corrected


@pytest.fixture(
    params=["memory", "parquet-local", "parquet-local-parquet-appends", "parquet-fsspec-memory", "parquet-s3"]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> EventStore:
    if request.param == "parquet-s3":
        return ParquetEventStore(
            request.getfixturevalue("s3_root"), endpoint_url=request.getfixturevalue("s3_server")
        )
    if request.param == "memory":
        return InMemoryEventStore()
    if request.param == "parquet-local":
        return ParquetEventStore(str(tmp_path / "root"))
    if request.param == "parquet-local-parquet-appends":
        return ParquetEventStore(str(tmp_path / "root"), append_format="parquet")
    return ParquetEventStore(f"memory://contract-{uuid.uuid4().hex}")


class TestEventStoreContract:
    def test_append_then_read_gives_the_same_events(self, store: EventStore) -> None:
        events = [collected(i) for i in range(10)]
        result = store.append(events)
        assert (result.written, result.skipped) == (10, 0)
        assert store.read() == events

    def test_rerun_appends_nothing_and_readers_see_each_id_once(self, store: EventStore) -> None:
        events = [collected(i) for i in range(5)]
        store.append(events)
        again = store.append([*events, collected(5)])
        assert (again.written, again.skipped) == (1, 5)
        ids = [e.event_id for e in store.read()]
        assert len(ids) == len(set(ids)) == 6

    def test_duplicates_inside_one_batch_are_written_once(self, store: EventStore) -> None:
        event = collected(1)
        assert store.append([event, event]).written == 1

    def test_days_are_partitions_and_scan_prunes_them(self, store: EventStore) -> None:
        days = [DAY + timedelta(days=k) for k in range(3)]
        store.append([collected(i, day=d) for i, d in enumerate(days)])
        assert store.days() == days
        one = store.query(lambda: store.scan([days[1]]))
        assert one["brief_date"].to_list() == [days[1]]
        assert store.query(lambda: store.scan([date(1999, 1, 1)])).height == 0

    def test_scan_schema_is_the_envelope(self, store: EventStore) -> None:
        store.append([collected(1)])
        schema = store.scan().collect_schema()
        assert list(schema) == [
            "event_id",
            "event_type",
            "schema_version",
            "occurred_at",
            "seq",
            "brief_date",
            "run_id",
            "subject_id",
            "source_event_ids",
            "produced_by",
            "policy_version",
            "payload",
        ]
        assert schema["occurred_at"] == pl.Datetime("us", "UTC")

    def test_empty_store_scans_to_an_empty_frame(self, store: EventStore) -> None:
        assert store.days() == []
        assert store.query(lambda: store.scan()).height == 0

    def test_as_of_shows_the_log_as_it_stood(self, store: EventStore) -> None:
        store.append([collected(1, at=T0), corrected(1, "title", "Fixed", at=T0 + timedelta(hours=2))])
        before = store.read(as_of=T0 + timedelta(hours=1))
        assert [e.event_type for e in before] == ["article.collected"]
        assert len(store.read()) == 2

    def test_filter_by_type(self, store: EventStore) -> None:
        store.append([collected(1), corrected(1, "title", "x")])
        assert [e.event_type for e in store.read(event_types=["article.corrected"])] == ["article.corrected"]

    def test_compaction_keeps_every_event_and_leaves_one_batch(self, store: EventStore) -> None:
        for i in range(4):
            store.append([collected(i)])
        before = store.read()
        result = store.compact(DAY)
        assert (result.files_before, result.files_after, result.events) == (4, 1, 4)
        assert store.read() == before
        assert len(store.units(DAY)) == 1
        assert store.append([collected(0)]).written == 0  # still known after compaction

    def test_a_rewrite_replaces_a_day_whole_and_keeps_the_other_ids(self, store: EventStore) -> None:
        for i in range(3):
            store.append([collected(i)])
        gone = collected(1).event_id
        kept = [e.event_id for e in store.read() if e.event_id != gone]
        assert not store.rewrite(DAY, lambda frame: None).changed  # nothing to change: nothing written
        assert len(store.units(DAY)) == 3
        result = store.rewrite(DAY, lambda frame: frame.filter(pl.col("event_id") != gone))
        assert (result.events_before, result.events_after, result.changed) == (3, 2, True)
        assert [e.event_id for e in store.read()] == kept and len(store.units(DAY)) == 1

    def test_compacted_days_read_in_event_order_without_copies(self, store: EventStore) -> None:
        later = DAY + timedelta(days=1)
        for i in range(5):  # newest first, over two days: file order is not event order
            store.append([collected(i, day=DAY if i % 2 else later, at=T0 + timedelta(seconds=10 - i))])
        before = {d: store.query(lambda d=d: store.scan(d)) for d in (None, (DAY,), (later,))}
        assert store.needs_compaction(DAY) and store.needs_compaction(later)
        store.compact_pending()
        assert not store.needs_compaction(DAY) and not store.needs_compaction(later)
        for days, frame in before.items():
            after = store.query(lambda days=days: store.scan(days))
            assert after.equals(frame) and after["occurred_at"].is_sorted()
        assert store.compact(DAY).files_after == 1  # nothing left to do

    def test_position_lists_batches_per_day(self, store: EventStore) -> None:
        store.append([collected(1)])
        store.append([collected(2)])
        position = store.position()
        assert list(position) == [DAY.isoformat()] and len(position[DAY.isoformat()]) == 2

    def test_append_refuses_what_is_not_an_event(self, store: EventStore) -> None:
        with pytest.raises(StoreError, match="Event objects"):
            store.append([{"event_type": "article.collected"}])  # type: ignore[list-item]
        assert store.days() == []


def test_appends_write_zstd_segments_that_compaction_turns_into_zstd_parquet(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path))
    events = [collected(1), corrected(1, "title", 'Fixed \u2028 "quoted" 中文')]
    store.append(events[:1])
    store.append(events[1:])
    day_dir = tmp_path / "events" / "date=2025-08-06"
    segments = sorted(day_dir.iterdir())
    assert [p.name.endswith(".jsonl.zst") and p.name.startswith("part-") for p in segments] == [True, True]
    lines = pa.CompressedInputStream(pa.OSFile(str(segments[1])), "zstd").read().splitlines()
    row = json.loads(lines[0])  # a standard zstd frame of JSON lines: `zstd -dc` reads it too
    assert row["event_id"] == events[1].event_id and json.loads(row["payload"]) == dict(events[1].payload)

    result = store.compact(DAY)
    (merged,) = day_dir.iterdir()
    assert (result.files_before, result.files_after) == (2, 1) and merged.suffix == ".parquet"
    assert pq.ParquetFile(merged).metadata.row_group(0).column(0).compression == "ZSTD"
    assert store.read() == events
    found = duckdb.sql(  # other engines read the compacted log as it is
        f"SELECT event_id, date FROM read_parquet('{tmp_path}/events/*/*.parquet', hive_partitioning = true)"
    ).fetchall()
    assert sorted(found) == sorted((e.event_id, DAY) for e in events)


def test_a_lone_segment_is_compacted_too(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path))
    store.append([collected(1)])
    assert store.compact(DAY).files_after == 1
    assert [p.suffix for p in (tmp_path / "events" / "date=2025-08-06").iterdir()] == [".parquet"]
    assert store.compact(DAY).files_before == 1  # already one Parquet file: nothing to do


def test_parquet_appends_write_zstd_parquet_at_once(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path), append_format="parquet")
    store.append([collected(1)])
    (path,) = (tmp_path / "events" / "date=2025-08-06").iterdir()
    assert path.name.startswith("part-") and path.suffix == ".parquet"
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"


def test_unknown_append_format_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="append_format 'csv' is not one of jsonl, parquet"):
        ParquetEventStore(str(tmp_path), append_format="csv")
    assert list(tmp_path.iterdir()) == []


def test_temporary_files_are_invisible_to_readers(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path))
    store.append([collected(1)])
    day_dir = tmp_path / "events" / "date=2025-08-06"
    (day_dir / ".part-half-written.parquet.abc.tmp").write_bytes(b"PAR1 garbage")
    assert len(store.read()) == 1
    assert store.remove_stale_temporaries(DAY, older_than_s=-1) == 1


def test_a_second_process_view_learns_other_writers_ids(tmp_path: Path) -> None:
    first, second = ParquetEventStore(str(tmp_path)), ParquetEventStore(str(tmp_path))
    first.append([collected(1)])
    assert second.append([collected(1)]).skipped == 1


def test_readers_drop_copies_two_racing_writers_left(tmp_path: Path) -> None:
    """Both writers checked before either wrote: the file holds a copy, readers do not see it."""
    a, b = ParquetEventStore(str(tmp_path)), ParquetEventStore(str(tmp_path))
    a._refresh(DAY), b._refresh(DAY)
    late, early = collected(1, at=T0 + timedelta(seconds=5)), collected(1, at=T0)
    a._write(DAY, [late])
    b._write(DAY, [early])
    seen = a.read()
    assert len(seen) == 1 and seen[0].occurred_at == T0  # the first in event order wins


def test_root_url_without_filesystem_is_a_clear_error() -> None:
    with pytest.raises(StoreError, match="no filesystem"):
        ParquetEventStore("nosuchscheme://bucket/path")

"""One contract, three stores: in memory, Parquet on local disk, Parquet on fsspec's memory filesystem."""

from __future__ import annotations

import uuid
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from storage.errors import StoreError
from storage.store import EventStore, InMemoryEventStore, ParquetEventStore, events_to_table
from tests.factories import DAY, T0, collected, corrected


@pytest.fixture(params=["memory", "parquet-local", "parquet-fsspec-memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> EventStore:
    if request.param == "memory":
        return InMemoryEventStore()
    if request.param == "parquet-local":
        return ParquetEventStore(str(tmp_path / "root"))
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

    def test_position_lists_batches_per_day(self, store: EventStore) -> None:
        store.append([collected(1)])
        store.append([collected(2)])
        position = store.position()
        assert list(position) == [DAY.isoformat()] and len(position[DAY.isoformat()]) == 2

    def test_append_refuses_what_is_not_an_event(self, store: EventStore) -> None:
        with pytest.raises(StoreError, match="Event objects"):
            store.append([{"event_type": "article.collected"}])  # type: ignore[list-item]
        assert store.days() == []


def test_parquet_layout_is_hive_style_zstd(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path))
    store.append([collected(1)])
    files = list((tmp_path / "events" / "date=2025-08-06").iterdir())
    assert len(files) == 1 and files[0].name.startswith("part-") and files[0].suffix == ".parquet"
    meta = pq.ParquetFile(files[0]).metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"


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
    a._write(DAY, events_to_table([late]), [late.event_id])
    b._write(DAY, events_to_table([early]), [early.event_id])
    seen = a.read()
    assert len(seen) == 1 and seen[0].occurred_at == T0  # the first in event order wins


def test_root_url_without_filesystem_is_a_clear_error() -> None:
    with pytest.raises(StoreError, match="no filesystem"):
        ParquetEventStore("nosuchscheme://bucket/path")

"""A log with events not yet written (``storage/store/pending.py``): what an act's one composition
reads and appends to, written to the store only when it is committed."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from storage.store import ParquetEventStore
from storage.store.pending import WithPending
from tests.factories import DAY, collected


def ids(events) -> list[str]:
    return [e.event_id for e in events]


def test_pending_events_read_as_the_log_would_and_reach_the_store_only_when_committed(
    tmp_path: Path,
) -> None:
    store = ParquetEventStore(str(tmp_path / "store"))
    store.append([collected(1)])
    act, made = [collected(2)], [collected(3), collected(4, day=DAY + timedelta(days=1))]
    log = WithPending(store, act)
    assert log.append(made).written == 2
    assert ids(log.read()) == ids([collected(1), *act, made[0], made[1]])
    assert log.days() == [DAY, DAY + timedelta(days=1)] and store.days() == [DAY]
    assert ids(store.read()) == ids([collected(1)])  # nothing written yet

    assert log.commit() == 3
    assert ids(store.read()) == ids(log.read()) == ids([collected(1), *act, *made])
    assert len(store.units(DAY)) == 3  # the store's batch, the act's, the composition's


def test_what_the_log_holds_already_is_kept_once(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path / "store"))
    store.append([collected(1)])
    log = WithPending(store, [collected(2)])
    again = log.append([collected(1), collected(2), collected(3)])
    assert (again.written, again.skipped) == (1, 2)
    assert log.commit() == 2
    assert ids(store.read()) == ids([collected(1), collected(2), collected(3)])
    assert log.commit() == 0  # nothing pending after a commit

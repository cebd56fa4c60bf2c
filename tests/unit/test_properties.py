"""Invariants over random event sequences (hypothesis)."""

from __future__ import annotations

import itertools
import uuid
from datetime import timedelta
from pathlib import Path
from unittest.mock import patch

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage import snapshots
from storage.events import Event
from storage.projections import PROJECTIONS, materialize
from storage.snapshots import refresh, take_snapshot
from storage.store import InMemoryEventStore, ParquetEventStore
from tests.factories import DAY, T0, collected, corrected, run_event

FIELDS = ["title", "summary", "category", "language"]


@st.composite
def event_sequences(draw: st.DrawFn) -> list[Event]:
    n = draw(st.integers(min_value=1, max_value=25))
    events: list[Event] = []
    for _ in range(n):
        kind = draw(st.sampled_from(["collected", "corrected", "started", "finished", "failed"]))
        article = draw(st.integers(0, 5))
        day = DAY + timedelta(days=draw(st.integers(0, 2)))
        at = T0 + timedelta(seconds=draw(st.integers(0, 50)))
        seq = draw(st.integers(0, 3))
        run = draw(st.sampled_from(["r1", "r2", "r3"]))
        if kind == "collected":
            title = draw(st.sampled_from(["A", "B", "C"]))
            events.append(collected(article, day=day, at=at, seq=seq, title=title, run_id=run))
        elif kind == "corrected":
            field = draw(st.sampled_from(FIELDS))
            events.append(
                corrected(article, field, draw(st.sampled_from(["x", "y", None])), day=day, at=at, seq=seq)
            )
        else:
            events.append(run_event(f"run.{kind}", run, day=day, at=at))
    return events


def _batches(events: list[Event], cuts: list[int]) -> list[list[Event]]:
    points = sorted({0, len(events), *[c % (len(events) + 1) for c in cuts]})
    return [events[a:b] for a, b in itertools.pairwise(points) if b > a]


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(event_sequences())
def test_folding_twice_gives_the_same_state(events: list[Event]) -> None:
    store = InMemoryEventStore()
    store.append(events)
    for name in PROJECTIONS:
        assert materialize(store, name).equals(materialize(store, name))


@SETTINGS
@given(event_sequences(), st.lists(st.integers(0, 30), max_size=4))
def test_order_of_appends_does_not_change_projections(events: list[Event], cuts: list[int]) -> None:
    events = list({e.event_id: e for e in events}.values())  # the first writer of an id wins; keep one
    forward, backward = InMemoryEventStore(), InMemoryEventStore()
    forward.append(events)
    for batch in reversed(_batches(events, cuts)):
        backward.append(list(reversed(batch)))
    for name in PROJECTIONS:
        assert materialize(forward, name).equals(materialize(backward, name)), name


@SETTINGS
@given(event_sequences(), event_sequences(), st.booleans(), st.booleans())
def test_snapshot_then_refresh_equals_a_full_fold(
    first: list[Event], then: list[Event], compact_between: bool, replay_copies: bool
) -> None:
    store = ParquetEventStore(f"memory://props-{uuid.uuid4().hex}")
    store.append(first)
    snapshots = {name: take_snapshot(store, name) for name in PROJECTIONS}
    store.append(then)
    if replay_copies:  # another writer that did not know the first events writes them again
        other = ParquetEventStore(store.root, filesystem=store.fs)
        other.base, other.events_dir = store.base, store.events_dir
        for day in {e.brief_date for e in first}:
            other._index[day] = type(store._index[day])()
            other._write(day, [e for e in first if e.brief_date == day])
    if compact_between:
        for day in store.days():
            store.compact(day)
    for name, snap in snapshots.items():
        incremental = refresh(store, snap).view()
        full = materialize(store, name)
        assert incremental.equals(full), name


@SETTINGS
@given(event_sequences())
def test_parquet_round_trip(events: list[Event]) -> None:
    store = ParquetEventStore(f"memory://rt-{uuid.uuid4().hex}")
    store.append(events)
    unique = {e.event_id: e for e in reversed(events)}  # the first of each id in list order...
    read = store.read()
    assert {e.event_id for e in read} == set(unique)
    for event in read:
        copies = [e for e in events if e.event_id == event.event_id]
        assert event in copies


@SETTINGS
@given(event_sequences())
def test_compaction_changes_no_event(events: list[Event]) -> None:
    store = ParquetEventStore(f"memory://cp-{uuid.uuid4().hex}")
    for event in events:
        store.append([event])
    before = store.query(lambda: store.scan())
    for day in store.days():
        store.compact(day)
    after = store.query(lambda: store.scan())
    assert before.equals(after)
    assert after["event_id"].n_unique() == after.height
    assert pl.Series(after["event_id"]).is_unique().all()


def test_many_successive_refreshes_stay_equal_to_a_full_fold() -> None:
    store = ParquetEventStore(f"memory://many-{uuid.uuid4().hex}")
    store.append([collected(i) for i in range(5)])
    snap = take_snapshot(store, "articles")
    for k in range(20):  # more refreshes than the snapshot keeps separate key runs
        store.append(
            [collected(100 + k), corrected(k % 5, "title", f"fix {k}", at=T0 + timedelta(hours=2, seconds=k))]
        )
        snap = refresh(store, snap)
    store.append([collected(3)])  # an id already folded: dropped, not counted twice
    snap = refresh(store, snap)
    assert len(snap.folded) <= 17
    assert snap.view().equals(materialize(store, "articles"))


@SETTINGS
@given(st.lists(event_sequences(), min_size=2, max_size=5), st.booleans())
def test_every_refresh_in_a_row_equals_a_full_fold(batches: list[list[Event]], rebase_often: bool) -> None:
    """Refreshes stack: later events touch rows an earlier refresh already replaced, and rebases."""
    store = ParquetEventStore(f"memory://row-{uuid.uuid4().hex}")
    store.append(batches[0])
    snaps = {name: take_snapshot(store, name) for name in PROJECTIONS}
    with patch.object(snapshots, "REBASE_ROWS", 0 if rebase_often else snapshots.REBASE_ROWS):
        for batch in batches[1:]:
            store.append(batch)
            for name in PROJECTIONS:
                snaps[name] = refresh(store, snaps[name])
                assert snaps[name].view().equals(materialize(store, name)), name


def test_a_refreshed_snapshot_refreshes_again_to_the_full_fold(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path))
    store.append([collected(i) for i in range(6)])
    snap = take_snapshot(store, "articles")
    store.append([corrected(2, "title", "Fixed", at=T0 + timedelta(hours=1)), collected(7)])
    refreshed = refresh(store, snap)
    assert refreshed.view().equals(materialize(store, "articles"))
    store.append([corrected(7, "summary", "Better", at=T0 + timedelta(hours=2))])
    assert refresh(store, refreshed).view().equals(materialize(store, "articles"))

"""A local store that keeps its decoded files in memory (``keep_decoded``, for the desk) reads as one
that does not: after appends, compaction and a rewrite, and when its bound has pushed files out."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import polars as pl

from storage.store import ParquetEventStore
from tests.factories import DAY, collected


def frames(store: ParquetEventStore) -> pl.DataFrame:
    return store.query(lambda: store.scan()).sort("event_id")


def test_a_store_keeping_its_files_decoded_reads_as_one_that_does_not(tmp_path: Path) -> None:
    days = [DAY, DAY + timedelta(days=1)]
    plain = ParquetEventStore(str(tmp_path / "root"))
    kept = ParquetEventStore(str(tmp_path / "root"))
    assert kept.keep_decoded(64 * 2**20)
    cache = kept._decoded
    assert cache is not None
    plain.append([collected(i, day=days[i % 2]) for i in range(6)])
    assert frames(kept).equals(frames(plain)) and len(cache) == 2  # one file a day, each decoded once
    plain.append([collected(i, day=DAY) for i in range(6, 9)])  # a new file: read as it appears
    assert frames(kept).equals(frames(plain)) and frames(kept).height == 9 and len(cache) == 3
    old = set(plain.units(DAY))
    plain.compact(DAY)  # the day's two files become one: the old ones leave memory as they leave the disk
    assert frames(kept).equals(frames(plain))
    assert not any(p in cache for p in old) and all(p in cache for p in plain.units(DAY))
    plain.rewrite(DAY, lambda frame: frame.filter(pl.col("subject_id") != collected(0, day=DAY).subject_id))
    assert (
        frames(kept).equals(frames(plain)) and frames(kept).height == 8
    )  # a takedown is not read from memory


def test_the_bound_pushes_the_least_recently_read_files_out_and_reading_stays_right(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path / "root"))
    days = [DAY + timedelta(days=k) for k in range(5)]
    store.append([collected(i, day=d) for i, d in enumerate(days)])
    plain = frames(ParquetEventStore(str(tmp_path / "root")))
    store.keep_decoded(1)  # room for one file
    assert frames(store).equals(plain)
    assert store._decoded is not None and len(store._decoded) == 1


def test_an_object_store_does_not_keep_its_files_decoded() -> None:
    import uuid

    store = ParquetEventStore(f"memory://decoded-{uuid.uuid4().hex}")
    assert not store.keep_decoded(64 * 2**20) and store._decoded is None


def test_the_days_events_are_merged_once_per_set_of_files_and_filtered_as_a_plain_store_filters(
    tmp_path: Path,
) -> None:
    days = [DAY, DAY + timedelta(days=1)]
    plain = ParquetEventStore(str(tmp_path / "root"))
    kept = ParquetEventStore(str(tmp_path / "root"))
    kept.keep_decoded(64 * 2**20)
    cache = kept._decoded
    assert cache is not None
    plain.append([collected(i, day=days[i % 2]) for i in range(6)])
    plain.append([collected(i, day=DAY) for i in range(3, 8)])  # a second file of the first day
    assert frames(kept).equals(frames(plain))
    merged = dict(cache._merged)
    assert (
        frames(kept).equals(frames(plain)) and dict(cache._merged) == merged
    )  # the same frames, not merged again
    until = plain.read()[2].occurred_at
    for asked in (
        {"event_types": ["article.collected"]},
        {"event_types": ["feed.fetched"]},
        {"as_of": until},
    ):
        got = kept.query(lambda: kept.scan(**asked))  # noqa: B023
        assert got.equals(plain.query(lambda: plain.scan(**asked))), asked  # noqa: B023
    plain.append([collected(9, day=DAY)])  # a new file: a new set, merged when first read
    assert frames(kept).equals(frames(plain)) and len(cache._merged) == len(merged) + 1


def test_a_derived_frame_is_built_once_per_state_of_the_log_and_reads_as_a_plain_store_builds_it(
    tmp_path: Path,
) -> None:
    from storage.projections import project
    from storage.projections.articles import ArticlesProjection

    plain = ParquetEventStore(str(tmp_path / "root"))
    kept = ParquetEventStore(str(tmp_path / "root"))
    kept.keep_decoded(64 * 2**20)
    built: list[int] = []

    def articles(events: pl.LazyFrame) -> pl.LazyFrame:
        built.append(1)
        return project(ArticlesProjection(), events)

    def both() -> tuple[pl.DataFrame, pl.DataFrame]:
        kinds = ArticlesProjection.event_types
        return kept.derived("articles", kinds, articles), plain.derived("articles", kinds, articles)

    plain.append([collected(i, day=DAY + timedelta(days=i % 2)) for i in range(4)])
    first, expected = both()
    assert first.sort("article_id").equals(expected.sort("article_id")) and first.height == 4
    assert len(built) == 2  # once for each store
    again, _ = both()
    assert again is first and len(built) == 3  # the plain store builds it again; the kept one does not
    plain.append([collected(7, day=DAY)])  # a new file: built again, with the new article
    fresh, expected = both()
    assert fresh.height == 5 and fresh.sort("article_id").equals(expected.sort("article_id"))


def test_a_store_that_keeps_nothing_builds_a_derived_frame_from_the_events_the_reader_needs(
    tmp_path: Path,
) -> None:
    from storage.projections import project
    from storage.projections.articles import ArticlesProjection

    store = ParquetEventStore(str(tmp_path / "root"))
    store.append([collected(i) for i in range(4)])
    [wanted] = [e.subject_id for e in store.read()][:1]
    only = pl.col("subject_id") == wanted
    got = store.derived(
        "articles", ArticlesProjection.event_types, lambda e: project(ArticlesProjection(), e), only
    )
    assert got["article_id"].to_list() == [wanted]
    store.keep_decoded(64 * 2**20)  # kept: every article, for every reader after
    kept = store.derived(
        "articles", ArticlesProjection.event_types, lambda e: project(ArticlesProjection(), e), only
    )
    assert kept.height == 4 and kept.filter(pl.col("article_id") == wanted).equals(got)

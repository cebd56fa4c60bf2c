from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import polars as pl

from storage.projections import get_projection, materialize, project
from storage.store import EventStore, InMemoryEventStore, ParquetEventStore
from tests.factories import DAY, T0, collected, corrected, run_event


def _articles(store: EventStore, **kw: object) -> pl.DataFrame:
    return materialize(store, "articles", **kw)  # type: ignore[arg-type]


def test_corrections_apply_in_event_order_field_by_field() -> None:
    store = InMemoryEventStore()
    store.append(
        [
            collected(1, title="Original", at=T0),
            corrected(1, "title", "First fix", at=T0 + timedelta(minutes=1)),
            corrected(1, "title", "Second fix", at=T0 + timedelta(minutes=2)),
            corrected(1, "category", "research", at=T0 + timedelta(minutes=3)),
        ]
    )
    row = _articles(store).row(0, named=True)
    assert row["title"] == "Second fix"
    assert row["category"] == "research"
    assert row["corrections"] == 2  # latest per field: title, category


def test_a_recollection_after_a_correction_wins() -> None:
    store = InMemoryEventStore()
    store.append(
        [
            collected(1, title="Original", at=T0),
            corrected(1, "title", "Fixed", at=T0 + timedelta(minutes=1)),
            collected(1, title="Publisher updated it", at=T0 + timedelta(minutes=2)),
        ]
    )
    row = _articles(store).row(0, named=True)
    assert row["title"] == "Publisher updated it"
    assert row["collected_events"] == 2


def test_as_of_time_travel() -> None:
    store = InMemoryEventStore()
    store.append(
        [collected(1, title="Original", at=T0), corrected(1, "title", "Fixed", at=T0 + timedelta(hours=1))]
    )
    assert _articles(store, as_of=T0 + timedelta(minutes=5))["title"].to_list() == ["Original"]
    assert _articles(store)["title"].to_list() == ["Fixed"]
    assert _articles(store, as_of=T0 - timedelta(seconds=1)).height == 0


def test_published_at_is_utc_datetime() -> None:
    store = InMemoryEventStore()
    store.append([collected(1)])
    frame = _articles(store)
    assert frame.schema["published_at"] == pl.Datetime("us", "UTC")
    assert frame["published_at"][0].isoformat() == "2025-08-06T09:30:00+00:00"


def test_seen_keeps_the_first_day_a_url_or_hash_appeared() -> None:
    store = InMemoryEventStore()
    store.append(
        [
            collected(1, url="https://a.example/x", day=DAY, at=T0),
            collected(2, url="https://a.example/x", day=DAY + timedelta(days=1), at=T0 + timedelta(days=1)),
        ]
    )
    seen = materialize(store, "seen").filter(pl.col("kind") == "url")
    row = seen.row(0, named=True)
    assert seen.height == 1
    assert (row["first_brief_date"], row["last_brief_date"]) == (DAY, DAY + timedelta(days=1))
    assert row["article_id"] == "art-1"


def test_runs_status_counts_and_errors() -> None:
    store = InMemoryEventStore()
    store.append(
        [
            run_event("run.started", "ok", at=T0),
            collected(1, run_id="ok", at=T0 + timedelta(seconds=1)),
            run_event("run.finished", "ok", at=T0 + timedelta(seconds=9), step_seconds={"collect": 1.5}),
            run_event("run.started", "bad", at=T0 + timedelta(minutes=1)),
            run_event("run.failed", "bad", at=T0 + timedelta(minutes=2), message="feed techcrunch: HTTP 500"),
        ]
    )
    runs = {r["run_id"]: r for r in materialize(store, "runs").iter_rows(named=True)}
    assert runs["ok"]["status"] == "completed" and runs["ok"]["flow"] == "daily-brief"
    assert runs["ok"]["duration_s"] == 9.0 and runs["ok"]["events"] == 3
    assert {c["event_type"]: c["n"] for c in runs["ok"]["counts"]}["article.collected"] == 1
    assert runs["bad"]["status"] == "failed" and runs["bad"]["error"] == "feed techcrunch: HTTP 500"


def test_a_commands_act_is_recorded_and_a_flow_run_without_its_life_unknown() -> None:
    """An answer or a mark (run id ``review-…``) writes its events at once: it is ``recorded``, not
    ``unknown``, and named by its id (``review``); a flow run (a UUID) whose start and end are in no day folded stays ``unknown``."""
    flow_run = "3ccf926e-2ddd-4e29-8e74-22a6af588328"
    store = InMemoryEventStore()
    store.append(
        [
            run_event("run.started", "ok", at=T0),
            corrected(1, "relevance", "off-topic"),
            collected(2, run_id=flow_run, at=T0 + timedelta(seconds=2)),
        ]
    )
    runs = {r["run_id"]: r for r in materialize(store, "runs").iter_rows(named=True)}
    assert runs["review"]["status"] == "recorded" and runs["review"]["flow"] == "review"
    assert runs[flow_run]["status"] == "unknown"
    assert runs["ok"]["status"] == "running"


def test_a_cancelled_run_is_ended_cancelled_not_running() -> None:
    from tasks.steps.liveness import open_runs

    store = InMemoryEventStore()
    store.append(
        [
            run_event("run.started", "stopped", at=T0),
            run_event("run.cancelled", "stopped", at=T0 + timedelta(seconds=3), message="interrupt"),
            run_event("run.started", "going", at=T0 + timedelta(minutes=1)),
        ]
    )
    runs = {r["run_id"]: r for r in materialize(store, "runs").iter_rows(named=True)}
    assert runs["stopped"]["status"] == "cancelled" and runs["stopped"]["error"] == "interrupt"
    assert runs["going"]["status"] == "running"
    # the check of open runs (which records a vanished process crashed) looks only at the one still going
    assert [r.run_id for r in open_runs(store, [DAY])] == ["going"]  # type: ignore[arg-type]


def test_projection_schemas_are_stable() -> None:
    store = InMemoryEventStore()
    store.append([collected(1), run_event("run.started", "r")])
    assert list(materialize(store, "articles").schema) == [
        "article_id",
        "source",
        "url",
        "canonical_url",
        "title",
        "summary",
        "published_at",
        "language",
        "content_hash",
        "tags",
        "kind",
        "outlet",
        "discussion_url",
        "points",
        "comments",
        "stars",
        "stars_today",
        "repo_language",
        "upvotes",
        "digest_position",
        "category",
        "relevance",
        "first_brief_date",
        "first_collected_at",
        "updated_at",
        "collected_events",
        "corrections",
    ]
    assert list(materialize(store, "seen").schema) == [
        "kind",
        "key",
        "article_id",
        "first_brief_date",
        "last_brief_date",
        "first_seen_at",
    ]


def test_the_articles_fold_of_compacted_days_read_out_of_event_order_is_the_fold_in_event_order(
    tmp_path: Path,
) -> None:
    """``materialize`` reads compacted days for the ``articles`` fold without sorting them into
    event order (``any_order``): the days here hold events in another order than time (an earlier
    date run after a later one, as a backfill does), and the fold is the one of the sorted events."""
    store = ParquetEventStore(str(tmp_path / "store"))
    day1, day2 = DAY, DAY + timedelta(days=1)
    store.append(
        [
            collected(1, day=day2, title="Second day's text", at=T0 + timedelta(hours=1)),
            collected(2, day=day2, title="Only on the second day", at=T0 + timedelta(hours=2)),
            collected(1, day=day1, title="First day's text", at=T0 + timedelta(hours=3)),
            corrected(2, "title", "Fixed on the first day", day=day1, at=T0 + timedelta(hours=4)),
            collected(3, day=day1, title="Only on the first day", at=T0 + timedelta(hours=5)),
        ]
    )
    store.compact_pending()
    unordered = store.query(lambda: store.scan(ordered=False))["event_id"].to_list()
    ordered = store.query(lambda: store.scan())["event_id"].to_list()
    assert unordered != ordered and sorted(unordered) == sorted(ordered)  # the read is out of order
    projection = get_projection("articles")
    in_order = store.query(lambda: project(projection, store.scan(event_types=list(projection.event_types))))
    folded = _articles(store)
    assert folded.equals(in_order)
    assert folded["title"].to_list() == [
        "Second day's text",
        "Fixed on the first day",
        "Only on the first day",
    ]
    assert folded["collected_events"].to_list() == [2, 1, 1]

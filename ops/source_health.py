"""Each source's health, from the log: its last good fetch, new articles a day over the last days
(the desk draws them as a small SVG bar chart: ``flows/desk/chart.py``), its failures and their
reasons, kind and language.

Three scans, each filtered in the scan: every ``feed.fetched`` (the last good fetch may be older
than the window), the ``article.collected`` of the window and the days before it (an article is
new on the first day it was collected: a feed serving its archive every day is not busy), and the
window's ``feed.failed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import polars as pl

from storage.store import ParquetEventStore
from storage.typed import payload_field
from tasks.settings import Settings

WINDOW_DAYS = 14
PAD_DAYS = 10  # days before the window read to tell a new article from one a feed serves again


@dataclass
class SourceHealth:
    name: str
    kind: str
    language: str
    configured: bool
    last_good: datetime | None = None
    last_good_day: date | None = None
    last_items: int | None = None
    per_day: list[tuple[date, int]] = field(default_factory=list)  # new articles of each day of the window
    new_articles: int = 0
    failures: list[dict] = field(default_factory=list)
    failed_days: int = 0

    @property
    def quiet(self) -> bool:
        """No new article over the window's last three days."""
        return sum(n for _, n in self.per_day[-3:]) == 0


def _source(event_type: str) -> pl.Expr:
    return payload_field(event_type, "source").alias("source")


def source_health(store: ParquetEventStore, settings: Settings, end: date) -> list[SourceHealth]:
    window = [end - timedelta(days=k) for k in range(WINDOW_DAYS - 1, -1, -1)]
    padded = [window[0] - timedelta(days=k) for k in range(PAD_DAYS, 0, -1)] + window
    fetched = store.query(
        lambda: (
            store.scan(event_types=["feed.fetched"])
            .filter(pl.col("brief_date") <= end)
            .select(
                _source("feed.fetched"),
                "brief_date",
                "occurred_at",
                payload_field("feed.fetched", "items").cast(pl.Int64).alias("items"),
            )
            .sort("occurred_at")
            .group_by("source")
            .agg(pl.col("occurred_at").last(), pl.col("brief_date").last(), pl.col("items").last())
        )
    )
    firsts = store.query(
        lambda: (
            store.scan(padded, event_types=["article.collected"])
            .group_by("subject_id")
            .agg(pl.col("payload").first(), pl.col("brief_date").min())
            .filter(pl.col("brief_date") >= window[0])  # new in the window: only their source is read
            .select(_source("article.collected"), "brief_date")
            .group_by("source", "brief_date")
            .len()
        )
    )
    failed = store.query(
        lambda: (
            store.scan(window, event_types=["feed.failed"])
            .select(
                _source("feed.failed"),
                "brief_date",
                "occurred_at",
                "event_id",
                payload_field("feed.failed", "error").alias("error"),
                payload_field("feed.failed", "message").alias("message"),
                payload_field("feed.failed", "attempts").cast(pl.Int64).alias("attempts"),
            )
            .sort("occurred_at", descending=True)
        )
    )
    configured = {s.name: s for s in settings.sources}
    names = list(configured) + sorted(
        (set(fetched["source"]) | set(failed["source"]) | set(firsts["source"])) - set(configured) - {None}
    )
    counts = {(r["source"], r["brief_date"]): r["len"] for r in firsts.iter_rows(named=True)}
    last = {r["source"]: r for r in fetched.iter_rows(named=True)}
    out = []
    for name in names:
        s = configured.get(name)
        health = SourceHealth(
            name,
            s.kind if s else "?",
            (s.language or "per item") if s else "?",
            s is not None,
        )
        if name in last:
            health.last_good = last[name]["occurred_at"]
            health.last_good_day = last[name]["brief_date"]
            health.last_items = last[name]["items"]
        health.per_day = [(d, counts.get((name, d), 0)) for d in window]
        health.new_articles = sum(n for _, n in health.per_day)
        mine = failed.filter(pl.col("source") == name)
        health.failures = list(mine.head(5).iter_rows(named=True))
        health.failed_days = mine["brief_date"].n_unique()
        out.append(health)
    return out

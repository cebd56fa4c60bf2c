"""Per-day run metrics, from the ``runs`` projection: the day's items and duplicates are the day's
own facts (whichever run stored them: a fact is stored once, so a rerun stores none of them again),
its versions every version of its brief published (by a run, an answer, a mark or a correction);
its status, stories, timings and error are those of its last run (``last_run_id``).

``collected`` counts the articles first collected for the day; ``duplicates`` the copies among
the day's articles (the same link or the same text as another, ``same_url`` / ``same_content``);
``earlier`` the articles its feeds held again that were news or briefed on an earlier day
(``seen_before`` / ``briefed_before``): those are not the day's items, so a day can have 0 items
and some ``earlier``, never more duplicates than its articles."""

from __future__ import annotations

from datetime import date

import polars as pl

from storage.projections import materialize
from storage.store import EventStore
from storage.typed import payload_field

SAME_DAY = ("same_url", "same_content")  # a copy of another of the day's articles; else an earlier day's
WANTED = (
    "article.collected",
    "feed.failed",
    "article.duplicate_detected",
    "story.clustered",
    "llm.called",
)


def daily_stats(store: EventStore, start: date | None = None, end: date | None = None) -> pl.DataFrame:
    days = [d for d in store.days() if (start is None or d >= start) and (end is None or d <= end)]
    runs = materialize(store, "runs", days=days).filter(pl.col("flow") == "daily-brief")
    if runs.height == 0:
        return pl.DataFrame(
            schema={"date": pl.Date, "runs": pl.UInt32, "failed": pl.UInt32, "last_status": pl.String}
        )
    counts = runs.select(
        "run_id",
        pl.col("step_seconds")
        .str.json_decode(pl.Struct({s: pl.Float64 for s in ("collect", "dedup", "analyze", "publish")}))
        .alias("steps"),
        pl.col("counts").list.eval(pl.element().struct.field("n")).alias("_n"),
        pl.col("counts").list.eval(pl.element().struct.field("event_type")).alias("_t"),
    )
    joined = (
        runs.join(counted_per_type(counts).select("run_id", *WANTED), on="run_id", how="left")
        .join(model_use(store, days), on="run_id", how="left")
        .join(counts.select("run_id", "steps"), on="run_id", how="left")
        .join(off_topic(store, days), on="run_id", how="left")
    )
    counted = ("collected", "duplicates", "earlier", "versions_published")
    return (
        per_day(joined)
        .join(day_facts(store, days), on="date", how="left")
        .join(day_versions(store, days), on="date", how="left")
        .select(*(c if c not in counted else pl.col(c).fill_null(0) for c in COLUMNS))
    )


def day_versions(store: EventStore, days: list[date]) -> pl.DataFrame:
    """Each day's published versions of its brief, whoever published them (a run or an editor's act)."""
    versions = materialize(store, "briefs", days=days)
    return (
        versions.group_by("date")
        .agg(pl.col("version").n_unique().cast(pl.UInt32).alias("versions_published"))
        .select(pl.col("date").str.to_date(), "versions_published")
    )


def counted_per_type(counts: pl.DataFrame) -> pl.DataFrame:
    """Each run's events counted by type, a column per type (those of ``WANTED`` at least, 0 when none)."""
    per_type = counts.explode("_n", "_t").pivot(
        on="_t", index="run_id", values="_n", aggregate_function="sum"
    )
    for column in WANTED:
        if column not in per_type.columns:
            per_type = per_type.with_columns(pl.lit(0, dtype=pl.UInt32).alias(column))
    return per_type


def off_topic(store: EventStore, days: list[date]) -> pl.DataFrame:
    """Each run's stories scored off-topic."""
    return (
        store.query(
            lambda: store.scan(days, event_types=["story.scored"]).select(
                "run_id", payload_field("story.scored", "outcome").alias("outcome")
            )
        )
        .group_by("run_id")
        .agg((pl.col("outcome") == "off-topic").sum().cast(pl.UInt32).alias("off_topic"))
    )


def day_facts(store: EventStore, days: list[date]) -> pl.DataFrame:
    """Each day's articles, the copies among them, and the articles of earlier days its feeds held
    again, each counted once however many runs found them."""
    facts = store.query(
        lambda: store.scan(days, event_types=["article.collected", "article.duplicate_detected"]).select(
            "brief_date",
            "event_type",
            "subject_id",
            payload_field("article.duplicate_detected", "reason").alias("reason"),
        )
    )
    duplicate = pl.col("event_type") == "article.duplicate_detected"
    return (
        facts.group_by("brief_date")
        .agg(
            pl.col("subject_id")
            .filter(pl.col("event_type") == "article.collected")
            .n_unique()
            .cast(pl.UInt32)
            .alias("collected"),
            pl.col("subject_id")
            .filter(duplicate & pl.col("reason").is_in(SAME_DAY))
            .n_unique()
            .cast(pl.UInt32)
            .alias("duplicates"),
            pl.col("subject_id")
            .filter(duplicate & ~pl.col("reason").is_in(SAME_DAY))
            .n_unique()
            .cast(pl.UInt32)
            .alias("earlier"),
        )
        .rename({"brief_date": "date"})
    )


def model_use(store: EventStore, days: list[date]) -> pl.DataFrame:
    """Each run's language model tokens and cost."""
    return (
        store.query(
            lambda: store.scan(days, event_types=["llm.called"]).select(
                "run_id",
                payload_field("llm.called", "tokens_in").cast(pl.Int64).alias("tin"),
                payload_field("llm.called", "tokens_out").cast(pl.Int64).alias("tout"),
                payload_field("llm.called", "cost").cast(pl.Float64).alias("cost"),
            )
        )
        .group_by("run_id")
        .agg(
            (pl.col("tin") + pl.col("tout")).sum().alias("llm_tokens"), pl.col("cost").sum().alias("llm_cost")
        )
    )


COLUMNS = (
    "date",
    "runs",
    "failed",
    "last_status",
    "collected",
    "feeds_failed",
    "duplicates",
    "earlier",
    "stories",
    "off_topic",
    "versions_published",
    "llm_calls",
    "llm_tokens",
    "llm_cost",
    "last_run_s",
    "dedup_s",
    "last_run_id",
    "last_error",
)


def _of_last_clustered(column: str) -> pl.Expr:
    """``column``'s value in the day's last run that clustered its stories (0 when none did)."""
    return pl.col(column).fill_null(0).filter(pl.col("story.clustered").is_not_null()).last().fill_null(0)


def per_day(joined: pl.DataFrame) -> pl.DataFrame:
    """One row a day: its runs and failures, and the figures of its last run (its id, and its error:
    an earlier run's error that a later run got past is in ``brief replay --projection runs``); its
    stories and off-topic ones of its last run that clustered."""
    return (
        joined.sort("started_at")
        .group_by("brief_date", maintain_order=True)
        .agg(
            pl.len().alias("runs"),
            pl.col("status").is_in(["failed", "crashed", "withheld"]).sum().alias("failed"),
            pl.col("status").last().alias("last_status"),
            pl.col("feed.failed").fill_null(0).last().alias("feeds_failed"),
            # of the day's last run that clustered: a run stopped before it (Ctrl-C after collect)
            # leaves the day's stories as they were, not 0
            _of_last_clustered("story.clustered").alias("stories"),
            _of_last_clustered("off_topic").alias("off_topic"),
            pl.col("llm.called").fill_null(0).last().alias("llm_calls"),
            pl.col("llm_tokens").fill_null(0).last().alias("llm_tokens"),
            pl.col("llm_cost").fill_null(0.0).last().round(4).alias("llm_cost"),
            pl.col("duration_s").last().round(2).alias("last_run_s"),
            pl.col("steps").struct.field("dedup").last().round(2).alias("dedup_s"),
            pl.col("run_id").last().alias("last_run_id"),
            pl.col("error").last().alias("last_error"),
        )
        .rename({"brief_date": "date"})
        .sort("date")
    )

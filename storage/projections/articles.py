"""``articles``: the latest value of every field of every collected article.

A re-collected article with new content and a human correction both change a field; the
one latest in event order wins, field by field. Version-1 ``article.collected`` rows are
upcast here as ``storage.payloads.upcast_article_collected_v1_v2`` does for single events.
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from storage.projections.base import ORDER_COLUMNS, State, latest_by, parse_utc, payload_struct, with_order

# what a source's kind says of an article (``article.collected`` v4); none for news
KIND_FIELDS = ("kind", "outlet", "discussion_url")
_EVIDENCE: dict[str, pl.DataType | type[pl.DataType]] = {
    "points": pl.Int64,
    "comments": pl.Int64,
    "stars": pl.Int64,
    "stars_today": pl.Int64,
    "repo_language": pl.String,
    "upvotes": pl.Int64,
    "digest_position": pl.Int64,
}
EVIDENCE_FIELDS = tuple(_EVIDENCE)
FIELDS = (
    "source",
    "url",
    "canonical_url",
    "title",
    "summary",
    "published_at",
    "language",
    "content_hash",
    "tags",
    *KIND_FIELDS,
    *EVIDENCE_FIELDS,
)
CORRECTABLE = ("title", "summary", "published_at", "language", "source", "category", "relevance")

_COLLECTED: dict[str, pl.DataType | type[pl.DataType]] = {
    "article_id": pl.String,
    "source": pl.String,
    "url": pl.String,
    "canonical_url": pl.String,
    "title": pl.String,
    "summary": pl.String,
    "published_at": pl.String,
    "published": pl.String,
    "language": pl.String,
    "content_hash": pl.String,
    "tags": pl.List(pl.String),
    "kind": pl.String,
    "outlet": pl.String,
    "discussion_url": pl.String,
    "evidence": pl.Struct(_EVIDENCE),
}
_CORRECTED = {"article_id": pl.String, "field": pl.String, "value": pl.String}


def upcast_collected_frame(decoded: pl.LazyFrame) -> pl.LazyFrame:
    """Frame twin of the upcasters: v1 ``published`` -> ``published_at`` and 'und'; no tags
    before v3; an article without a kind (before v4, or news) is news, its evidence flattened."""
    v1 = pl.col("schema_version") == 1
    return decoded.with_columns(
        pl.when(v1).then(pl.col("published")).otherwise(pl.col("published_at")).alias("published_at"),
        pl.when(v1).then(pl.lit("und")).otherwise(pl.col("language")).alias("language"),
        pl.col("tags").fill_null(pl.lit([], dtype=pl.List(pl.String))),
        pl.col("kind").fill_null("news"),
        *[pl.col("evidence").struct.field(f).alias(f) for f in EVIDENCE_FIELDS],
    ).drop("published", "evidence")


# An article's fields are those of its newest snapshot: the collection for the latest brief
# date, then the latest in event order (a live feed read twice in a day). Not simply the
# last collected: dates collected in another order (a fanned-out backfill, where a date's run
# also reads the archives of the days before it) would then give other fields.
LATEST = ["fields_day", *ORDER_COLUMNS]


def newest_first_sorted(frame: pl.LazyFrame) -> pl.LazyFrame:
    """``frame`` sorted once by ``LATEST`` (stable), so that each article's last row in a group is its
    newest snapshot: one sort of the frame, not one per field and article."""
    return frame.sort(LATEST, maintain_order=True)


def newest_snapshots(collected: pl.LazyFrame) -> pl.LazyFrame:
    """Each article's newest ``article.collected`` row (``LATEST``), undecoded, with what its
    other rows say (first brief date, first collected, how many).

    Chosen on the ordering columns alone (a narrow sort, and its group-by takes one row number),
    then only the chosen rows are kept: every field of an article comes from one row, its newest
    snapshot, so decoding the other rows' payloads would be work thrown away. The article is the
    event's subject, as the collection writes it (``tasks/collect.py``).
    """
    rows = collected.select(
        pl.col("subject_id").alias("_article"),
        "brief_date",
        pl.col("brief_date").alias("fields_day"),
        *ORDER_COLUMNS,
        "schema_version",
        "payload",
    ).with_row_index("_row")
    chosen = (
        newest_first_sorted(rows.select("_row", "_article", "brief_date", *LATEST))
        .group_by("_article")
        .agg(
            pl.col("brief_date").min().alias("first_brief_date"),
            pl.col("_ts").min().alias("first_collected_at"),
            pl.len().cast(pl.UInt32).alias("collected_events"),
            pl.col("_row").last(),
        )
        .drop("_article")
    )
    return rows.join(chosen, on="_row")


def decoded(newest: pl.LazyFrame) -> pl.LazyFrame:
    """The chosen rows' payloads as the state's columns, upcast, their times parsed."""
    return (
        newest.with_columns(payload_struct(_COLLECTED).alias("p"))
        .unnest("p")
        .pipe(upcast_collected_frame)
        .with_columns(parse_utc(pl.col("published_at")).alias("published_at"))
        .select(
            "article_id",
            "first_brief_date",
            "first_collected_at",
            "collected_events",
            *FIELDS,
            *LATEST,
        )
    )


class ArticlesProjection:
    name: str = "articles"
    event_types: tuple[str, ...] = ("article.collected", "article.corrected", "article.purged")
    # its fold sorts what it needs by the event order columns itself and its view by article: the
    # events need not come in event order (``materialize`` then spares the scan's sort)
    any_order: bool = True
    state_keys: ClassVar[dict[str, list[str]]] = {
        "base": ["article_id"],
        "corrections": ["article_id", "field"],
        "purged": ["article_id"],
    }

    def fold(self, events: pl.LazyFrame) -> State:
        ordered = with_order(events)
        base = decoded(newest_snapshots(ordered.filter(pl.col("event_type") == "article.collected")))
        corrections = latest_by(
            ordered.filter(pl.col("event_type") == "article.corrected")
            .with_columns(payload_struct(_CORRECTED).alias("p"))
            .unnest("p")
            .select("article_id", "field", "value", *ORDER_COLUMNS),
            ["article_id", "field"],
        )
        return {"base": base, "corrections": corrections, "purged": _purged(ordered)}

    def merge(self, a: State, b: State) -> State:
        base = (
            newest_first_sorted(pl.concat([a["base"], b["base"]]))
            .group_by("article_id")
            .agg(
                pl.col("first_brief_date").min(),
                pl.col("first_collected_at").min(),
                pl.col("collected_events").sum(),
                *[pl.col(c).last() for c in (*FIELDS, *LATEST)],
            )
        )
        corrections = latest_by(pl.concat([a["corrections"], b["corrections"]]), ["article_id", "field"])
        purged = latest_by(pl.concat([a["purged"], b["purged"]]), ["article_id"])
        return {"base": base, "corrections": corrections, "purged": purged}

    def view(self, state: State) -> pl.LazyFrame:
        corrections = state["corrections"]
        wide = corrections.group_by("article_id").agg(
            *[
                expr
                for f in CORRECTABLE
                for expr in (
                    pl.col("value").filter(pl.col("field") == f).first().alias(f"_c_{f}"),
                    pl.col("_ts").filter(pl.col("field") == f).first().alias(f"_c_{f}_ts"),
                    pl.col("_seq").filter(pl.col("field") == f).first().alias(f"_c_{f}_seq"),
                    pl.col("_eid").filter(pl.col("field") == f).first().alias(f"_c_{f}_eid"),
                )
            ],
            pl.len().cast(pl.UInt32).alias("corrections"),
        )
        # a purged article is gone (its events are rewritten away; a tombstone read before that
        # rewrite, or beside a copy a racing run appended, still leaves it out)
        kept = state["base"].join(state["purged"].select("article_id"), on="article_id", how="anti")
        joined = kept.join(wide, on="article_id", how="left")
        overrides = []
        for f in CORRECTABLE:
            later = (
                (pl.col(f"_c_{f}_ts") > pl.col("_ts"))
                | ((pl.col(f"_c_{f}_ts") == pl.col("_ts")) & (pl.col(f"_c_{f}_seq") > pl.col("_seq")))
                | (
                    (pl.col(f"_c_{f}_ts") == pl.col("_ts"))
                    & (pl.col(f"_c_{f}_seq") == pl.col("_seq"))
                    & (pl.col(f"_c_{f}_eid") > pl.col("_eid"))
                )
            )
            corrected = pl.col(f"_c_{f}")
            if f == "published_at":
                corrected = parse_utc(corrected)
            current = pl.col(f) if f in FIELDS else pl.lit(None, dtype=pl.String)
            overrides.append(pl.when(later.fill_null(False)).then(corrected).otherwise(current).alias(f))
        return (
            joined.with_columns(overrides)
            .with_columns(pl.col("corrections").fill_null(0), pl.col("_ts").alias("updated_at"))
            .select(
                "article_id",
                *FIELDS,
                "category",
                "relevance",
                "first_brief_date",
                "first_collected_at",
                "updated_at",
                "collected_events",
                "corrections",
            )
            .sort("article_id")
        )


def _purged(ordered: pl.LazyFrame) -> pl.LazyFrame:
    """The article ids the tombstones (``article.purged``) name."""
    return latest_by(
        ordered.filter(pl.col("event_type") == "article.purged")
        .with_columns(payload_struct({"article_ids": pl.List(pl.String)}).alias("p"))
        .select(pl.col("p").struct.field("article_ids").alias("article_id"), *ORDER_COLUMNS)
        .explode("article_id"),
        ["article_id"],
    )

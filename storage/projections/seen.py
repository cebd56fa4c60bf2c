"""``seen``: every canonical URL and content hash ever collected, with when it was first seen.

A view for people (``brief replay --projection seen``): "was this link collected before, and
when". The daily run's dedup does not read it; it decides from the ``articles`` projection.
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from storage.projections.base import ORDER_COLUMNS, State, payload_struct, with_order

_FIELDS = {"article_id": pl.String, "canonical_url": pl.String, "content_hash": pl.String}


def _first(frame: pl.LazyFrame, key_column: str, kind: str) -> pl.LazyFrame:
    return (
        frame.select(
            pl.lit(kind).alias("kind"),
            pl.col(key_column).alias("key"),
            "article_id",
            "brief_date",
            *ORDER_COLUMNS,
        )
        .filter(pl.col("key").is_not_null() & (pl.col("key") != ""))
        .pipe(_first_per_key)
    )


def _first_per_key(frame: pl.LazyFrame) -> pl.LazyFrame:
    return frame.group_by("kind", "key").agg(
        pl.col("brief_date").min().alias("first_brief_date"),
        pl.col("brief_date").max().alias("last_brief_date"),
        *[pl.col(c).sort_by(ORDER_COLUMNS).first() for c in ("article_id", *ORDER_COLUMNS)],
    )


class SeenProjection:
    name: str = "seen"
    event_types: tuple[str, ...] = ("article.collected",)
    state_keys: ClassVar[dict[str, list[str]]] = {"keys": ["kind", "key"]}

    def fold(self, events: pl.LazyFrame) -> State:
        collected = (
            with_order(events)
            .filter(pl.col("event_type") == "article.collected")
            .with_columns(payload_struct(_FIELDS).alias("p"))
            .unnest("p")
        )
        keys = pl.concat(
            [_first(collected, "canonical_url", "url"), _first(collected, "content_hash", "hash")]
        )
        return {"keys": keys}

    def merge(self, a: State, b: State) -> State:
        both = pl.concat([a["keys"], b["keys"]])
        merged = both.group_by("kind", "key").agg(
            pl.col("first_brief_date").min(),
            pl.col("last_brief_date").max(),
            *[pl.col(c).sort_by(ORDER_COLUMNS).first() for c in ("article_id", *ORDER_COLUMNS)],
        )
        return {"keys": merged}

    def view(self, state: State) -> pl.LazyFrame:
        return (
            state["keys"]
            .select(
                "kind",
                "key",
                "article_id",
                "first_brief_date",
                "last_brief_date",
                pl.col("_ts").alias("first_seen_at"),
            )
            .sort("kind", "key")
        )

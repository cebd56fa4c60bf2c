"""``briefs``: every published version of every day's brief (old versions stay)."""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from storage.projections.base import State, latest_by, payload_struct, with_order

_FIELDS: dict[str, pl.DataType | type[pl.DataType]] = {
    "brief_date": pl.String,
    "version": pl.Int64,
    "items": pl.Int64,
    "content_hash": pl.String,
    "files": pl.Struct({"md": pl.String, "html": pl.String, "json": pl.String}),
    "version_files": pl.Struct({"md": pl.String, "html": pl.String, "json": pl.String}),
}


class BriefsProjection:
    name: str = "briefs"
    event_types: tuple[str, ...] = ("brief.published",)
    state_keys: ClassVar[dict[str, list[str]]] = {"versions": ["date", "version"]}

    def fold(self, events: pl.LazyFrame) -> State:
        published = (
            with_order(events)
            .filter(pl.col("event_type") == "brief.published")
            .select(payload_struct(_FIELDS).alias("p"), "run_id", "_ts", "_seq", "_eid")
            .unnest("p")
            .rename({"brief_date": "date"})
        )
        return {"versions": latest_by(published, ["date", "version"])}

    def merge(self, a: State, b: State) -> State:
        return {"versions": latest_by(pl.concat([a["versions"], b["versions"]]), ["date", "version"])}

    def view(self, state: State) -> pl.LazyFrame:
        return (
            state["versions"]
            .select(
                "date",
                "version",
                "items",
                "content_hash",
                pl.col("_ts").alias("published_at"),
                "run_id",
                # the version's own file as publish recorded it (older events only name the latest copy)
                pl.coalesce(
                    pl.col("version_files").struct.field("md"), pl.col("files").struct.field("md")
                ).alias("markdown"),
            )
            .sort("date", "version")
        )

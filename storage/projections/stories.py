"""``stories``: every story with a stable identity across days.

A story id is kept by a follow-up (a later day's cluster that continues it), so one row
gathers the days it was covered, every member article and what it followed up. For each
(story, day) the latest ``story.clustered`` decision in event order counts (a rerun under a
new policy replaces the day's membership; the older decision stays in the log).
"""

from __future__ import annotations

import polars as pl

from storage.projections.base import LatestPerStoryDay, State

_FIELDS: dict[str, pl.DataType | type[pl.DataType]] = {
    "story_id": pl.String,
    "members": pl.List(pl.String),
    "representative": pl.String,
    "follow_up_of": pl.String,
}


class StoriesProjection(LatestPerStoryDay):
    name: str = "stories"
    event_types: tuple[str, ...] = ("story.clustered",)
    fields = _FIELDS

    def view(self, state: State) -> pl.LazyFrame:
        return (
            state["days"]
            .sort("brief_date", "_ts", "_seq", "_eid")
            .group_by("story_id", maintain_order=True)
            .agg(
                pl.col("brief_date").min().alias("first_brief_date"),
                pl.col("brief_date").max().alias("last_brief_date"),
                pl.col("brief_date").alias("days"),
                pl.col("representative").first(),
                pl.col("members")
                .list.explode(keep_nulls=False, empty_as_null=False)
                .unique(maintain_order=True)
                .alias("members"),
                pl.col("follow_up_of").drop_nulls().first().alias("follow_up_of"),
                pl.col("run_id").last().alias("last_run_id"),
            )
            .with_columns(pl.col("members").list.len().alias("articles"))
            .sort("first_brief_date", "story_id")
        )

"""``scores``: the latest topic and importance decision of every story of a day (``story.scored``).

It answers "why is X missing from the brief": the outcome (core / related / off-topic), the
score, the reasons in words, whether a person's mark decided it, and the model that judged.
"""

from __future__ import annotations

import polars as pl

from storage.projections.base import LatestPerStoryDay, State

_FIELDS: dict[str, pl.DataType | type[pl.DataType]] = {
    "story_id": pl.String,
    "title": pl.String,
    "outcome": pl.String,
    "model_outcome": pl.String,
    "relevance": pl.Float64,
    "core": pl.Float64,
    "importance": pl.Float64,
    "reasons": pl.List(pl.String),
    "marked_by": pl.String,
    "model": pl.String,
    "representative": pl.String,
}


class ScoresProjection(LatestPerStoryDay):
    name: str = "scores"
    event_types: tuple[str, ...] = ("story.scored",)
    fields = _FIELDS

    def view(self, state: State) -> pl.LazyFrame:
        return (
            state["days"]
            .with_columns(pl.col("reasons").list.join("; ").alias("reasons"))
            .select(
                "brief_date",
                "story_id",
                "title",
                "outcome",
                "relevance",
                "importance",
                "reasons",
                "marked_by",
                "model_outcome",
                "core",
                "model",
                "representative",
                "run_id",
                "policy_version",
            )
            .sort("brief_date", pl.col("importance").neg(), "story_id")
        )

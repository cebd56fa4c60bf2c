"""``questions``: every question the pipeline asked, open or resolved, with its answer."""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from storage.projections.base import State, latest_by, payload_struct, with_order

_REQUESTED: dict[str, pl.DataType | type[pl.DataType]] = {
    "question_id": pl.String,
    "type": pl.String,
    "subject": pl.String,
    "field": pl.String,
    "value": pl.String,
    "prompt": pl.String,
    "candidates": pl.List(pl.String),
    "default": pl.String,
    "priority": pl.Int64,
    "batch_id": pl.String,
}
_RESOLVED: dict[str, pl.DataType | type[pl.DataType]] = {
    "question_id": pl.String,
    "subject": pl.String,
    "field": pl.String,
    "value": pl.String,
    "answer": pl.String,
    "by": pl.String,
    "applied_from": pl.String,
}


class QuestionsProjection:
    name: str = "questions"
    event_types: tuple[str, ...] = ("confirmation.requested", "confirmation.resolved")
    state_keys: ClassVar[dict[str, list[str]]] = {"requested": ["question_id"], "resolved": ["question_id"]}

    def fold(self, events: pl.LazyFrame) -> State:
        ordered = with_order(events)
        requested = (
            ordered.filter(pl.col("event_type") == "confirmation.requested")
            .select("brief_date", payload_struct(_REQUESTED).alias("p"), "_ts", "_seq", "_eid")
            .unnest("p")
        )
        resolved = (
            ordered.filter(pl.col("event_type") == "confirmation.resolved")
            .select(payload_struct(_RESOLVED).alias("p"), "_ts", "_seq", "_eid")
            .unnest("p")
        )
        return {
            "requested": latest_by(requested, ["question_id"]),
            "resolved": latest_by(resolved, ["question_id"]),
        }

    def merge(self, a: State, b: State) -> State:
        return {k: latest_by(pl.concat([a[k], b[k]]), ["question_id"]) for k in ("requested", "resolved")}

    def view(self, state: State) -> pl.LazyFrame:
        resolved = state["resolved"].select(
            "question_id", "answer", "by", "applied_from", pl.col("_ts").alias("resolved_at")
        )
        return (
            state["requested"]
            .drop("_ts", "_seq", "_eid")
            .join(resolved, on="question_id", how="left")
            .with_columns(
                pl.when(pl.col("answer").is_null())
                .then(pl.lit("open"))
                .otherwise(pl.lit("resolved"))
                .alias("status")
            )
            .sort(
                "brief_date",
                "batch_id",
                pl.col("priority"),
                "question_id",
                descending=[False, False, True, False],
            )
        )

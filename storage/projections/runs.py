"""``runs``: one row per run: flow, day, status, timings, and how many events of each type.

A flow run (``brief run``, a backfill's dates) records its life: started, then finished, failed,
crashed or cancelled; one that withheld its brief (run.failed, its error ``BriefWithheld``) is
``withheld``, its error the reason. A command's act (an answer, a mark, a correction, a purge, an evaluation)
writes its events under a run id that names it (``review-…``) and records no start or end: it is
``recorded``, its flow the name its id starts with (``review``, ``purge``, ``backfill``: a backfill's
own collection and look at its dates, ``backfill-<its flow run id>``), and what it wrote is in its
counts (an act that re-rendered the brief has its ``brief.published`` there). A flow run none of
whose life is in the days folded is ``unknown``."""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from storage.projections.base import ORDER_COLUMNS, State, with_order

_STATUS = {
    "run.started": "running",
    "run.finished": "completed",
    "run.failed": "failed",
    "run.crashed": "crashed",
    "run.cancelled": "cancelled",
}

WITHHELD_ERROR = "BriefWithheld"  # run.failed's error when the run withheld its brief
WITHHELD_PREFIX = r"^(?:step '[a-z_-]+' failed: )?BriefWithheld: "  # before its message's reason
RECORD_NAME = r"^([a-z][a-z_]*)(?:-|$)"  # a command's record is named by its first word: review-20250806T…
FLOW_RUN_ID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


class RunsProjection:
    name: str = "runs"
    event_types: tuple[str, ...] = ()  # every event belongs to a run
    state_keys: ClassVar[dict[str, list[str]]] = {
        "counts": ["run_id", "brief_date", "event_type"],
        "lifecycle": [],
    }

    def fold(self, events: pl.LazyFrame) -> State:
        ordered = with_order(events)
        counts = ordered.group_by("run_id", "brief_date", "event_type").agg(
            pl.len().cast(pl.UInt32).alias("n"),
            pl.col("_ts").min().alias("first_at"),
            pl.col("_ts").max().alias("last_at"),
        )
        lifecycle = ordered.filter(pl.col("event_type").is_in(list(_STATUS))).select(
            "run_id",
            "brief_date",
            "event_type",
            "payload",
            *ORDER_COLUMNS,
        )
        return {"counts": counts, "lifecycle": lifecycle}

    def merge(self, a: State, b: State) -> State:
        counts = (
            pl.concat([a["counts"], b["counts"]])
            .group_by("run_id", "brief_date", "event_type")
            .agg(pl.col("n").sum(), pl.col("first_at").min(), pl.col("last_at").max())
        )
        return {"counts": counts, "lifecycle": pl.concat([a["lifecycle"], b["lifecycle"]])}

    def view(self, state: State) -> pl.LazyFrame:
        per_type = (
            state["counts"]
            .group_by("run_id", "event_type")
            .agg(
                pl.col("brief_date").min(),
                pl.col("n").sum(),
                pl.col("first_at").min(),
                pl.col("last_at").max(),
            )
        )
        totals = per_type.group_by("run_id").agg(
            pl.col("brief_date").min(),
            pl.col("first_at").min().alias("started_at"),
            pl.col("last_at").max().alias("last_event_at"),
            pl.col("n").sum().alias("events"),
            pl.struct("event_type", "n").sort_by("event_type").alias("counts"),
        )
        life = state["lifecycle"].sort(ORDER_COLUMNS)
        started = (
            life.filter(pl.col("event_type") == "run.started")
            .group_by("run_id")
            .agg(
                pl.col("payload").first().str.json_path_match("$.flow").alias("flow"),
                pl.col("brief_date").first().alias("run_date"),
            )
        )
        ended = _ended(life)
        return (
            totals.join(started, on="run_id", how="left")
            .join(ended.select("run_id", "status", "error", "step_seconds"), on="run_id", how="left")
            .with_columns(
                # the day a run was for is its run.started's (collecting the lookback writes earlier days)
                pl.coalesce("run_date", "brief_date").alias("brief_date"),
                # a command's own record (an answer, a mark, a purge, an evaluation: "review-2025…")
                # has no start or end event; a flow run's id is a UUID
                pl.when(pl.col("status").is_null() & ~pl.col("run_id").str.contains(FLOW_RUN_ID))
                .then(pl.lit("recorded"))
                .otherwise(pl.col("status").fill_null("unknown"))
                .alias("status"),
                pl.when(pl.col("status").is_null() & ~pl.col("run_id").str.contains(FLOW_RUN_ID))
                .then(pl.col("run_id").str.extract(RECORD_NAME))
                .otherwise(pl.col("flow"))
                .alias("flow"),
                ((pl.col("last_event_at") - pl.col("started_at")).dt.total_milliseconds() / 1000).alias(
                    "duration_s"
                ),
            )
            .select(
                "run_id",
                "brief_date",
                "flow",
                "status",
                "started_at",
                "last_event_at",
                "duration_s",
                "events",
                "counts",
                "step_seconds",
                "error",
            )
            .sort("started_at", "run_id")
        )


def _ended(life: pl.LazyFrame) -> pl.LazyFrame:
    """Each flow run's status, error and step seconds, from the last of its life's events. A run
    that withheld its brief records run.failed with the error BriefWithheld: it is "withheld", its
    error the reason, not a step that failed."""
    held = (pl.col("_last") == "run.failed") & (
        pl.col("_payload").str.json_path_match("$.error") == WITHHELD_ERROR
    )
    return (
        life.group_by("run_id")
        .agg(pl.col("event_type").last().alias("_last"), pl.col("payload").last().alias("_payload"))
        .with_columns(
            pl.when(held)
            .then(pl.lit("withheld"))
            .otherwise(pl.col("_last").replace_strict(_STATUS, default="running"))
            .alias("status"),
            pl.when(held)
            .then(pl.col("_payload").str.json_path_match("$.message").str.replace(WITHHELD_PREFIX, ""))
            .when(pl.col("_last").is_in(["run.failed", "run.crashed", "run.cancelled"]))
            .then(pl.col("_payload").str.json_path_match("$.message"))
            .alias("error"),
            pl.when(pl.col("_last") == "run.finished")
            .then(pl.col("_payload").str.json_path_match("$.step_seconds"))
            .alias("step_seconds"),
        )
    )

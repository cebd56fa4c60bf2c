"""``brief stats``'s stories and off-topic columns are the day's last run that clustered: a rerun
stopped after collect (Ctrl-C) does not make a day with a published brief read as 0 stories."""

from __future__ import annotations

from datetime import UTC, date, datetime

import polars as pl

from ops.stats import per_day


def test_a_run_stopped_before_clustering_leaves_the_days_stories_as_they_were() -> None:
    day = date(2025, 8, 6)
    joined = pl.DataFrame(
        {
            "brief_date": [day, day],
            "started_at": [datetime(2025, 8, 6, 7, tzinfo=UTC), datetime(2025, 8, 6, 9, tzinfo=UTC)],
            "status": ["completed", "cancelled"],
            "feed.failed": [None, None],
            "story.clustered": [6, None],  # the rerun stopped after collect
            "off_topic": [2, None],
            "llm.called": [None, None],
            "llm_tokens": [None, None],
            "llm_cost": [None, None],
            "duration_s": [12.0, 3.0],
            "steps": [{"dedup": 0.4}, {"dedup": None}],
            "run_id": ["r1", "r2"],
            "error": [None, "interrupted"],
        },
        schema_overrides={"feed.failed": pl.Int64, "llm.called": pl.Int64, "llm_tokens": pl.Int64},
    )
    [row] = per_day(joined).to_dicts()
    assert (row["runs"], row["last_status"], row["last_run_id"]) == (2, "cancelled", "r2")
    assert (row["stories"], row["off_topic"]) == (6, 2)
    cleared = per_day(joined.with_columns(pl.lit(None, pl.Int64).alias("story.clustered"))).to_dicts()[0]
    assert (cleared["stories"], cleared["off_topic"]) == (0, 0)  # no run clustered: none

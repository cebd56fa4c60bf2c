"""Recent runs, from the ``runs`` projection of the log: status, events of each type, seconds per
step, and a failed run's error with a link to its page in the Prefect UI (the desk's Runs page)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import polars as pl

from storage.projections import materialize
from storage.store import ParquetEventStore

WINDOW_DAYS = 14
PREFECT_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# the events a run's row counts, in the words the page shows them in (the type in a title)
SHOWN_COUNTS = {
    "feed.fetched": "feeds read",
    "feed.failed": "feeds failed",
    "article.collected": "articles collected",
    "story.clustered": "stories",
    "confirmation.requested": "questions asked",
    "brief.published": "versions published",
    "brief.delivered": "messages sent",
}


@dataclass(frozen=True)
class RunRow:
    """One run as the Runs page shows it."""

    run_id: str
    flow: str
    brief_date: date
    status: str
    started_at: datetime
    duration_s: float | None
    events: int
    error: str | None
    counts: list[tuple[str, str, int]]  # (event type, its words, how many), of ``SHOWN_COUNTS``
    steps: list[tuple[str, float]]  # (step, seconds), the longest first
    link: str | None  # its page in the Prefect UI


def recent_runs(store: ParquetEventStore, end: date, ui_url: str | None) -> list[RunRow]:
    """The runs that wrote to the 14 days to ``end`` (a flow's runs, not the desk's single acts),
    newest first."""
    days = [end - timedelta(days=k) for k in range(WINDOW_DAYS)]
    runs = materialize(store, "runs", days=days)
    frame = runs.filter(pl.col("flow").is_not_null() & (pl.col("status") != "recorded"))
    out = []
    for row in frame.sort("started_at", descending=True).iter_rows(named=True):
        counts = {c["event_type"]: c["n"] for c in row["counts"]}
        steps = json.loads(row["step_seconds"]) if row["step_seconds"] else {}
        out.append(
            RunRow(
                run_id=row["run_id"],
                flow=row["flow"],
                brief_date=row["brief_date"],
                status=row["status"],
                started_at=row["started_at"],
                duration_s=row["duration_s"],
                events=row["events"],
                error=row["error"],
                counts=[(k, words, counts[k]) for k, words in SHOWN_COUNTS.items() if counts.get(k)],
                steps=sorted(steps.items(), key=lambda kv: -kv[1]),
                link=f"{ui_url.rstrip('/')}/runs/flow-run/{row['run_id']}"
                if ui_url and PREFECT_ID.match(row["run_id"])
                else None,
            )
        )
    return out

"""Collect one source for the run (and, for archives, the days the window reaches back into)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

import polars as pl

from tasks.collect import Source, Validators, collect_source
from tasks.steps.context import RunContext, lookback_days, today


@dataclass(frozen=True)
class SourceOutcome:
    source: str
    items: int
    new_events: int
    error: str | None = None
    message: str | None = None


def collect_one(ctx: RunContext, source_name: str) -> SourceOutcome:
    src = next(s for s in ctx.settings.sources if s.name == source_name)
    source = Source(src.name, src.url, src.language)
    if not source.is_archive and ctx.day != today(ctx.settings):
        # a live feed only knows today: a past date replays the facts already stored for it
        return SourceOutcome(src.name, 0, 0, None, "live feed: replayed stored facts")
    validators = last_validators(ctx, source.url_for(ctx.day))
    events = collect_source(source, ctx.day, ctx.run_id, validators=validators)
    written = ctx.append(events)
    if source.is_archive:
        written += collect_lookback(ctx, source)
    failed = [e for e in events if e.event_type == "feed.failed"]
    items = sum(e.event_type == "article.collected" for e in events)
    if failed:
        return SourceOutcome(src.name, 0, written, failed[0].payload["error"], failed[0].payload["message"])
    return SourceOutcome(src.name, items, written)


def collect_lookback(ctx: RunContext, source: Source) -> int:
    """For a dated archive, also the days the lookback window reaches back into, when they exist.

    A brief then rests on the same facts whatever order dates are run in: an article of the
    day before is known as the day before's news even if that day was never run. Facts
    already in the log are not written again; a day without an archive file is skipped
    without a failure (it is not the day being briefed).
    """
    days_back = lookback_days(ctx.settings.policy.lookback_hours)
    written = 0
    for back in range(1, days_back + 1):
        day = ctx.day - timedelta(days=back)
        events = collect_source(source, day, ctx.run_id, retries=1)
        if any(e.event_type == "feed.failed" for e in events):
            continue
        written += ctx.append(events)  # counted in the run, and nothing written in a dry run
    return written


def last_validators(ctx: RunContext, url: str) -> Validators | None:
    """ETag / Last-Modified of the latest successful fetch of ``url`` in the days the run reads.

    A feed not fetched in that time is fetched whole: the same facts, one full download.
    """
    frame = ctx.store.query(
        lambda: ctx.store.scan(ctx.reach, event_types=["feed.fetched"]).filter(
            pl.col("payload").str.contains(url, literal=True)
        )
    )
    for payload in reversed(frame.get_column("payload").to_list()):
        data = json.loads(payload)
        if data["url"] == url and (data.get("etag") or data.get("last_modified")):
            return Validators(data.get("etag"), data.get("last_modified"), data["content_hash"])
    return None

"""The gate step: Great Expectations suites on the day's articles, brief items and events."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from storage.brief import Brief
from storage.lineage import SOURCED
from tasks.steps.context import RunContext
from tasks.steps.dedup import DedupOutcome

if TYPE_CHECKING:
    import pandas as pd

    from storage.events import Event
    from validations.gate import SuiteResult


def event_frame(events: pl.DataFrame, run_id: str) -> pd.DataFrame:
    """The events suite's rows: the day's events, and for each derived event the run wrote, how many
    events it names as its sources (``derived_from``; empty for facts, roots and other runs' events,
    which may predate lineage)."""
    derived = pl.col("event_type").is_in(list(SOURCED)) & (pl.col("run_id") == run_id)
    return events.select(
        "event_id",
        "event_type",
        pl.col("brief_date").cast(pl.String),
        "run_id",
        pl.when(derived).then(pl.col("source_event_ids").list.len()).cast(pl.Float64).alias("derived_from"),
    ).to_pandas()


def run_gates(ctx: RunContext, outcome: DedupOutcome, document: Brief) -> tuple[Brief, list]:
    """Great Expectations suites on the day's articles, the brief items and the day's events.

    Results are ``validation.completed`` events. A failed blocking suite raises ``GateFailed``
    (the run fails, naming suite, expectation and rows); a failed warning suite quarantines its
    rows: quarantined articles are no longer cited, items left without a citation and
    quarantined items leave the brief.
    """
    from validations import gate as gx_gate

    results = gx_gate.validate(gate_suites(ctx, outcome, document))
    ctx.append([validation_event(ctx, r) for r in results])
    message = gx_gate.blocking_message(results)
    if message:
        raise gx_gate.GateFailed(message)
    return without_quarantined(outcome, document, results), results


def gate_suites(ctx: RunContext, outcome: DedupOutcome, document: Brief) -> dict:
    """Each suite by name: its mode, its rows, the column naming a row, and its expectations."""
    from storage.registry import REGISTRY
    from validations import gate as gx_gate

    today = ctx.store.query(lambda: ctx.store.scan([ctx.day]))
    collected = set(today.filter(pl.col("event_type") == "article.collected")["subject_id"].to_list())
    modes = ctx.settings.gates
    return {
        "articles": (
            modes.articles,
            article_frame(outcome, collected),
            "url",
            gx_gate.article_suite([s.name for s in ctx.settings.sources], ctx.day),
        ),
        "items": (
            modes.items,
            item_frame(document),
            "story_id",
            gx_gate.item_suite([c.name for c in ctx.settings.policy.categories]),
        ),
        "events": (
            modes.events,
            event_frame(today, ctx.run_id),
            "event_id",
            gx_gate.event_suite(REGISTRY.types(), ctx.day),
        ),
    }


def article_frame(outcome: DedupOutcome, collected: set[str]) -> pd.DataFrame:
    """The articles suite's rows: the day's items that were collected on the day."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "article_id": a.article_id,
                "url": a.url or None,
                "title": a.title,
                "source": a.source,
                "published_at": a.published_at,
            }
            for a in outcome.items.values()
            if a.article_id in collected
        ],
        columns=["article_id", "url", "title", "source", "published_at"],
    )


def item_frame(document: Brief) -> pd.DataFrame:
    """The items suite's rows: the brief's items."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "story_id": i.story_id,
                "category": i.category,
                "category_confidence": i.category_confidence,
                "importance": i.importance,
                "citations": len(i.citations),
                "title": i.title,
            }
            for i in document.items
        ],
        columns=["story_id", "category", "category_confidence", "importance", "citations", "title"],
    )


def validation_event(ctx: RunContext, r: SuiteResult) -> Event:
    """One suite's result as its ``validation.completed`` event."""
    return ctx.emit(
        "validation.completed",
        {
            "suite": r.suite,
            "mode": r.mode,
            "success": r.success,
            "rows": r.rows,
            "expectations": r.evaluated,
            "failures": [
                {"expectation": f.expectation, "column": f.column, "rows": list(f.rows)} for f in r.failures
            ],
            "quarantined": r.quarantined,
        },
        subject=f"suite-{r.suite}",
        producer="gate.gx@1",
    )


def without_quarantined(outcome: DedupOutcome, document: Brief, results: list[SuiteResult]) -> Brief:
    """The document without quarantined items, its citations without quarantined articles, and
    without the items left with no citation."""
    bad_urls = {u for r in results if r.suite == "articles" for u in r.quarantined}
    dropped_articles = {a.article_id for a in outcome.items.values() if str(a.url or None) in bad_urls}
    dropped_items = {s for r in results if r.suite == "items" for s in r.quarantined}
    kept = []
    for item in document.items:
        citations = [c for c in item.citations if c.article_id not in dropped_articles]
        if citations and item.story_id not in dropped_items:
            kept.append(item.model_copy(update={"citations": citations}))
    return document.with_items(kept)

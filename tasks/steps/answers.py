"""What people answered, as the steps read it."""

from __future__ import annotations

import polars as pl

from storage.projections import materialize
from tasks.steps.context import RunContext


def answered(ctx: RunContext) -> dict[tuple[str, str, str], dict]:
    """Every answer given up to this day: (subject, field, value) -> the resolved question row."""
    days = [d for d in ctx.store.days() if d <= ctx.day]
    frame = materialize(ctx.store, "questions", days=days).filter(pl.col("status") == "resolved")
    return {
        (r["subject"], r["field"], r["value"]): r for r in frame.sort("resolved_at").iter_rows(named=True)
    }

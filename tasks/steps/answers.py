"""What people answered, as the steps read it."""

from __future__ import annotations

import polars as pl

from storage.projections import materialize
from tasks.steps.context import RunContext


def answered(ctx: RunContext) -> dict[tuple[str, str, str], dict]:
    """Every answer given up to this day: (subject, field, value) -> the resolved question row.

    Several steps of one run ask; the fold is redone only when the log has moved since.
    """
    position = ctx.store.position()
    cached = ctx.memo.get("answered")
    if cached is not None and cached[0] == position:
        return cached[1]  # type: ignore[return-value]
    result = _answered(ctx)
    ctx.memo["answered"] = (position, result)
    return result


def _answered(ctx: RunContext) -> dict[tuple[str, str, str], dict]:
    days = [d for d in ctx.store.days() if d <= ctx.day]
    frame = materialize(ctx.store, "questions", days=days).filter(pl.col("status") == "resolved")
    return {
        (r["subject"], r["field"], r["value"]): r for r in frame.sort("resolved_at").iter_rows(named=True)
    }

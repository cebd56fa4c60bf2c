"""What people answered, as the steps read it."""

from __future__ import annotations

import polars as pl

from storage.projections import materialize
from tasks.steps.context import RunContext


def answered(ctx: RunContext) -> dict[tuple[str, str, str], dict]:
    """Every answer given in the days the run reads: (subject, field, value) -> the resolved question row.

    Several steps of one run ask; the fold is redone only when those days have moved since.
    A question is about the articles of its day's window, so an answer given more than
    ``RunContext.reach`` before the brief date cannot be about today's articles.
    """
    position = {d: tuple(ctx.store.units(d)) for d in ctx.reach}
    cached = ctx.memo.get("answered")
    if cached is not None and cached[0] == position:
        return cached[1]  # type: ignore[return-value]
    result = _answered(ctx)
    ctx.memo["answered"] = (position, result)
    return result


def _answered(ctx: RunContext) -> dict[tuple[str, str, str], dict]:
    frame = materialize(ctx.store, "questions", days=ctx.reach).filter(pl.col("status") == "resolved")
    return {
        (r["subject"], r["field"], r["value"]): r for r in frame.sort("resolved_at").iter_rows(named=True)
    }

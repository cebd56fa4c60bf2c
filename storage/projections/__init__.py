"""Polars projections of the event log: pure functions from events to state."""

from __future__ import annotations

from datetime import date, datetime

import polars as pl

from storage.errors import InputError
from storage.projections.articles import ArticlesProjection
from storage.projections.base import Projection, project
from storage.projections.briefs import BriefsProjection
from storage.projections.questions import QuestionsProjection
from storage.projections.runs import RunsProjection
from storage.projections.scores import ScoresProjection
from storage.projections.seen import SeenProjection
from storage.projections.stories import StoriesProjection
from storage.store import EventStore

PROJECTIONS: dict[str, Projection] = {
    p.name: p
    for p in (
        ArticlesProjection(),
        SeenProjection(),
        RunsProjection(),
        StoriesProjection(),
        QuestionsProjection(),
        BriefsProjection(),
        ScoresProjection(),
    )
}


def get_projection(name: str) -> Projection:
    try:
        return PROJECTIONS[name]
    except KeyError:
        raise InputError(
            f"unknown projection {name!r}; choose one of: {', '.join(sorted(PROJECTIONS))}"
        ) from None


def materialize(
    store: EventStore, name: str, *, days: list[date] | None = None, as_of: datetime | None = None
) -> pl.DataFrame:
    """Fold the events of ``days`` (all when None) as they stood at ``as_of`` into a frame."""
    projection = get_projection(name)
    types = list(projection.event_types) or None
    ordered = not getattr(projection, "any_order", False)
    return store.query(
        lambda: project(projection, store.scan(days, as_of=as_of, event_types=types, ordered=ordered))
    )


__all__ = ["PROJECTIONS", "Projection", "get_projection", "materialize", "project"]

"""What a projection is: three pure functions over Polars frames.

``fold(events) -> state`` summarises events into a state (a few named frames);
``merge(a, b) -> state`` joins two states as if their events had been folded together
(associative and commutative, so a snapshot plus newer events equals a full fold);
``view(state) -> frame`` is what users see. None reads the clock, a model or the network.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol

import polars as pl
from polars._typing import EngineType

State = Mapping[str, pl.LazyFrame]

ORDER_COLUMNS = ["_ts", "_seq", "_eid"]


def with_order(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Copy the event's total order (occurred_at, seq, event_id) into state columns."""
    return frame.with_columns(
        pl.col("occurred_at").alias("_ts"), pl.col("seq").alias("_seq"), pl.col("event_id").alias("_eid")
    )


def latest_by(frame: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """One row per key: the one latest in event order."""
    return frame.sort(ORDER_COLUMNS).group_by(keys, maintain_order=True).last()


def payload_struct(fields: Mapping[str, pl.DataType | type[pl.DataType]]) -> pl.Expr:
    return pl.col("payload").str.json_decode(pl.Struct(dict(fields)))


def parse_utc(expr: pl.Expr) -> pl.Expr:
    """ISO-8601 text with an offset (or Z) to a UTC datetime; anything else to null."""
    return expr.str.replace(r"Z$", "+00:00").str.to_datetime(
        "%Y-%m-%dT%H:%M:%S%.f%:z", strict=False, time_zone="UTC", time_unit="us"
    )


class Projection(Protocol):
    name: str
    event_types: tuple[str, ...]
    # per state frame, the columns its rows are keyed by (merge works key by key); [] = append-only
    state_keys: ClassVar[dict[str, list[str]]]

    def fold(self, events: pl.LazyFrame) -> State: ...

    def merge(self, a: State, b: State) -> State: ...

    def view(self, state: State) -> pl.LazyFrame: ...


class LatestPerStoryDay:
    """A projection whose state is the latest decision of one event type per (story, day).

    A subclass names the event type (``event_types``), the payload ``fields`` it keeps (with
    ``story_id``) and its ``view``; a rerun under a new policy replaces a day's decision, and
    the older one stays in the log.
    """

    name: str
    event_types: tuple[str, ...]
    fields: ClassVar[Mapping[str, pl.DataType | type[pl.DataType]]]
    state_keys: ClassVar[dict[str, list[str]]] = {"days": ["story_id", "brief_date"]}

    def fold(self, events: pl.LazyFrame) -> State:
        decided = (
            with_order(events)
            .filter(pl.col("event_type") == self.event_types[0])
            .with_columns(payload_struct(self.fields).alias("p"))
            .select(
                "brief_date", "run_id", "policy_version", pl.col("p").struct.unnest(), "_ts", "_seq", "_eid"
            )
        )
        return {"days": latest_by(decided, ["story_id", "brief_date"])}

    def merge(self, a: State, b: State) -> State:
        return {"days": latest_by(pl.concat([a["days"], b["days"]]), ["story_id", "brief_date"])}


@dataclass(frozen=True)
class Folded:
    """A collected state: what snapshots store."""

    frames: Mapping[str, pl.DataFrame]

    def lazy(self) -> State:
        return {k: v.lazy() for k, v in self.frames.items()}


def collect_state(state: State, engine: EngineType = "auto") -> Folded:
    names = list(state)
    frames = pl.collect_all([state[n] for n in names], engine=engine)
    return Folded(dict(zip(names, frames, strict=True)))


def project(projection: Projection, events: pl.LazyFrame) -> pl.LazyFrame:
    """The full fold: ``view(fold(events))``."""
    if projection.event_types:
        events = events.filter(pl.col("event_type").is_in(list(projection.event_types)))
    return projection.view(projection.fold(events))

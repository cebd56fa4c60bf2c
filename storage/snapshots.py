"""Snapshots: a projection's folded state with its watermark, so the next fold reads only newer batches.

The watermark is the store's ``position()``: the immutable batches (files) already folded.
A refresh folds only batches not in it and merges them in. Events of a new batch whose id
was already folded (two racing writers, a compaction that rewrote a day) are dropped; if
such a copy is *earlier* in event order than the one folded, a full fold is the only exact
answer and is what ``refresh`` does. So ``refresh(snapshot)`` always equals a full fold.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import polars as pl
from polars._typing import EngineType

from storage.projections import get_projection
from storage.projections.base import Folded, Projection, collect_state
from storage.store import EventStore, dedup_ordered


def id_keys(event_ids: pl.Expr) -> pl.Expr:
    """The first 64 bits of an event id (ids are blake2b hex), for compact membership tests."""
    return event_ids.str.slice(0, 16).str.to_integer(base=16, dtype=pl.UInt64)


@dataclass(frozen=True)
class Layer:
    """One state frame as a big ``base`` plus a small ``delta`` that replaces some of its rows.

    A refresh finds the base rows of the keys it touches through ``hashes`` (sorted 64-bit
    hashes of each base row's key, with ``rows``, their row numbers), marks them ``shadowed``
    and puts the merged rows in ``delta``: it never copies the base, so its cost follows the
    new events, not the size of the state. A hash collision only merges an unrelated row with
    nothing, which leaves it as it was, so it costs time, never correctness.
    """

    base: pl.DataFrame
    hashes: np.ndarray
    rows: np.ndarray
    shadowed: np.ndarray
    delta: pl.DataFrame
    delta_hashes: np.ndarray

    @classmethod
    def of(cls, frame: pl.DataFrame, keys: list[str]) -> Layer:
        hashes = key_hashes(frame, keys)
        order = np.argsort(hashes, kind="stable")
        return cls(
            frame,
            hashes[order],
            order,
            np.zeros(frame.height, dtype=bool),
            frame.clear(),
            np.empty(0, dtype=np.uint64),
        )

    def frame(self) -> pl.DataFrame:
        """The rows as they stand: base rows not replaced, then the delta."""
        if not self.delta.height:
            return self.base
        kept = self.base.filter(pl.Series(~self.shadowed)) if self.shadowed.any() else self.base
        return pl.concat([kept, self.delta], how="vertical_relaxed")

    def touched(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Base rows (not yet shadowed) and a delta mask whose keys hash to one of ``hashes``."""
        left = np.searchsorted(self.hashes, hashes, side="left")
        right = np.searchsorted(self.hashes, hashes, side="right")
        counts = right - left
        if counts.sum():
            starts = np.repeat(left, counts)
            offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
            rows = self.rows[starts + offsets]
            rows = rows[~self.shadowed[rows]]
        else:
            rows = np.empty(0, dtype=self.rows.dtype)
        in_delta = np.isin(self.delta_hashes, hashes) if len(self.delta_hashes) else np.zeros(0, dtype=bool)
        return rows, in_delta


def key_hashes(frame: pl.DataFrame, keys: list[str]) -> np.ndarray:
    if not keys or not frame.height:
        return np.empty(0, dtype=np.uint64)
    return frame.select(keys).hash_rows(seed=0).to_numpy()


@dataclass(frozen=True)
class Snapshot:
    projection: str
    layers: dict[str, Layer]
    position: dict[str, tuple[str, ...]]
    # _key (u64), event_id, occurred_at, seq, run_id of every folded event, in runs sorted by _key:
    # a refresh adds one small run instead of re-sorting them all; runs merge when there are many
    folded: tuple[pl.DataFrame, ...]

    @property
    def state(self) -> Folded:
        return Folded({name: layer.frame() for name, layer in self.layers.items()})

    @property
    def events(self) -> int:
        return sum(f.height for f in self.folded)

    def view(self) -> pl.DataFrame:
        return get_projection(self.projection).view(self.state.lazy()).collect()


def _layers(name: str, state: Folded) -> dict[str, Layer]:
    keys = get_projection(name).state_keys
    return {frame: Layer.of(data, keys[frame]) for frame, data in state.frames.items()}


def _fold(name: str, events: pl.DataFrame, engine: EngineType = "auto") -> tuple[Folded, pl.DataFrame]:
    projection = get_projection(name)
    frame = events.lazy()
    if projection.event_types:
        frame = frame.filter(pl.col("event_type").is_in(list(projection.event_types)))
    state = projection.fold(frame)
    names = list(state)
    ids = frame.select(id_keys(pl.col("event_id")).alias("_key"), "event_id", "occurred_at", "seq", "run_id")
    *frames, folded = pl.collect_all([*(state[n] for n in names), ids], engine=engine)  # one pass
    return Folded(dict(zip(names, frames, strict=True))), folded


def take_snapshot(store: EventStore, name: str) -> Snapshot:
    """Fold every event into a snapshot (a full fold)."""
    position = store.position()
    units = [u for batch in position.values() for u in batch]
    events = store.query(lambda: dedup_ordered(store.raw_units(units)))
    state, folded = _fold(name, events)
    return Snapshot(name, _layers(name, state), position, (folded.sort("_key"),))


def refresh(store: EventStore, snapshot: Snapshot) -> Snapshot:
    """Bring a snapshot up to the store's current position, reading only new batches."""
    position = store.position()
    known = {u for batch in snapshot.position.values() for u in batch}
    new_units = [u for batch in position.values() for u in batch if u not in known]
    if not new_units:
        return replace(snapshot, position=position)
    projection = get_projection(snapshot.projection)
    types = list(projection.event_types)

    def read_new() -> pl.LazyFrame:
        raw = store.raw_units(new_units)
        return raw.filter(pl.col("event_type").is_in(types)) if types else raw

    # a few thousand events: the in-memory engine starts faster than the streaming one
    fresh = store.query(read_new, engine="in-memory")
    if fresh.get_column("event_id").n_unique() != fresh.height:  # copies across the new batches
        fresh = dedup_ordered(fresh.lazy()).collect(engine="in-memory")
    keys = fresh.select(id_keys(pl.col("event_id"))).to_series().to_numpy()
    maybe_known = np.zeros(len(keys), dtype=bool)
    for run in snapshot.folded:
        run_keys = run.get_column("_key").to_numpy()
        if len(run_keys):
            at = np.searchsorted(run_keys, keys).clip(max=len(run_keys) - 1)
            maybe_known |= run_keys[at] == keys
    if maybe_known.any():
        candidates = fresh.filter(pl.Series(maybe_known))
        old = pl.concat(
            [
                r.filter(pl.col("_key").is_in(pl.Series(keys[maybe_known], dtype=pl.UInt64).implode()))
                for r in snapshot.folded
            ]
        )
        earlier = candidates.join(old, on="event_id", how="inner", suffix="_old").filter(
            (pl.col("occurred_at") < pl.col("occurred_at_old"))
            | ((pl.col("occurred_at") == pl.col("occurred_at_old")) & (pl.col("seq") < pl.col("seq_old")))
            | (
                (pl.col("occurred_at") == pl.col("occurred_at_old"))
                & (pl.col("seq") == pl.col("seq_old"))
                & (pl.col("run_id") < pl.col("run_id_old"))
            )
        )
        if earlier.height:
            return take_snapshot(store, snapshot.projection)
        fresh = fresh.join(old.select("event_id"), on="event_id", how="anti")
    if fresh.height == 0:
        return replace(snapshot, position=position)
    state, folded = _fold(snapshot.projection, fresh, engine="in-memory")
    layers = _merge_touched(projection, snapshot.layers, state)
    return Snapshot(snapshot.projection, layers, position, _add_keys(snapshot.folded, folded))


def _merge_touched(projection: Projection, layers: dict[str, Layer], new: Folded) -> dict[str, Layer]:
    """Merge the new state into the rows whose keys it touches; every other row stays where it is.

    ``merge`` is key-local, so merging the touched rows and keeping the rest equals merging all;
    frames without keys are append-only, so their new rows merge with nothing.
    """
    touched: dict[str, pl.LazyFrame] = {}
    found: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, layer in layers.items():
        keys = projection.state_keys[name]
        if keys:
            rows, in_delta = layer.touched(key_hashes(new.frames[name], keys))
        else:  # append-only: the new rows merge with nothing
            rows, in_delta = np.empty(0, dtype=np.int64), np.zeros(len(layer.delta_hashes), dtype=bool)
        found[name] = rows, in_delta
        parts = [layer.base[rows]] if len(rows) else []
        if in_delta.any():
            parts.append(layer.delta.filter(pl.Series(in_delta)))
        touched[name] = (pl.concat(parts, how="vertical_relaxed") if parts else layer.base.clear()).lazy()
    merged = collect_state(projection.merge(touched, new.lazy()), engine="in-memory")
    out = {}
    for name, layer in layers.items():
        keys = projection.state_keys[name]
        rows, in_delta = found[name]
        rest = layer.delta.filter(pl.Series(~in_delta)) if in_delta.any() else layer.delta
        shadowed = layer.shadowed
        if len(rows):
            shadowed = shadowed.copy()
            shadowed[rows] = True
        delta = pl.concat([rest, merged.frames[name]], how="vertical_relaxed")
        delta_hashes = np.concatenate([layer.delta_hashes[~in_delta], key_hashes(merged.frames[name], keys)])
        updated = Layer(layer.base, layer.hashes, layer.rows, shadowed, delta, delta_hashes)
        if keys and delta.height > max(REBASE_ROWS, layer.base.height // 8):
            updated = Layer.of(updated.frame(), keys)  # fold the delta into a new base now and then
        out[name] = updated
    return out


REBASE_ROWS = 20_000
MAX_RUNS = 16


def _add_keys(folded: tuple[pl.DataFrame, ...], more: pl.DataFrame) -> tuple[pl.DataFrame, ...]:
    """Add a sorted run of new id keys; fold the small runs together when there are too many."""
    runs = (*folded, more.sort("_key"))
    if len(runs) > MAX_RUNS:
        small = pl.concat(runs[1:]).sort("_key")
        runs = (runs[0], small)
    return runs

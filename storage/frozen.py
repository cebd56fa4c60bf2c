"""The regression set's frozen facts (``ops/regress.py``) when a purge or retention changes what
they hold: each file is frozen again under its new digest, and the cases that named the old file
are rewritten to name the new one.

A case's facts are a copy of events from the log (articles, earlier briefs, model answers), kept so
that a decision can be replayed after the days themselves are gone. What is taken out of the log,
a purged article or messages past their age, is taken out of these copies the same way.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

import polars as pl

from storage.errors import StoreError
from storage.events import event_from_row
from storage.store import ParquetEventStore
from storage.store.base import events_to_segment, read_segments

CASE = "regression.case_added"

Transform = Callable[[pl.DataFrame], pl.DataFrame | None]


def refreeze(store: ParquetEventStore, transform: Transform) -> tuple[dict[str, str | None], set[date]]:
    """Every frozen file that ``transform`` changes (it returns None when a file is untouched),
    frozen again: old path -> new path, and the days of the cases that name a moved file."""
    cases = store.read(event_types=[CASE])
    moves: dict[str, str | None] = {}
    for path in sorted({c.payload["facts"]["path"] for c in cases}):
        try:
            data = store.tree.blobs.get(path)
        except StoreError:  # moved by an earlier pass that stopped before naming the new file
            continue
        changed = transform(read_segments([io.BytesIO(data)]).collect())
        if changed is None:
            continue
        events = [event_from_row(row) for row in changed.iter_rows(named=True)]
        _, moves[path] = store.tree.blobs.put(events_to_segment(events).to_pybytes(), ".events")
        if moves[path] != path:
            store.tree.blobs.delete(path)
    return moves, {c.brief_date for c in cases if c.payload["facts"]["path"] in moves}


def renamed(payload: dict[str, Any], moves: Mapping[str, str | None]) -> dict[str, Any]:
    """A case's payload naming its facts' new file (its digest is the new file's name)."""
    moved = moves.get(payload["facts"]["path"])
    if not moved:
        return payload
    digest = moved.rsplit("/", 1)[-1].split(".", 1)[0]
    return {**payload, "facts": {**payload["facts"], "path": moved, "digest": digest}}


def rename_cases(store: ParquetEventStore, days: set[date], moves: Mapping[str, str | None]) -> None:
    """Rewrite the cases of ``days`` to name the files ``moves`` moved."""
    import orjson

    from storage.events import canonical_json

    def rename(frame: pl.DataFrame) -> pl.DataFrame | None:
        payloads, changed = [], False
        for event_type, text in frame.select("event_type", "payload").iter_rows():
            if event_type == CASE and orjson.loads(text)["facts"]["path"] in moves:
                text, changed = canonical_json(renamed(orjson.loads(text), moves)), True
            payloads.append(text)
        return frame.with_columns(pl.Series("payload", payloads, dtype=pl.String)) if changed else None

    for day in sorted(days):
        store.rewrite(day, rename)

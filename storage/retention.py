"""Retention: bulky technical detail thinned once it is old, applied by ``brief compact``.

``[retention]`` in the config names an event type and an age (``"llm.called" = "90d"``). When
``brief compact`` meets a day older than that, it rewrites the day (``EventStore.rewrite``, the
day's lock held) with those events thinned: each keeps its id, its place and its decision, and
loses its bulk, a digest standing where the text was. Business events (articles, stories,
briefs, people's answers) have no thinning: a rule for one is refused when the config is read.

What each type loses:

- ``llm.called``: each message's ``content`` becomes ``digest`` (blake2b-128 of the text) and
  ``chars``; the ``response`` text becomes its digest. The validated ``output`` stays: it is what
  the brief used, and what a rerun of the day answers from.
- ``feed.fetched``: the raw feed body (``storage/raw.py``) is deleted and ``body`` left out; the
  fetch's status, counts, hash and validators stay. ``brief reparse`` has nothing to read then.

Thinning is idempotent: a thinned event is left as it is.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import orjson
import polars as pl

from storage.events import canonical_json
from storage.store import ParquetEventStore

Thinner = Callable[[dict[str, Any]], "dict[str, Any] | None"]


def text_digest(text: str) -> str:
    return "blake2b:" + hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def thin_llm_called(payload: dict[str, Any]) -> dict[str, Any] | None:
    """Messages and response as digests; None when already thin."""
    messages = payload.get("messages") or []
    response = payload.get("response")
    fat = any("content" in m for m in messages) or (
        response is not None and not response.startswith("blake2b:")
    )
    if not fat:
        return None
    thin = [
        {"role": m.get("role", ""), "digest": text_digest(m["content"]), "chars": str(len(m["content"]))}
        if "content" in m
        else m
        for m in messages
    ]
    if response is not None and not response.startswith("blake2b:"):
        response = text_digest(response)
    return {**payload, "messages": thin, "response": response}


def thin_feed_fetched(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The raw body's reference gone (the body itself is deleted with its day's folder)."""
    if "body" not in payload:
        return None
    return {k: v for k, v in payload.items() if k != "body"}


THINNERS: dict[str, Thinner] = {"llm.called": thin_llm_called, "feed.fetched": thin_feed_fetched}
# the payload text a fat event of each type holds (a cheap look before a day is read whole)
_FAT = {"llm.called": '"content":', "feed.fetched": '"body":'}
_AGE = re.compile(r"^\s*(\d+)\s*d\s*$")


def parse_rules(rules: Mapping[str, str]) -> dict[str, int]:
    """``{"llm.called": "90d"}`` -> ``{"llm.called": 90}``; ValueError naming the bad entry."""
    out = {}
    for event_type, age in rules.items():
        if event_type not in THINNERS:
            raise ValueError(
                f"{event_type!r} cannot be thinned (retention thins {', '.join(sorted(THINNERS))}; "
                "business events are kept whole)"
            )
        match = _AGE.match(str(age))
        if not match or int(match.group(1)) < 1:
            raise ValueError(f'{event_type} = {age!r}: give an age in days, e.g. "90d"')
        out[event_type] = int(match.group(1))
    return out


@dataclass(frozen=True)
class Thinned:
    day: date
    events: dict[str, int]  # event type -> events thinned
    bodies: int  # raw bodies deleted
    files_before: int
    events_total: int


def due(rules: Mapping[str, int], day: date, today: date) -> list[str]:
    """The event types whose age ``day`` has reached (older than their days before ``today``)."""
    return sorted(t for t, days in rules.items() if day < today - timedelta(days=days))


def apply(store: ParquetEventStore, day: date, rules: Mapping[str, int], today: date) -> Thinned | None:
    """Thin the day's events the rules have come due for, compacting the day as it is rewritten;
    None when nothing on that day is due (the caller compacts it as usual)."""
    types = due(rules, day, today)
    if not types:
        return None
    fat = pl.any_horizontal(
        *[(pl.col("event_type") == t) & pl.col("payload").str.contains(_FAT[t], literal=True) for t in types]
    )
    has_fat = not store.query(
        lambda: store.scan([day], event_types=types).filter(fat).select("event_id")
    ).is_empty()
    bodies = store.tree.raw.of_day(day) if "feed.fetched" in types else []
    if not has_fat and not bodies:
        return None
    files_before = len(store.files(day))
    counts: dict[str, int] = {}

    def thin(frame: pl.DataFrame) -> pl.DataFrame | None:
        payloads = []
        for event_type, text in frame.select("event_type", "payload").iter_rows():
            thinner = THINNERS.get(event_type) if event_type in types else None
            thinned = thinner(orjson.loads(text)) if thinner is not None else None
            if thinned is None:
                payloads.append(text)
                continue
            counts[event_type] = counts.get(event_type, 0) + 1
            payloads.append(canonical_json(thinned))
        if not counts and files_before <= 1:
            return None
        return frame.with_columns(pl.Series("payload", payloads, dtype=pl.String))

    result = store.rewrite(day, thin)
    store.tree.raw.drop(day, bodies)  # references are gone first: none points at a deleted body
    return Thinned(day, counts, len(bodies), files_before, result.events_after)


def thin_frozen(store: ParquetEventStore, rules: Mapping[str, int], today: date) -> int:
    """The regression set's frozen copies (``storage/frozen.py``) thinned as the log is: each copied
    event whose day is past its type's age. The number of events thinned."""
    from storage.frozen import refreeze, rename_cases

    thinned = 0

    def thin(frame: pl.DataFrame) -> pl.DataFrame | None:
        nonlocal thinned
        payloads, changed = [], 0
        for event_type, day, text in frame.select("event_type", "brief_date", "payload").iter_rows():
            thinner = THINNERS.get(event_type) if event_type in due(rules, day, today) else None
            out = thinner(orjson.loads(text)) if thinner is not None else None
            payloads.append(text if out is None else canonical_json(out))
            changed += out is not None
        thinned += changed
        return frame.with_columns(pl.Series("payload", payloads, dtype=pl.String)) if changed else None

    moves, days = refreeze(store, thin)
    rename_cases(store, days, moves)
    return thinned

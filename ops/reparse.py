"""``brief reparse --date D``: today's parsers over what was fetched that day.

Every ``feed.fetched`` of the day that kept its body (``storage/raw.py``) is parsed again by the
source's kind as the config now gives it (a fixed parser, a source now declared a digest), and
what it says is appended: an article parsed as before is the same fact (same id) and is not
stored again; one parsed differently is a new ``article.collected``, latest in event order, so
the day's next run (``brief run --date D``) briefs from it. Articles a purge took out stay out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from storage import tombstones
from storage.errors import InputError, StoreError
from storage.events import Event, utcnow
from storage.payloads import FeedFetchedV2
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks.collect import Fetched, Source, feed_events
from tasks.settings import Settings


@dataclass
class Reparsed:
    day: date
    fetches: int = 0  # bodies parsed again
    articles: int = 0  # articles they hold
    written: int = 0  # new events (articles parsed differently)
    skipped: int = 0  # events already in the log
    missing: list[str] = field(default_factory=list)  # why a fetch could not be parsed again


def reparse(settings: Settings, store: ParquetEventStore, day: date) -> Reparsed:
    if day not in store.days():
        raise InputError(f"--date {day}: the log holds nothing of that day; 'brief events' lists the days")
    sources = {s.name: s for s in settings.sources}
    gone = store.tree.purged.tombstones()
    run_id = f"reparse-{day.isoformat()}-{utcnow():%Y%m%dT%H%M%S%f}"
    result = Reparsed(day)
    events: list[Event] = []
    seen: set[tuple[str, str]] = set()
    for fetch in store.read([day], event_types=["feed.fetched"]):
        fetched = payload_of(fetch, FeedFetchedV2)
        name, body = fetched.source, fetched.body
        if fetched.not_modified or (name, str(body)) in seen:
            continue
        seen.add((name, str(body)))
        if not body:
            result.missing.append(
                f"{name}: its body was not kept (fetched before bodies were, or retention dropped it)"
            )
            continue
        if name not in sources:
            result.missing.append(f"{name}: no longer in [[sources]]")
            continue
        try:
            data = store.tree.raw.get(body)
        except StoreError as exc:
            result.missing.append(f"{name}: {exc}")
            continue
        src = sources[name]
        said = feed_events(
            Source(src.name, src.url, src.language, src.kind),
            day,
            run_id,
            at=utcnow(),
            url=fetched.url,
            fetched=Fetched(data, fetched.status),
            keep_body=True,
        )
        # the fetch itself is recorded already: only what it says is appended
        said = [e for e in tombstones.without_purged(said, gone) if not e.event_type.startswith("feed.f")]
        result.fetches += 1
        result.articles += sum(e.event_type == "article.collected" for e in said)
        events += said
    appended = store.append(events)
    result.written, result.skipped = appended.written, appended.skipped
    return result

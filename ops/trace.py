"""``brief trace``: where an item of a brief came from, back to the feed fetch and its bytes.

An item's chain is the events' own lineage (``source_event_ids``, see ``storage/lineage.py``):
the brief's ``brief.published`` names each item's analysis (and its fact-check findings and title
translation); the analysis names the story's score, the score its clustering (and a person's
mark, a model's answer), the clustering its articles' ``article.collected``, each of which names
the ``feed.fetched`` it was read from. ``trace`` follows those ids through the days the brief's
run read (a partition-pruned read per level, never the whole log); ``flows/views/trace.py`` prints
the tree in at most 80 columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

import polars as pl

from storage.errors import InputError, StoreError
from storage.events import Event, event_from_row
from storage.payloads import BriefPublished, BriefWithheld, FeedFetchedV2, Payload
from storage.store import EventStore
from storage.typed import payload_of
from tasks.settings import Settings
from tasks.steps.context import read_days

MIN_PREFIX = 6  # a story may be named by the first characters of its id


@dataclass(frozen=True)
class Node:
    """An event of the chain and the events it names as its sources (``shown_above``: already printed
    higher in the tree, so its sources are not repeated)."""

    event: Event
    sources: tuple[Node, ...] = ()
    shown_above: bool = False
    raw: Mapping[str, str | None] | str | None = None  # a fetch's kept bytes: where, their size, its link


@dataclass(frozen=True)
class Trace:
    day: date
    story: str
    position: int  # the item's number in the brief, from 1
    published: Event
    sources: tuple[Node, ...]  # what the item was written from
    missing: tuple[str, ...] = ()  # ids named but not in the days read (purged, or older)
    days: tuple[date, date] = field(default=(date.min, date.min))  # the days read

    @property
    def version(self) -> int:
        return payload_of(self.published, BriefPublished).version

    @property
    def items(self) -> int:
        return len(payload_of(self.published, BriefPublished).stories)


def trace(store: EventStore, settings: Settings, day: date, story: str) -> Trace:
    """The chain of ``story``'s item in the current brief of ``day``; an ``InputError`` when the day has
    no brief, the brief has no such story, or the brief was published before lineage was recorded."""
    if day not in store.days():
        raise InputError(f"no events for {day}; 'brief stats' lists the days the log holds")
    briefs = store.read([day], event_types=["brief.published"])
    if not briefs:
        held = store.read([day], event_types=["brief.withheld"])
        if held:  # a run again withholds it while its cause holds: not suggested
            last = max(held, key=lambda e: (e.occurred_at, e.seq))
            raise InputError(
                f"no brief is published for {day}: it was withheld by its run {last.run_id} at "
                f"{last.occurred_at:%Y-%m-%d %H:%M} UTC, because {payload_of(last, BriefWithheld).reason}; "
                "nothing to trace"
            )
        raise InputError(f"no brief is published for {day}; run 'brief run --date {day}' first")
    published = max(briefs, key=lambda e: (payload_of(e, BriefPublished).version, e.occurred_at, e.seq))
    brief = payload_of(published, BriefPublished)
    stories: list[str] = list(brief.stories)
    chosen = named_story(stories, story, day, brief.version)
    if not published.source_event_ids:
        raise InputError(
            f"the brief of {day} (v{brief.version}) was published before lineage was "
            "recorded: its event names no sources; a version published now names them"
        )
    earliest = day - timedelta(days=read_days(settings.policy.lookback_hours))
    days = [d for d in store.days() if earliest <= d <= day]
    found: dict[str, Event] = {}
    missing: list[str] = []

    def load(ids: Iterable[str]) -> None:
        wanted = sorted(set(ids) - set(found) - set(missing))
        if not wanted:
            return
        frame = store.query(lambda: store.scan(days).filter(pl.col("event_id").is_in(wanted)))
        for row in frame.iter_rows(named=True):
            found[row["event_id"]] = event_from_row(row)
        missing.extend(i for i in wanted if i not in found)

    load(published.source_event_ids)
    heads = [found[i] for i in published.source_event_ids if i in found and found[i].subject_id == chosen]
    # one read per level of the tree: every id a level names that is not known yet, at once
    level = heads
    while level:
        named = list(dict.fromkeys(i for e in level for i in e.source_event_ids if i not in found))
        load(named)
        level = [found[i] for i in named if i in found]
    raws = {
        event_id: _raw_body(store, event, [e for e in found.values() if event_id in e.source_event_ids])
        for event_id, event in found.items()
        if event.event_type == "feed.fetched" and payload_of(event, FeedFetchedV2).body
    }
    shown: set[str] = set()
    tree = tuple(_node(e, found, shown, raws) for e in heads)
    chained = _named(heads, found)
    return Trace(
        day,
        chosen,
        stories.index(chosen) + 1,
        published,
        tree,
        tuple(i for i in missing if i in chained),
        (days[0], days[-1]),
    )


def _raw_body(store: EventStore, fetched: Event, articles: Sequence[Event]) -> dict[str, str]:
    """Where the fetch's bytes are kept, their size, whether they are still the bytes fetched, and
    where in them each traced article's link stands (the raw body a parser fix would re-read)."""
    from storage import raw

    fetch = payload_of(fetched, FeedFetchedV2)
    relative = str(fetch.body)
    tree = getattr(store, "tree", None)  # an in-memory store keeps no body
    if tree is None:
        return {"kept at": relative}
    try:
        data = tree.raw.get(relative)
    except StoreError as problem:
        return {"kept at": relative, "now": str(problem)}
    same = raw.digest(data) == fetch.content_hash
    out = {
        "kept at": relative,
        "size": f"{len(data):,} bytes",
        "check": "the bytes fetched" if same else "rewritten since (a purge took an item out)",
    }
    for article in articles:
        url = str(getattr(payload_of(article, Payload), "url", None) or "").encode()
        at = data.find(url) if url else -1
        if at >= 0:
            out["item"] = f"link at byte {at:,}"
            break
    return out


def named_story(stories: Sequence[str], wanted: str, day: date, version: int) -> str:
    """The story of ``stories`` (the brief of ``day``, v``version``) that ``wanted`` names: its id,
    or the first ``MIN_PREFIX`` characters or more of one id alone (InputError: none, or several)."""
    if wanted in stories:
        return wanted
    hits = [s for s in stories if len(wanted) >= MIN_PREFIX and s.startswith(wanted)]
    if len(hits) == 1:
        return hits[0]
    how = f"'brief events --date {day} --type brief.published --format jsonl' lists its stories"
    if len(hits) > 1:
        raise InputError(
            f"story {wanted!r} is ambiguous: it names {len(hits)} items of the brief of {day} "
            f"({', '.join(hits)}); give more of its id"
        )
    if len(wanted) < MIN_PREFIX and any(s.startswith(wanted) for s in stories):
        raise InputError(
            f"story {wanted!r} is too short to name an item: give {MIN_PREFIX} characters or more"
        )
    raise InputError(f"story {wanted!r} is not an item of the brief of {day} (v{version}); {how}")


def names(stories: Iterable[str], wanted: str) -> bool:
    """Whether ``wanted`` names one of ``stories``: its id, or a prefix long enough to name one."""
    return any(s == wanted or (len(wanted) >= MIN_PREFIX and s.startswith(wanted)) for s in stories)


def briefs_stories(
    store: EventStore, days: Iterable[date] | None = None
) -> dict[date, tuple[int, list[str]]]:
    """Each day's published stories (day -> its latest version, the stories of every version of it:
    a story retracted from the current one is still named)."""
    out: dict[date, tuple[int, list[str]]] = {}
    for event in store.read(days, event_types=["brief.published"]):
        brief = payload_of(event, BriefPublished)
        version, stories = out.get(event.brief_date, (0, []))
        out[event.brief_date] = (max(version, brief.version), list(dict.fromkeys([*stories, *brief.stories])))
    return out


def _node(
    event: Event, found: Mapping[str, Event], shown: set[str], raws: Mapping[str, Mapping[str, str]]
) -> Node:
    raw = raws.get(event.event_id)
    if event.event_id in shown and event.source_event_ids:
        return Node(event, shown_above=True, raw=raw)
    shown.add(event.event_id)
    sources = tuple(_node(found[i], found, shown, raws) for i in event.source_event_ids if i in found)
    return Node(event, sources, raw=raw)


def _named(heads: Sequence[Event], found: Mapping[str, Event]) -> set[str]:
    """Every id the item's chain names (to report the ones not found)."""
    named: set[str] = set()
    todo = list(heads)
    while todo:
        event = todo.pop()
        for i in event.source_event_ids:
            if i not in named:
                named.add(i)
                if i in found:
                    todo.append(found[i])
    return named

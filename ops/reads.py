"""What the desk's pages show, read from the log and the published files (no state of its own):
the services its routers call and render."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

import polars as pl

from storage.brief import Brief
from storage.errors import InputError
from storage.payloads import BriefPublished, BriefWithheld, StoryScored
from storage.projections import materialize
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks import deliver


@dataclass(frozen=True)
class Version:
    version: int
    items: int
    published_at: str
    run_id: str


def versions(store: ParquetEventStore, days: list[date] | None = None) -> dict[date, list[Version]]:
    """Every published version per brief date (newest date first, versions in order)."""
    frame = store.query(lambda: store.scan(days, event_types=["brief.published"]))
    out: dict[date, list[Version]] = {}
    for row in frame.sort(["occurred_at", "seq"]).iter_rows(named=True):
        p = payload_of(row, BriefPublished)
        out.setdefault(row["brief_date"], []).append(
            Version(p.version, p.items, row["occurred_at"].strftime("%Y-%m-%d %H:%M UTC"), row["run_id"])
        )
    return dict(sorted(out.items(), reverse=True))


def keep_decoded(store: ParquetEventStore, limit_bytes: int) -> bool:
    """Have the store keep the log's files decoded in memory (``storage/store/decoded.py``): every
    page reads a month of the log, each file of it is decoded once per process. False: an object
    store, whose files are read as each page asks."""
    return store.keep_decoded(limit_bytes)


def warm(store: ParquetEventStore, days: int) -> None:
    """Decode the latest ``days`` days' files now (the desk does it in a thread as it starts
    serving), so that no page's first load decodes them."""
    latest = store.days()[-days:]
    store.raw_units([u for d in latest for u in store.units(d)])


def latest_day(store: ParquetEventStore) -> date | None:
    """The most recent date with a published brief, looking at the newest days of the log first."""
    days = sorted(store.days(), reverse=True)
    for k in range(0, len(days), 10):
        found = versions(store, days[k : k + 10])
        if found:
            return next(iter(found))
    return None


def document(store: ParquetEventStore, day: date, version: int | None = None) -> Brief:
    """The brief readers got: the current version, or a given one (its own copy)."""
    briefs = store.tree.briefs
    path = briefs.current(day) if version is None else briefs.version(day, version)
    try:
        return briefs.read(path)
    except (FileNotFoundError, OSError):
        if version is None:
            raise InputError(f"no brief is published for {day}") from None
        numbers = [n for n, _ in briefs.versions(day)]
        has = f"; it has v{numbers[0]} to v{numbers[-1]}" if numbers else ""
        raise InputError(f"no version {version} of the brief of {day} is published{has}") from None


def current(store: ParquetEventStore, day: date) -> Brief | None:
    """The day's current brief, None when none is published."""
    return store.tree.briefs.current_document(day)


@dataclass(frozen=True)
class Withheld:
    """The last time a run of the day withheld its brief: why, and which run."""

    at: datetime
    run_id: str
    withheld: BriefWithheld


def withheld(store: ParquetEventStore, day: date) -> Withheld | None:
    """The day's last ``brief.withheld`` (None: no run of the day withheld its brief)."""
    frame = store.query(lambda: store.scan([day], event_types=["brief.withheld"]))
    if frame.is_empty():
        return None
    row = frame.sort(["occurred_at", "seq"]).row(-1, named=True)
    return Withheld(row["occurred_at"], row["run_id"], payload_of(row, BriefWithheld))


def open_questions(store: ParquetEventStore, day: date) -> list[dict]:
    """The day's open questions, batch by batch, highest priority first (as ``brief review`` asks),
    but those about a story retracted from the day's brief (``moot_questions``): nothing asks them."""
    asked, _ = questions_of(store, day)
    return asked


def questions_of(store: ParquetEventStore, day: date) -> tuple[list[dict], list[dict]]:
    """The day's open questions, and apart from them the moot ones (``ops.changes.moot_questions``:
    about a story whose retraction stands). Answering those changes nothing readers see."""
    from ops.changes import moot_questions

    frame = materialize(store, "questions", days=[day])
    frame = frame.filter((pl.col("status") == "open") & (pl.col("brief_date") == day))
    rows = list(frame.iter_rows(named=True))
    moot = moot_questions(store, day, rows)
    return [q for q in rows if q["question_id"] not in moot], [q for q in rows if q["question_id"] in moot]


def standing_retractions(store: ParquetEventStore, day: date) -> dict[str, str]:
    """The day's retractions not undone: story id -> the retraction's event id."""
    from ops.changes import standing_retractions as standing

    return standing(store, day)


def delivery_state(store: ParquetEventStore, day: date) -> deliver.DayState:
    return deliver.fold(store.read(days=[day], event_types=deliver.DELIVERY_TYPES))


@dataclass(frozen=True)
class LeftOut:
    """A story of the day the topic filter (or a person's mark) left out of the brief."""

    story_id: str
    title: str
    relevance: float
    marked_by: str | None
    members: tuple[str, ...]  # its articles, as the log clusters them now


def left_out(store: ParquetEventStore, day: date, shown: set[str]) -> list[LeftOut]:
    """The day's stories whose latest score (in the run that scored last) is off the topic and that
    are not among the brief's items ``shown``: the stories its "left out" line counts."""
    frame = store.query(lambda: store.scan([day], event_types=["story.scored"]))
    if frame.is_empty():
        return []
    rows = list(frame.sort(["occurred_at", "seq"]).iter_rows(named=True))
    last_run = rows[-1]["run_id"]
    latest = {p.story_id: p for p in (payload_of(r, StoryScored) for r in rows if r["run_id"] == last_run)}
    stories = materialize(store, "stories", days=[day])
    members = {r["story_id"]: tuple(r["members"]) for r in stories.iter_rows(named=True)}
    return [
        LeftOut(s.story_id, s.title, s.relevance, s.marked_by, members.get(s.story_id, ()))
        for s in latest.values()
        if s.outcome == "off-topic" and s.story_id not in shown
    ]


@dataclass(frozen=True)
class Article:
    """One article of a story, as a form lists it: its id, outlet and headline."""

    article_id: str
    source: str
    title: str


def story_articles(store: ParquetEventStore, day: date, stories: set[str]) -> dict[str, list[Article]]:
    """Every article of each of the day's ``stories`` as the log clusters them now (the brief
    cites some of them only), in a stable order."""
    clustered = materialize(store, "stories", days=[day]).filter(pl.col("story_id").is_in(list(stories)))
    members = {r["story_id"]: list(r["members"]) for r in clustered.iter_rows(named=True)}
    wanted = [a for m in members.values() for a in m]
    found = materialize(store, "articles", days=[day]).filter(pl.col("article_id").is_in(wanted))
    known = {r["article_id"]: r for r in found.iter_rows(named=True)}

    def article(a: str) -> Article:
        row = known.get(a, {})
        return Article(a, row.get("source") or "?", row.get("title") or a)

    return {s: [article(a) for a in sorted(m)] for s, m in members.items()}

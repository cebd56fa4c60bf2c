"""Search past briefs and articles by words, over the log and the published files (no index).

- **Articles**: the ``article.collected`` events of the dates asked, each payload (JSON text)
  tested with ``str.contains`` for every word (case-insensitive) inside the scan, so only the
  rows that match are decoded; their title and summary must then hold every word themselves
  (not only the link or the feed's tags). Each article names the story it was clustered into.
- **Briefs**: each date's current brief (its published JSON file): the items whose headline,
  summary, translation or facts hold every word.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date

import polars as pl

from ops.reads import document
from storage.errors import InputError
from storage.payloads import ArticleCollectedV4, StoryClustered
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks.render import without_tracking
from tasks.write import safe_url

MAX_WORDS = 8
MAX_RESULTS = 200


@dataclass(frozen=True)
class BriefHit:
    """An item of a day's current brief that holds every word."""

    day: date
    version: int
    story_id: str
    title: str
    summary: str
    correction: str | None


@dataclass
class ArticleHit:
    """An article whose title and summary hold every word, and the story it was clustered into."""

    day: date
    article_id: str
    title: str
    source: str
    language: str
    href: str | None  # None: a link not safe to show
    story_id: str | None = None


@dataclass
class Results:
    words: list[str]
    briefs: list[BriefHit]
    articles: list[ArticleHit]
    truncated: bool


def words_of(text: str) -> list[str]:
    words = [w for w in text.split() if w]
    if len(words) > MAX_WORDS:
        raise InputError(f"at most {MAX_WORDS} words, please; {len(words)} were given")
    return words


def _holds_all(words: list[str], *texts: str | None) -> bool:
    text = " ".join(t for t in texts if t).casefold()
    return all(w.casefold() in text for w in words)


def search(store: ParquetEventStore, text: str, start: date, end: date) -> Results:
    """Briefs and articles of ``start`` .. ``end`` that hold every word of ``text``."""
    if end < start:
        raise InputError(f"the range ends ({end}) before it starts ({start}); swap the dates")
    words = words_of(text)
    if not words:
        return Results([], [], [], False)
    days = [d for d in store.days() if start <= d <= end]
    briefs = _briefs(store, words, days)
    articles, truncated = _articles(store, words, days)
    return Results(words, briefs, articles, truncated)


def _briefs(store: ParquetEventStore, words: list[str], days: list[date]) -> list[BriefHit]:
    published = store.query(
        lambda: store.scan(days, event_types=["brief.published"]).select("brief_date").unique()
    )
    found = []
    for day in sorted(published["brief_date"], reverse=True):
        try:
            doc = document(store, day)
        except InputError:
            continue
        for item in doc.items:
            facts = " ".join(f.text for f in item.facts)
            if _holds_all(words, item.title, item.translated_title, item.summary, facts):
                found.append(
                    BriefHit(day, doc.version, item.story_id, item.title, item.summary, item.correction)
                )
    return found


def _articles(store: ParquetEventStore, words: list[str], days: list[date]) -> tuple[list[ArticleHit], bool]:
    wanted = pl.lit(True)
    for w in words:
        escaped = json.dumps(w, ensure_ascii=False)[1:-1]  # as the word is written inside JSON text
        wanted = wanted & pl.col("payload").str.contains("(?i)" + re.escape(escaped))
    hits = store.query(
        lambda: (
            store.scan(days, event_types=["article.collected"])
            .filter(wanted)
            .select("brief_date", "subject_id", "event_type", "schema_version", "payload", "occurred_at")
        )
    ).sort("brief_date", "occurred_at", descending=True)
    rows: dict[str, ArticleHit] = {}
    for row in hits.iter_rows(named=True):
        if row["subject_id"] in rows:
            continue  # the same article collected again on an earlier date: the newest stands
        p = payload_of(row, ArticleCollectedV4)
        if not _holds_all(words, p.title, p.summary):
            continue
        rows[row["subject_id"]] = ArticleHit(
            row["brief_date"],
            row["subject_id"],
            p.title,
            p.outlet or p.source,
            p.language or "",
            safe_url(without_tracking(p.url or "")),
        )
    truncated = len(rows) > MAX_RESULTS
    found = list(rows.values())[:MAX_RESULTS]
    if found:
        ids = [r.article_id for r in found]
        clustered = store.query(
            lambda: (
                store.scan(days, event_types=["story.clustered"])
                .filter(pl.col("payload").str.contains_any(ids))
                .select("subject_id", "event_type", "schema_version", "payload")
            )
        )
        story_of = {}
        for row in clustered.iter_rows(named=True):
            for member in payload_of(row, StoryClustered).members:
                story_of[member] = row["subject_id"]
        for r in found:
            r.story_id = story_of.get(r.article_id)
    return found, truncated

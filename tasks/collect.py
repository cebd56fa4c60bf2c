"""What one source says for one brief date: parse, normalise, and say it as events.

Pure: the fetching (HTTP, files, retries, the clock) is ``tasks/steps/collect.py``'s; this
module turns what was fetched into events. A broken source never raises: it becomes one
``feed.failed`` event with a structured reason (``{"error": "HTTP_500", "retryable": true}``),
and the caller goes on with the rest.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import feedparser

from storage.events import Event, new_event
from tasks.normalize import article_id, canonical_url, clean_text, content_hash, guess_language, published_utc

PRODUCER = "collect@1"
MAX_BYTES = 10 * 1024 * 1024
RETRYABLE_STATUS = {408, 425, 429, 500, 502, 503, 504}


@dataclass(frozen=True)
class Source:
    name: str
    url: str
    language: str | None = None

    def url_for(self, day: date) -> str:
        return self.url.replace("{date}", day.isoformat())

    @property
    def is_archive(self) -> bool:
        """A dated archive (``…/{date}.xml``): past days can be collected again."""
        return "{date}" in self.url


class FetchError(Exception):
    def __init__(self, code: str, message: str, retryable: bool, attempts: int = 1) -> None:
        super().__init__(message)
        self.code, self.message, self.retryable, self.attempts = code, message, retryable, attempts


@dataclass(frozen=True)
class Fetched:
    body: bytes
    status: int
    content_type: str | None = None
    attempts: int = 1
    etag: str | None = None
    last_modified: str | None = None

    @property
    def not_modified(self) -> bool:
        return self.status == 304


@dataclass(frozen=True)
class Validators:
    """What the last fetch of a URL said, for a conditional GET (and the content it had)."""

    etag: str | None = None
    last_modified: str | None = None
    content_hash: str | None = None


def parse_feed(body: bytes) -> Any:
    """feedparser's result, or a ``FetchError`` for a body that is not a feed at all."""
    parsed = feedparser.parse(body)
    if not parsed.entries:
        head = body[:512].lstrip().lower()
        if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head:
            raise FetchError("NOT_A_FEED", "the server sent an HTML page, not a feed", retryable=False)
        if parsed.get("bozo"):
            reason = str(parsed.get("bozo_exception", "unreadable"))[:200]
            raise FetchError("MALFORMED_FEED", f"malformed feed: {reason}", retryable=False)
        if not parsed.get("version"):
            raise FetchError("NOT_A_FEED", "no RSS or Atom feed in the response", retryable=False)
    return parsed


def feed_events(
    source: Source,
    day: date,
    run_id: str,
    *,
    at: datetime,
    url: str,
    fetched: Fetched,
    validators: Validators | None = None,
    elapsed_ms: float = 0.0,
) -> list[Event]:
    """What a fetched body says for ``day``: ``feed.fetched`` and its articles, or ``feed.failed``."""
    if fetched.not_modified:
        return [_fetched_event(source, day, run_id, at, url, fetched, validators, 0, elapsed_ms)]
    try:
        parsed = parse_feed(fetched.body)
    except FetchError as exc:
        return [failed_event(source, day, run_id, at, url, exc)]
    fetch_event = _fetched_event(
        source, day, run_id, at, url, fetched, validators, len(parsed.entries), elapsed_ms
    )
    events = [fetch_event]
    declared = source.language or parsed.feed.get("language")
    feed_time = published_utc(parsed.feed)
    for seq, entry in enumerate(parsed.entries, start=1):
        link = (entry.get("link") or entry.get("id") or "").strip()
        title = clean_text(entry.get("title"))
        if not link or not title:
            continue
        body = entry.get("content", [{}])[0].get("value") if entry.get("content") else None
        summary = clean_text(entry.get("summary") or body)[:2000]
        when = published_utc(entry) or feed_time  # an undated item takes its feed's own date
        events.append(
            new_event(
                "article.collected",
                {
                    "article_id": article_id(link, source.name),
                    "source": source.name,
                    "url": link,
                    "canonical_url": canonical_url(link),
                    "title": title,
                    "summary": summary,
                    "published_at": when.isoformat() if when else None,
                    "language": guess_language(f"{title} {summary}", declared),
                    "content_hash": content_hash(title, summary),
                    "tags": feed_tags(entry),
                },
                brief_date=day,
                run_id=run_id,
                subject_id=article_id(link, source.name),
                produced_by=PRODUCER,
                occurred_at=at,
                seq=seq,
                source_event_ids=[fetch_event.event_id],
            )
        )
    return events


def live_skip_reason(day: date, today: date) -> str | None:
    """Why a live feed (a URL without ``{date}``) is not fetched for ``day``; None when ``day`` is today."""
    if day < today:
        return "a live feed cannot be replayed for a past date"
    if day > today:
        return "a live feed has no news of a later date yet"
    return None


def failed_event(source: Source, day: date, run_id: str, at: datetime, url: str, exc: FetchError) -> Event:
    """``feed.failed`` with the structured reason (``{"error": "HTTP_500", "retryable": true}``)."""
    return new_event(
        "feed.failed",
        {
            "source": source.name,
            "url": url,
            "error": exc.code,
            "retryable": exc.retryable,
            "message": exc.message,
            "attempts": exc.attempts,
        },
        brief_date=day,
        run_id=run_id,
        subject_id=source.name,
        produced_by=PRODUCER,
        occurred_at=at,
    )


def feed_tags(entry: Any, limit: int = 20) -> list[str]:
    """The entry's own categories and tags as the outlet wrote them (clean text, each once)."""
    out: list[str] = []
    for tag in entry.get("tags") or []:
        term = clean_text(tag.get("term") or tag.get("label") or "")[:100]
        if term and term not in out:
            out.append(term)
    return out[:limit]


def _fetched_event(
    source: Source,
    day: date,
    run_id: str,
    at: datetime,
    url: str,
    fetched: Fetched,
    validators: Validators | None,
    items: int,
    elapsed_ms: float,
) -> Event:
    """``feed.fetched``; a 304 keeps the validators and content hash of the fetch it confirms."""
    if fetched.not_modified:
        digest = (validators.content_hash if validators else None) or "not-modified"
    else:
        digest = hashlib.blake2b(fetched.body, digest_size=16).hexdigest()
    return new_event(
        "feed.fetched",
        {
            "source": source.name,
            "url": url,
            "status": fetched.status,
            "content_hash": digest,
            "items": items,
            "bytes": len(fetched.body),
            "etag": fetched.etag,
            "last_modified": fetched.last_modified,
            "not_modified": fetched.not_modified,
            "elapsed_ms": round(elapsed_ms, 1),
        },
        brief_date=day,
        run_id=run_id,
        subject_id=source.name,
        produced_by=PRODUCER,
        occurred_at=at,
    )

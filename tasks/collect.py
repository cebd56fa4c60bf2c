"""What one source says for one brief date: parse, normalise, and say it as events.

Pure: the fetching (HTTP, files, retries, the clock) is ``tasks/steps/collect.py``'s; this
module turns what was fetched into events. A broken source never raises: it becomes one
``feed.failed`` event with a structured reason (``{"error": "HTTP_500", "retryable": true}``),
and the caller goes on with the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import urlsplit

import feedparser

from storage.events import Event, new_event
from storage.raw import body_path
from storage.raw import digest as body_digest
from tasks.kinds import Article, FeedInfo, parse_entry
from tasks.normalize import article_id, canonical_url, content_hash, guess_language, published_utc

PRODUCER = "collect@1"
MAX_BYTES = 10 * 1024 * 1024
RETRYABLE_STATUS = {408, 425, 429, 500, 502, 503, 504}


@dataclass(frozen=True)
class Source:
    name: str
    url: str
    language: str | None = None  # an ISO 639-1 code; None: the feed's own; "auto": each item's script
    kind: str = "news"

    def url_for(self, day: date) -> str:
        return self.url.replace("{date}", day.isoformat())

    @property
    def is_archive(self) -> bool:
        """A dated archive (``…/{date}.xml``): past days can be collected again."""
        return "{date}" in self.url

    @property
    def over_http(self) -> bool:
        """Fetched over HTTP(S), where the validators of the last fetch can spare a download."""
        return urlsplit(self.url).scheme in ("http", "https")


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


@dataclass
class _Read:
    """A parsed feed (feedparser's result, read-only) and, per kind of source, its entries as that
    kind's parser reads them (``listed``): neither depends on anything but the body."""

    parsed: Any
    entries: dict[str, tuple[tuple[int, Article], ...]]


_PARSED: OrderedDict[bytes, _Read] = OrderedDict()  # body digest -> the feed, parsed and read
_PARSED_SIZE = 48
_PARSED_LOCK = threading.Lock()


def parse_feed(body: bytes) -> Any:
    """feedparser's result, or a ``FetchError`` for a body that is not a feed at all.

    The latest results are remembered by the body's digest: a backfill reads each day's
    archive up to three times (all dates first, then the date, then as the next date's day
    before), and parsing is most of collecting.
    """
    return _read(body).parsed


def _read(body: bytes) -> _Read:
    digest = hashlib.blake2b(body, digest_size=16).digest()
    with _PARSED_LOCK:
        if digest in _PARSED:
            _PARSED.move_to_end(digest)
            return _PARSED[digest]
    read = _Read(_parse(body), {})
    with _PARSED_LOCK:
        _PARSED[digest] = read
        while len(_PARSED) > _PARSED_SIZE:
            _PARSED.popitem(last=False)
    return read


def listed(body: bytes, kind: str) -> tuple[Any, tuple[tuple[int, Article], ...]]:
    """The parsed feed and its articles as a ``kind`` source's parser reads its entries, each with
    its entry's number (from 1). Remembered with the parsed feed: reading the entries (their text
    and tags cleaned of markup) took two thirds of what a parsed body's events cost, and a backfill
    reads each archive file several times (as its date's, then in the next dates' lookback)."""
    read = _read(body)
    found = read.entries.get(kind)
    if found is None:
        feed = FeedInfo(published_utc(read.parsed.feed))
        found = tuple(
            (number, article)
            for number, entry in enumerate(read.parsed.entries, start=1)
            for article in parse_entry(kind, entry, feed)
        )
        read.entries[kind] = found  # the same tuple whichever thread made it first
    return read.parsed, found


KEPT_AT_MOST = 1024  # parsed feeds a backfill keeps: about 200 MB of feeds of today's size


@contextlib.contextmanager
def keeping_parsed(files: int) -> Iterator[None]:
    """While it lasts, the latest ``files`` parsed feeds are remembered (at most ``KEPT_AT_MOST``,
    at least as many as always): a backfill parses every date's archive files before the dates'
    runs, which each read theirs again."""
    global _PARSED_SIZE
    before = _PARSED_SIZE
    with _PARSED_LOCK:
        _PARSED_SIZE = max(before, min(files, KEPT_AT_MOST))
    try:
        yield
    finally:
        with _PARSED_LOCK:
            _PARSED_SIZE = before
            while len(_PARSED) > _PARSED_SIZE:
                _PARSED.popitem(last=False)


def _parse(body: bytes) -> Any:
    try:
        parsed = feedparser.parse(_repair_references(body))
    except Exception as exc:  # feedparser's own failure on a body it cannot read is this feed's failure
        reason = one_line(f"{type(exc).__name__}: {exc}")[:200]
        raise FetchError("MALFORMED_FEED", f"malformed feed: {reason}", retryable=False) from None
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


_CHAR_REF = re.compile(rb"&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));")


def _code(ref: re.Match[bytes]) -> int:
    digits = ref[1] or ref[2]
    if len(digits) > 8:
        return -1
    return int(digits, 16) if ref[1] else int(digits)


def _named(code: int) -> bool:
    return 0 <= code <= 0x10FFFF and not 0xD800 <= code < 0xE000


def _repair_references(body: bytes) -> bytes:
    """Character references that name no character (``&#xD800;``, ``&#99999999999;``), which stop
    feedparser's lenient parser, as the character meant: a UTF-16 pair of references (an emoji
    as ``&#55357;&#56832;``, as some publishing systems write it) as that one character, any
    other as U+FFFD. Only in bodies of an ASCII-compatible encoding (UTF-16 and UTF-32 bodies
    are left as they are)."""
    if b"&#" not in body or body[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in body[:4]:
        return body
    refs = list(_CHAR_REF.finditer(body))
    out, last, k = [], 0, 0
    while k < len(refs):
        ref, code = refs[k], _code(refs[k])
        k += 1
        if _named(code):
            continue
        out.append(body[last : ref.start()])
        last = ref.end()
        low = refs[k] if k < len(refs) and refs[k].start() == ref.end() else None
        if 0xD800 <= code < 0xDC00 and low is not None and 0xDC00 <= _code(low) < 0xE000:
            out.append(b"&#x%X;" % (0x10000 + ((code - 0xD800) << 10) + (_code(low) - 0xDC00)))
            last, k = low.end(), k + 1
        else:
            out.append(b"&#xFFFD;")
    return b"".join([*out, body[last:]]) if out else body


def one_line(text: str) -> str:
    """``text`` with its line breaks and runs of spaces as single spaces."""
    return " ".join(text.split())


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
    keep_body: bool = False,
) -> list[Event]:
    """What a fetched body says for ``day``: ``feed.fetched`` and its articles, or ``feed.failed``.

    ``keep_body``: ``feed.fetched`` names where the body is kept (``storage/raw.py``); the caller
    writes it there before it appends the events."""
    if fetched.not_modified:
        return [_fetched_event(source, day, run_id, at, url, fetched, validators, 0, elapsed_ms)]
    try:
        parsed, articles = listed(fetched.body, source.kind)
    except FetchError as exc:
        return [failed_event(source, day, run_id, at, url, exc)]
    fetch_event = _fetched_event(
        source, day, run_id, at, url, fetched, validators, len(parsed.entries), elapsed_ms, keep_body
    )
    events = [fetch_event]
    declared = None if source.language == "auto" else source.language or parsed.feed.get("language")
    kept = newest_per_link([article for _, article in articles])
    seq = 0
    for (number, article), keep in zip(articles, kept, strict=True):
        if not keep:
            continue
        seq = max(seq + 1, number)  # the entry's number, as before kinds (a digest's stories follow it)
        collected = article_payload(source, article, declared)
        events.append(
            new_event(
                "article.collected",
                collected,
                brief_date=day,
                run_id=run_id,
                subject_id=collected["article_id"],
                produced_by=PRODUCER,
                occurred_at=at,
                seq=seq,
                source_event_ids=[fetch_event.event_id],
            )
        )
        if article.warning:
            events.append(_warned_event(source, day, run_id, at, url, article, fetch_event))
    return events


def newest_per_link(articles: Sequence[Article]) -> list[bool]:
    """Which of a feed's articles are collected. A link names one article: when a feed lists
    several entries under one link (z.ai's release notes all link one page), only the newest is
    collected (the first listed of equally new ones); collecting every one would leave the
    article whatever the last listed entry said, the oldest release."""
    newest: dict[str, int] = {}
    for k, article in enumerate(articles):
        best = newest.get(article.url)
        if best is None or _later(article.published, articles[best].published):
            newest[article.url] = k
    chosen = set(newest.values())
    return [k in chosen for k in range(len(articles))]


def _later(a: datetime | None, b: datetime | None) -> bool:
    return a is not None and (b is None or a > b)


def article_payload(source: Source, article: Article, declared: str | None) -> dict[str, Any]:
    """``article.collected``'s payload; a news article's is what it was before kinds existed."""
    key = article_id(article.url, source.name, position=article.position)
    canonical = canonical_url(article.url)
    payload: dict[str, Any] = {
        "article_id": key,
        "source": source.name,
        "url": article.url,
        "canonical_url": f"{canonical}#{article.position}" if article.position else canonical,
        "title": article.title,
        "summary": article.summary,
        "published_at": article.published.isoformat() if article.published else None,
        "language": guess_language(f"{article.title} {article.summary}", declared),
        "content_hash": content_hash(article.title, article.summary),
        "tags": list(article.tags),  # the article is shared by every read of its feed
    }
    if source.kind == "news":
        return payload
    evidence = article.evidence.as_dict()
    return {
        **payload,
        "kind": source.kind,
        "outlet": article.outlet,
        "discussion_url": article.discussion_url,
        "evidence": evidence or None,
    }


def _warned_event(
    source: Source, day: date, run_id: str, at: datetime, url: str, article: Article, fetch_event: Event
) -> Event:
    """``feed.warned``: an entry its kind could not read as such (it was kept as one article)."""
    code, _, message = (article.warning or "").partition(": ")
    return new_event(
        "feed.warned",
        {"source": source.name, "url": url, "entry_url": article.url, "warning": code, "message": message},
        brief_date=day,
        run_id=run_id,
        subject_id=source.name,
        produced_by=PRODUCER,
        occurred_at=at,
        source_event_ids=[fetch_event.event_id],
    )


def live_skip_reason(day: date, today: date) -> str | None:
    """Why a live feed (a URL without ``{date}``) is not fetched for ``day``; None when ``day`` is today."""
    if day < today:
        return "a live feed cannot be replayed for a past date"
    if day > today:
        return "a live feed has no news of a later date yet"
    return None


def archive_skip_reason(day: date, dated: Iterable[date]) -> str | None:
    """Why a dated archive is not read for ``day``: every file it holds is of a later date.

    The archive did not exist yet on that day, so nothing failed; a day missing between its
    first and last files (or after them) is a failure, as a collector that did not run is.
    """
    first = min(dated, default=None)
    if first is not None and day < first:
        return f"the archive starts on {first.isoformat()}"
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
    keep_body: bool = False,
) -> Event:
    """``feed.fetched``; a 304 keeps the validators and content hash of the fetch it confirms."""
    if fetched.not_modified:
        digest = (validators.content_hash if validators else None) or "not-modified"
    else:
        digest = body_digest(fetched.body)  # the name its kept body is stored under
    body = body_path(day.isoformat(), digest) if keep_body and not fetched.not_modified else None
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
            "body": body,
        },
        brief_date=day,
        run_id=run_id,
        subject_id=source.name,
        produced_by=PRODUCER,
        occurred_at=at,
    )

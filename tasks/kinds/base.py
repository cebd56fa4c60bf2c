"""What a kind's parser gives back: articles with typed evidence, and the feed's own facts it needs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from urllib.parse import urlsplit

from tasks.normalize import clean_text, published_utc

SUMMARY_CHARS = 2000


@dataclass(frozen=True)
class FeedInfo:
    """What the feed says of itself that an entry may need: the time of this snapshot."""

    time: datetime | None = None


@dataclass(frozen=True)
class Evidence:
    """What a source says of an item besides its text (counts as the source gave them)."""

    points: int | None = None
    comments: int | None = None
    stars: int | None = None
    stars_today: int | None = None
    repo_language: str | None = None
    upvotes: int | None = None
    digest_position: int | None = None

    def as_dict(self) -> dict[str, int | str]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class Article:
    """One article an entry yields. ``url`` names it (its id); ``position`` is its place in a digest."""

    url: str
    title: str
    summary: str
    published: datetime | None
    tags: list[str] = field(default_factory=list)
    outlet: str | None = None
    discussion_url: str | None = None
    position: int | None = None
    evidence: Evidence = Evidence()
    warning: str | None = None  # why the entry could not be read as its kind (it stays one item)


class Parser(Protocol):
    def __call__(self, entry: Mapping[str, Any], feed: FeedInfo) -> list[Article]: ...


def entry_link(entry: Mapping[str, Any]) -> str:
    return (entry.get("link") or entry.get("id") or "").strip()


def entry_text(entry: Mapping[str, Any]) -> str:
    """The entry's summary as the feed wrote it (HTML), else its content."""
    content = entry.get("content")
    body = content[0].get("value") if content else None
    return entry.get("summary") or body or ""


def feed_tags(entry: Mapping[str, Any], limit: int = 20) -> list[str]:
    """The entry's own categories and tags as the outlet wrote them (clean text, each once)."""
    out: list[str] = []
    for tag in entry.get("tags") or []:
        term = clean_text(tag.get("term") or tag.get("label") or "")[:100]
        if term and term not in out:
            out.append(term)
    return out[:limit]


def as_written(entry: Mapping[str, Any], feed: FeedInfo) -> list[Article]:
    """The entry as its outlet wrote it: link, title, summary (or content), date, tags."""
    link, title = entry_link(entry), clean_text(entry.get("title"))
    if not link or not title:
        return []
    summary = clean_text(entry_text(entry))[:SUMMARY_CHARS]
    when = published_utc(entry) or feed.time  # an undated item takes its feed's own date
    return [Article(link, title, summary, when, feed_tags(entry))]


def host(url: str) -> str:
    """``techcrunch.com`` for ``https://www.techcrunch.com/…``; empty for a link that names no host
    (or that no URL parser reads: ``http://[::1``)."""
    try:
        name = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""
    return name[4:] if name.startswith("www.") else name


def html_lines(html: str) -> list[str]:
    """The lines of a short HTML text (``<br/>`` separated), as clean text."""
    return [
        clean_text(part) for part in re.split(r"<br\s*/?>", html, flags=re.IGNORECASE) if clean_text(part)
    ]


def count(text: str) -> int | None:
    """``4,091`` → 4091 (the first number in ``text``); None for a number too long to be a count
    (more than 15 digits: no event could store it)."""
    found = re.search(r"\d[\d,]*", text)
    digits = found.group().replace(",", "") if found else ""
    return int(digits) if 0 < len(digits) <= 15 else None

"""``community``: Hacker News. The item is the linked article, named by its host; the
discussion is a second link, and points and comments are evidence, never the summary.

An entry's summary is metadata (``Score: 643<br/>Comments: 370<br/>By: …<br/>Discussion: <a
href=…>``). A post whose link is its own discussion (Ask, Show or Tell HN without a link) is
itself the article, from Hacker News.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tasks.kinds.base import (
    Article,
    Evidence,
    FeedInfo,
    count,
    entry_link,
    entry_text,
    feed_tags,
    host,
    html_lines,
)
from tasks.normalize import canonical_url, clean_text, published_utc

HOME = "Hacker News"
_DISCUSSION = re.compile(r"""href=["']([^"']+)["']""")


def parse(entry: Mapping[str, Any], feed: FeedInfo) -> list[Article]:
    link, title = entry_link(entry), clean_text(entry.get("title"))
    if not link or not title:
        return []
    html = entry_text(entry)
    fields = dict(_field(line) for line in html_lines(html) if ":" in line)
    discussion = _discussion(html, fields) or entry.get("comments")
    own_post = discussion is not None and canonical_url(discussion) == canonical_url(link)
    evidence = Evidence(points=count(fields.get("score", "")), comments=count(fields.get("comments", "")))
    return [
        Article(
            url=link,
            title=title,
            summary="",
            published=published_utc(entry) or feed.time,
            tags=feed_tags(entry),
            outlet=HOME if own_post else host(link),
            discussion_url=None if own_post else discussion,
            evidence=evidence,
        )
    ]


def _field(line: str) -> tuple[str, str]:
    name, _, value = line.partition(":")
    return name.strip().lower(), value.strip()


def _discussion(html: str, fields: Mapping[str, str]) -> str | None:
    for href in _DISCUSSION.findall(html):
        if "item?id=" in href:
            return str(href)
    value = fields.get("discussion", "")
    return value if value.startswith("http") else None

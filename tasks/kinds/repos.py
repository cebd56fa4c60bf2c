"""``repos``: trending repositories. The description is the summary; stars, stars today and
the repository's language are evidence. A repository is news on the day it trends: its date
is the feed's (the entry's own date is its last push)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasks.kinds.base import Article, Evidence, FeedInfo, count, entry_link, entry_text, feed_tags, html_lines
from tasks.normalize import clean_text, published_utc

HOME = "GitHub"


def parse(entry: Mapping[str, Any], feed: FeedInfo) -> list[Article]:
    link, title = entry_link(entry), clean_text(entry.get("title"))
    if not link or not title:
        return []
    lines = html_lines(entry_text(entry))
    stars = stars_today = None
    language: str | None = None
    description: list[str] = []
    for line in lines:
        lower = line.casefold()
        if "stars today" in lower:
            stars_today = count(line)
        elif lower.endswith("stars") and count(line) is not None:
            stars = count(line)
        elif lower.endswith("forks") and count(line) is not None:
            continue
        elif line.startswith("💻"):
            language = line.removeprefix("💻").strip() or None
        else:
            description.append(line)
    tags = feed_tags(entry)
    return [
        Article(
            url=link,
            title=title,
            summary=" ".join(description),
            published=feed.time or published_utc(entry),
            tags=tags,
            outlet=HOME,
            evidence=Evidence(
                stars=stars, stars_today=stars_today, repo_language=language or next(iter(tags), None)
            ),
        )
    ]

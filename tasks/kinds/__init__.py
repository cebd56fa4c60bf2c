"""Kinds of source, one parser each: a feed entry becomes zero or more articles with evidence.

Everything after collection sees only articles and their evidence, never a kind's raw text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasks.kinds import community, digest, lab, news, papers, repos
from tasks.kinds.base import Article, Evidence, FeedInfo, Parser, feed_tags

PARSERS: dict[str, Parser] = {
    "news": news.parse,
    "lab": lab.parse,
    "digest": digest.parse,
    "community": community.parse,
    "repos": repos.parse,
    "papers": papers.parse,
}
KINDS = tuple(PARSERS)
FIRST_PARTY = frozenset({"lab"})


def parse_entry(kind: str, entry: Mapping[str, Any], feed: FeedInfo) -> list[Article]:
    return PARSERS[kind](entry, feed)


__all__ = ["FIRST_PARTY", "KINDS", "PARSERS", "Article", "Evidence", "FeedInfo", "feed_tags", "parse_entry"]

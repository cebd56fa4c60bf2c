"""``papers``: daily papers. A paper is news on the day it trends (the feed's date, not its
arXiv date); its summary is the abstract's first sentence or two, never the feed's metadata."""

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
from tasks.normalize import clean_text, published_utc

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")
_METADATA = ("upvotes:", "authors:", "github stars:", "🔗")


def parse(entry: Mapping[str, Any], feed: FeedInfo) -> list[Article]:
    link, title = entry_link(entry), clean_text(entry.get("title"))
    if not link or not title:
        return []
    lines = html_lines(entry_text(entry))
    upvotes = next((count(line) for line in lines if line.casefold().startswith("upvotes:")), None)
    abstract = " ".join(line for line in lines if not line.casefold().startswith(_METADATA))
    return [
        Article(
            url=link,
            title=title,
            summary=first_sentences(abstract),
            published=feed.time or published_utc(entry),
            tags=feed_tags(entry),
            outlet=outlet(link, entry_text(entry)),
            evidence=Evidence(upvotes=upvotes),
        )
    ]


HUGGING_FACE = "Hugging Face"


def outlet(link: str, text: str) -> str:
    """Where readers know the paper from: Hugging Face for its daily papers (the entry links the
    paper's page there, and its upvotes are Hugging Face's), else the link's site (``arxiv.org``)."""
    if "huggingface.co/papers/" in text or host(link) == "huggingface.co":
        return HUGGING_FACE
    return host(link)


def first_sentences(text: str, most: int = 2) -> str:
    """The first sentence or two that end; a sentence the feed cut short (``…``) is left out."""
    whole = [s for s in _SENTENCE.split(text.strip()) if s and not s.endswith(("...", "…"))]
    if not whole:
        return text.strip()
    return " ".join(whole[:most])

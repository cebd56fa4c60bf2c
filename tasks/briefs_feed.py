"""``{root}/briefs/feed.xml``: an Atom feed of the published briefs, for any feed reader.

One entry per brief date, its latest version; an entry's ``updated`` is when that version was
published, so a reader shows a corrected brief as updated. The feed holds the most recent
``[output] feed_entries`` dates and is written with feedgen (never by string concatenation).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from storage.brief import Brief
from tasks.render import render, view


@dataclass(frozen=True)
class FeedEntry:
    date: str
    version: int
    published_at: datetime  # the first version's time
    updated_at: datetime  # this version's time
    document: Brief


def entry_id(date: str) -> str:
    return f"urn:dailybrief:brief:{date}"


def atom_feed(
    entries: Sequence[FeedEntry],
    *,
    feed_id: str,
    title: str,
    category_labels: Mapping[str, str],
    base_url: str | None = None,
    templates: str | None = None,
) -> bytes:
    """The Atom document of ``entries`` (newest first)."""
    from feedgen.feed import FeedGenerator

    ordered = sorted(entries, key=lambda e: e.date, reverse=True)
    fg = FeedGenerator()
    fg.id(feed_id)
    fg.title(title)
    fg.generator("dailybrief")
    if base_url:
        fg.link(href=f"{base_url}/feed.xml", rel="self")
        fg.link(href=f"{base_url}/", rel="alternate")
    fg.updated(max((e.updated_at for e in ordered), default=None) or datetime(1970, 1, 1).astimezone())
    for entry in reversed(ordered):  # feedgen puts the entry added last first
        context = view(entry.document, category_labels, numbered=False)
        fe = fg.add_entry()
        fe.id(entry_id(entry.date))
        # no version number: a reader's first entry may be the day's second version (held, then
        # approved); an update shows as updated, and its corrections carry their lines
        fe.title(context["title"] + (f": {context['lead']}" if context["lead"] else ""))
        fe.published(entry.published_at)
        fe.updated(entry.updated_at)
        href = f"{base_url}/{entry.date}.html" if base_url else f"{entry.date}.html"
        fe.link(href=href, rel="alternate", type="text/html")
        fe.content(render("entry", context, templates), type="html")
    return fg.atom_str(pretty=True)


def feed_id(root: str) -> str:
    return "urn:dailybrief:briefs:" + hashlib.blake2b(root.encode(), digest_size=8).hexdigest()

"""What was purged, as collection needs to know it: ids and digests, never text.

``article.purged`` events are the record (one in each day that held a purged article); this
small file beside them, ``{root}/purged/tombstones.json``, is what collection reads so that a
purged article is not collected again, whichever day a feed or an archive carries it on: its
article ids, the digests of its links and its content hashes. It is rewritten whole (under
``purged/.lock``) by each purge, and holds no title, link or text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pyarrow.fs as pafs

from storage.atomic import exclusive, write_bytes
from storage.events import Event

FOLDER = "purged"
INDEX = f"{FOLDER}/tombstones.json"


def link_digest(url: str) -> str:
    """A link as the tombstones keep it: a digest (its fragment, a digest's story number, dropped)."""
    return hashlib.blake2b(url.split("#", 1)[0].encode(), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Tombstones:
    article_ids: frozenset[str] = frozenset()
    links: frozenset[str] = frozenset()  # link_digest of canonical URLs
    content_hashes: frozenset[str] = frozenset()
    targets: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.article_ids or self.links or self.content_hashes)

    def covers(self, payload: dict) -> bool:
        """Whether an ``article.collected`` payload is a purged article (or a copy of one)."""
        return (
            payload.get("article_id") in self.article_ids
            or link_digest(str(payload.get("canonical_url") or "")) in self.links
            or link_digest(str(payload.get("url") or "")) in self.links
            or payload.get("content_hash") in self.content_hashes
        )


def read(fs: pafs.FileSystem, base: str) -> Tombstones:
    try:
        with fs.open_input_stream(f"{base.rstrip('/')}/{INDEX}") as src:
            data = json.loads(src.read())
    except FileNotFoundError:
        return Tombstones()
    return Tombstones(
        frozenset(data.get("article_ids", ())),
        frozenset(data.get("links", ())),
        frozenset(data.get("content_hashes", ())),
        tuple(data.get("targets", ())),
    )


def add(
    fs: pafs.FileSystem,
    base: str,
    target: str,
    article_ids: Iterable[str],
    links: Iterable[str],
    content_hashes: Iterable[str],
) -> Tombstones:
    """Add what one purge took out (``links``: the articles' links as fed and canonical); the file
    is read and rewritten under its lock."""
    root = base.rstrip("/")
    with exclusive(fs, f"{root}/{FOLDER}/.lock"):
        now = read(fs, base)
        merged = Tombstones(
            now.article_ids | set(article_ids),
            now.links | {link_digest(u) for u in links if u},
            now.content_hashes | {h for h in content_hashes if h},
            tuple(dict.fromkeys([*now.targets, target])),
        )
        text = json.dumps(
            {
                "article_ids": sorted(merged.article_ids),
                "links": sorted(merged.links),
                "content_hashes": sorted(merged.content_hashes),
                "targets": list(merged.targets),
            },
            indent=1,
        )
        write_bytes(fs, f"{root}/{INDEX}", text.encode())
    return merged


def without_purged(events: Sequence[Event], tombstones: Tombstones) -> list[Event]:
    """``events`` less the articles the tombstones cover (and the warnings about their entries)."""
    if not tombstones:
        return list(events)
    out = []
    for event in events:
        if event.event_type == "article.collected" and tombstones.covers(dict(event.payload)):
            continue
        if event.event_type == "feed.warned" and link_digest(event.payload["entry_url"]) in tombstones.links:
            continue
        out.append(event)
    return out

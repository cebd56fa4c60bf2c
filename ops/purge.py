"""``brief purge``: take an article (or every article of a source) out of the store for good.

A takedown is a tombstone plus a rewrite. In order:

1. find the articles (and their copies: the same link, or the same text, in another feed);
2. record the tombstones: ``purged/tombstones.json`` (ids and digests, which collection reads so
   the article is never collected again) and an ``article.purged`` event in every day that held
   it (ids, source, reason, who: none of its text);
3. rewrite the raw feed bodies that quote it without its ``<item>`` / ``<entry>``;
4. rewrite every day partition that holds it (``EventStore.rewrite``, under the day's lock): its
   own events go, every other event's text loses it (``[purged]`` where it was quoted: prompts,
   answers, scores, translations, questions), facts anchored to it go, ``feed.fetched`` names the
   rewritten body; then look again, and rewrite again if a run appended it meanwhile;
5. drop its vectors from the embedding cache;
6. re-render every version of every brief that cited it without it, and publish the current
   brief again as a new version (``tasks/steps/publish.py``), which also rewrites the briefs' feed;
7. sweep the other files under the root (run logs, anything else) for what is left.

Everything is written whole or not at all (a new file, then the old one goes), so a purge that
stops half-way can simply be run again.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

import polars as pl

from storage.brief import Brief, brief_dict, brief_json
from storage.errors import InputError, StoreError
from storage.events import Event, new_event, utcnow
from storage.payloads import ArticleCollectedV4, BriefPublished
from storage.scrub import Needles, scrub_bytes, scrub_events, scrub_file
from storage.store import ParquetEventStore
from storage.typed import payload_field, payload_of
from tasks.nouns import counted
from tasks.settings import Settings

if TYPE_CHECKING:
    from tasks.steps import Resources

PRODUCER = "purge@1"
PASSES = 3  # rewrites of a day before giving up on a writer that keeps appending the article
Progress = Callable[[str], None]


@dataclass
class PurgeResult:
    target: str
    articles: list[str]
    days: list[date] = field(default_factory=list)  # partitions rewritten
    dropped: int = 0  # events removed (the articles' own)
    bodies: int = 0  # raw feed bodies rewritten without it
    vectors: int = 0  # embedding cache rows removed
    briefs: list[tuple[str, list[int], int | None]] = field(default_factory=list)  # date, versions, new
    files: int = 0  # other files scrubbed by the sweep
    seconds: float = 0.0


@dataclass(frozen=True)
class Found:
    ids: frozenset[str]
    texts: tuple[str, ...]
    links: frozenset[str]
    canonical: frozenset[str]
    content_hashes: frozenset[str]
    pairs: frozenset[tuple[str, str]]  # (title, summary) as embedded


def purge(
    settings: Settings,
    resources: Resources,
    *,
    article: str | None,
    source: str | None,
    reason: str,
    by: str,
    progress: Progress | None = None,
) -> PurgeResult:
    """Take the article (or the source's articles) out of ``resources``' store; its briefs re-rendered
    with the command's models."""
    store = resources.store
    say = progress or (lambda _line: None)
    started = time.perf_counter()
    target = _target(article, source, reason, by)
    found = find(store, article, source)
    needles = Needles.of(found.ids, found.texts, found.links)
    result = PurgeResult(target, sorted(found.ids))
    say(f"{counted(len(found.ids), 'article')} to take out")
    tree = store.tree
    with tree.purged.lock():
        days = affected_days(store, needles)
        tree.purged.add(target, found.ids, found.links | found.canonical, found.content_hashes)
        run_id = f"purge-{utcnow():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
        tombstones_of = {day: _tombstone(day, target, found.ids, source, reason, by, run_id) for day in days}
        store.append(list(tombstones_of.values()))
        moves = scrub_bodies(store, needles, say)
        result.bodies = len(moves)
        body_days = {date.fromisoformat(path.split("date=")[1][:10]) for path in moves}
        frozen, case_days = scrub_frozen_cases(store, needles, say)
        moves = {**moves, **frozen}
        rewrite_days(store, sorted(set(days) | body_days | case_days), needles, moves, result, say)
        result.vectors = drop_vectors(store, found.pairs)
        say(f"{counted(result.vectors, 'cached vector')} removed")
        tombstone_ids = {day: e.event_id for day, e in tombstones_of.items()}
        result.briefs = rerender_briefs(settings, resources, days, needles, say, tombstone_ids)
        result.files = sweep(store, needles, say)
    result.seconds = time.perf_counter() - started
    return result


def _target(article: str | None, source: str | None, reason: str, by: str) -> str:
    if (article is None) == (source is None):
        raise InputError("give --article ID or --source NAME (one of them)")
    if not reason.strip():
        raise InputError('--reason is empty; say why, e.g. --reason "publisher takedown request"')
    if not by.strip():
        raise InputError("--by is empty; name who asked for or made the takedown")
    return f"article:{article}" if article is not None else f"source:{source}"


# the fields a purge matches on besides ``article_id`` (both types'), each declared by every version
_COLLECTED = ("source", "url", "canonical_url", "title", "summary", "content_hash")
_CORRECTED = ("field", "value")


def _articles_and_corrections(store: ParquetEventStore) -> pl.DataFrame:
    """Every ``article.collected`` and ``article.corrected`` with the fields a purge matches on, read as
    the upcasters give them (``payload_field``); the stored payload kept for what is read by model."""
    collected = pl.col("event_type") == "article.collected"
    return store.query(
        lambda: store.scan(event_types=["article.collected", "article.corrected"]).select(
            "event_type",
            "schema_version",
            "payload",
            *[
                pl.when(collected).then(payload_field("article.collected", name)).alias(name)
                for name in _COLLECTED
            ],
            pl.when(collected)
            .then(payload_field("article.collected", "article_id"))
            .otherwise(payload_field("article.corrected", "article_id"))
            .alias("article_id"),
            *[
                pl.when(~collected).then(payload_field("article.corrected", name)).alias(name)
                for name in _CORRECTED
            ],
        )
    )


def find(store: ParquetEventStore, article: str | None, source: str | None) -> Found:
    """The articles to take out and what they said; their copies (the same link or text) too."""
    rows = _articles_and_corrections(store)
    collected = rows.filter(pl.col("event_type") == "article.collected").with_columns(
        pl.col("canonical_url").str.split("#").list.first().alias("link")
    )
    if article is not None:
        chosen = collected.filter(pl.col("article_id") == article)
        if chosen.is_empty():
            raise InputError(
                f"--article {article!r} is not an article in the store; "
                "'brief replay --date D --projection articles' lists a day's articles"
            )
    else:
        chosen = collected.filter(pl.col("source") == source)
        if chosen.is_empty():
            raise InputError(
                f"--source {source!r} has no article in the store; check the name (as in [[sources]])"
            )
    links = set(chosen["link"].to_list())
    hashes = set(chosen["content_hash"].to_list())
    copies = collected.filter(pl.col("link").is_in(list(links)) | pl.col("content_hash").is_in(list(hashes)))
    ids = set(copies["article_id"].to_list())
    mine = collected.filter(pl.col("article_id").is_in(list(ids)))
    corrected = rows.filter(
        (pl.col("event_type") == "article.corrected") & pl.col("article_id").is_in(list(ids))
    )
    texts = [
        *mine["title"].to_list(),
        *mine["summary"].to_list(),
        *mine["url"].to_list(),
        *mine["canonical_url"].to_list(),
        *[
            u
            for row in mine.iter_rows(named=True)
            if (u := payload_of(row, ArticleCollectedV4).discussion_url)
        ],
        *[
            v
            for f, v in zip(corrected["field"], corrected["value"], strict=True)
            if v and f in ("title", "summary")
        ],
    ]
    corrected_titles = [
        v for f, v in zip(corrected["field"], corrected["value"], strict=True) if v and f == "title"
    ]
    pairs = {(t, s or "") for t, s in zip(mine["title"], mine["summary"], strict=True)}
    pairs |= {(t, s or "") for t in corrected_titles for s in mine["summary"].to_list()}
    return Found(
        frozenset(ids),
        tuple(t for t in texts if t),
        frozenset(u for u in (*mine["url"].to_list(), *mine["link"].to_list()) if u),
        frozenset(u for u in mine["canonical_url"].to_list() if u),
        frozenset(mine["content_hash"].to_list()),
        frozenset(pairs),
    )


def affected_days(store: ParquetEventStore, needles: Needles) -> list[date]:
    """Every day whose events name a purged article or quote it."""
    wanted = [*needles.in_files, *needles.ids]
    frame = store.query(
        lambda: (
            store.scan()
            .filter(
                pl.col("payload").str.contains_any(wanted) | pl.col("subject_id").is_in(list(needles.ids))
            )
            .select("brief_date")
            .unique()
        )
    )
    return sorted(frame["brief_date"].to_list())


def _tombstone(
    day: date, target: str, ids: Iterable[str], source: str | None, reason: str, by: str, run_id: str
) -> Event:
    return new_event(
        "article.purged",
        {"target": target, "article_ids": sorted(ids), "source": source, "reason": reason, "by": by},
        brief_date=day,
        run_id=run_id,
        subject_id=target,
        produced_by=PRODUCER,
        occurred_at=utcnow(),
    )


def scrub_bodies(store: ParquetEventStore, needles: Needles, say: Progress) -> dict[str, str | None]:
    """Raw bodies that quote the articles, rewritten without their entries: old path -> new path."""
    moves: dict[str, str | None] = {}
    bodies = store.tree.raw
    for day, relative in bodies.every():
        scrubbed = scrub_bytes(bodies.get(relative), needles)
        if scrubbed is not None:
            moves[relative] = bodies.replace(day, relative, scrubbed)
    say(f"{len(moves)} raw feed {'body' if len(moves) == 1 else 'bodies'} rewritten without it")
    return moves


def scrub_frozen_cases(
    store: ParquetEventStore, needles: Needles, say: Progress
) -> tuple[dict[str, str | None], set[date]]:
    """The regression set's frozen facts (``storage/frozen.py``) that hold the articles, frozen again
    without them: old path -> new path, and the days of the cases that name them (their
    ``regression.case_added`` is rewritten with the day, naming the new file)."""
    from storage.frozen import refreeze

    moves, days = refreeze(store, lambda frame: scrub_events(frame, needles))
    say(f"{counted(len(moves), 'regression case file')} frozen again without it")
    return moves, days


def rewrite_days(
    store: ParquetEventStore,
    days: list[date],
    needles: Needles,
    moves: Mapping[str, str | None],
    result: PurgeResult,
    say: Progress,
) -> None:
    """Each day without the articles; then each looked at again until none holds them."""
    pending = list(days)
    for attempt in range(PASSES):
        for day in pending:
            done = store.rewrite(day, lambda frame: scrub_events(frame, needles, moves))
            if done.changed:
                result.dropped += done.events_before - done.events_after
                if day not in result.days:
                    result.days.append(day)
        say(f"{counted(len(pending), 'day')} rewritten" + (f" (pass {attempt + 1})" if attempt else ""))
        pending = [d for d in pending if _still_there(store, d, needles)]
        if not pending:
            result.days.sort()
            return
    raise StoreError(
        f"{', '.join(map(str, pending))} still hold the purged article after {PASSES} rewrites: a run is "
        "appending it; stop it and run 'brief purge' again"
    )


def _still_there(store: ParquetEventStore, day: date, needles: Needles) -> bool:
    own = pl.col("event_type").is_in(["article.collected", "article.corrected"]) & pl.col("subject_id").is_in(
        list(needles.ids)
    )
    quoted = pl.col("payload").str.contains_any(list(needles.in_files)) if needles.in_files else pl.lit(False)
    frame = store.query(lambda: store.scan([day]).filter(own | quoted).select("event_id"))
    return not frame.is_empty()


def drop_vectors(store: ParquetEventStore, pairs: Iterable[tuple[str, str]]) -> int:
    """Remove the articles' vectors from the embedding cache (on the root, and the machine's shared
    cache when ``BRIEF_EMBEDDINGS_SHARED`` names one): keyed by their text's hash, they are its trace."""
    import os
    import sqlite3
    from contextlib import closing

    from tasks.dedup import Item
    from tasks.embed import SHARED_ENV, text_key

    keys = {text_key(Item("", "", t, s, "", "", None).text) for t, s in pairs}
    removed = store.tree.caches.drop_embeddings(keys)
    shared = os.environ.get(SHARED_ENV)
    if shared and os.path.exists(shared):
        try:
            with closing(sqlite3.connect(shared, timeout=30)) as db, db:
                marks = ",".join("?" * len(keys))
                removed += db.execute(f"DELETE FROM v WHERE key IN ({marks})", sorted(keys)).rowcount
        except sqlite3.Error:
            pass
    return removed


# -- briefs ------------------------------------------------------------------------------


def without_articles(document: Brief, needles: Needles) -> Brief | None:
    """A brief without the purged articles (None when it never cited or quoted them).

    An item loses the purged citations and the facts anchored to them; an item left without a
    citation, or whose headline or summary quotes a purged article, leaves the brief.
    """
    if not needles.found_in(json.dumps(brief_dict(document), ensure_ascii=False)) and not any(
        c.article_id in needles.ids for i in document.items for c in i.citations
    ):
        return None
    items = []
    for item in document.items:
        citations = [c for c in item.citations if c.article_id not in needles.ids]
        words = " ".join(
            text or "" for text in (item.title, item.summary, item.translated_title, item.correction)
        )
        if not citations or needles.found_in(words):
            continue
        facts = [f for f in item.facts if f.anchor.article_id not in needles.ids]
        items.append(item.model_copy(update={"citations": citations, "facts": facts}))
    out = document.with_items(items)
    if document.retracted:
        kept = [r for r in document.retracted if not needles.found_in(r.title)]
        out = out.model_copy(update={"retracted": kept})
    return out


def rerender_briefs(
    settings: Settings,
    resources: Resources,
    days: Iterable[date],
    needles: Needles,
    say: Progress,
    tombstones: Mapping[date, str] | None = None,
) -> list[tuple[str, list[int], int | None]]:
    """Every version of every brief that cited the articles, rendered again without them; the
    current brief published again as a new version, under the policy in force, naming what the
    version before it was made from (for the items it keeps) and the day's tombstone."""
    from ops.policy import governing
    from tasks import steps
    from tasks.steps.publish import publish, write_feed

    store = resources.store
    settings = governing(settings, store).settings
    tombstones = tombstones or {}

    briefs = store.tree.briefs
    labels = settings.category_labels()
    done = []
    ctx = None
    resources = resources.for_settings(settings)  # one for every day re-published
    for day in days:
        versions = briefs.versions(day)
        if not versions:
            continue
        # the day's lock, held until the new version is out: it is made from the current version,
        # which carries every act recorded before it, and no act is recorded meanwhile
        with briefs.lock(day):
            rewritten = []
            for number, path in versions:
                document = without_articles(briefs.read(path), needles)
                if document is None:
                    continue
                for ext, text in _rendered(document, labels, settings).items():
                    briefs.write(briefs.rendered(path, ext), text)
                rewritten.append(number)
            current = briefs.read(briefs.current(day))
            fresh = without_articles(current, needles)
            new_version = None
            if fresh is not None:
                ctx = steps.open_run(resources, settings, day, f"purge-{utcnow():%Y%m%dT%H%M%S}")
                _carry_lineage(ctx, day)
                published = publish(ctx, fresh, [tombstones[day]] if day in tombstones else [])
                new_version = published.version if published.changed else None
        if rewritten or new_version:
            done.append((day.isoformat(), rewritten, new_version))
            say(
                f"brief {day}: {'version' if len(rewritten) == 1 else 'versions'} "
                f"{', '.join(map(str, rewritten)) or '-'} re-rendered"
                + (f", now v{new_version}" if new_version else "")
            )
    if ctx is not None:
        write_feed(ctx, labels)
    return done


def _carry_lineage(ctx: Any, day: date) -> None:
    """The purge's context knows, as the run that made them, the events the current version of the
    day's brief names (its items' analyses, translations, findings), so the new version names those
    of the items it keeps."""
    published = ctx.store.read([day], event_types=["brief.published"])
    if not published:
        return
    latest = max(published, key=lambda e: (payload_of(e, BriefPublished).version, e.occurred_at, e.seq))
    wanted = set(latest.source_event_ids)
    for event in ctx.store.read([day]):
        if event.event_id in wanted:
            ctx.emitted.setdefault((event.event_type, event.subject_id), []).append(event.event_id)


def _rendered(document: Brief, labels: Mapping[str, str], settings: Settings) -> dict[str, str]:
    from tasks import render

    templates = settings.output.templates
    return {
        "json": brief_json(render.for_readers(document)),
        "md": render.render_markdown(document, labels, templates),
        "html": render.render_html(document, labels, templates),
    }


def sweep(store: ParquetEventStore, needles: Needles, say: Progress) -> int:
    """Every other file under the root (run logs, the briefs' files, anything a later feature keeps
    there) scrubbed in its own format where it still holds the articles."""
    files = store.tree.files
    scrubbed = 0
    for info in store.tree.unowned_files():
        clean = scrub_file(info.base_name, files.read(info.path, as_stored=True), needles)
        if clean is not None:
            files.write(info.path, clean)
            scrubbed += 1
    say(f"{counted(scrubbed, 'other file')} scrubbed")
    return scrubbed

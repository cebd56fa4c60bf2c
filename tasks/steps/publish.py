"""The publish step: the brief files of a version and its ``brief.published`` event."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from storage.brief import Brief, brief_json
from storage.errors import BriefError
from storage.lease import Held
from storage.payloads import BriefPublished
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks import render, write
from tasks.steps.context import RunContext
from tasks.steps.corrections import acts_seen, people_acts

if TYPE_CHECKING:
    from tasks.steps.collect import SourceOutcome


@dataclass(frozen=True)
class Published:
    version: int
    files: dict[str, str]
    changed: bool
    markdown: str
    items: int


class BriefWithheld(BriefError):
    """The day's brief is not fit to send (``[delivery] min_core``); the run fails with this."""


def withhold_reason(ctx: RunContext, document: Brief, fetched: int, failed: list[str]) -> str | None:
    """Why readers must not get this brief, or None: more than half of the ``fetched`` sources
    (those the run tried; a live feed skipped for a past date is not one) ``failed``, or fewer
    than ``min_core`` core stories. An outage makes a thin brief that looks like a quiet day."""
    least = ctx.settings.delivery.min_core
    if least == 0:
        return None
    if fetched and len(failed) * 2 > fetched:
        return f"{len(failed)} of {fetched} sources failed ({', '.join(sorted(failed))})"
    core = document.core
    if core < least:
        return f"{core} core stor{'y' if core == 1 else 'ies'}, fewer than min_core = {least}"
    return None


def item_sources(ctx: RunContext, document: Brief) -> list[str]:
    """Lineage of a brief: per item, in the brief's order, the events of this run it was written from
    (its story's analysis, its title's translation, the fact-check's findings). Stories, not
    articles: each analysis names the rest of its chain), then the people's corrections and
    retractions applied to it."""
    from tasks.steps.corrections import editor_acts

    acts = editor_acts(ctx).event_ids
    sources: list[str] = []
    for story in document.story_ids:
        sources += ctx.made("story.analyzed", story)[-1:]
        sources += ctx.made("title.translated", story)[-1:]
        sources += ctx.made("factcheck.failed", story)
        sources += acts.get(story, [])
    for gone in document.retracted or []:  # an item a person took out: the retraction names why
        sources += acts.get(gone.story_id, [])
    return sources


def withhold_if_unfit(
    ctx: RunContext, document: Brief, sources: Sequence[SourceOutcome]
) -> BriefWithheld | None:
    """The daily run's decision before it publishes: when the brief is unfit for readers (``withhold_reason``
    over the sources the run tried and those that failed), record ``brief.withheld`` and return the error
    the run raises; else None."""
    failed = [o.source for o in sources if o.error]
    fetched = sum(1 for o in sources if not o.skipped)
    reason = withhold_reason(ctx, document, fetched, failed)
    if reason is None:
        return None
    silent = nothing_collected(sources)
    # every source down is said as such ("2 of 2 sources failed (a, b): a: why; b: why"); a date
    # none had anything for, why
    if sources and all(o.error for o in sources):
        whys = (f"{o.source}: {_first_line(o.message or o.error or '')}" for o in sources)
        said = f"{reason}: " + "; ".join(whys)
    else:
        said = silent or reason
    return withhold(ctx, document, fetched, failed, said, send_anyway=not silent)


def nothing_collected(sources: Sequence[SourceOutcome]) -> str | None:
    """Why no source had anything for the date (each failed, was skipped or had no items), or None
    when one had: a day with nothing to say is not a quiet day that ``min_core = 0`` would send."""
    if not sources or any(o.items and not o.error and not o.skipped for o in sources):
        return None
    said = "; ".join(f"{o.source}: {_first_line(o.error or o.skipped or 'no items')}" for o in sources)
    return f"no source had anything for this date: {said}"


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line if len(line) <= 120 else f"{line[:119]}…"


def withhold(
    ctx: RunContext,
    document: Brief,
    fetched: int,
    failed: list[str],
    reason: str,
    *,
    send_anyway: bool = True,
) -> BriefWithheld:
    """Record ``brief.withheld``; the caller raises what this returns (nothing new is published).
    ``send_anyway``: the error says that ``min_core = 0`` sends such days (not when no source had
    anything for the date).

    A version published before (an earlier run of the day, when the feeds were up) stands.
    """
    ctx.append(
        [
            ctx.emit(
                "brief.withheld",
                {
                    "brief_date": ctx.day.isoformat(),
                    "reason": reason,
                    "core": document.core,
                    "min_core": ctx.settings.delivery.min_core,
                    "sources": fetched,
                    "failed_sources": sorted(failed),
                },
                subject=ctx.day.isoformat(),
                producer="publish.withhold@1",
                sources=item_sources(ctx, document),
            )
        ]
    )
    previous = ctx.store.query(lambda: ctx.store.scan([ctx.day], event_types=["brief.published"]))
    versions = [payload_of(row, BriefPublished).version for row in previous.iter_rows(named=True)]
    readers = f"readers keep v{max(versions)}" if versions else "readers got nothing"
    anyway = " ([delivery] min_core = 0 sends such days anyway)" if send_anyway else ""
    return BriefWithheld(f"the brief of {ctx.day} is withheld: {reason}; {readers}{anyway}")


def day_lock(store: ParquetEventStore, day: date) -> AbstractContextManager[Held]:
    """The day's brief lock (``storage/root/briefs.py``): whoever records a person's act on the
    day's brief, composes it from the log and publishes it holds it; re-entrant within a thread."""
    return store.tree.briefs.lock(day)


def publish(
    ctx: RunContext,
    document: Brief,
    also_read: Sequence[str] = (),
    recompose: Callable[[], Brief] | None = None,
) -> Published:
    """Write the brief files; a new version whenever the content differs from the current
    version's, earlier versions staying as they were. ``also_read``: events besides the items'
    that the version was made from (a purge's tombstone), for its lineage.

    A version is made from the acts recorded before it: under the day's lock, a person's act
    recorded since ``document`` was composed (``people_acts``) has it composed again by
    ``recompose``, from the log as it stands inside the lock.

    Content that returns to an earlier version's (A, then B, then A again) is a new version
    too: the files then change, and every change of the files is a ``brief.published`` event.
    """
    labels = category_labels(ctx)
    briefs = ctx.store.tree.briefs
    # Reading the versions, writing the files and recording the version is one critical section:
    # two publishers of one day (a review re-render while a run publishes), on one machine or on
    # several sharing an object store, take distinct versions.
    with day_lock(ctx.store, ctx.day) as held:
        if recompose is not None and people_acts(ctx) - acts_seen(ctx):
            document = recompose()
        previous = ctx.store.query(lambda: ctx.store.scan([ctx.day], event_types=["brief.published"]))
        versions = [payload_of(row, BriefPublished) for row in previous.iter_rows(named=True)]
        digest = write.content_hash(document)
        latest = max((v.version for v in versions), default=0)
        same = any(v.version == latest and v.content_hash == digest for v in versions)
        version = latest if same else latest + 1
        document = document.model_copy(update={"version": version})
        templates = ctx.settings.output.templates
        markdown = render.render_markdown(document, labels, templates)
        rendered = {
            "md": markdown,
            "html": render.render_html(document, labels, templates),
            "json": brief_json(render.for_readers(document)),
        }
        files, version_files = {}, {}
        held.check()  # a lock taken over (on an object store) writes nothing
        for ext, text in rendered.items():
            files[ext], version_files[ext] = (
                briefs.current(ctx.day, ext),
                briefs.version(ctx.day, version, ext),
            )
            for path in (version_files[ext], files[ext]):
                briefs.write(path, text)
        record_version(ctx, document, digest, files, version_files, also_read, changed=not same)
    if not same or not briefs.exists(briefs.feed):
        write_feed(ctx, labels)
    return Published(version, files, not same, markdown, len(document.items))


def record_version(
    ctx: RunContext,
    document: Brief,
    digest: str,
    files: dict[str, str],
    version_files: dict[str, str],
    also_read: Sequence[str],
    *,
    changed: bool,
) -> None:
    """``brief.published`` for a new version; for a publish that changed nothing, the run's own
    record of it (``brief.unchanged``), so that History credits its acts to no version."""
    day = ctx.day.isoformat()
    if not changed:
        unchanged = {"brief_date": day, "version": document.version, "content_hash": digest}
        ctx.append([ctx.emit("brief.unchanged", unchanged, subject=f"brief-{day}", producer="write@1")])
        return
    published = {
        "brief_date": day,
        "version": document.version,
        "items": len(document.items),
        "stories": document.story_ids,
        "files": files,
        "content_hash": digest,
        "version_files": version_files,
    }
    sources = [*item_sources(ctx, document), *also_read]
    ctx.append(
        [ctx.emit("brief.published", published, subject=f"brief-{day}", producer="write@1", sources=sources)]
    )


def category_labels(ctx: RunContext) -> dict[str, str]:
    """The categories' headings in the brief's language."""
    return ctx.settings.category_labels()


def write_feed(ctx: RunContext, labels: dict[str, str] | None = None) -> str:
    """``briefs/feed.xml`` from the latest ``feed_entries`` brief dates (their current versions).

    It reads the brief events of the most recent days of the log only (twice as many days as
    entries, since lookback collection writes days without a brief), never the whole log.
    """
    from tasks.briefs_feed import FeedEntry, atom_feed, feed_id

    wanted = ctx.settings.output.feed_entries
    briefs = ctx.store.tree.briefs
    days = sorted(ctx.store.days(), reverse=True)[: 2 * wanted]
    events = ctx.store.query(lambda: ctx.store.scan(days, event_types=["brief.published"])) if days else None
    by_day: dict[str, list[tuple[datetime, BriefPublished]]] = {}
    for row in [] if events is None else events.iter_rows(named=True):
        brief = payload_of(row, BriefPublished)
        by_day.setdefault(brief.brief_date, []).append((row["occurred_at"], brief))
    entries = []
    withheld = withheld_days(ctx, sorted(by_day))
    for day in [d for d in sorted(by_day, reverse=True) if d not in withheld][:wanted]:
        path = briefs.current(day)
        if not briefs.exists(path):
            continue
        document = briefs.read(path)
        versions = sorted(by_day[day], key=lambda p: p[0])
        current = [at for at, p in versions if p.version == document.version]
        entries.append(
            FeedEntry(
                date=day,
                version=document.version,
                published_at=_utc(versions[0][0]),
                updated_at=_utc(current[-1] if current else versions[-1][0]),
                document=document,
            )
        )
    data = atom_feed(
        entries,
        feed_id=feed_id(ctx.store.tree.name),
        title=write.LABELS[ctx.settings.language]["title"],
        category_labels=labels or category_labels(ctx),
        base_url=ctx.settings.output.base_url,
        templates=ctx.settings.output.templates,
    )
    with briefs.feed_lock():
        briefs.write(briefs.feed, data)
    return briefs.feed


def withheld_days(ctx: RunContext, days: Sequence[str]) -> set[str]:
    """Of ``days``, those whose brief readers must not have yet: held for review, neither approved
    nor past its deadline (``[delivery] hold``). The feed is a readers' channel: it leaves them out."""
    from tasks import deliver

    if not days:
        return set()
    hold = ctx.settings.delivery.hold
    now = ctx.resources.clock.now()
    wanted = [date.fromisoformat(d) for d in days]
    by_day: dict[str, list] = {d: [] for d in days}
    for event in ctx.store.read(days=wanted, event_types=deliver.DELIVERY_TYPES):
        by_day.setdefault(event.brief_date.isoformat(), []).append(event)
    return {d for d, events in by_day.items() if deliver.fold(events).withheld_from_readers(hold, now)}


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment

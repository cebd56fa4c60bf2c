"""What the desk's pages show, read from the log and the published files (no state of its own)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

import polars as pl

from storage.brief import Brief
from storage.errors import InputError
from storage.payloads import BriefPublished, Payload
from storage.projections import materialize
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks import deliver


@dataclass(frozen=True)
class Version:
    version: int
    items: int
    published_at: str
    run_id: str


def versions(store: ParquetEventStore, days: list[date] | None = None) -> dict[date, list[Version]]:
    """Every published version per brief date (newest date first, versions in order)."""
    frame = store.query(lambda: store.scan(days, event_types=["brief.published"]))
    out: dict[date, list[Version]] = {}
    for row in frame.sort(["occurred_at", "seq"]).iter_rows(named=True):
        p = payload_of(row, BriefPublished)
        out.setdefault(row["brief_date"], []).append(
            Version(p.version, p.items, row["occurred_at"].strftime("%Y-%m-%d %H:%M UTC"), row["run_id"])
        )
    return dict(sorted(out.items(), reverse=True))


def latest_day(store: ParquetEventStore) -> date | None:
    """The most recent date with a published brief, looking at the newest days of the log first."""
    days = sorted(store.days(), reverse=True)
    for k in range(0, len(days), 10):
        found = versions(store, days[k : k + 10])
        if found:
            return next(iter(found))
    return None


def document(store: ParquetEventStore, day: date, version: int | None = None) -> Brief:
    """The brief readers got: the current version, or a given one (its own copy)."""
    briefs = store.tree.briefs
    path = briefs.current(day) if version is None else briefs.version(day, version)
    try:
        return briefs.read(path)
    except (FileNotFoundError, OSError):
        what = f"version {version} of the brief" if version else "a brief"
        raise InputError(f"no {what} is published for {day}") from None


def open_questions(store: ParquetEventStore, day: date) -> list[dict]:
    """The day's open questions, batch by batch, highest priority first (as ``brief review`` asks)."""
    frame = materialize(store, "questions", days=[day])
    frame = frame.filter((pl.col("status") == "open") & (pl.col("brief_date") == day))
    return list(frame.iter_rows(named=True))


def delivery_state(store: ParquetEventStore, day: date) -> deliver.DayState:
    return deliver.fold(store.read(days=[day], event_types=deliver.DELIVERY_TYPES))


@dataclass(frozen=True)
class Act:
    """A person's act on a day as the desk shows it, read from its payload model."""

    event_id: str
    type: str
    at: datetime
    subject: str
    field: str  # the field it sets ("" for a link, a retraction or an approval)
    said: str  # what it says: the value set, else the answer, else the note, else the articles linked
    article_ids: tuple[str, ...]  # the articles a same-story link names
    by: str
    via: str

    @classmethod
    def of(cls, row: dict, act: Payload) -> Act:
        linked = tuple(getattr(act, "article_ids", None) or ())
        words = [getattr(act, name, None) for name in ("value", "answer", "note")]
        return cls(
            event_id=row["event_id"],
            type=row["event_type"],
            at=row["occurred_at"],
            subject=row["subject_id"],
            field=getattr(act, "field", None) or "",
            said=str(next((w for w in words if w), None) or " + ".join(linked)),
            article_ids=linked,
            by=str(getattr(act, "person", None) or getattr(act, "by", "")),
            via=str(getattr(act, "via", None) or ""),
        )


def acts(store: ParquetEventStore, day: date) -> list[Act]:
    """People's acts on the day, oldest first: answers, marks, corrections, retractions, approvals,
    same-story links."""
    types = [
        "confirmation.resolved",
        "article.corrected",
        "brief.corrected",
        "story.retracted",
        "brief.approved",
        "story.merged",
        "story.split",
    ]
    frame = store.query(lambda: store.scan([day], event_types=types))
    # one of several types: each part is read where the type has it
    return [
        Act.of(row, payload_of(row, Payload))
        for row in frame.sort(["occurred_at", "seq"]).iter_rows(named=True)
    ]

"""Small builders of real events for tests (through ``new_event``, as the pipeline makes them)."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta

import storage  # noqa: F401  (registers the event types)
from storage.events import Event, new_event
from storage.store import ParquetEventStore

T0 = datetime(2025, 8, 6, 12, 0, tzinfo=UTC)
DAY = date(2025, 8, 6)


def store_at(root: str, **options: str) -> ParquetEventStore:
    """The store at a local root or an ``s3://`` root on the tests' S3 server (its endpoint is in
    ``BRIEF_TEST_S3_ENDPOINT``, which the processes the tests start inherit)."""
    endpoint = os.environ.get("BRIEF_TEST_S3_ENDPOINT") if root.startswith("s3://") else None
    return ParquetEventStore(root, endpoint_url=endpoint, **options)


def collected(
    n: int,
    *,
    day: date = DAY,
    title: str | None = None,
    at: datetime | None = None,
    run_id: str = "run-1",
    seq: int = 0,
    url: str | None = None,
) -> Event:
    title = title if title is not None else f"Story number {n}"
    link = url or f"https://news.example/{n}"
    return new_event(
        "article.collected",
        {
            "article_id": f"art-{n}",
            "source": "example",
            "url": link,
            "canonical_url": link,
            "title": title,
            "summary": f"Summary of {title}",
            "published_at": "2025-08-06T09:30:00Z",
            "language": "en",
            "content_hash": f"hash-{n}-{title}",
        },
        brief_date=day,
        run_id=run_id,
        subject_id=f"art-{n}",
        produced_by="tests",
        occurred_at=at or T0 + timedelta(seconds=n),
        seq=seq,
    )


def collected_of_kind(
    n: int,
    kind: str,
    *,
    source: str,
    title: str,
    url: str,
    outlet: str | None = None,
    discussion_url: str | None = None,
    evidence: dict[str, int | str] | None = None,
    day: date = DAY,
) -> Event:
    """An ``article.collected`` v4 event as a source of ``kind`` writes it (outlet, discussion, evidence)."""
    kind_fields = {"kind": kind, "outlet": outlet, "discussion_url": discussion_url, "evidence": evidence}
    return new_event(
        "article.collected",
        {
            "article_id": f"art-{n}",
            "source": source,
            "url": url,
            "canonical_url": url,
            "title": title,
            "summary": "",
            "published_at": "2025-08-06T09:30:00Z",
            "language": "en",
            "content_hash": f"hash-{n}-{title}",
            **{k: v for k, v in kind_fields.items() if v is not None},
        },
        brief_date=day,
        run_id="run-1",
        subject_id=f"art-{n}",
        produced_by="tests",
        occurred_at=T0 + timedelta(seconds=n),
    )


def corrected(
    n: int, field: str, value: str | None, *, day: date = DAY, at: datetime | None = None, seq: int = 0
) -> Event:
    return new_event(
        "article.corrected",
        {"article_id": f"art-{n}", "field": field, "value": value, "reason": "test"},
        brief_date=day,
        run_id="review",
        subject_id=f"art-{n}",
        produced_by="human",
        occurred_at=at or T0 + timedelta(hours=1, seconds=n),
        seq=seq,
    )


def run_event(
    kind: str, run_id: str, *, day: date = DAY, at: datetime | None = None, **payload: object
) -> Event:
    defaults: dict[str, dict[str, object]] = {
        "run.started": {"flow": "daily-brief"},
        "run.finished": {},
        "run.failed": {"step": "collect", "error": "BOOM", "message": "it broke"},
        "run.cancelled": {"how": "SIGINT", "after": "collect"},
    }
    return new_event(
        kind,
        {**defaults[kind], **payload},
        brief_date=day,
        run_id=run_id,
        subject_id=run_id,
        produced_by="tests",
        occurred_at=at or T0,
    )

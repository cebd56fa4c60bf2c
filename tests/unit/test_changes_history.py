"""History's line for a version names an act that caused it: an approval makes no version, so it is
credited to the version it approved, not to the next one a later act made."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from ops import changes
from storage.events import new_event
from storage.store import ParquetEventStore

D = date(2025, 7, 1)
T0 = datetime(2025, 7, 1, 8, tzinfo=UTC)


def published(version: int, run: str, minutes: int) -> dict:
    return new_event(
        "brief.published",
        {
            "brief_date": D.isoformat(),
            "version": version,
            "items": 1,
            "stories": ["st-a"],
            "files": {},
            "content_hash": f"h{version}",
        },
        brief_date=D,
        run_id=run,
        subject_id=D.isoformat(),
        produced_by="publish",
        occurred_at=T0 + timedelta(minutes=minutes),
    )


def test_an_approval_is_no_cause_of_the_version_a_later_mark_made(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path / "store"))
    approval = new_event(
        "brief.approved",
        {"brief_date": D.isoformat(), "version": 3, "by": "bo", "via": "desk"},
        brief_date=D,
        run_id="r-approve",
        subject_id=D.isoformat(),
        produced_by="review@1:bo",
        occurred_at=T0 + timedelta(minutes=10),
    )
    mark = new_event(
        "article.corrected",
        {
            "article_id": "a1",
            "field": "relevance",
            "value": "related",
            "reason": "r",
            "by": "bo",
            "via": "desk",
        },
        brief_date=D,
        run_id="r-mark",
        subject_id="a1",
        produced_by="review@1:bo",
        occurred_at=T0 + timedelta(minutes=20),
    )
    store.append([published(1, "r1", 0), published(2, "r2", 1), published(3, "r3", 2), approval, mark])
    store.append([published(4, "r-mark", 21)])

    said = changes.summaries(store, [D])
    assert said[(D, 4)] == "bo: article.corrected relevance “related”"
    assert said[(D, 3)] == "the run r3"
    acted = {a.type: a for a in changes.acts(store, D)}
    assert (acted["brief.approved"].version, acted["brief.approved"].changed) == (3, False)
    assert [a.type for a in changes.between(acted.values(), 3, 4)] == ["article.corrected"]

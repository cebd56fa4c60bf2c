"""History's credit of an act that changed nothing: the first later version that holds its story,
unless the act keeps the story out (a retraction, an off-topic mark, an off-topic answer)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from ops import changes
from ops.changes import Publication
from storage.events import new_event
from storage.store import ParquetEventStore

D = date(2025, 7, 1)
T0 = datetime(2025, 7, 1, 8, tzinfo=UTC)
X = "st-x"


def answered(tmp_path: Path, proposed: str, answer: str) -> dict[str, changes.Acted]:
    """Ann answers "is X <proposed>?" with ``answer`` while X is out of the brief (her run: unchanged,
    v2); Bob marks X core later and his run publishes v3 with X."""
    store = ParquetEventStore(str(tmp_path / "store"))
    store.append(
        [
            new_event(
                "confirmation.resolved",
                {
                    "question_id": "q1",
                    "subject": X,
                    "field": "relevance",
                    "value": proposed,
                    "answer": answer,
                    "by": "human",
                    "person": "ann",
                    "via": "desk",
                },
                brief_date=D,
                run_id="r-ann",
                subject_id=X,
                produced_by="review@1",
                occurred_at=T0 + timedelta(minutes=10),
            ),
            new_event(
                "brief.unchanged",
                {"brief_date": D.isoformat(), "version": 2, "content_hash": "h"},
                brief_date=D,
                run_id="r-ann",
                subject_id=D.isoformat(),
                produced_by="publish",
                occurred_at=T0 + timedelta(minutes=10, seconds=1),
            ),
            new_event(
                "article.corrected",
                {
                    "article_id": X,
                    "field": "relevance",
                    "value": "core",
                    "reason": "r",
                    "by": "bob",
                    "via": "desk",
                },
                brief_date=D,
                run_id="r-bob",
                subject_id=X,
                produced_by="review@1:bob",
                occurred_at=T0 + timedelta(minutes=20),
            ),
        ]
    )
    published = {
        1: Publication(1, T0, "r1", frozenset({"st-a"})),
        2: Publication(2, T0 + timedelta(minutes=1), "r2", frozenset({"st-a"})),
        3: Publication(3, T0 + timedelta(minutes=21), "r-bob", frozenset({"st-a", X})),
    }
    frame = store.query(lambda: store.scan([D], event_types=[*changes.ACT_TYPES, "brief.unchanged"]))
    acted = changes._acted(frame, published, lambda s: s if s == X else None)
    return {a.by: a for a in acted}


def test_an_off_topic_answer_is_no_cause_of_the_version_that_brings_its_story_in(tmp_path: Path) -> None:
    acts = answered(tmp_path, proposed="related", answer="off-topic")
    assert (acts["bob"].version, acts["bob"].changed) == (3, True)
    assert (acts["ann"].version, acts["ann"].changed) == (2, False)  # it kept X out: v3 holds X despite it


def test_a_core_answer_to_a_proposed_off_topic_binds_the_version_that_brings_its_story_in(
    tmp_path: Path,
) -> None:
    acts = answered(tmp_path, proposed="off-topic", answer="core")
    assert (acts["ann"].version, acts["ann"].changed) == (3, True)

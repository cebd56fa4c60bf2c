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
    assert said[(D, 4)] == changes.Summary("bo: marked related", ("article.corrected",))
    assert said[(D, 3)] == changes.Summary("the run r3")
    acted = {a.type: a for a in changes.acts(store, D)}
    assert (acted["brief.approved"].version, acted["brief.approved"].changed) == (3, False)
    assert [a.type for a in changes.between(acted.values(), 3, 4)] == ["article.corrected"]


def test_every_event_the_desk_shows_a_person_has_words() -> None:
    from ops.timeline import DECISIONS

    assert set(changes.ACT_TYPES) | set(DECISIONS) <= set(changes.EVENT_WORDS)
    said = {
        ("article.corrected", "relevance", "lead", None): "marked lead",
        ("article.corrected", "category", "research", None): "corrected the category to “research”",
        ("brief.corrected", "title", "New", None): "corrected the headline to “New”",
        ("brief.corrected", "summary", "Fixed", None): "corrected the summary to “Fixed”",
        ("story.retracted", "", "withdrawn", None): "retracted (note: “withdrawn”)",
        ("confirmation.resolved", "importance", "3", None): "answered an importance question: “3”",
        ("story.restored", "", "", None): "undid the retraction",
        ("brief.approved", "", "", 4): "approved v4",
        ("brief.published", "", "", 4): "published v4",
        ("confirmation.resolved", "relevance", "core", None): "answered a relevance question: “core”",
        ("confirmation.resolved", "same_story", "yes", None): "answered a same-story question: “yes”",
        ("confirmation.resolved", "claim:number", "keep", None): "answered a claim question: “keep”",
        ("story.merged", "", "a1 + a2", None): "same story: a1 + a2",
        ("story.split", "", "a1 + a2", None): "two stories: a1 + a2",
    }
    for (kind, field, value, version), words in said.items():
        assert changes.act_words(kind, field, value, version) == words
        assert kind not in words  # the type is for auditors, beside the words


def test_a_version_that_carried_several_acts_of_one_kind_counts_them(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path / "store"))
    answers = [
        new_event(
            "confirmation.resolved",
            {
                "question_id": f"q{n}",
                "subject": "st-a",
                "field": "relevance",
                "value": "core",
                "answer": "lead" if n == 0 else "core",
                "by": "human",
                "person": "ann",
                "via": "desk",
            },
            brief_date=D,
            run_id="r-answers",
            subject_id=f"q{n}",
            produced_by="review@1:ann",
            occurred_at=T0 + timedelta(minutes=5, seconds=n),
        )
        for n in range(3)
    ]
    store.append([published(1, "r1", 0), *answers])
    store.append([published(2, "r-answers", 6)])
    said = changes.summaries(store, [D])
    assert said[(D, 2)] == changes.Summary("ann: answered 3 questions", ("confirmation.resolved",))
    acted = changes.acts(store, D)
    assert (
        acted[0]
        .line()
        .startswith("answered a relevance question: “lead” — ann via desk at 08:05:00 UTC (v2)")
    )

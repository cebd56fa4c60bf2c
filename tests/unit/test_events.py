from __future__ import annotations

from datetime import UTC, date, datetime

import polars as pl
import pyarrow as pa
import pytest
from pydantic import ValidationError

from storage.errors import InvalidPayload, UnknownEventType
from storage.events import event_from_row, new_event
from storage.payloads import upcast_article_collected_v1_v2
from storage.projections.articles import EVIDENCE_FIELDS, upcast_collected_frame
from storage.projections.base import parse_utc
from storage.registry import REGISTRY, EventRegistry
from storage.store import InMemoryEventStore, events_to_table
from tests.factories import DAY, T0, collected


def test_event_id_is_deterministic_and_ignores_time_for_facts() -> None:
    a = collected(1, at=T0)
    b = collected(1, at=datetime(2030, 1, 1, tzinfo=UTC), run_id="another-run")
    assert a.event_id == b.event_id
    assert collected(1, title="changed").event_id != a.event_id
    assert collected(1, day=date(2025, 8, 7)).event_id != a.event_id


def test_derivations_carry_run_and_policy_in_their_id() -> None:
    def failed(run: str, policy: str) -> str:
        return new_event(
            "feed.failed",
            {"source": "s", "url": "u", "error": "HTTP_500", "retryable": True, "message": "m"},
            brief_date=DAY,
            run_id=run,
            subject_id="s",
            produced_by="t",
            occurred_at=T0,
            policy_version=policy,
        ).event_id

    assert failed("r1", "p1") == failed("r1", "p1")
    assert failed("r1", "p1") != failed("r2", "p1")
    assert failed("r1", "p1") != failed("r1", "p2")


def test_a_misspelt_type_is_answered_with_the_nearest_known_one() -> None:
    from storage.registry import REGISTRY

    with pytest.raises(
        UnknownEventType, match=r"unknown event type 'feed\.fetchd'; did you mean 'feed\.fetched'\?"
    ):
        REGISTRY.spec("feed.fetchd")


def test_events_are_frozen() -> None:
    event = collected(1)
    with pytest.raises(ValidationError):
        event.event_type = "article.corrected"  # type: ignore[misc]


def test_unknown_type_is_refused_with_a_clear_message() -> None:
    with pytest.raises(UnknownEventType, match=r"unknown event type 'article\.teleported'"):
        new_event(
            "article.teleported",
            {},
            brief_date=DAY,
            run_id="r",
            subject_id="s",
            produced_by="t",
            occurred_at=T0,
        )


def test_invalid_payload_names_the_field() -> None:
    with pytest.raises(InvalidPayload, match=r"article\.corrected v2: field 'field'"):
        new_event(
            "article.corrected",
            {"article_id": "a", "field": "colour", "value": "red"},
            brief_date=DAY,
            run_id="r",
            subject_id="a",
            produced_by="t",
            occurred_at=T0,
        )
    with pytest.raises(InvalidPayload, match=r"field .surprise.: Extra inputs"):
        new_event(
            "run.started",
            {"flow": "x", "surprise": 1},
            brief_date=DAY,
            run_id="r",
            subject_id="r",
            produced_by="t",
            occurred_at=T0,
        )


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValidationError, match="timezone"):
        collected(1, at=datetime(2025, 8, 6, 12, 0))


def test_registry_refuses_a_version_without_upcaster() -> None:
    registry = EventRegistry()
    with pytest.raises(UnknownEventType, match="no upcaster"):
        registry.register(
            "x.y",
            {1: REGISTRY.spec("run.started").models[1], 2: REGISTRY.spec("run.started").models[1]},
            fact=True,
            natural_key=lambda p: "",
        )
    with pytest.raises(UnknownEventType, match=r"domain\.action"):
        registry.register(
            "NoDot", {1: REGISTRY.spec("run.started").models[1]}, fact=True, natural_key=lambda p: ""
        )


V1_PAYLOADS = [
    {"published": "2025-08-06T10:00:00+02:00"},
    {"published": "2025-08-06T08:00:00Z"},
    {"published": "Tue, 05 Aug 2025 10:00:00 GMT"},
    {"published": None},
]


@pytest.mark.parametrize("extra", V1_PAYLOADS)
def test_v1_article_is_upcast_on_read_and_frame_upcast_agrees(extra: dict) -> None:
    payload = {
        "article_id": "a",
        "source": "s",
        "url": "u",
        "canonical_url": "u",
        "title": "T",
        "content_hash": "h",
        **extra,
    }
    REGISTRY.validate("article.collected", 1, payload)  # a real v1 payload
    row = {
        "event_id": "0" * 32,
        "event_type": "article.collected",
        "schema_version": 1,
        "occurred_at": T0,
        "seq": 0,
        "brief_date": DAY,
        "run_id": "r",
        "subject_id": "a",
        "source_event_ids": [],
        "produced_by": "old@1",
        "policy_version": "",
        "payload": __import__("json").dumps(payload),
    }
    event = event_from_row(row)
    assert event.schema_version == 4
    assert event.payload["language"] == "und"
    assert event.payload["tags"] == []
    assert "published" not in event.payload and "kind" not in event.payload
    REGISTRY.validate("article.collected", 4, event.payload)

    frame = pl.DataFrame(
        {
            "schema_version": [1],
            "published": [extra["published"]],
            "published_at": [None],
            "language": [None],
            "tags": [None],
            "kind": [None],
            "evidence": [None],
        },
        schema_overrides={
            "published_at": pl.String,
            "language": pl.String,
            "tags": pl.List(pl.String),
            "kind": pl.String,
            "evidence": pl.Struct({f: pl.String for f in EVIDENCE_FIELDS}),
        },
    )
    up = upcast_collected_frame(frame.lazy()).with_columns(parse_utc(pl.col("published_at"))).collect()
    expected = event.payload["published_at"]
    got = up["published_at"][0]
    assert up["tags"].to_list() == [[]] and up["kind"].to_list() == ["news"]
    if expected is None:
        assert got is None
    else:
        assert got == datetime.fromisoformat(expected)


def test_upcaster_keeps_every_other_field() -> None:
    v1 = {
        "article_id": "a",
        "source": "s",
        "url": "u",
        "canonical_url": "c",
        "title": "T",
        "summary": "S",
        "published": None,
        "content_hash": "h",
    }
    v2 = upcast_article_collected_v1_v2(dict(v1))
    assert {k: v2[k] for k in v1 if k != "published"} == {k: v for k, v in v1.items() if k != "published"}


def test_event_row_round_trip_through_arrow() -> None:
    events = [collected(i) for i in range(3)]
    table = events_to_table(events)
    assert isinstance(table, pa.Table)
    back = [event_from_row(r) for r in table.to_pylist()]
    assert back == events


def test_read_returns_models_in_total_order() -> None:
    store = InMemoryEventStore()
    events = [collected(i, at=T0) for i in range(3)]
    store.append(list(reversed(events)))
    assert [e.event_id for e in store.read()] == sorted(e.event_id for e in events)


def test_a_v1_story_is_read_as_decided_by_the_rules() -> None:
    from storage.payloads import REGISTRY, StoryClustered

    v1 = {"story_id": "st-1", "members": ["a", "b"], "representative": "a", "pair_scores": [["a", "b", 0.7]]}
    version, payload = REGISTRY.upcast("story.clustered", 1, dict(v1))
    assert version == 2 and payload["decided_by"] == "rules"
    assert {k: payload[k] for k in v1} == v1
    assert StoryClustered.model_validate(payload).pair_scores == [("a", "b", 0.7)]


def test_a_payload_is_read_as_its_latest_model_from_an_event_or_a_stored_row() -> None:
    from storage.payloads import ArticleCollectedV4, RunStarted, StoryScored
    from storage.typed import payload_of

    v1 = {
        "event_type": "article.collected",
        "schema_version": 1,
        "payload": '{"article_id": "a", "source": "s", "url": "u", "canonical_url": "c", "title": "t",'
        ' "published": "2025-08-06T07:00:00Z", "content_hash": "h"}',
    }
    article = payload_of(v1, ArticleCollectedV4)
    assert (article.published_at, article.language, article.tags) == (
        datetime(2025, 8, 6, 7, tzinfo=UTC),
        "und",
        [],
    )
    event = collected(1)
    assert payload_of(event, ArticleCollectedV4).model_dump(mode="json") == dict(event.payload)
    row = {"event_type": "run.started", "schema_version": 1, "payload": '{"flow": "daily-brief"}'}
    assert payload_of(row, RunStarted).process is None
    with pytest.raises(TypeError, match=r"article\.collected v4 is a ArticleCollectedV4, not a StoryScored"):
        payload_of(event, StoryScored)


def test_a_frame_reads_only_fields_every_version_of_its_type_declares() -> None:
    from storage.typed import payload_field

    frame = pl.DataFrame({"payload": ['{"counts": {"article.collected": 3}, "status": "completed"}']})
    found = frame.select(payload_field("run.finished", "counts", "article.collected").cast(pl.Int64))
    assert found.item() == 3
    assert frame.select(payload_field("run.finished", "status")).item() == "completed"
    with pytest.raises(KeyError, match=r"field 'published_at' is not in version\(s\) \[1\]"):
        payload_field("article.collected", "published_at")

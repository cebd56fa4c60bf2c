"""Source kinds without the real feeds: the unsplittable digest, 'auto' language, the news
path's payload, the v3 → v4 upcast and the settings that refuse an unknown kind or language."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import get_args

import pytest

from storage.errors import ConfigError
from storage.events import event_from_row
from storage.payloads import ArticleCollectedV4
from storage.projections import materialize
from storage.registry import REGISTRY
from storage.store import InMemoryEventStore
from tasks.collect import Fetched, Source, feed_events
from tasks.kinds import KINDS, PARSERS, FeedInfo
from tasks.kinds.digest import assign, sentences, stories
from tasks.settings import parse_settings

DAY = date(2026, 3, 18)
AT = datetime(2026, 3, 18, 13, tzinfo=UTC)


def rss(*items: tuple[str, str, str], language: str = "") -> bytes:
    lang = f"<language>{language}</language>" if language else ""
    body = "".join(
        f"<item><title>{t}</title><link>{link}</link><description>{d}</description>"
        "<pubDate>Wed, 18 Mar 2026 10:00:00 GMT</pubDate></item>"
        for t, link, d in items
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>{lang}{body}</channel></rss>'.encode()


def events_of(source: Source, body: bytes) -> list:
    return feed_events(source, DAY, "r", at=AT, url="https://example.org/feed", fetched=Fetched(body, 200))


def test_every_kind_has_a_parser_and_news_is_the_default() -> None:
    assert set(KINDS) == set(PARSERS) == {"news", "lab", "digest", "community", "repos", "papers"}
    stored = get_args(ArticleCollectedV4.model_fields["kind"].annotation)[0]
    assert set(get_args(stored)) == set(KINDS)  # the payload's kinds are the parsers' kinds
    assert Source("s", "u").kind == "news"
    assert PARSERS["news"]({"title": "T", "link": "https://a.example/1"}, FeedInfo())[0].title == "T"


def test_a_digest_entry_that_names_no_stories_stays_one_article_with_a_warning() -> None:
    body = rss(("OpenAI 发布 GPT-5.4", "https://news.example.cn/daily/1", "1、OpenAI 发布了 GPT-5.4。"))
    events = events_of(Source("digest", "u", kind="digest"), body)
    [article] = [e for e in events if e.event_type == "article.collected"]
    [warned] = [e for e in events if e.event_type == "feed.warned"]
    assert article.payload["url"] == "https://news.example.cn/daily/1"
    assert article.payload["title"] == "OpenAI 发布 GPT-5.4" and "evidence" not in article.payload
    assert warned.payload["warning"] == "DIGEST_UNSPLIT"
    assert warned.payload["entry_url"] == "https://news.example.cn/daily/1"
    assert "names no list of stories" in warned.payload["message"]


def test_a_digest_sentence_naming_two_stories_alike_belongs_to_neither() -> None:
    headlines = stories("AI日报：OpenAI发布GPT-5.4；谷歌发布Gemini 3.1")
    assert headlines == ["OpenAI发布GPT-5.4", "谷歌发布Gemini 3.1"]
    assert stories("The Daily: Gemma 3 ships; Gemini Robotics") == ["Gemma 3 ships", "Gemini Robotics"]
    assert stories("OpenAI 发布 GPT-5.4") == ["OpenAI 发布 GPT-5.4"]  # one story: not a digest's title
    lines = sentences(
        "1、OpenAI发布GPT-5.4，性能提升。8、OpenAI与谷歌对比GPT-5.4和Gemini3.1。谷歌Gemini3.1上线。"
    )
    assert lines == [
        "OpenAI发布GPT-5.4，性能提升。",
        "OpenAI与谷歌对比GPT-5.4和Gemini3.1。",
        "谷歌Gemini3.1上线。",
    ]
    assert assign(lines, headlines) == {1: ["OpenAI发布GPT-5.4，性能提升。"], 2: ["谷歌Gemini3.1上线。"]}


def test_language_auto_reads_each_item_s_script_and_default_keeps_the_feed_s() -> None:
    body = rss(
        ("微软发布新的人工智能模型", "https://a.example/1", "微软今天发布了新的人工智能模型。"),
        ("Microsoft ships a new model", "https://a.example/2", "It is the largest of the year."),
        language="en",
    )
    auto = [e.payload["language"] for e in events_of(Source("s", "u", "auto"), body)[1:]]
    declared = [e.payload["language"] for e in events_of(Source("s", "u"), body)[1:]]
    assert auto == ["zh", "en"] and declared == ["en", "en"]


def test_a_news_article_payload_has_no_kind_fields_and_a_community_one_round_trips() -> None:
    body = rss(("T", "https://a.example/1", "Score: 5<br/>Comments: 2"))
    [news] = [e for e in events_of(Source("s", "u"), body) if e.event_type == "article.collected"]
    assert set(news.payload) == {
        "article_id", "source", "url", "canonical_url", "title", "summary",
        "published_at", "language", "content_hash", "tags",
    }  # fmt: skip
    [hn] = [
        e for e in events_of(Source("s", "u", kind="community"), body) if e.event_type == "article.collected"
    ]
    assert hn.payload["evidence"] == {"points": 5, "comments": 2} and hn.payload["summary"] == ""
    assert REGISTRY.validate("article.collected", 4, hn.payload) == hn.payload


def test_a_v3_article_reads_as_v4_unchanged() -> None:
    payload = {
        "article_id": "a", "source": "s", "url": "u", "canonical_url": "u", "title": "T", "summary": "",
        "published_at": "2025-08-06T10:00:00+00:00", "language": "en", "content_hash": "h", "tags": ["x"],
    }  # fmt: skip
    row = {
        "event_id": "0" * 32, "event_type": "article.collected", "schema_version": 3,
        "occurred_at": AT, "seq": 0, "brief_date": DAY, "run_id": "r", "subject_id": "a",
        "source_event_ids": [], "produced_by": "collect@1", "policy_version": "",
        "payload": json.dumps(payload),
    }  # fmt: skip
    event = event_from_row(row)
    assert event.schema_version == 4
    assert event.payload == payload
    assert set(REGISTRY.validate("article.collected", 4, event.payload)) == set(payload)


def settings(**source: object) -> object:
    return parse_settings(
        {"storage": {"root": "x"}, "sources": [{"name": "lab1", "url": "file:///x", **source}]}
    )


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            {"kind": "blog"},
            "source 'lab1': unknown kind 'blog'; use one of news, lab, digest, community, repos, papers",
        ),
        ({"language": "xx"}, "source 'lab1': unknown language 'xx'; use an ISO 639-1 code"),
        ({"language": "english"}, "unknown language 'english'"),
    ],
)
def test_an_unknown_kind_or_language_is_refused_naming_the_source(source: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")) as refused:
        settings(**source)
    assert "\n" not in str(refused.value)


def test_a_lab_is_first_party_as_on_topic_is() -> None:
    assert settings(kind="lab").sources[0].first_party  # type: ignore[attr-defined]
    assert settings(on_topic=True).sources[0].first_party  # type: ignore[attr-defined]
    assert not settings(kind="news", language="zh-CN").sources[0].first_party  # type: ignore[attr-defined]
    assert settings(language="auto").sources[0].language == "auto"  # type: ignore[attr-defined]


def test_the_articles_projection_shows_a_kind_s_evidence_and_news_as_news() -> None:
    body = rss(
        (
            "T",
            "https://a.example/1",
            "Score: 5<br/>Comments: 2<br/>Discussion: https://news.ycombinator.com/item?id=1",
        )
    )
    store = InMemoryEventStore()
    store.append(events_of(Source("hn", "u", kind="community"), body))
    store.append(events_of(Source("wire", "u"), rss(("N", "https://b.example/2", "text"))))
    rows = {r["source"]: r for r in materialize(store, "articles").to_dicts()}
    assert (rows["hn"]["kind"], rows["hn"]["outlet"], rows["hn"]["points"], rows["hn"]["comments"]) == (
        "community", "a.example", 5, 2,
    )  # fmt: skip
    assert rows["hn"]["discussion_url"] == "https://news.ycombinator.com/item?id=1"
    assert (rows["wire"]["kind"], rows["wire"]["outlet"], rows["wire"]["points"]) == ("news", None, None)

"""Feed bytes, as a file or over HTTP (gzip, deflate, cut short): events or one ``feed.failed``."""

from __future__ import annotations

import gzip
import zlib
from datetime import UTC, date, datetime

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from storage.events import Event
from storage.store.memory import InMemoryEventStore
from tasks.collect import Fetched, Source, feed_events
from tasks.kinds import KINDS
from tasks.steps.collect import collect_source
from tests.fuzz import FUZZ, one_line
from tests.fuzz.feeds import documents
from tests.fuzz.server import Reply, scripted

# feedparser warns of its own updated_parsed fallback on every undated entry
pytestmark = pytest.mark.filterwarnings("ignore:To avoid breaking existing software:DeprecationWarning")
DAY = date(2025, 8, 6)
AT = datetime(2025, 8, 6, 9, tzinfo=UTC)
TYPES = {"feed.fetched", "article.collected", "feed.warned"}


def check(events: list[Event]) -> None:
    """One ``feed.failed`` with a one-line message, or ``feed.fetched`` and what it says; all storable."""
    assert events
    failed = [e for e in events if e.event_type == "feed.failed"]
    event(failed[0].payload["error"] if failed else f"fetched, {min(len(events) - 1, 3)}+ events")
    if failed:
        assert len(events) == 1, "a failed feed leaves no other event"
        assert one_line(failed[0].payload["message"]), failed[0].payload["message"]
    else:
        assert events[0].event_type == "feed.fetched"
        assert {e.event_type for e in events} <= TYPES
        for e in events:
            if e.event_type == "article.collected":
                assert e.payload["title"].strip(), "an article has a title"
                assert "\x00" not in e.payload["title"] + e.payload["summary"]
    store = InMemoryEventStore()
    assert store.append(events).written == len({e.event_id for e in events})
    assert len(store.read([DAY])) == len({e.event_id for e in events})


@FUZZ
@given(body=documents(), kind=st.sampled_from(KINDS), language=st.sampled_from([None, "auto", "zh"]))
@example(  # a reference to a lone surrogate, which feedparser's lenient parser cannot encode
    body=b'<rss version="2.0"><channel><item><title>A &#xD800; b &#55357;&#56832;</title>'
    b"<link>https://a.example/x</link></item></channel></rss>",
    kind="news",
    language=None,
)
@example(  # a digest's link that no URL parser reads
    body="<rss version='2.0'><channel><item><title>AI日报：OpenAI发布新模型；谷歌推出Gemini</title>"
    "<link>http://[::1</link></item></channel></rss>".encode(),
    kind="digest",
    language=None,
)
@example(  # a count longer than any event can store
    body=b"<rss version='2.0'><channel><item><title>Show HN</title><link>https://a.example/x</link>"
    b"<description>Score: 99999999999999999999999</description></item></channel></rss>",
    kind="community",
    language=None,
)
def test_feed_bytes_become_events_or_one_failure(body: bytes, kind: str, language: str | None) -> None:
    source = Source("fuzz", "file:///feeds/{date}.xml", language, kind)
    check(feed_events(source, DAY, "run-fuzz", at=AT, url=source.url_for(DAY), fetched=Fetched(body, 200)))


@st.composite
def responses(draw: st.DrawFn) -> Reply:
    body = draw(documents())
    coding = draw(st.sampled_from(["gzip", "deflate", "identity", None, "br", "gzip, gzip"]))
    headers = {
        "Content-Type": draw(st.sampled_from(["application/rss+xml", "text/html", "x/y; charset=bogus"]))
    }
    if coding == "gzip":
        body = gzip.compress(body, mtime=0)
    elif coding == "deflate":
        body = zlib.compress(body)
    elif coding == "gzip, gzip":
        body = gzip.compress(gzip.compress(body, mtime=0), mtime=0)
    if coding is not None:
        headers["Content-Encoding"] = coding
    damage = draw(st.sampled_from(["none", "none", "cut", "flip", "garbage"]))
    if damage == "cut" and body:
        body = body[: draw(st.integers(0, len(body) - 1))]
    elif damage == "flip" and body:
        at = draw(st.integers(0, len(body) - 1))
        body = body[:at] + bytes([body[at] ^ 0xFF]) + body[at + 1 :]
    elif damage == "garbage":
        body = draw(st.binary(max_size=200))
    status = draw(st.sampled_from([200, 200, 200, 203, 304, 404, 410, 500]))
    return Reply(status, body, headers, close=draw(st.booleans()))


@FUZZ
@given(reply=responses(), kind=st.sampled_from(KINDS))
def test_feed_over_http_becomes_events_or_one_failure(reply: Reply, kind: str) -> None:
    server = scripted()
    server.answer(reply)
    source = Source("fuzz", f"{server.base}/feed/{{date}}.xml", None, kind)
    events = collect_source(source, DAY, "run-fuzz", now=AT, retries=0, timeout_s=5)
    check(events)
    if reply.status >= 400:
        assert events[0].event_type == "feed.failed"


def test_a_reference_to_half_a_character_is_the_character_meant() -> None:
    """An emoji written as two UTF-16 references is that emoji; a lone half is U+FFFD."""
    body = (
        b"<rss version='2.0'><channel><item><title>Launch &#55357;&#56832; &#xD800; done</title>"
        b"<link>https://a.example/x</link></item></channel></rss>"
    )
    source = Source("fuzz", "file:///feeds/{date}.xml")
    events = feed_events(source, DAY, "run-fuzz", at=AT, url="u", fetched=Fetched(body, 200))
    assert [e.payload["title"] for e in events[1:]] == ["Launch \U0001f600 \ufffd done"]

"""collect against a real HTTP server on 127.0.0.1: errors, retries, Retry-After, 304s, redirects."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from storage.store import ParquetEventStore
from tasks import steps
from tasks.collect import Source
from tasks.settings import parse_settings
from tasks.steps.collect import collect_source
from tests.runs import hashing_run

FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Local</title>
<item><title>Local model launch</title><link>http://127.0.0.1/a</link>
<pubDate>Wed, 06 Aug 2025 09:00:00 +0000</pubDate><description>A local story.</description></item>
</channel></rss>"""
DAY = date(2025, 8, 6)
ON_DAY = steps.FixedClock(
    datetime(2025, 8, 6, 12, tzinfo=UTC)
)  # a live feed's runs on DAY, whenever the test runs
WEEK_LATER = steps.FixedClock(datetime(2025, 8, 13, 12, tzinfo=UTC))  # DAY is a past date


class Handler(BaseHTTPRequestHandler):
    hits: ClassVar[dict[str, int]] = {}
    seen_headers: ClassVar[list[dict[str, str]]] = []

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        path = self.path
        Handler.hits[path] = Handler.hits.get(path, 0) + 1
        Handler.seen_headers.append(dict(self.headers))
        n = Handler.hits[path]
        if path == "/feed.xml":
            if self.headers.get("If-None-Match") == '"v1"':
                self.send_response(304)
                self.end_headers()
                return
            self._send(200, FEED, {"ETag": '"v1"', "Last-Modified": "Wed, 06 Aug 2025 10:00:00 GMT"})
        elif path == "/always-500":
            self._send(500, b"boom")
        elif path == "/flaky":
            self._send(503, b"busy") if n == 1 else self._send(200, FEED)
        elif path == "/rate-limited":
            self._send(429, b"slow down", {"Retry-After": "1"}) if n == 1 else self._send(200, FEED)
        elif path == "/slow":
            time.sleep(1.5)
            self._send(200, FEED)
        elif path == "/moved":
            self._send(301, b"", {"Location": "/feed.xml"})
        elif path == "/loop":
            self._send(302, b"", {"Location": "/loop"})
        elif path == "/html":
            self._send(
                200, b"<!DOCTYPE html><html><body>Access Denied</body></html>", {"Content-Type": "text/html"}
            )
        elif path == "/not-found":
            self._send(404, b"nope")
        elif path == "/bad-gzip":
            self._send(200, b"this body is not gzip", {"Content-Encoding": "gzip"})
        else:
            self._send(200, FEED)

    def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[str]:
    Handler.hits, Handler.seen_headers = {}, []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def collect(url: str, **kw: object) -> list:
    options = {"retries": 2, "backoff_s": 0.05, "timeout_s": 0.5, **kw}
    return collect_source(Source("local", url), DAY, "run-http", **options)  # type: ignore[arg-type]


def failure(events: list) -> dict:
    [event] = events
    assert event.event_type == "feed.failed"
    return dict(event.payload)


def test_500_is_retried_then_recorded_as_retryable_failure(server: str) -> None:
    payload = failure(collect(f"{server}/always-500"))
    assert (payload["error"], payload["retryable"], payload["attempts"]) == ("HTTP_500", True, 3)
    assert Handler.hits["/always-500"] == 3


def test_a_transient_503_is_retried_and_succeeds(server: str) -> None:
    events = collect(f"{server}/flaky")
    assert [e.event_type for e in events] == ["feed.fetched", "article.collected"]
    assert Handler.hits["/flaky"] == 2


def test_429_honours_retry_after(server: str) -> None:
    started = time.perf_counter()
    events = collect(f"{server}/rate-limited")
    assert time.perf_counter() - started >= 1.0
    assert events[0].event_type == "feed.fetched"


def test_timeout_is_a_structured_retryable_failure(server: str) -> None:
    payload = failure(collect(f"{server}/slow", retries=0))
    assert (payload["error"], payload["retryable"]) == ("NETWORK_TIMEOUT", True)


def test_404_is_not_retried(server: str) -> None:
    payload = failure(collect(f"{server}/not-found"))
    assert (payload["error"], payload["retryable"], payload["attempts"]) == ("HTTP_404", False, 1)
    assert Handler.hits["/not-found"] == 1


def test_a_broken_gzip_body_and_an_invalid_url_are_structured_failures(server: str, tmp_path: Path) -> None:
    payload = failure(collect(f"{server}/bad-gzip"))
    assert (payload["error"], payload["retryable"], payload["attempts"]) == ("BAD_ENCODING", False, 1)
    assert Handler.hits["/bad-gzip"] == 1
    payload = failure(collect("http://127.0.0.1:no-port/feed.xml"))
    assert (payload["error"], payload["retryable"]) == ("BAD_URL", False)
    settings = parse_settings(
        {"storage": {"root": str(tmp_path)}, "sources": [{"name": "gz", "url": f"{server}/bad-gzip"}]}
    )
    ctx = hashing_run(ParquetEventStore(str(tmp_path)), settings, DAY, "run-gz", clock=ON_DAY)
    outcome = steps.collect_one(ctx, "gz")  # the run's collect step goes on with the other sources
    assert (outcome.items, outcome.error) == (0, "BAD_ENCODING")
    assert [e.event_type for e in ctx.store.read()] == ["feed.failed"]


def test_redirects_are_followed_and_loops_stopped(server: str) -> None:
    assert collect(f"{server}/moved")[0].payload["status"] == 200
    assert failure(collect(f"{server}/loop"))["error"] == "TOO_MANY_REDIRECTS"


def test_html_instead_of_a_feed(server: str) -> None:
    assert failure(collect(f"{server}/html"))["error"] == "NOT_A_FEED"


def test_conditional_get_is_remembered_across_runs(server: str, tmp_path: Path) -> None:
    settings = parse_settings(
        {"storage": {"root": str(tmp_path)}, "sources": [{"name": "local", "url": f"{server}/feed.xml"}]}
    )
    store = ParquetEventStore(str(tmp_path))

    def run(day: date) -> steps.SourceOutcome:
        ctx = hashing_run(store, settings, day, f"run-{day}", clock=ON_DAY)
        return steps.collect_one(ctx, "local")

    first = run(DAY)  # a live feed is collected for today only
    assert first.items == 1 and first.error is None
    second = run(DAY)  # the next run (a rerun, or tomorrow's) asks "changed since?"
    assert Handler.seen_headers[-1].get("If-None-Match") == '"v1"'
    assert Handler.seen_headers[-1].get("If-Modified-Since") == "Wed, 06 Aug 2025 10:00:00 GMT"
    assert (second.items, second.new_events, second.error) == (0, 0, None)  # 304: nothing new to say
    [fetched] = store.read(event_types=["feed.fetched"])  # "this feed had this content" is one fact
    assert fetched.payload["etag"] == '"v1"'


def test_a_304_confirms_the_content_of_the_last_fetch() -> None:
    from tasks.collect import Fetched, Validators, _fetched_event

    validators = Validators('"v1"', "Wed, 06 Aug 2025 10:00:00 GMT", "abc123")
    event = _fetched_event(
        Source("s", "http://x"),
        DAY,
        "r",
        __import__("datetime").datetime.now(__import__("datetime").UTC),
        "http://x",
        Fetched(b"", 304, None, 1, '"v1"', None),
        validators,
        0,
        0.0,
    )
    assert event.payload["not_modified"] is True and event.payload["content_hash"] == "abc123"


def test_a_live_feed_is_not_collected_for_a_past_date(server: str, tmp_path: Path) -> None:
    settings = parse_settings(
        {"storage": {"root": str(tmp_path)}, "sources": [{"name": "live", "url": f"{server}/feed.xml"}]}
    )
    ctx = hashing_run(ParquetEventStore(str(tmp_path)), settings, DAY, "run-past", clock=WEEK_LATER)
    outcome = steps.collect_one(ctx, "live")
    reason = "a live feed cannot be replayed for a past date"
    assert outcome.skipped == reason and outcome.message == f"skipped: {reason}" and outcome.new_events == 1
    [skipped] = ctx.store.read(event_types=["feed.skipped"])
    assert skipped.payload == {"source": "live", "url": f"{server}/feed.xml", "reason": reason}
    assert "/feed.xml" not in Handler.hits


def test_an_archive_that_starts_later_is_skipped_and_a_gap_in_it_fails(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    archive.mkdir()
    for day in ("2025-08-06", "2025-08-08"):
        (archive / f"lab-{day}.xml").write_bytes(FEED)
    (archive / "lab-latest.xml").write_bytes(FEED)  # not a date: not a day of the archive
    settings = parse_settings(
        {
            "storage": {"root": str(tmp_path / "root")},
            "sources": [{"name": "lab", "url": f"file://{archive}/lab-{{date}}.xml"}],
        }
    )

    def collect(day: date) -> steps.SourceOutcome:
        ctx = hashing_run(str(tmp_path / "root"), settings, day, f"run-{day}")
        return steps.collect_one(ctx, "lab")

    before = collect(date(2025, 8, 5))
    reason = "the archive starts on 2025-08-06"
    assert (before.skipped, before.error, before.new_events) == (reason, None, 1)
    gap, after = collect(date(2025, 8, 7)), collect(date(2025, 8, 9))
    assert gap.error == after.error == "NOT_FOUND" and gap.skipped is None is after.skipped
    assert collect(date(2025, 8, 8)).items == 1
    store = ParquetEventStore(str(tmp_path / "root"))
    [skipped] = store.read(event_types=["feed.skipped"])
    assert skipped.payload["reason"] == reason and skipped.brief_date == date(2025, 8, 5)

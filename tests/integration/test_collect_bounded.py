"""A run's sources fetched at once, within bounds, from fake feeds on loopback addresses.

Three servers, on 127.0.0.1, 127.0.0.2 and 127.0.0.3 (separate hosts to the collector), each
counting the requests it serves at once: no host ever gets more than ``[collect] per_host`` at
a time, the process no more than ``max_fetches``; a source that answers late fails on its own
timeout while the others are collected as fast as without it; a feed that has not changed is
a 304 the second time; and the log holds the sources' events in the order of the sources,
whichever answered first.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import parse_settings
from tests.runs import hashing_run

DAY = date(2025, 8, 6)
HOSTS = ("127.0.0.1", "127.0.0.2", "127.0.0.3")


def feed(name: str) -> bytes:
    return f"""<?xml version="1.0"?><rss version="2.0"><channel><title>{name}</title>
<item><title>{name} ships a model</title><link>http://example.org/{name}</link>
<pubDate>Wed, 06 Aug 2025 09:00:00 +0000</pubDate><description>News of {name}.</description></item>
</channel></rss>""".encode()


class Counting(BaseHTTPRequestHandler):
    """Serves ``/NAME/DATE.xml`` (the brief date's; other dates are 404) after ``delay[NAME]``
    seconds; counts the requests in flight per server."""

    delay: ClassVar[dict[str, float]] = {}
    lock = threading.Lock()
    now: ClassVar[dict[str, int]] = {}  # host -> requests in flight
    peak: ClassVar[dict[str, int]] = {}
    now_all: ClassVar[list[int]] = [0, 0]  # in flight on all servers, the most at once
    served: ClassVar[dict[str, float]] = {}  # path -> when its answer was sent (monotonic)
    conditional: ClassVar[list[str]] = []  # paths asked with If-None-Match

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        name, _, day = self.path.strip("/").partition("/")
        dated = day == f"{DAY.isoformat()}.xml"  # other dates are 404
        self.working(Counting.delay.get(name, 0.15) if dated else 0.05)
        try:
            if not dated:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif self.headers.get("If-None-Match") == f'"{name}-v1"':
                Counting.conditional.append(self.path)
                self.send_response(304)
                self.end_headers()
            else:
                body = feed(name)
                self.send_response(200)
                self.send_header("ETag", f'"{name}-v1"')
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the collector gave up on a slow answer
            pass

    def working(self, seconds: float) -> None:
        """A request in flight for ``seconds``, counted until its answer is about to be sent
        (once sent, the client may already be on its next request)."""
        host = self.server.server_address[0]
        with Counting.lock:
            Counting.now[host] = Counting.now.get(host, 0) + 1
            Counting.peak[host] = max(Counting.peak.get(host, 0), Counting.now[host])
            Counting.now_all[0] += 1
            Counting.now_all[1] = max(Counting.now_all)
        time.sleep(seconds)
        with Counting.lock:
            Counting.served[self.path] = time.monotonic()
            Counting.now[host] -= 1
            Counting.now_all[0] -= 1


@pytest.fixture
def servers() -> Iterator[dict[str, str]]:
    """host -> base URL of a counting server on that loopback address."""
    Counting.delay, Counting.now, Counting.peak, Counting.now_all = {}, {}, {}, [0, 0]
    Counting.served, Counting.conditional = {}, []
    running = []
    for host in HOSTS:
        httpd = ThreadingHTTPServer((host, 0), Counting)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        running.append(httpd)
    yield {h.server_address[0]: f"http://{h.server_address[0]}:{h.server_address[1]}" for h in running}
    for httpd in running:
        httpd.shutdown()
        httpd.server_close()


def context(root: Path, sources: list[tuple[str, str]], **collect: object) -> steps.RunContext:
    settings = parse_settings(
        {
            "storage": {"root": str(root)},
            "sources": [{"name": name, "url": f"{base}/{name}/{{date}}.xml"} for name, base in sources],
            "collect": collect,
        }
    )
    return hashing_run(ParquetEventStore(str(root)), settings, DAY, "run-bounded")


def test_no_host_gets_more_than_its_limit_and_the_process_no_more_than_its_cap(
    tmp_path: Path, servers: dict[str, str]
) -> None:
    sources = [(f"s{k:02d}", servers[HOSTS[k % 3]]) for k in range(24)]
    outcomes = steps.collect_sources(context(tmp_path / "a", sources, per_host=2, max_fetches=16))
    assert [o.items for o in outcomes] == [1] * 24
    assert Counting.peak == dict.fromkeys(HOSTS, 2)  # each host at its limit, never over it

    Counting.peak, Counting.now_all = {}, [0, 0]
    steps.collect_sources(context(tmp_path / "b", sources, per_host=4, max_fetches=3))
    assert Counting.now_all[1] == 3  # three hosts of four slots each, but three fetches in all
    assert max(Counting.peak.values()) <= 3


def test_a_slow_source_fails_on_its_own_timeout_without_holding_the_others(
    tmp_path: Path, servers: dict[str, str]
) -> None:
    Counting.delay["slow"] = 6.0
    fast = [(f"f{k:02d}", servers[HOSTS[k % 2]]) for k in range(8)]
    sources = [("slow", servers["127.0.0.3"]), *fast]
    ctx = context(tmp_path, sources, per_host=2, timeout_s=0.6)
    started = time.monotonic()
    outcomes = steps.collect_sources(ctx)
    took = time.monotonic() - started

    slow, *others = outcomes
    assert slow.error == "NETWORK_TIMEOUT"
    assert [o.items for o in others] == [1] * 8
    # the fast feeds were all answered while the slow one was still on its first try: four
    # rounds of 0.15 s per host with two at a time, not after the slow one's timeouts
    last_fast = max(Counting.served[f"/{name}/{DAY}.xml"] for name, _ in fast)
    assert last_fast - started < 1.5
    # the slow source took its own attempts (4 of 0.6 s, and 3.5-4.25 s of backoff between), not
    # the server's 6 s each
    assert took < 9.0
    [failed] = ctx.store.read([DAY], event_types=["feed.failed"])
    assert failed.payload["attempts"] == 4


def test_a_feed_that_has_not_changed_is_a_304_the_second_time(
    tmp_path: Path, servers: dict[str, str]
) -> None:
    sources = [(f"c{k}", servers[host]) for k, host in enumerate(HOSTS)]
    first = steps.collect_sources(context(tmp_path, sources))
    assert [o.items for o in first] == [1, 1, 1] and Counting.conditional == []

    again = context(tmp_path, sources)
    second = steps.collect_sources(again)
    assert sorted(Counting.conditional) == sorted(f"/{name}/{DAY}.xml" for name, _ in sources)
    # a 304 confirms the fetch before it (same source, URL and content): nothing new in the log
    assert [(o.items, o.new_events, o.error) for o in second] == [(0, 0, None)] * 3
    assert [o.counts["feed.fetched"] for o in second] == [1, 1, 1]
    assert len(again.store.read([DAY], event_types=["feed.fetched"])) == 3


def test_the_log_holds_the_sources_in_their_order_whichever_answered_first(
    tmp_path: Path, servers: dict[str, str]
) -> None:
    names = [f"o{k}" for k in range(6)]
    for k, name in enumerate(names):
        Counting.delay[name] = 0.6 - 0.1 * k  # the first source answers last
    ctx = context(tmp_path, [(name, servers[HOSTS[k % 3]]) for k, name in enumerate(names)])
    steps.collect_sources(ctx)
    written = ctx.store.raw_units(ctx.store.units(DAY)).collect()  # the files in the order they were written
    subjects = [
        row["subject_id"] for row in written.iter_rows(named=True) if row["event_type"] == "feed.fetched"
    ]
    assert subjects == names
    assert written.height == 2 * len(names)
    answered = sorted(names, key=lambda name: Counting.served[f"/{name}/{DAY}.xml"])
    assert answered != names  # they did answer in another order

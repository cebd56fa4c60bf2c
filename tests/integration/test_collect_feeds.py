"""Real feeds through collect: publisher snapshots, feedparser's own malformed cases, an HTML error page."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from tasks.collect import Source
from tasks.steps.collect import collect_source

DAY = date(2025, 8, 6)


def test_every_feedparser_case_is_collected_or_recorded_as_failed(shared_data: Path) -> None:
    cases = sorted((shared_data / "feedparser-cases").rglob("*.xml"))
    assert cases, f"{shared_data}/feedparser-cases holds no feed"
    outcomes = {"fetched": 0, "failed": 0}
    for path in cases:
        events = collect_source(Source("case", path.as_uri()), DAY, "run-cases")
        kinds = {e.event_type for e in events}
        assert kinds <= {"feed.fetched", "feed.failed", "article.collected"}, path
        assert ("feed.fetched" in kinds) != ("feed.failed" in kinds), path
        outcomes["fetched" if "feed.fetched" in kinds else "failed"] += 1
        for e in events:
            if e.event_type == "article.collected":
                assert "<script" not in e.payload["title"] + e.payload["summary"], path
    assert outcomes["fetched"] > 200 and outcomes["failed"] >= 1


def test_html_access_denied_page_is_not_a_feed(shared_data: Path) -> None:
    page = shared_data / "feeds" / "_edge_cases" / "tweakers_2025-08-08T1437Z_access_denied_html.xml"
    [event] = collect_source(Source("tweakers", page.as_uri()), DAY, "run-1")
    assert event.event_type == "feed.failed"
    assert (event.payload["error"], event.payload["retryable"]) == ("NOT_A_FEED", False)


def test_missing_archive_day_is_a_failed_feed_not_a_crash(tmp_path: Path) -> None:
    [event] = collect_source(Source("gone", (tmp_path / "{date}.xml").as_uri()), DAY, "run-1")
    assert event.payload["error"] == "NOT_FOUND"


@pytest.mark.parametrize("day", ["2025-07-28", "2025-08-05", "2025-08-06", "2025-08-07", "2021-06-16"])
def test_real_snapshots_yield_every_labelled_item(shared_data: Path, day: str) -> None:
    labels = json.loads((shared_data / "labels" / f"stories-{day}.json").read_text())
    expected: dict[str, set[str]] = {}
    for item in labels["items"]:
        expected.setdefault(item["source"], set()).add(item["id"])
    for source, links in expected.items():
        template = (shared_data / "feeds" / source).as_uri() + "/{date}.xml"
        events = collect_source(Source(source, template), date.fromisoformat(day), "run-real")
        urls = {e.payload["url"] for e in events if e.event_type == "article.collected"}
        assert urls == links, source
        for e in events:
            if e.event_type == "article.collected":
                assert e.payload["title"].strip()
                assert e.payload["published_at"] is not None, e.payload["url"]

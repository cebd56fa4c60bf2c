"""aibase's digest on real consecutive days: a story it repeats is briefed once.

A digest entry stays in aibase's feed for a week or more, and each snapshot dates it anew,
hours later: 26342 ("MiniMax发布M2.7模型；腾讯QClaw接入微信小程序；OpenAI发布最强小模型GPT-5.4
mini") is 12:03 on 03-18 in the snapshot of 2026-03-18, 16:56 on 03-18 in that of 03-19 and
11:51 on 03-19 in that of 03-20, inside 03-20's news window and outside 03-18's. Its stories
are the same articles each day (the digest link and the story's place), and a story a brief
published is not news again.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

from storage.store import ParquetEventStore
from tasks import steps
from tasks.dedup import in_window, news_window
from tasks.settings import parse_settings
from tests.runs import hashing_run

DIGEST = "aibase_daily"
DAYS = [date(2026, 3, 18), date(2026, 3, 19), date(2026, 3, 20)]


def test_a_digest_story_repeated_on_the_next_days_is_in_one_brief_only(
    shared_data: Path, tmp_path: Path
) -> None:
    feeds = shared_data / "aiweb" / "feeds" / DIGEST
    settings = parse_settings(
        {
            "storage": {"root": str(tmp_path)},
            "sources": [
                {"name": DIGEST, "url": f"{feeds.as_uri()}/{{date}}.xml", "kind": "digest", "language": "zh"}
            ],
        }
    )
    store = ParquetEventStore(str(tmp_path))
    cited: dict[str, list[date]] = {}
    for day in DAYS:
        ctx = hashing_run(store, settings, day, f"run-{day}")
        steps.collect_one(ctx, DIGEST)
        outcome = steps.dedup_day(ctx)
        document, _, _ = steps.draft(ctx, outcome)
        steps.publish(ctx, document)
        for url in {c.url for item in document.items for c in item.citations}:
            cited.setdefault(url, []).append(day)

    first = {url for url, days in cited.items() if days[0] == DAYS[0]}
    assert {"https://news.aibase.com/zh/daily/26342#1", "https://news.aibase.com/zh/daily/26342#3"} <= first
    assert all(len(days) == 1 for days in cited.values()), {u: d for u, d in cited.items() if len(d) > 1}

    # 26342's stories were collected again on the two next days, dated inside the last day's
    # window and no longer inside 03-18's: what keeps them out is that 03-18's brief published them
    events = store.read(DAYS)
    again = [
        e
        for e in events
        if e.event_type == "article.collected"
        and e.brief_date == DAYS[2]
        and e.payload["url"].startswith("https://news.aibase.com/zh/daily/26342#")
    ]
    assert len(again) == 3
    assert {e.payload["published_at"] for e in again} == {"2026-03-19T11:51:03Z"}
    published = datetime.fromisoformat(again[0].payload["published_at"])
    hours = settings.policy.lookback_hours
    assert in_window(published, news_window(DAYS[2], settings.zone, hours))
    assert not in_window(published, news_window(DAYS[0], settings.zone, hours))
    not_news = {
        e.payload["article_id"]: e.payload
        for e in events
        if e.event_type == "article.duplicate_detected" and e.brief_date == DAYS[2]
    }
    for e in again:
        assert not_news[e.payload["article_id"]]["reason"] == "briefed_before"
        assert not_news[e.payload["article_id"]]["first_brief_date"] == "2026-03-18"

"""GitHub trending on real consecutive days: a repository's first day trending is news, and a
later day it trends again is a follow-up of that story, not a repeat and not dropped."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from storage.brief import Item
from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import parse_settings
from tests.runs import hashing_run

REPOS = "github_trends_daily"
DAYS = [date(2026, 3, 18), date(2026, 3, 19)]


def test_a_repository_trending_again_is_a_follow_up_of_its_first_day(
    shared_data: Path, tmp_path: Path
) -> None:
    feeds = shared_data / "aiweb" / "feeds" / REPOS
    settings = parse_settings(
        {
            "storage": {"root": str(tmp_path)},
            "sources": [
                {"name": REPOS, "url": f"{feeds.as_uri()}/{{date}}.xml", "kind": "repos", "on_topic": True}
            ],
        }
    )
    store = ParquetEventStore(str(tmp_path))
    briefs: dict[date, dict[str, Item]] = {}
    for day in DAYS:
        ctx = hashing_run(store, settings, day, f"run-{day}")
        steps.collect_one(ctx, REPOS)
        outcome = steps.dedup_day(ctx)
        document, _, _ = steps.draft(ctx, outcome)
        steps.publish(ctx, document)
        briefs[day] = {c.url: item for item in document.items for c in item.citations}

    first, second = briefs[DAYS[0]], briefs[DAYS[1]]
    again = "https://github.com/obra/superpowers"  # trending on both days
    assert again in first and again in second
    assert first[again].follow_up_of is None
    assert second[again].follow_up_of == first[again].story_id
    for url in set(first) & set(second):  # every repository of both days continues its story
        assert second[url].follow_up_of == first[url].story_id, url
    assert set(second) - set(first), "03-19 has repositories new to the trending page"
    assert all(second[url].follow_up_of is None for url in set(second) - set(first))

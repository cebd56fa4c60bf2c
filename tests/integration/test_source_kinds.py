"""Each kind's parser on the real AI-world feeds of March 2026 (``../shared/data/aiweb``).

What is asserted was read off the files by hand: an HN item's linked host and points, a
repository's stars today, a paper's first sentence and trending day, a digest split into its
title's stories with only their own sentences.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from storage.events import Event, canonical_json
from tasks.collect import Fetched, Source, feed_events
from tasks.settings import parse_settings
from tasks.steps.collect import collect_source
from tests.real_days import aiweb_sources_toml

DAY = date(2026, 3, 18)


def collected(shared_data: Path, name: str, kind: str, day: str = "2026-03-18") -> list[Event]:
    path = shared_data / "aiweb" / "feeds" / name / f"{day}.xml"
    events = feed_events(
        Source(name, path.as_uri(), kind=kind),
        DAY,
        "run-kinds",
        at=datetime(2026, 3, 18, 13, tzinfo=UTC),
        url=path.as_uri(),
        fetched=Fetched(path.read_bytes(), 200),
    )
    return [e for e in events if e.event_type == "article.collected"]


def by_url(events: list[Event]) -> dict[str, dict]:
    return {e.payload["url"]: dict(e.payload) for e in events}


def test_a_hacker_news_item_is_its_linked_article_with_points_and_the_discussion(shared_data: Path) -> None:
    items = by_url(collected(shared_data, "hackernews_best_stories", "community"))
    assert len(items) == 50
    story = items[
        "https://www.timesofisrael.com/gamblers-trying-to-win-a-bet-on-polymarket-are-vowing-to-kill-me"
        "-if-i-dont-rewrite-an-iran-missile-story/"
    ]
    assert story["outlet"] == "timesofisrael.com"
    assert story["discussion_url"] == "https://news.ycombinator.com/item?id=47397822"
    assert story["evidence"] == {"points": 1591, "comments": 1022}
    show = items["https://github.com/htdt/godogen"]
    assert (show["outlet"], show["evidence"]["points"], show["evidence"]["comments"]) == (
        "github.com",
        313,
        193,
    )
    for item in items.values():
        assert item["kind"] == "community"
        assert not re.search(r"Score:|Comments:|By:|Discussion:", item["summary"] + item["title"])
        assert "ycombinator" not in item["outlet"]


def test_an_ask_hn_post_is_itself_the_article(shared_data: Path) -> None:
    items = by_url(collected(shared_data, "hackernews_best_stories", "community", day="2026-03-17"))
    ask = items["https://news.ycombinator.com/item?id=47388646"]
    assert ask["title"] == "Ask HN: How is AI-assisted coding going for you professionally?"
    assert ask["outlet"] == "Hacker News" and "discussion_url" not in ask
    assert ask["evidence"] == {"points": 403, "comments": 583}


def test_a_trending_repository_has_its_description_stars_today_and_language(shared_data: Path) -> None:
    items = by_url(collected(shared_data, "github_trends_daily", "repos"))
    repo = items["https://github.com/obra/superpowers"]
    assert repo["summary"] == "An agentic skills framework & software development methodology that works."
    assert repo["evidence"] == {"stars": 94498, "stars_today": 4091, "repo_language": "Shell"}
    assert repo["outlet"] == "GitHub"
    # the entry's own date (2026-03-05 for claude-hud) is its last push; it trends on the feed's day
    assert items["https://github.com/jarrodwatts/claude-hud"]["published_at"].startswith("2026-03-18")
    assert all("⭐" not in i["summary"] and "stars today" not in i["summary"] for i in items.values())


def test_a_paper_is_news_the_day_it_trends_summed_up_in_a_sentence_or_two(shared_data: Path) -> None:
    items = by_url(collected(shared_data, "huggingface_daily_papers", "papers"))
    paper = items["https://arxiv.org/abs/2602.20159"]  # arXiv 2026-02-23, trending on 03-18
    assert paper["summary"] == (
        "Rapid progress in video models has largely focused on visual quality, "
        "leaving their reasoning capabilities underexplored."
    )
    assert paper["published_at"].startswith("2026-03-18")
    assert paper["evidence"] == {"upvotes": 515}
    assert {i["outlet"] for i in items.values()} == {"Hugging Face"}  # not the config's name for the feed
    for item in items.values():
        assert 1 <= len(re.findall(r"[.!?](?:\s|$)", item["summary"])) <= 2, item["summary"]
        assert not re.search(r"Upvotes:|Authors:|GitHub Stars:", item["summary"])
        if item["summary"].endswith("..."):  # cut by the feed: kept only when no sentence ends before
            assert not re.search(r"[.!?]\s", item["summary"]), item["summary"]
        assert item["published_at"].startswith("2026-03-18")


def test_a_digest_entry_becomes_one_article_per_story_its_title_names(shared_data: Path) -> None:
    events = collected(shared_data, "aibase_daily", "digest")
    assert len(events) == 20 * 3  # every entry of the day names three stories
    items = by_url(events)
    link = "https://news.aibase.com/zh/daily/26342"
    assert [items[f"{link}#{k}"]["title"] for k in (1, 2, 3)] == [
        "MiniMax发布M2.7模型",
        "腾讯QClaw接入微信小程序",
        "OpenAI发布最强小模型GPT-5.4 mini",
    ]
    assert [items[f"{link}#{k}"]["evidence"]["digest_position"] for k in (1, 2, 3)] == [1, 2, 3]
    assert {items[f"{link}#{k}"]["outlet"] for k in (1, 2, 3)} == {"aibase"}
    assert len({items[f"{link}#{k}"]["article_id"] for k in (1, 2, 3)}) == 3
    assert len({items[f"{link}#{k}"]["canonical_url"] for k in (1, 2, 3)}) == 3
    # its summary's "1、" is a teaser and "8、" is a story the title does not name: neither is kept
    assert all(items[f"{link}#{k}"]["summary"] == "" for k in (1, 2, 3))
    assert not any("ByteClaw" in i["summary"] for i in items.values())


def test_a_digest_story_keeps_only_its_own_sentences(shared_data: Path) -> None:
    items = by_url(collected(shared_data, "aibase_daily", "digest"))
    gpt = "https://news.aibase.com/zh/daily/25928"
    assert "OpenAI推出GPT-5.3Instant" in items[f"{gpt}#1"]["summary"]
    assert "讯飞" not in items[f"{gpt}#1"]["summary"]  # the AI glasses story spliced into "1、"
    assert items[f"{gpt}#2"]["summary"] == items[f"{gpt}#3"]["summary"] == ""
    tabbit = "https://news.aibase.com/zh/daily/25844"
    assert "Tabbit" in items[f"{tabbit}#1"]["summary"] and "LoVR" not in items[f"{tabbit}#1"]["summary"]
    gemini = "https://news.aibase.com/zh/daily/25801"  # its "1、" is the title's second story
    assert items[f"{gemini}#1"]["summary"] == ""
    assert items[f"{gemini}#2"]["summary"].startswith("谷歌即将停用Gemini3ProPreview")
    stories: dict[str, list[str]] = {}
    for url, item in items.items():
        stories.setdefault(url.split("#")[0], []).append(item["summary"])
    for link, summaries in stories.items():
        sentences = [s for text in summaries for s in re.split(r"(?<=[。！？!?])", text) if s]
        assert len(sentences) == len(set(sentences)), link  # no sentence in two stories


def test_a_lab_post_is_written_as_the_lab_wrote_it(shared_data: Path) -> None:
    news = collected(shared_data, "anthropic_news", "news")
    lab = collected(shared_data, "anthropic_news", "lab")
    assert [e.payload["title"] for e in lab] == [e.payload["title"] for e in news]
    assert {e.payload["kind"] for e in lab} == {"lab"}
    assert all("kind" not in e.payload for e in news)


def test_the_news_path_writes_what_it_wrote_before_kinds(shared_data: Path) -> None:
    """Event ids and payloads of the 2025 real feeds, as collected before sources had kinds."""
    digest, count = hashlib.blake2b(digest_size=8), 0
    for path in sorted((shared_data / "feeds").glob("*/2025-08-06.xml")):
        for event in feed_events(
            Source(path.parent.name, path.as_uri()),
            date(2025, 8, 6),
            "run",
            at=datetime(2025, 8, 6, tzinfo=UTC),
            url=path.as_uri(),
            fetched=Fetched(path.read_bytes(), 200),
        ):
            if event.event_type == "article.collected":
                digest.update((event.event_id + canonical_json(event.payload)).encode())
                count += 1
    assert (count, digest.hexdigest()) == (252, "dc964ec75fa44bc7")


@pytest.mark.parametrize(
    "name", ["hackernews_best_stories", "github_trends_daily", "huggingface_daily_papers"]
)
def test_no_kind_shows_feed_metadata_as_text(shared_data: Path, name: str) -> None:
    kind = {"hackernews_best_stories": "community", "github_trends_daily": "repos"}.get(name, "papers")
    for event in collected(shared_data, name, kind):
        assert "<br" not in event.payload["summary"] and "🔗" not in event.payload["summary"]


def test_the_guide_s_config_for_the_14_feeds_loads_and_collects_each_of_them(shared_data: Path) -> None:
    aiweb = shared_data / "aiweb"
    text = "[storage]\nroot = 'x'\n" + aiweb_sources_toml(aiweb)
    sources = parse_settings(tomllib.loads(text)).sources
    assert sorted(s.name for s in sources) == sorted(p.name for p in (aiweb / "feeds").iterdir())
    for src in sources:
        events = collect_source(Source(src.name, src.url, src.language, src.kind), DAY, "run-guide")
        types = [e.event_type for e in events]
        assert types[0] == "feed.fetched" and "feed.warned" not in types, src.name
        assert "article.collected" in types, src.name
    assert {s.name for s in sources if s.first_party} == {
        "anthropic_news", "deepseek_news", "moonshot_blog", "minimax_blog", "z_ai_blog", "meta_ai_news",
        "bytedance_seed_blog",
    }  # fmt: skip


def test_entries_that_share_one_link_are_collected_as_the_newest_of_them(shared_data: Path) -> None:
    # z.ai's release notes: every entry links https://docs.z.ai/release-notes/new-released
    events = collected(shared_data, "z_ai_blog", "lab", day="2026-03-17")
    [article] = [e.payload for e in events]
    assert (article["title"], article["published_at"]) == ("GLM-5-Turbo", "2026-03-15T00:00:00Z")
    assert article["url"] == "https://docs.z.ai/release-notes/new-released"

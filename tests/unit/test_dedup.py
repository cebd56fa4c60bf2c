from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import numpy as np

from tasks.dedup import DedupPolicy, Item, cluster, news_window, pairwise_scores
from tasks.embed import CachedEmbedder, HashingEmbedder


def item(
    aid: str, source: str, title: str, summary: str = "", url: str | None = None, h: str | None = None
) -> Item:
    return Item(
        aid,
        source,
        title,
        summary,
        url or f"https://{source}.example/{aid}",
        h or aid,
        datetime(2025, 8, 6, 9, tzinfo=UTC),
    )


def run(items: list[Item], **policy: object) -> list[tuple[str, ...]]:
    vectors = HashingEmbedder().encode([i.text for i in items])
    return sorted(s.members for s in cluster(items, vectors, DedupPolicy(**policy)).stories)  # type: ignore[arg-type]


def test_exact_duplicates_by_url_and_content() -> None:
    items = [
        item("a", "s1", "One", url="https://x/1"),
        item("b", "s2", "Two", url="https://x/1"),
        item("c", "s3", "Three", h="same"),
        item("d", "s4", "Four", h="same"),
    ]
    assert run(items, near_duplicate_threshold=1.01) == [("a", "b"), ("c", "d")]


def test_an_organisation_the_other_never_mentions_keeps_stories_apart() -> None:
    launch = item("a", "ars", "OpenAI releases open model gpt-oss", "OpenAI released two open-weight models")
    partner = item(
        "b", "tc", "Microsoft brings OpenAI open model gpt-oss to Windows", "OpenAI gpt-oss on Windows"
    )
    assert run([launch, partner], near_duplicate_threshold=0.1) == [("a",), ("b",)]
    assert run([launch, partner], near_duplicate_threshold=0.1, organisation_conflicts=False) == [("a", "b")]


def test_one_outlet_reports_once_unless_nearly_identical() -> None:
    a = item("a", "tc", "Constitution pages vanish from website")
    b = item("b", "tc", "Library explains why Constitution pages vanished")
    assert run([a, b], near_duplicate_threshold=0.1, same_source_threshold=0.99) == [("a",), ("b",)]


def test_non_english_items_join_on_shared_names() -> None:
    a = item("a", "qbitai", "PyTorch 1.9发布！移动端疯狂更新")
    b = item("b", "jiqizhixin", "PyTorch 1.9发布，支持新API")
    c = item("c", "36kr", "五菱汽车与快递公司合作造车")
    assert run([a, b, c]) == [("a", "b"), ("c",)]


def test_clustering_is_deterministic_and_idempotent() -> None:
    topics = [
        "Orchard Labs releases the Pippin-2 language model",
        "Harbor Robotics ships its first warehouse arm",
        "Brightwater council pilots emergency call triage",
        "Lakeside University publishes a benchmark of tiny models",
        "Northwind raises a Series B round from Harbor Ventures",
        "Solar farm opens on the old airfield in Kestrel Bay",
    ]
    items = [item(str(i), f"s{i % 3}", topics[i // 2] + (" today" if i % 2 else "")) for i in range(12)]
    first = run(items)
    assert len(first) == len(topics)  # one story per topic: the data can tell a second pass apart
    assert run(list(reversed(items))) == first
    # idempotent: clustering the stories' representatives again finds nothing more to join
    by_id = {i.article_id: i for i in items}
    representatives = [by_id[members[0]] for members in first]
    assert run(representatives) == [
        (r.article_id,) for r in sorted(representatives, key=lambda i: i.article_id)
    ]


def test_window_is_hours_before_the_end_of_the_day_in_the_zone() -> None:
    start, end = news_window(date(2025, 8, 6), ZoneInfo("Europe/Amsterdam"), 48)
    assert end == datetime(2025, 8, 6, 22, tzinfo=UTC) and (end - start).days == 2


def test_pairwise_scores() -> None:
    assert pairwise_scores([("a", "b"), ("c",)], {"a": "1", "b": "1", "c": "1"}) == (1, 0, 2)


def test_embedding_cache_never_recomputes(tmp_path) -> None:
    from storage.store import ParquetEventStore

    store = ParquetEventStore(str(tmp_path))
    first = CachedEmbedder(HashingEmbedder(), store.tree.caches.embeddings(HashingEmbedder.name))
    vectors = first.encode(["alpha", "beta"])
    again = CachedEmbedder(
        HashingEmbedder(), store.tree.caches.embeddings(HashingEmbedder.name)
    )  # a new process, same cache
    assert np.allclose(again.encode(["beta", "alpha"]), vectors[::-1])
    assert (first.computed, again.computed) == (2, 0)


# -- evidence beside the embedding


def at_cosine(n: int, cosine: float) -> np.ndarray:
    """``n`` unit vectors whose every pair has this cosine."""
    vectors = np.sqrt(1 - cosine) * np.eye(n, n + 1, k=1, dtype=np.float32)
    vectors[:, 0] = np.sqrt(cosine)
    return vectors


def alike(items: list[Item], **policy: object) -> list[tuple[str, ...]]:
    """Stories when both models call every pair one story (cosine 0.75, under a near copy's 0.80):
    what the other evidence keeps apart."""
    vectors = at_cosine(len(items), 0.75)
    clustering = cluster(items, vectors, DedupPolicy(**policy), multilingual=vectors)  # type: ignore[arg-type]
    return sorted(s.members for s in clustering.stories)


def dutch(aid: str, title: str, summary: str = "") -> Item:
    return replace(item(aid, "tweakers", title, summary), language="nl")


def test_a_shared_company_is_not_a_shared_event() -> None:
    gemma = dutch("nl", "Google brengt open taalmodel Gemma 3 uit dat op één gpu draait")
    robotics = item(
        "en",
        "deepmind",
        "Gemini Robotics brings AI into the physical world",
        "Google DeepMind introduces Gemini Robotics, a Gemini 2.0-based model for robots.",
    )
    assert alike([gemma, robotics]) == [("en",), ("nl",)]
    # without a multilingual model, the names two titles share: the company's are not among them
    zh = [
        replace(item("a", "qbitai", "Google DeepMind发布Gemma 3开源模型"), language="zh"),
        replace(item("b", "jiqizhixin", "Google DeepMind推出Gemini Robotics机器人模型"), language="zh"),
    ]
    assert run(zh, name_conflicts=False) == [("a",), ("b",)]
    same_model = replace(item("c", "jiqizhixin", "Google DeepMind发布Gemma 3"), language="zh")
    assert run([zh[0], same_model]) == [("a", "c")]  # a name they share (a version counts two) joins them


def test_a_title_naming_what_the_other_never_mentions_on_both_sides_is_another_story() -> None:
    stable = dutch("nl", "Google maakt Gemini 2.5 Pro en Flash algemeen beschikbaar")
    pokemon = item(
        "en",
        "techcrunch",
        "Google's Gemini panicked when playing Pokémon",
        "Google DeepMind says Gemini 2.5 Pro panics when its Pokémon are close to death.",
    )
    assert alike([stable, pokemon]) == [("en",), ("nl",)]
    assert alike([stable, pokemon], name_conflicts=False) == [("en", "nl")]


def test_one_product_line_at_two_versions_is_two_products() -> None:
    ios = [
        dutch("nl", "Met iOS 18.6 wordt het installeren van andere appwinkels makkelijker"),
        item("en", "techcrunch", "iOS 26 beta 3 dials back Liquid Glass"),
    ]
    cards = [
        dutch("nl", "Gerucht: GeForce RTX 50 Super-videokaarten krijgen meer vram"),
        item("en", "wired", "Nvidia GeForce RTX 5060 arrives at $299"),
    ]
    for pair in (ios, cards):
        assert alike(pair) == [("en",), ("nl",)]


def test_a_translation_still_joins_its_report() -> None:
    vouchers = [
        dutch("nl", "Nintendo stopt met Nintendo Switch-gamevouchers voor goedkopere games"),
        item("en", "ars", "Nintendo discontinues cost-saving game vouchers for Switch Online players"),
    ]
    grok = [
        dutch("nl", "XAI claimt dat 'ongewenste' antwoorden van Grok 4 zijn verholpen"),
        item("en", "techcrunch", "xAI says it has fixed Grok 4's problematic responses"),
    ]
    for pair in (vouchers, grok):
        assert alike(pair) == [("en", "nl")]


def test_the_multilingual_cosine_decides_a_pair_with_non_english_text() -> None:
    vouchers = [
        dutch("nl", "Nintendo stopt met Nintendo Switch-gamevouchers"),
        item("en", "ars", "Nintendo discontinues game vouchers for Switch Online"),
    ]
    english = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)  # the English model: unrelated
    apart = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)  # multilingual cosine 0.60
    joined = cluster(vouchers, english, DedupPolicy(cross_language_threshold=0.55), multilingual=apart)
    kept = cluster(vouchers, english, DedupPolicy(cross_language_threshold=0.65), multilingual=apart)
    assert len(joined.stories) == 1 and len(kept.stories) == 2


def test_a_shared_versioned_name_joins_a_pair_the_multilingual_model_scores_low() -> None:
    launch = [
        dutch("nl", "XAI brengt Grok 4-model uit en komt met AI-abonnement van 300 dollar per maand"),
        item("en", "wired", "Elon Musk Unveils Grok 4 Amid Controversy Over Chatbot's Antisemitic Posts"),
    ]
    english = np.eye(2, dtype=np.float32)
    far = np.array([[1.0, 0.0], [0.25, 0.968]], dtype=np.float32)  # multilingual cosine 0.25
    assert len(cluster(launch, english, DedupPolicy(), multilingual=far).stories) == 1
    assert len(cluster(launch, english, DedupPolicy(min_shared_names=3), multilingual=far).stories) == 2


def test_reviews_and_roundups_are_stories_of_their_own() -> None:
    launch = item("launch", "ars", "Nothing Phone 3 arrives July 15 with a tiny dot matrix rear display")
    review = item("review", "wired", "Nothing Phone (3) Review: The Designer Phone")
    roundup = item("roundup", "techcrunch", "Everything Samsung announced at Galaxy Unpacked")
    video = dutch("video", "Videoreview - Nothings eerste misser - Nothing Phone 3")
    assert alike([launch, review, roundup, video]) == [("launch",), ("review",), ("roundup",), ("video",)]
    assert len(alike([launch, review], own_story_pieces=False)) == 1


def test_a_link_and_a_title_join_a_community_item_with_the_lab_post_it_links() -> None:
    post = item(
        "post",
        "openai_news",
        "Introducing GPT-5.4 mini and nano",
        url="https://openai.com/index/gpt-5-4-mini",
    )
    linked = replace(
        item("hn", "hackernews", "A new small model", url="https://openai.com/index/gpt-5-4-mini?ref=hn"),
        kind="community",
        outlet="openai.com",
    )
    retitled = replace(
        item("hn2", "hackernews", "Introducing GPT‑5.4 Mini and Nano", url="https://mirror.example/gpt54"),
        kind="community",
        outlet="mirror.example",
    )
    unrelated = np.eye(3, dtype=np.float32)  # the embeddings see nothing in common
    stories = cluster([post, linked, retitled], unrelated, DedupPolicy()).stories
    assert [s.members for s in stories] == [("hn", "hn2", "post")]
    # two discussions on one site are two pages: their queries differ
    asks = [
        replace(
            item(
                f"ask{k}", f"hn{k}", f"Ask HN: question {k}", url=f"https://news.ycombinator.com/item?id={k}"
            )
        )
        for k in (1, 2)
    ]
    assert len(cluster(asks, np.eye(2, dtype=np.float32), DedupPolicy()).stories) == 2


def test_community_items_are_reports_of_the_sites_they_link() -> None:
    def hn(aid: str, title: str, outlet: str) -> Item:
        return replace(
            item(aid, "hackernews", title, url=f"https://{outlet}/{aid}"), kind="community", outlet=outlet
        )

    forum = hn("a", "Meta Horizon Worlds on Meta Quest is being discontinued", "communityforums.atmeta.com")
    engadget = hn("b", "Meta will shut down VR Horizon Worlds access June 15", "engadget.com")
    near = np.array([[1.0, 0.0], [0.7, 0.714]], dtype=np.float32)  # cosine 0.70: one story, two sites
    assert len(cluster([forum, engadget], near, DedupPolicy()).stories) == 1
    same_site = replace(engadget, outlet="communityforums.atmeta.com")
    assert len(cluster([forum, same_site], near, DedupPolicy()).stories) == 2  # one site reports once


def test_an_organisation_whose_site_carries_the_item_is_named_by_it() -> None:
    digest_story = replace(
        item("zh", "aibase", "OpenAI发布最强小模型GPT-5.4 mini", url="https://news.aibase.com/zh/daily/1#3"),
        language="zh",
        kind="digest",
    )
    hn = replace(
        item(
            "hn",
            "hackernews",
            "GPT‑5.4 Mini and Nano",
            url="https://openai.com/index/introducing-gpt-5-4-mini",
        ),
        kind="community",
    )
    assert alike([digest_story, hn]) == [("hn", "zh")]
    assert run([digest_story, hn]) == [("hn", "zh")]  # without a multilingual model: the names they share
    elsewhere = replace(hn, url="https://example.com/gpt-5-4", canonical_url="https://example.com/gpt-5-4")
    assert alike([digest_story, elsewhere]) == [("hn",), ("zh",)]  # OpenAI is named on one side only


def test_a_digests_stories_never_join_each_other() -> None:
    stories = [
        replace(
            item(f"d{k}", "aibase", title, url=f"https://news.aibase.com/zh/daily/1#{k}"),
            language="zh",
            kind="digest",
        )
        for k, title in enumerate(["MiniMax发布M2.7模型", "MiniMax M2.7登顶榜单"], start=1)
    ]
    near_copies = at_cosine(2, 0.9)  # as alike as one outlet's two reports of one story may be
    clustering = cluster(stories, near_copies, DedupPolicy(), multilingual=near_copies)
    assert len(clustering.stories) == 2


def test_a_trending_repository_joins_news_on_its_projects_own_site() -> None:
    repo = replace(
        item("repo", "github_trends", "unslothai / unsloth", url="https://github.com/unslothai/unsloth"),
        kind="repos",
    )
    studio = replace(
        item("hn", "hackernews", "Unsloth Studio", url="https://unsloth.ai/docs/new/studio"),
        kind="community",
        outlet="unsloth.ai",
    )
    other = replace(  # names the project, on another site
        item("other", "hackernews", "Unsloth Studio, a week later", url="https://blog.example/unsloth"),
        kind="community",
        outlet="blog.example",
    )
    unrelated = np.eye(3, dtype=np.float32)
    stories = sorted(s.members for s in cluster([repo, studio, other], unrelated, DedupPolicy()).stories)
    assert stories == [("hn", "repo"), ("other",)]


def test_a_repository_joins_only_what_links_or_names_it_however_alike_they_read() -> None:
    repo = replace(
        item(
            "repo",
            "github_trends",
            "langchain-ai / open-swe",
            "An Open-Source Asynchronous Coding Agent",
            url="https://github.com/langchain-ai/open-swe",
        ),
        kind="repos",
    )
    paper = replace(  # a coding model's report: reads alike, is another project
        item(
            "paper",
            "hf_papers",
            "Qwen3-Coder-Next Technical Report",
            "An open coding agent model",
            url="https://arxiv.org/abs/2603.00001",
        ),
        kind="papers",
    )
    news = item("news", "ars", "LangChain's Open SWE is an asynchronous coding agent", "Open SWE works alone")
    alike_ = at_cosine(3, 0.75)
    stories = sorted(s.members for s in cluster([repo, paper, news], alike_, DedupPolicy()).stories)
    assert stories == [("news", "repo"), ("paper",)]
    loose = DedupPolicy(repository_identity=False)
    assert len(cluster([repo, paper], at_cosine(2, 0.75), loose).stories) == 1  # what the rule stops

"""The story pair model: its features, its artefact, and clustering by average linkage."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from storage.errors import ConfigError
from tasks import dedup, names, pairs
from tasks.embed import HashingEmbedder
from tests.unit.test_dedup import item


def model(threshold: float = 0.5, **weights: float) -> pairs.PairModel:
    coef = tuple(weights.get(f, 0.0) for f in pairs.FEATURES)
    return pairs.PairModel("test", pairs.FEATURES, coef, -4.0, threshold, {})


@pytest.mark.parametrize(
    "title",
    [
        "GLM-5 is out",
        "GLM 5 is out",
        "GLM\u20115 is out",
        "GLM\u00a05 is out",
        "ＧＬＭ－５ 发布",
        "智谱发布GLM-5",
    ],
)
def test_a_versioned_name_is_one_name_however_it_is_spelled(title: str) -> None:
    assert names.versions(title) == {("glm", "5")}


def test_average_linkage_does_not_chain_two_events_through_one_strong_link() -> None:
    # a-b and c-d are sure pairs; b-c alone is strong, the other pairs across are not
    probs = np.array(
        [
            [0, 0.95, 0.1, 0.05],
            [0.95, 0, 0.9, 0.1],
            [0.1, 0.9, 0, 0.95],
            [0.05, 0.1, 0.95, 0],
        ]
    )
    groups, _ = pairs.average_linkage(probs, np.zeros((4, 4), dtype=bool), 0.5)
    assert sorted(sorted(g) for g in groups) == [[0, 1], [2, 3]]
    # single linkage would have made one story; the mean across two groups decides
    groups, _ = pairs.average_linkage(probs, np.zeros((4, 4), dtype=bool), 0.4)
    assert sorted(sorted(g) for g in groups) == [[0, 1], [2, 3]]


def test_a_pair_the_model_all_but_rules_out_keeps_its_groups_apart() -> None:
    # 0-1 is a sure pair; 2 is very like 0 but the model all but rules out 2 with 1
    probs = np.array([[0, 0.95, 0.95], [0.95, 0, 0.01], [0.95, 0.01, 0]])
    none = np.zeros((3, 3), dtype=bool)
    joined, _ = pairs.average_linkage(probs, none, 0.4)
    assert sorted(len(g) for g in joined) == [3]  # the mean across (0.48) alone would join them
    apart, _ = pairs.average_linkage(probs, none, 0.4, floor=pairs.FLOOR)
    assert sorted(sorted(g) for g in apart) == [[0, 1], [2]]


def test_a_forbidden_pair_keeps_its_groups_apart() -> None:
    probs = np.array([[0, 0.9, 0.9], [0.9, 0, 0.9], [0.9, 0.9, 0]])
    forbidden = np.zeros((3, 3), dtype=bool)
    forbidden[0, 2] = forbidden[2, 0] = True
    groups, _ = pairs.average_linkage(probs, forbidden, 0.5)
    assert all(not {0, 2} <= set(g) for g in groups)


def test_the_model_joins_what_its_weights_say_and_people_win() -> None:
    items = [
        item("a", "techcrunch", "Acme launches Widget 3 model"),
        item("b", "wired", "Acme launches Widget 3 model"),
        item("c", "arstechnica", "Storms flood the valley"),
    ]
    vectors = HashingEmbedder().encode([i.text for i in items])
    m = model(cosine=10.0)
    stories = sorted(s.members for s in pairs.cluster(items, vectors, m).stories)
    assert stories == [("a", "b"), ("c",)]
    apart = pairs.cluster(items, vectors, m, cannot=frozenset({frozenset(("a", "b"))})).stories
    assert sorted(s.members for s in apart) == [("a",), ("b",), ("c",)]
    together = pairs.cluster(items, vectors, m, must=frozenset({frozenset(("a", "c"))})).stories
    assert any({"a", "c"} <= set(s.members) for s in together)


def test_two_stories_of_one_digest_entry_never_join() -> None:
    base = item("d1", "aibase", "AI日报：GLM-5 发布", url="https://aibase.example/daily/1#1")
    parts = [
        replace(base, kind="digest"),
        replace(
            item("d2", "aibase", "AI日报：GLM-5 发布", url="https://aibase.example/daily/1#2"), kind="digest"
        ),
    ]
    vectors = HashingEmbedder().encode([i.text for i in parts])
    stories = pairs.cluster(parts, vectors, model(cosine=10.0)).stories
    assert len(stories) == 2


def test_the_artefact_round_trips_and_a_foreign_one_is_refused(tmp_path) -> None:
    m = model(0.4, cosine=2.5, same_outlet=-1.0)
    path = tmp_path / "m.pairs.json"
    path.write_text(m.to_json())
    loaded = pairs.load_pair_model(str(path))
    assert loaded is not None and loaded.coef == m.coef and loaded.threshold == 0.4
    path.write_text(m.to_json().replace('"cosine"', '"cosine_v0"'))
    with pytest.raises(ConfigError, match="features"):
        pairs.load_pair_model(str(path))
    assert pairs.load_pair_model("rules") is None


def test_rare_words_weigh_a_name_few_items_use_above_a_common_one() -> None:
    items = [
        item("a", "x", "OpenAI shuts down Sora"),
        item("b", "y", "Goodbye to Sora"),
        item("c", "z", "OpenAI raises money"),
        item("d", "w", "OpenAI hires a chief"),
    ]
    titles, _ = pairs.rare_words(items)
    assert titles[0, 1] > titles[0, 2] > 0


def test_the_features_of_all_pairs_at_once_are_those_of_each_pair() -> None:
    items = [
        item("a", "techcrunch", "Zhipu releases GLM-5 for agents", "Zhipu AI says GLM 5 leads."),
        item("b", "wired", "GLM\u20115 is here: Zhipu's new model", "The Chinese lab Zhipu released it."),
        replace(
            item("c", "aibase", "智谱发布GLM-5模型", url="https://aibase.example/d/1#1"),
            kind="digest",
            language="zh",
        ),
        replace(
            item("d", "github", "zai-org / GLM-5", url="https://github.com/zai-org/GLM-5"),
            kind="repos",
            language="en",
        ),
        replace(item("e", "hn", "Microsoft Review: Copilot hands-on"), published_at=None),
        item("f", "techcrunch", "Microsoft Review: Copilot hands-on"),
    ]
    vectors = HashingEmbedder().encode([i.text for i in items])
    cosines = vectors @ vectors.T
    index_pairs = [(x, y) for x in range(6) for y in range(6) if x != y]
    at_once = pairs.feature_rows(items, cosines, cosines * 0.9, index_pairs)
    titles, texts = pairs.rare_words(items)
    found = [dedup.evidence(i) for i in items]
    series = pairs.series_words(items)
    for row, (x, y) in zip(at_once, index_pairs, strict=True):
        one = pairs.pair_features(
            items[x], items[y], found[x], found[y], float(cosines[x, y]), float(cosines[x, y] * 0.9),
            (float(titles[x, y]), float(texts[x, y])), len(series[x] & series[y]),
        )  # fmt: skip
        assert np.allclose(row, one), (x, y)
    # a day's new articles against earlier ones (no article on both sides): counted rows by columns
    apart = [(x, y) for x in (0, 2, 4) for y in (1, 3, 5)]
    by_block = pairs.feature_rows(items, cosines, cosines * 0.9, apart)
    assert np.array_equal(by_block, pairs.feature_rows(items, cosines, cosines * 0.9, index_pairs)[
        [index_pairs.index(pair) for pair in apart]
    ])  # fmt: skip


def test_an_outlets_recurring_words_mark_two_of_its_pages_as_a_series() -> None:
    items = [
        item("a", "techcrunch", "Last chance for Disrupt passes: save before Friday"),
        item("b", "techcrunch", "Meet the founders on the Disrupt stage in Boston"),
        item("c", "techcrunch", "Disrupt passes go up at midnight"),
        item("d", "techcrunch", "Samsung unveils a thinner foldable in Boston"),
        item("e", "wired", "Samsung's thinner foldable, hands-on"),
        item("f", "wired", "The Boston robot that folds laundry"),
    ]
    series = pairs.series_words(items)
    # "disrupt": three of one outlet's titles, no other outlet's; "boston" and "samsung" are not its own
    assert series[0] == series[1] == {"disrupt"} and "passes" not in series[0]
    assert series[3] == series[4] == series[5] == frozenset()
    vectors = HashingEmbedder().encode([i.text for i in items])
    rows = pairs.feature_rows(items, vectors @ vectors.T, None, [(0, 1), (0, 2), (3, 4), (1, 3)])
    column = rows[:, pairs.FEATURES.index("outlet_series_words")]
    assert column.tolist() == [1.0, 1.0, 0.0, 0.0]


def test_one_outlets_pages_at_one_moment_and_minutes_apart_are_told_apart() -> None:
    """An embargo lifts: one outlet's pages of an event come out together; its scheduled pages come
    out minutes apart; another outlet's page, or a page hours later, is neither."""
    from datetime import timedelta

    def at(aid: str, source: str, minutes: float, title: str):
        return replace(
            item(aid, source, title),
            published_at=item(aid, source, title).published_at + timedelta(minutes=minutes),
        )

    items = [
        at("a", "tweakers", 0, "Samsung onthult dunnere Galaxy Z Fold7"),
        at("b", "tweakers", 1, "Samsung kondigt Galaxy Watch8 aan"),
        at("c", "tweakers", 15, "Prime Video toont advertenties"),
        at("d", "tweakers", 240, "Samsung Fold7 review"),
        at("e", "wired", 0, "Samsung's thinner foldable"),
        replace(item("f", "tweakers", "Undated page"), published_at=None),
    ]
    vectors = HashingEmbedder().encode([i.text for i in items])
    index_pairs = [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5)]
    rows = pairs.feature_rows(items, vectors @ vectors.T, None, index_pairs)
    moment = rows[:, pairs.FEATURES.index("same_outlet_same_moment")]
    queued = rows[:, pairs.FEATURES.index("same_outlet_minutes_apart")]
    assert moment.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert queued.tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]
    found = [dedup.evidence(i) for i in items]
    for k, (x, y) in enumerate(index_pairs):  # pair by pair, the same columns
        one = pairs.pair_features(
            items[x], items[y], found[x], found[y], float(vectors[x] @ vectors[y]), None
        )
        assert one[pairs.FEATURES.index("same_outlet_same_moment")] == moment[k]
        assert one[pairs.FEATURES.index("same_outlet_minutes_apart")] == queued[k]


def test_a_model_fitted_before_a_feature_was_added_loads_and_decides_as_it_did(tmp_path) -> None:
    """A policy may name a model ``brief learn`` fitted on an earlier version: it still loads, the new
    feature weighs nothing, and its probabilities are those it gave before."""
    m = model(0.4, cosine=2.5, same_outlet=-1.0, outlet_series_words=-0.8)
    older = json.loads(m.to_json())
    at = older["features"].index("outlet_series_words")
    del older["features"][at], older["coef"][at]
    path = tmp_path / "older.pairs.json"
    path.write_text(json.dumps(older))
    loaded = pairs.load_pair_model(str(path))
    assert loaded is not None and loaded.features == pairs.FEATURES
    assert loaded.coef[at] == 0.0
    x = np.random.default_rng(0).random((6, len(pairs.FEATURES)))
    without = np.delete(x, at, axis=1)
    expected = 1 / (1 + np.exp(-(without @ np.array(older["coef"]) + older["intercept"])))
    assert np.allclose(loaded.probabilities(x), expected)


def test_two_pages_of_one_organisations_site_under_two_titles_never_join() -> None:
    def page(aid: str, title: str, url: str) -> dedup.Item:
        return replace(item(aid, "hn", title, url=url), kind="community", outlet="apple.com")

    items = [
        page(
            "pro",
            "MacBook Pro with M5 Pro and M5 Max",
            "https://www.apple.com/newsroom/2026/03/macbook-pro-m5/",
        ),
        page("air", "MacBook Air with M5", "https://www.apple.com/newsroom/2026/03/macbook-air-m5/"),
        page("neo", "MacBook Neo", "https://www.apple.com/newsroom/2026/03/say-hello-to-macbook-neo/"),
        page("neo-page", "MacBook Neo", "https://www.apple.com/macbook-neo/"),
        item(
            "ars",
            "arstechnica",
            "New MacBook Airs come with M5",
            url="https://arstechnica.example/macbook-airs",
        ),
    ]
    found = [dedup.evidence(i) for i in items]
    assert pairs.never_together(items[0], items[1], found[0], found[1])
    assert not pairs.never_together(items[2], items[3], found[2], found[3])  # one title on two pages
    assert not pairs.never_together(items[1], items[4], found[1], found[4])  # another outlet's report
    vectors = np.ones((len(items), 4)) / 2.0  # every pair as alike as can be
    stories = [set(s.members) for s in pairs.cluster(items, vectors, model(cosine=10.0)).stories]
    assert not any({"pro", "air"} <= s for s in stories)
    assert any({"neo", "neo-page"} <= s for s in stories)
    # a site where anyone publishes is not an organisation's announcement
    repos = [
        replace(item("r1", "hn", "A tool for agents", url="https://github.com/one/tool"), kind="community"),
        replace(
            item("r2", "hn", "A tool for agents, v2", url="https://github.com/one/tool/releases"),
            kind="community",
        ),
    ]
    found = [dedup.evidence(i) for i in repos]
    assert not pairs.never_together(repos[0], repos[1], found[0], found[1])


def test_an_organisation_the_links_headline_path_names_is_one_the_page_mentions() -> None:
    assert names.path_organisations(
        "https://ars.example/ai/2025/08/openai-announces-deal-with-agencies/"
    ) == {"OpenAI"}
    assert names.path_organisations("https://x.example/2025/artificial-intelligence-metadata/") == frozenset()
    assert names.path_organisations("https://openai.example/index/") == frozenset()  # no headline words
    report = item("b", "techcrunch", "OpenAI is practically giving ChatGPT to the government for free")
    column = pairs.FEATURES.index("organisation_conflict")
    for url, conflict in (
        ("https://ars.example/ai/2025/08/openai-announces-deal-to-offer-chatgpt/", 0.0),
        ("https://ars.example/ai/2025/08/agencies-get-chatgpt/", 1.0),
    ):
        ars = item(
            "a", "arstechnica", "US agencies will use ChatGPT Enterprise for $1", "Questions linger.", url=url
        )
        vectors = HashingEmbedder().encode([ars.text, report.text])
        rows = pairs.feature_rows([ars, report], vectors @ vectors.T, None, [(0, 1)])
        assert rows[0, column] == conflict, url


def test_a_trending_repository_joins_its_projects_page_whatever_the_model_says() -> None:
    repo = replace(
        item(
            "r",
            "github_trends_daily",
            "acme / widgetlm",
            "Fine-tune models fast",
            url="https://github.com/acme/widgetlm",
        ),
        kind="repos",
    )
    page = replace(
        item("p", "hackernews", "Widgetlm Studio", url="https://widgetlm.ai/docs/studio"), kind="community"
    )
    other = replace(
        item("o", "hackernews", "A garden in winter", url="https://garden.example/winter"), kind="community"
    )
    news = [repo, page, other]
    vectors = HashingEmbedder().encode([i.text for i in news])
    stories = sorted(s.members for s in pairs.cluster(news, vectors, model(threshold=0.9)).stories)
    assert stories == [("o",), ("p", "r")] or stories == [("o",), ("r", "p")]
    # what joins them is the hard join, not the weights: an unrelated page stays apart
    assert pairs.always_together(repo, page, dedup.evidence(repo), dedup.evidence(page))
    assert not pairs.always_together(repo, other, dedup.evidence(repo), dedup.evidence(other))


def test_a_trending_repository_is_never_one_story_with_a_report_of_another_project() -> None:
    """A paper and a repository of two projects, however alike their texts: two stories, whatever the
    model says; the page of the repository's own project still joins it."""
    repo = replace(
        item(
            "r",
            "github_trends_daily",
            "acme / widgetlm",
            "An open coding agent",
            url="https://github.com/acme/widgetlm",
        ),
        kind="repos",
    )
    paper = replace(item("x", "huggingface_daily_papers", "Coder-Next: an open coding agent"), kind="papers")
    page = replace(
        item("p", "hackernews", "Widgetlm Studio", url="https://widgetlm.ai/docs/studio"), kind="community"
    )
    found = {i.article_id: dedup.evidence(i) for i in (repo, paper, page)}
    assert pairs.another_project(repo, paper, found["r"], found["x"])
    assert not pairs.another_project(repo, page, found["r"], found["p"])
    news = [repo, paper, page]
    vectors = HashingEmbedder().encode([i.text for i in news])
    sure = replace(model(0.5), intercept=6.0)  # the model calls every pair one story
    stories = sorted(sorted(s.members) for s in pairs.cluster(news, vectors, sure).stories)
    assert stories == [["p", "r"], ["x"]]
    # an editor who says the paper and the repository are one story is heard all the same
    told = pairs.cluster(news, vectors, sure, must=frozenset({frozenset({"r", "x"})})).stories
    assert sorted(sorted(s.members) for s in told) == [["p", "r", "x"]]


def test_a_pair_model_decides_only_under_the_embedding_models_it_was_fitted_on() -> None:
    named = replace(
        model(), card={"embedding": {"english": "all-MiniLM-L6-v2", "multilingual": "use-multilingual-v3"}}
    )
    assert pairs.fits(named, "all-MiniLM-L6-v2", "use-multilingual-v3")
    assert not pairs.fits(named, "all-MiniLM-L6-v2", None)  # a non-English pair would read MiniLM's cosine
    assert not pairs.fits(named, "hashing-384", "use-multilingual-v3")
    assert not pairs.fits(named, "all-MiniLM-L6-v2", "multilingual-e5-small")
    assert pairs.fits(model(), "hashing-384", None)  # a card that names no models: fitted before cards did
    assert pairs.fits(pairs.load_pair_model("builtin:stories"), "all-MiniLM-L6-v2", "use-multilingual-v3")


def test_a_repository_trending_today_continues_its_projects_page_briefed_earlier() -> None:
    repo = replace(
        item("r", "github_trends_daily", "acme / widgetlm", url="https://github.com/acme/widgetlm"),
        kind="repos",
    )
    page = replace(
        item("p", "hackernews", "Widgetlm Studio", url="https://widgetlm.ai/docs/studio"), kind="community"
    )
    other = replace(
        item("o", "hackernews", "A garden in winter", url="https://garden.example/w"), kind="community"
    )
    vectors = HashingEmbedder().encode([i.text for i in (repo, page, other)])
    p = pairs.follow_up_probabilities([repo], [page, other], vectors, None, model(threshold=0.9))
    assert p[0, 0] == 1.0 and p[0, 1] < 0.05


def test_a_trending_repository_never_follows_up_a_report_of_another_project_nor_is_followed_by_one() -> None:
    """The same-day rule across days: a repository and a paper of two projects are two stories,
    whichever came first and whatever the model says; the page of its own project still continues it,
    and a digest's line is not held to it."""
    repo = replace(
        item(
            "r",
            "github_trends_daily",
            "acme / widgetlm",
            "An open coding agent",
            url="https://github.com/acme/widgetlm",
        ),
        kind="repos",
    )
    paper = replace(item("x", "huggingface_daily_papers", "Coder-Next: an open coding agent"), kind="papers")
    page = replace(
        item("p", "hackernews", "Widgetlm Studio", url="https://widgetlm.ai/docs/studio"), kind="community"
    )
    line = replace(item("d", "tldr_ai", "An open coding agent trends on GitHub"), kind="digest")
    vectors = HashingEmbedder().encode([i.text for i in (repo, paper, page, line)])
    sure = replace(model(0.5), intercept=6.0)  # the model calls every pair one story
    today = pairs.follow_up_probabilities([repo], [paper, page, line], vectors, None, sure)
    assert today[0, 0] == 0.0 and today[0, 1] == 1.0 and today[0, 2] > 0.99
    earlier = HashingEmbedder().encode([i.text for i in (paper, repo)])
    assert pairs.follow_up_probabilities([paper], [repo], earlier, None, sure)[0, 0] == 0.0


def test_two_events_of_one_company_are_never_follow_ups_whatever_the_model_says() -> None:
    """A title that names what the earlier report never mentions, and the earlier one naming what it
    never mentions, are two events of one company (a lawsuit, a user count), however alike the texts."""
    earlier = item("e", "techcrunch", "Acme says Widgetly is on track to reach 700M weekly users")
    lawsuit = item("l", "arstechnica", "Acme offers Widgetly chats in Globex lawsuit")
    again = item("a", "arstechnica", "Widgetly nears 700M weekly users, Acme says")
    vectors = HashingEmbedder().encode([i.text for i in (lawsuit, again, earlier)])
    sure = model(0.5, cosine=0.0)
    sure = replace(sure, intercept=6.0)  # the model calls every pair one story
    p = pairs.follow_up_probabilities([lawsuit, again], [earlier], vectors, None, sure)
    assert dedup.distinct_names(dedup.evidence(lawsuit), dedup.evidence(earlier))
    assert p[0, 0] == 0.0 and p[1, 0] > 0.99
    # one release under two spellings of its version is one event: the follow-up stands
    release = item("f", "tweakers", "Software-update - Mozilla Firefox 141.0")
    news = item("n", "techcrunch", "Firefox 141 suggests tab groups")
    vectors = HashingEmbedder().encode([i.text for i in (news, release)])
    assert pairs.follow_up_probabilities([news], [release], vectors, None, sure)[0, 0] > 0.99


def test_one_product_line_at_two_versions_is_never_one_story() -> None:
    """``RTX 5060`` and ``RTX 50 Super``: two products, however alike the reports; ``Firefox 141.0`` and
    ``Firefox 141`` are one release, and a report that names the other's version may be its story."""
    review = item("r", "wired", "Nvidia GeForce RTX 5060 Review: Not Quite There")
    rumour = item("g", "tweakers", "Gerucht: GeForce RTX 50 Super-videokaarten met meer vram")
    release = item("f", "tweakers", "Software-update - Mozilla Firefox 141.0")
    news = item("n", "techcrunch", "Firefox 141 suggests tab groups")
    later = replace(item("l", "ars", "RTX 50 Super arrives"), summary="Faster than the RTX 5060.")
    found = {i.article_id: dedup.evidence(i) for i in (review, rumour, release, news, later)}
    assert pairs.two_versions(found["r"], found["g"])
    assert pairs.never_together(review, rumour, found["r"], found["g"])
    assert not pairs.two_versions(found["f"], found["n"])
    assert not pairs.two_versions(found["r"], found["l"])  # it names the review's version
    items = [review, rumour, release, news]
    vectors = HashingEmbedder().encode([i.text for i in items])
    sure = replace(model(0.5), intercept=6.0)  # the model calls every pair one story
    stories = pairs.cluster(items, vectors, sure).stories
    assert sorted(len(s.members) for s in stories) == [1, 3]  # the rumour apart from the review
    assert not any({"r", "g"} <= set(s.members) for s in stories)

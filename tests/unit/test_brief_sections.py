"""A brief's sections by what reported each story: research, open source, community discussion."""

from __future__ import annotations

from storage.brief import Item
from tasks.render import view
from tasks.write import arrange, kind_section
from tests.factories import (
    SECTIONS_DAY,
    SECTIONS_WINDOW,
    brief,
    kind_citation,
    sections_brief,
    story_item,
)


def sections(out: list[Item]) -> dict[str, str | None]:
    return {i.story_id: i.section for i in out}


def test_a_story_s_kinds_give_its_section_unless_a_news_source_reports_it() -> None:
    assert kind_section(story_item("p", 1, kind_citation("hf", "papers"))) == "research"
    assert (
        kind_section(story_item("pr", 1, kind_citation("hf", "papers"), kind_citation("gh", "repos")))
        == "research"
    )
    assert (
        kind_section(story_item("r", 1, kind_citation("gh", "repos"), kind_citation("hn", "community")))
        == "open_source"
    )
    assert kind_section(story_item("h", 1, kind_citation("hn", "community"))) == "community"
    for reporter in (
        kind_citation("ars"),
        kind_citation("labblog"),
        kind_citation("aibase", "digest"),
    ):  # news, lab (no kind), digest
        assert (
            kind_section(
                story_item("x", 1, kind_citation("hn", "community"), kind_citation("hf", "papers"), reporter)
            )
            is None
        )
    assert kind_section(story_item("old", 1)) is None  # no citations: as before kinds


def test_papers_and_repos_go_to_their_sections_and_only_widely_reported_ones_or_discussions_lead() -> None:
    items = [
        story_item("hn", 0.95, kind_citation("hn", "community")),
        story_item("paper", 0.9, kind_citation("hf", "papers")),
        story_item("repo", 0.8, kind_citation("gh", "repos")),
        story_item("hn-news", 0.7, kind_citation("hn", "community"), kind_citation("ars")),
        story_item("paper-repo", 0.6, kind_citation("hf", "papers"), kind_citation("gh", "repos")),
        story_item("news", 0.3, kind_citation("ars")),
    ]
    out = arrange(items, top=3, quotas={"models": 5}, quick_links=5)
    assert sections(out) == {
        "hn": "top",  # a discussion leads on its importance, as a news report does
        "hn-news": "top",  # a news source reports it: the news path, whatever else cites it
        "paper-repo": "top",  # two sources report it: it may lead whatever its kinds
        "news": "category",
        "paper": "research",  # more important than the news, but known from one source only
        "repo": "open_source",
    }
    quieter = [story_item("hn", 0.2, kind_citation("hn", "community")), *items[1:]]
    assert sections(arrange(quieter, top=3, quotas={"models": 5}, quick_links=5))["hn"] == "community"
    marked = arrange(
        [*items, story_item("mine", 0.1, kind_citation("hf", "papers"), lead=True)],
        top=1,
        quotas={},
        quick_links=5,
    )
    assert [i.story_id for i in marked if i.section == "top"] == ["mine"]  # a person's mark still leads


def test_a_kind_section_holds_five_stories_and_the_rest_are_quick_links() -> None:
    papers = [story_item(f"p{n}", 1 - n / 10, kind_citation("hf", "papers")) for n in range(7)]
    out = arrange(papers, top=5, quotas={}, quick_links=15)
    assert [i.story_id for i in out if i.section == "research"] == ["p0", "p1", "p2", "p3", "p4"]
    assert [i.story_id for i in out if i.section == "quick_link"] == ["p5", "p6"]


def test_the_sections_read_in_order_and_papers_join_the_research_category() -> None:
    labels = {"models": "Models and releases", "research": "Research"}
    got = [
        (s["heading"], [e["title"] for e in s["entries"]]) for s in view(sections_brief(), labels)["sections"]
    ]
    assert got == [
        ("Top stories", ["Story top"]),
        ("Models and releases", ["Story model"]),
        ("Research", ["Story study", "Story paper"]),  # one heading: the news of research, then papers
        ("Open source", ["Story repo"]),
        ("Community discussion", ["Story hn"]),
    ]
    zh = view(sections_brief("zh"), {"models": "模型与发布", "research": "研究"})
    assert [s["heading"] for s in zh["sections"]] == ["头条", "模型与发布", "研究", "开源项目", "社区讨论"]
    alone = view(
        sections_brief().with_items([i for i in sections_brief().items if i.story_id != "study"]), {}
    )
    assert [s["heading"] for s in alone["sections"]][2:4] == ["Research", "Open source"]


def test_each_quick_link_is_a_line_of_its_own_in_markdown() -> None:
    from tasks.render import render

    papers = [story_item(f"p{n}", 1 - n / 10, kind_citation("hf", "papers")) for n in range(8)]
    doc = brief(*arrange(papers, top=1, quotas={}, quick_links=15), day=SECTIONS_DAY, window=SECTIONS_WINDOW)
    text = render("markdown", view(doc, {}))
    quick = text.split("## Quick links\n", 1)[1].strip().splitlines()
    assert [line.split("](")[0] for line in quick] == ["- [Story p5", "- [Story p6", "- [Story p7"], quick


def test_a_thin_day_gives_a_shorter_brief_the_threshold_decides_not_a_count() -> None:
    """What the topic filter kept is the brief: three stories give three items, one of them core gives a
    top section of one; nothing is added to reach the top section's or the quick links' size."""
    thin = [
        story_item("core", 0.7, kind_citation("ars")),
        story_item("related", 0.6, kind_citation("wired"), relevance="related"),
        story_item("discussed", 0.5, kind_citation("hn", "community"), relevance="related"),
    ]
    out = arrange(thin, top=5, quotas={"models": 5}, quick_links=15)
    assert sections(out) == {"core": "top", "related": "category", "discussed": "community"}
    assert arrange([], top=5, quotas={"models": 5}, quick_links=15) == []

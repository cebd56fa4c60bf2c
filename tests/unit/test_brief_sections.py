"""A brief's sections by what reported each story: research, open source, community discussion."""

from __future__ import annotations

from datetime import date
from typing import Any

from storage.brief import Brief, Citation, Item, Window
from tasks.render import view
from tasks.write import arrange, kind_section
from tests.factories import brief, brief_item, citation

WINDOW = Window(start="2026-03-16T00:00:00+00:00", end="2026-03-19T00:00:00+00:00")
DAY = date(2026, 3, 18)


def cite(source: str, kind: str | None = None) -> Citation:
    """A citation as compose writes it: a news or lab article has no ``kind``."""
    named = {"kind": kind, "outlet_label": source} if kind else {}
    return citation(
        f"art-{source}",
        url=f"https://{source}.example.com/a",
        source=source,
        published="2026-03-18T08:00:00+00:00",
        **named,
    )


def story(
    story_id: str, importance: float, *citations: Citation, category: str = "models", **extra: Any
) -> Item:
    return brief_item(
        story_id,
        f"Story {story_id}",
        summary=f"What story {story_id} says.",
        category=category,
        importance=importance,
        citations=citations,
        **extra,
    )


def sections(out: list[Item]) -> dict[str, str | None]:
    return {i.story_id: i.section for i in out}


def test_a_story_s_kinds_give_its_section_unless_a_news_source_reports_it() -> None:
    assert kind_section(story("p", 1, cite("hf", "papers"))) == "research"
    assert kind_section(story("pr", 1, cite("hf", "papers"), cite("gh", "repos"))) == "research"
    assert kind_section(story("r", 1, cite("gh", "repos"), cite("hn", "community"))) == "open_source"
    assert kind_section(story("h", 1, cite("hn", "community"))) == "community"
    for reporter in (cite("ars"), cite("labblog"), cite("aibase", "digest")):  # news, lab (no kind), digest
        assert kind_section(story("x", 1, cite("hn", "community"), cite("hf", "papers"), reporter)) is None
    assert kind_section(story("old", 1)) is None  # no citations: as before kinds


def test_papers_and_repos_go_to_their_sections_and_only_widely_reported_ones_or_discussions_lead() -> None:
    items = [
        story("hn", 0.95, cite("hn", "community")),
        story("paper", 0.9, cite("hf", "papers")),
        story("repo", 0.8, cite("gh", "repos")),
        story("hn-news", 0.7, cite("hn", "community"), cite("ars")),
        story("paper-repo", 0.6, cite("hf", "papers"), cite("gh", "repos")),
        story("news", 0.3, cite("ars")),
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
    quieter = [story("hn", 0.2, cite("hn", "community")), *items[1:]]
    assert sections(arrange(quieter, top=3, quotas={"models": 5}, quick_links=5))["hn"] == "community"
    marked = arrange(
        [*items, story("mine", 0.1, cite("hf", "papers"), lead=True)], top=1, quotas={}, quick_links=5
    )
    assert [i.story_id for i in marked if i.section == "top"] == ["mine"]  # a person's mark still leads


def test_a_kind_section_holds_five_stories_and_the_rest_are_quick_links() -> None:
    papers = [story(f"p{n}", 1 - n / 10, cite("hf", "papers")) for n in range(7)]
    out = arrange(papers, top=5, quotas={}, quick_links=15)
    assert [i.story_id for i in out if i.section == "research"] == ["p0", "p1", "p2", "p3", "p4"]
    assert [i.story_id for i in out if i.section == "quick_link"] == ["p5", "p6"]


def _day(language: str = "en") -> Brief:
    items = [
        story("top", 0.9, cite("ars"), cite("wired")),
        story("model", 0.6, cite("ars")),
        story("study", 0.5, cite("wired"), category="research"),
        story("paper", 0.4, cite("hf", "papers")),
        story("repo", 0.3, cite("gh", "repos")),
        story("hn", 0.2, cite("hn", "community")),
    ]
    arranged = arrange(items, top=1, quotas={"models": 5, "research": 5}, quick_links=5)
    return brief(*arranged, day=DAY, language=language, window=WINDOW)


def test_the_sections_read_in_order_and_papers_join_the_research_category() -> None:
    labels = {"models": "Models and releases", "research": "Research"}
    got = [(s["heading"], [e["title"] for e in s["entries"]]) for s in view(_day(), labels)["sections"]]
    assert got == [
        ("Top stories", ["Story top"]),
        ("Models and releases", ["Story model"]),
        ("Research", ["Story study", "Story paper"]),  # one heading: the news of research, then papers
        ("Open source", ["Story repo"]),
        ("Community discussion", ["Story hn"]),
    ]
    zh = view(_day("zh"), {"models": "模型与发布", "research": "研究"})
    assert [s["heading"] for s in zh["sections"]] == ["头条", "模型与发布", "研究", "开源项目", "社区讨论"]
    alone = view(_day().with_items([i for i in _day().items if i.story_id != "study"]), {})
    assert [s["heading"] for s in alone["sections"]][2:4] == ["Research", "Open source"]


def test_each_quick_link_is_a_line_of_its_own_in_markdown() -> None:
    from tasks.render import render

    papers = [story(f"p{n}", 1 - n / 10, cite("hf", "papers")) for n in range(8)]
    doc = brief(*arrange(papers, top=1, quotas={}, quick_links=15), day=DAY, window=WINDOW)
    text = render("markdown", view(doc, {}))
    quick = text.split("## Quick links\n", 1)[1].strip().splitlines()
    assert [line.split("](")[0] for line in quick] == ["- [Story p5", "- [Story p6", "- [Story p7"], quick

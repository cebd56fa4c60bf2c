"""Each brief item names its outlets as a reader knows them, from its articles' kind and evidence."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from storage.brief import Brief, brief_dict
from storage.store import ParquetEventStore
from tasks import steps
from tasks.outlets import citation_fields, outlet_label
from tasks.render import render, render_html, render_markdown, view
from tasks.settings import parse_settings
from tests.factories import collected, collected_of_kind
from tests.runs import hashing_run

HN_DISCUSSION = "https://news.ycombinator.com/item?id=4242"


def _brief(tmp_path: Path) -> Brief:
    sources = ["example", "hn", "trending", "aibase", "hfpapers"]
    settings = parse_settings(
        {
            "storage": {"root": str(tmp_path / "store")},
            "sources": [
                {"name": s, "url": f"file:///nowhere/{s}/{{date}}.xml", "on_topic": True} for s in sources
            ],
        }
    )
    store = ParquetEventStore(str(tmp_path / "store"))
    store.append(
        [
            collected(1, title="OpenAI ships a reasoning model for spreadsheets"),
            collected_of_kind(
                2,
                "community",
                source="hn",
                title="Anthropic opens its agent toolkit to every developer",
                url="https://techcrunch.com/2025/08/06/anthropic-agents/",
                outlet="techcrunch.com",
                discussion_url=HN_DISCUSSION,
                evidence={"points": 643, "comments": 370},
            ),
            collected_of_kind(
                3,
                "repos",
                source="trending",
                title="llama-swap: hot-swap local language models behind one endpoint",
                url="https://github.com/example/llama-swap",
                outlet="GitHub",
                evidence={"stars": 94498, "stars_today": 2330, "repo_language": "Go"},
            ),
            collected_of_kind(
                4,
                "digest",
                source="aibase",
                title="MiniMax releases M2.7 with longer context windows",
                url="https://news.aibase.com/zh/daily/26210",
                outlet="aibase",
                evidence={"digest_position": 3},
            ),
        ]
    )
    ctx = hashing_run(store, settings, date(2025, 8, 6), "run-outlets")
    outcome = steps.dedup_day(ctx)
    scores = steps.score_stories(ctx, outcome)
    return steps.compose(ctx, outcome, steps.analyze_stories(ctx, outcome, scores))


@pytest.fixture
def brief(tmp_path: Path) -> Brief:
    return _brief(tmp_path)


def _citations(doc: Brief) -> dict[str, dict]:
    """Each citation as the brief's JSON file has it, by article."""
    return {c["article_id"]: c for item in brief_dict(doc)["items"] for c in item["citations"]}


def test_the_json_brief_names_each_kinds_outlet_and_leaves_news_citations_as_they_were(brief: Brief) -> None:
    cited = _citations(brief)
    assert set(cited) == {"art-1", "art-2", "art-3", "art-4"}
    assert set(cited["art-1"]) == {"article_id", "url", "source", "published"}  # news: as before kinds
    hn = cited["art-2"]
    assert hn["outlet_label"] == "techcrunch.com · Hacker News (643 points)"
    assert hn["discussion_url"] == HN_DISCUSSION
    assert hn["evidence"] == {"points": 643, "comments": 370}
    assert hn["url"] == "https://techcrunch.com/2025/08/06/anthropic-agents/"
    assert cited["art-3"]["outlet_label"] == "GitHub · 2,330 stars today"
    assert "discussion_url" not in cited["art-3"]
    assert cited["art-4"]["outlet_label"] == "aibase #3"


def test_markdown_and_html_show_the_labels_and_the_discussion_as_a_second_link(brief: Brief) -> None:
    markdown = render_markdown(brief, {})
    assert (
        "[techcrunch.com · Hacker News (643 points)](<https://techcrunch.com/2025/08/06/anthropic-agents/>)"
        in markdown
    )
    assert f"[discussion](<{HN_DISCUSSION}>)" in markdown
    assert "GitHub · 2,330 stars today" in markdown
    assert "aibase #3" in markdown
    html = render_html(brief, {})
    assert ">techcrunch.com · Hacker News (643 points)</a>" in html
    assert f'<a href="{HN_DISCUSSION}" rel="noopener nofollow">discussion</a>' in html
    assert ">GitHub · 2,330 stars today</a>" in html
    assert ">aibase #3</a>" in html
    for kind in ("text", "email", "entry"):
        assert "Hacker News (643 points)" in render(kind, view(brief, {}))


def test_hostile_outlet_text_and_links_stay_inert(brief: Brief) -> None:
    item = next(i for i in brief.items if any(c.discussion_url for c in i.citations))
    citation = item.citations[0].model_copy(
        update={
            "outlet_label": "<script>x</script> · [pwn](http://evil)",
            "discussion_url": "javascript:alert(1)",
        }
    )
    hostile = brief.with_items([item.model_copy(update={"citations": [citation]})])
    html = render_html(hostile, {})
    assert "<script>x</script>" not in html and "&lt;script&gt;" in html
    assert "javascript:" not in html
    markdown = render_markdown(hostile, {})
    assert "\\[pwn\\]" in markdown and "javascript:" not in markdown


@pytest.mark.parametrize(
    ("kind", "source", "outlet", "evidence", "label"),
    [
        ("community", "hn", "techcrunch.com", {"points": 643}, "techcrunch.com · Hacker News (643 points)"),
        ("community", "hn", "Hacker News", {"points": 1}, "Hacker News (1 point)"),
        ("community", "hn", "arxiv.org", {}, "arxiv.org · Hacker News"),
        ("repos", "trending", "GitHub", {"stars_today": 2330, "stars": 9}, "GitHub · 2,330 stars today"),
        ("repos", "trending", "GitHub", {"stars": 94498}, "GitHub · 94,498 stars"),
        ("digest", "aibase", "aibase", {"digest_position": 3}, "aibase #3"),
        ("digest", "aibase", None, {}, "aibase"),
        ("papers", "hf_papers", None, {"upvotes": 1204}, "hf_papers · 1,204 upvotes"),
    ],
)
def test_outlet_labels(kind: str, source: str, outlet: str | None, evidence: dict, label: str) -> None:
    assert outlet_label(kind, source, outlet, evidence) == label


def test_news_and_lab_citations_get_no_fields() -> None:
    assert citation_fields("news", "techcrunch", None, None, {}) == {}
    assert citation_fields("lab", "anthropic_news", "anthropic.com", None, {}) == {}

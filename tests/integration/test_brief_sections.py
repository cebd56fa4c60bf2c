"""A real AI-world day (the 14 feeds of ``docs/sources.md`` on 2026-03-18) through the pipeline
with the real embedding model: its papers under Research, its trending repositories under Open
source, the stories only Hacker News has under Community discussion; the same day in Chinese;
every item in HTML in its own language."""

from __future__ import annotations

import html
import json
import re
from datetime import date
from pathlib import Path

import pytest

from storage.brief import Item
from tasks import steps
from tasks.render import render, view
from tasks.settings import load_settings
from tasks.write import KIND_SECTION_SIZE, kind_section
from tests.conftest import REPO
from tests.real_days import archive_config

DAY = date(2026, 3, 18)
NEWS_KINDS = {"news", "lab", "digest"}


def kinds(item: dict) -> set[str]:
    return {c.get("kind", "news") for c in item["citations"]}


def sources(item: dict) -> set[str]:
    return {c["source"] for c in item["citations"]}


@pytest.fixture(scope="module")
def day(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The day's published brief in English, and its draft in Chinese from the same facts."""
    guide = (REPO / "docs" / "sources.md").read_text()
    [block] = [b for b in re.findall(r"```toml\n(.*?)```", guide, flags=re.DOTALL) if "/path/to/aiweb" in b]
    aiweb = shared_data / "aiweb"
    config = archive_config(
        tmp_path_factory.mktemp("aiweb"),
        aiweb / "feeds",
        [],
        extra=block.replace("/path/to/aiweb", str(aiweb)),
    )
    settings = load_settings(str(config))
    ctx = steps.make_context(settings, DAY, "sections-en")
    for source in settings.sources:
        steps.collect_one(ctx, source.name)
    published = steps.rebrief(ctx)
    files = {ext: Path(path).read_text() for ext, path in published.files.items()}
    chinese = steps.make_context(settings.model_copy(update={"language": "zh"}), DAY, "sections-zh")
    zh, _, _ = steps.draft(chinese, steps.dedup_day(chinese))
    labels = {c.name: c.label_zh for c in settings.policy.categories}
    return {"en": json.loads(files["json"]), "files": files, "zh": zh, "zh_labels": labels}


def test_papers_repositories_and_hacker_news_only_stories_have_their_sections(day: dict) -> None:
    items = day["en"]["items"]
    by_title = {i["title"]: i["section"] for i in items}
    assert by_title["GLM-5: from Vibe Coding to Agentic Engineering"] == "research"  # a paper
    assert by_title["jarrodwatts / claude-hud"] == "open_source"  # a trending repository
    # only on Hacker News: a discussion leads on its importance, as a news report does (core only)
    forge = next(i for i in items if i["title"] == "Mistral AI Releases Forge")
    assert forge["section"] in ("top", "community") and kinds(forge) == {"community"}
    # a coding model's paper and a coding agent's repository read alike but are two projects
    assert kinds(next(i for i in items if i["title"] == "Qwen3-Coder-Next Technical Report")) == {"papers"}
    assert by_title["langchain-ai / open-swe"] in ("open_source", "quick_link")
    for item in items:
        section, reported = item["section"], kinds(item)
        if reported & NEWS_KINDS:  # a news, lab or digest source has it: the news path
            assert section in ("top", "category", "quick_link"), item["title"]
        elif section == "top":  # no news report: a discussion, or a story more than one source has
            assert reported == {"community"} or len(sources(item)) >= 2, item["title"]
            assert item["relevance"] == "core", item["title"]
        else:
            home = (
                "research" if "papers" in reported else "open_source" if "repos" in reported else "community"
            )
            assert section in (home, "quick_link"), item["title"]
    for section in ("research", "open_source"):
        assert sum(i["section"] == section for i in items) >= 2, section
    # fewer discussions pass the threshold chosen over the labelled blocks, and a core one may lead
    assert sum(i["section"] == "community" for i in items) >= 1
    for item in items:  # a kind's story is a quick link only when its own section is full
        if item["section"] == "quick_link" and (home := kind_section(Item.model_validate(item))) is not None:
            assert sum(i["section"] == home for i in items) == KIND_SECTION_SIZE, item["title"]
    headings = re.findall(r"^## (.+)$", day["files"]["md"], flags=re.MULTILINE)
    kinds_last = [h for h in headings if h != "Quick links"]
    assert headings[0] == "Top stories" and headings[-1] in ("Community discussion", "Quick links")
    assert kinds_last[-3:] == ["Research", "Open source", "Community discussion"]


def test_the_same_day_in_chinese_has_the_same_sections_under_chinese_headings(day: dict) -> None:
    english = {i["story_id"]: i["section"] for i in day["en"]["items"]}
    assert {i.story_id: i.section for i in day["zh"].items} == english
    context = view(day["zh"], day["zh_labels"])
    headings = [s["heading"] for s in context["sections"]]
    assert headings[0] == "头条" and [h for h in headings if h != "快讯"][-3:] == [
        "研究",
        "开源项目",
        "社区讨论",
    ]
    page = render("html", context)
    assert page.startswith('<!doctype html>\n<html lang="zh">')
    assert (
        "<b>来源:</b>" in page
        and ">讨论</a>" in page
        and "Sources" not in page
        and ">discussion<" not in page
    )
    labels = [c.outlet_label for i in day["zh"].items for c in i.citations if c.outlet_label]
    assert any("Hacker News（" in label for label in labels) and any("星" in label for label in labels)
    assert not [label for label in labels if re.search(r"points?\b|stars?\b|upvotes?\b", label)]


def test_each_item_is_marked_with_its_language_where_it_is_not_the_page_s(day: dict) -> None:
    page = day["files"]["html"]
    assert page.startswith('<!doctype html>\n<html lang="en">')
    chinese = [i for i in day["en"]["items"] if i.get("language") == "zh"]
    assert chinese and all(i["citations"][0]["source"] == "aibase_daily" for i in chinese)
    assert all(re.search(r"[\u4e00-\u9fff]", i["title"]) for i in chinese)
    for item in chinese:
        title = re.escape(html.escape(item["title"]))
        assert re.search(rf'<h3 lang="zh">\d+\. {title}|<a [^>]*lang="zh">{title}</a>', page), item["title"]
    assert page.count('lang="zh"') >= len(chinese)
    assert not any(
        "language" in i for i in day["en"]["items"] if not re.search(r"[\u4e00-\u9fff]", i["title"])
    )
    english = [i for i in day["zh"].items if i.language == "en"]
    assert len(english) > len(chinese)  # in the Chinese brief, the English items are the marked ones
    assert render("email", view(day["zh"], {})).count('lang="en"') >= len(english)

"""Each item in HTML and email says its language where it is not the page's; Chinese text gets CJK fonts."""

from __future__ import annotations

import re

from storage.brief import Brief
from tasks.render import render, view
from tasks.write import item_language
from tests.factories import kind_citation, sections_brief, story_item


def _mixed(language: str) -> Brief:
    """A brief with one item in the other language, in full and among the quick links."""
    other = "zh" if language == "en" else "en"
    doc = sections_brief(language)
    items = list(doc.items)
    items[3] = items[3].model_copy(
        update={"title": "论文标题" if other == "zh" else "A paper", "language": other}
    )
    quick = story_item("quick", 0.1, kind_citation("ars"), section="quick_link", language=other)
    return doc.with_items([*items, quick.model_copy(update={"title": "快讯"})])


def test_an_item_in_another_language_says_so_in_html_and_email() -> None:
    for kind in ("html", "email"):
        page = render(kind, view(_mixed("en"), {}))  # type: ignore[arg-type]
        assert '<html lang="en">' in page
        assert re.search(r'<h3 lang="zh"[^>]*>\d+\. (<a [^>]*>)?论文标题', page), kind
        assert re.search(r'<p lang="zh"[^>]*>What story paper says\.</p>', page), kind
        assert re.search(r'<a href="https://ars\.example\.com/a"[^>]* lang="zh">快讯</a>', page), kind
        assert page.count('lang="zh"') == 3, kind  # that item's title and summary, and the quick link
        chinese = render(kind, view(_mixed("zh"), {}))  # type: ignore[arg-type]
        assert '<html lang="zh">' in chinese and chinese.count('lang="en"') == 3, kind
    entry = render("entry", view(_mixed("en"), {}))
    assert entry.count('lang="zh"') == 3


def test_chinese_text_names_cjk_fonts_after_the_latin_ones_and_english_pages_are_as_before() -> None:
    cjk = '"Noto Sans CJK SC","PingFang SC","Microsoft YaHei"'
    assert f"font:16px/1.55 system-ui,{cjk},sans-serif;" in render("html", view(_mixed("en"), {}))
    assert f"font:16px/1.55 system-ui,{cjk},sans-serif;" in render("html", view(sections_brief("zh"), {}))
    email = render("email", view(_mixed("en"), {}))
    assert "font-family:Helvetica,Arial,Noto Sans CJK SC,PingFang SC,Microsoft YaHei,sans-serif;" in email
    assert "font-family:Helvetica,Arial,sans-serif;" not in email
    for kind in ("html", "email", "entry"):
        english = render(kind, view(sections_brief("en"), {}))  # type: ignore[arg-type]
        assert "CJK" not in english and "lang=" not in english.replace('<html lang="en">', ""), kind


def test_an_item_carries_its_language_only_when_it_is_not_the_brief_s() -> None:
    assert item_language("zh", "en") == {"language": "zh"}
    assert item_language("en", "zh") == {"language": "en"}
    assert item_language("en", "en") == {} and item_language("und", "zh") == {}

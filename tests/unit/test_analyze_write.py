from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import pytest

from storage.brief import Window, brief_dict
from tasks.analyze import CategoryRule, categorise, date_stated, extract_facts, importance
from tasks.dedup import Item
from tasks.render import render_html, render_markdown
from tasks.write import arrange, md_escape, safe_url
from tests.factories import brief, brief_item, citation, fact, hostile_brief


def item(title: str, summary: str = "") -> Item:
    return Item("a1", "src", title, summary, "https://x.example/a", "h", datetime(2025, 8, 6, tzinfo=UTC))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("$1.2B", "USD 1200000000"),
        ("1.2 billion dollars", "USD 1200000000"),
        ("$50M", "USD 50000000"),
        ("$120 million", "USD 120000000"),
        ("5000万美元", "USD 50000000"),
        ("1.2亿元", "CNY 120000000"),
        ("12亿美元", "USD 1200000000"),
        ("€4.5M", "EUR 4500000"),
        ("20亿美元", "USD 2000000000"),
        ("20 亿美元", "USD 2000000000"),
        ("3000万元", "CNY 30000000"),
        ("1.5万亿元", "CNY 1500000000000"),
        ("3千元", "CNY 3000"),
        ("10亿人民币", "CNY 1000000000"),
        ("5000万RMB", "CNY 50000000"),
        ("5亿美金", "USD 500000000"),
        ("100亿日元", "JPY 10000000000"),
        ("2 billion yuan", "CNY 2000000000"),
    ],
)
def test_money_amounts_are_normalised(text: str, value: str) -> None:
    facts = [f for f in extract_facts(item(f"Company gets {text} in funding"), 2025) if f.kind == "amount"]
    assert [f.value for f in facts] == [value]
    assert facts[0].field == "title"
    assert f"Company gets {text} in funding"[facts[0].start : facts[0].end] == text


@pytest.mark.parametrize("text", ["进军元宇宙3元宇宙基金", "用户1.5万", "3000万次下载"])
def test_no_money_amount_without_a_currency(text: str) -> None:
    assert [f for f in extract_facts(item(text), 2025) if f.kind == "amount"] == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4月15日", "2025-04-15"),
        ("4月15号", "2025-04-15"),
        ("2026年3月18日", "2026-03-18"),
        ("2026 年 3 月 18 日", "2026-03-18"),
        ("3月", "2025-03"),  # a month
        ("3月份", "2025-03"),
        ("6月底", "2025-06"),
        ("2026年3月", "2026-03"),
    ],
)
def test_chinese_dates_are_read_with_their_anchor(text: str, value: str) -> None:
    title = f"发布会定于{text}举行"
    [fact] = [f for f in extract_facts(item(title), 2025) if f.kind == "date"]
    assert fact.value == value and title[fact.start : fact.end] == fact.text and text.startswith(fact.text)


@pytest.mark.parametrize("text", ["3个月", "13月", "3月18发布", "第2026年"])
def test_what_is_not_a_chinese_date(text: str) -> None:
    assert [f for f in extract_facts(item(f"预计{text}"), 2025) if f.kind == "date"] == []


def test_a_month_is_stated_by_any_day_of_it() -> None:
    assert date_stated("2026-03", {"2026-03-18"}) and date_stated("2026-03-18", {"2026-03-18"})
    assert not date_stated("2026-04", {"2026-03-18"}) and not date_stated("2026-03-18", {"2026-03"})


def test_facts_carry_anchors_into_their_field() -> None:
    it = item(
        "OpenAI releases GPT-5", "Sam Altman, the CEO, said on August 7, 2025 that Microsoft will ship it."
    )
    facts = extract_facts(it, 2025)
    kinds = {(f.kind, f.value) for f in facts}
    assert {
        ("organization", "OpenAI"),
        ("product", "GPT-5"),
        ("person", "Sam Altman"),
        ("date", "2025-08-07"),
        ("organization", "Microsoft"),
    } <= kinds
    for f in facts:
        text = it.title if f.field == "title" else it.summary
        assert text[f.start : f.end] == f.text


def test_category_and_confidence() -> None:
    rules = [CategoryRule("business", ("raises", "funding")), CategoryRule("research", ("paper", "study"))]
    assert categorise("Startup raises funding, raises more", rules)[0] == "business"
    assert categorise("Nothing to see", rules) == ("other", 0.3)
    assert 0 <= categorise("a paper and a funding study", rules)[1] <= 1


def test_importance_grows_with_coverage_and_stays_in_range() -> None:
    end = datetime(2025, 8, 7, tzinfo=UTC)
    one = importance(["a"], {}, 1.0, end, end, 48)
    three = importance(["a", "b", "c"], {}, 1.0, end, end, 48)
    assert 0 <= one < three <= 1


def test_hostile_feed_text_is_inert_in_html() -> None:
    page = render_html(hostile_brief(), {})
    assert (
        "<script" not in page
        and "<img" not in page
        and "javascript:" not in page.replace("javascript:alert(2)", "")
    )
    assert 'href="javascript' not in page
    assert "&lt;script&gt;" in page


def test_hostile_feed_text_is_inert_in_markdown() -> None:
    md = render_markdown(hostile_brief(), {})
    assert "<script>" not in md and "[click](javascript" not in md and "\\[click\\]" in md
    assert "\\<script\\>" in md and "\\*\\*bold\\*\\*" in md


def test_only_http_links_are_links() -> None:
    assert safe_url("https://a.example/x") and safe_url("http://a.example")
    assert safe_url("javascript:alert(1)") is None and safe_url("data:text/html,hi") is None
    assert md_escape("[x](y)") == "\\[x\\](y)"
    json.dumps(brief_dict(hostile_brief()))


def test_chinese_labels_for_a_zh_brief() -> None:
    doc = hostile_brief(language="zh")
    md = render_markdown(doc, {})
    assert md.startswith("# AI 简报 — 2025-08-06") and "## 头条" in md and "来源" in md


def test_the_header_and_key_facts_read_as_a_person_writes_them() -> None:
    title = "Northwind AI raises $120M to build Pippin-2 arms"
    facts = [
        fact("amount", "$120m", "120000000 USD"),  # the headline says it
        fact("product", "Pippin-2"),  # so does this
        fact("date", "5 August 2025", "2025-08-05"),  # a bare date
        fact("amount", "$4.5 million", "4500000 USD"),  # news
    ]
    item = brief_item("st-1", title, category="other", facts=facts, citations=[citation("art-1")])
    doc = brief(
        *arrange([item], top=1, quotas={}, quick_links=5),
        window=Window(start="2025-08-05T00:00:00+00:00", end="2025-08-07T00:00:00+00:00"),
    )
    md, page = render_markdown(doc, {}), render_html(doc, {})
    for text in (md, page):
        assert "1 story from 1 outlet ·" in text and "1 outlets" not in text
        # whole days by their dates, the last one included: no midnight times, no "T00:00"
        assert "news published 2025-08-05 – 2025-08-06 UTC ·" in text, text
        assert "00:00" not in text
        assert "$4.5 million" in text and "5 August 2025" not in text
        assert "Pippin-2" not in text.replace(title, "")
    two = doc.model_copy(
        update={"window": Window(start="2025-08-06T06:00:00+00:00", end="2025-08-06T18:00:00+00:00")}
    )
    assert "2025-08-06 06:00 – 18:00 UTC" in render_markdown(two, {})
    one = doc.model_copy(
        update={"window": Window(start="2025-08-06T00:00:00+00:00", end="2025-08-07T00:00:00+00:00")}
    )
    assert "news published 2025-08-06 UTC ·" in render_markdown(one, {})
    # whole days of another timezone (Amsterdam's midnights are 22:00 UTC): the brief's local dates
    amsterdam = doc.model_copy(
        update={"window": Window(start="2025-08-04T22:00:00+00:00", end="2025-08-06T22:00:00+00:00")}
    )
    last = date.fromisoformat(str(doc.date))
    assert f"news published {last - timedelta(days=1)} – {last} ·" in render_markdown(amsterdam, {})

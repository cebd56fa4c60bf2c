"""Chinese amounts, numbers and dates are checked as English ones are, on real aibase reports.

The reports are aibase's daily digests of March 2026 (``../shared/data/aiweb``) as the pipeline
collects them; the brief item is what the offline writer makes of one (its title, its first
sentences, the facts read from them); each test rewrites one claim of it as a careless writer
or a language model might, and the fact-check must say which.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

from storage.payloads import Fact
from tasks import analyze, factcheck, llm, write
from tasks.collect import Fetched, Source, feed_events
from tasks.dedup import Item
from tests.factories import brief_item, citation
from tests.integration.test_factcheck import AIWEB, draft

DISNEY = "https://news.aibase.com/zh/daily/26549#1"  # 曾获迪士尼10亿美元订单 (2026-03-25)
GEMINI = "https://news.aibase.com/zh/daily/25801#2"  # 将于3月9日停用 Gemini 3 Pro Preview (2026-03-04)
DOUYIN = "https://news.aibase.com/zh/daily/26257#2"  # 处置违规账号1.4万个 (2026-03-16)


def aibase(shared_data: Path, day: str) -> dict[str, Item]:
    """aibase's digest of ``day`` as collected: one report per story its title names, by link."""
    path = shared_data / "aiweb" / "feeds" / "aibase_daily" / f"{day}.xml"
    events = feed_events(
        Source("aibase_daily", path.as_uri(), kind="digest"),
        date.fromisoformat(day),
        "run-zh",
        at=datetime.fromisoformat(f"{day}T13:00:00+00:00"),
        url=path.as_uri(),
        fetched=Fetched(path.read_bytes(), 200),
    )
    payloads = [e.payload for e in events if e.event_type == "article.collected"]
    return {
        p["url"]: Item(
            p["article_id"], p["source"], p["title"], p["summary"], p["canonical_url"], "", None, url=p["url"]
        )
        for p in payloads
    }


def offline_item(report: Item, brief_date: date) -> dict:
    """What the offline writer makes of one report: its item's text, facts and citation, as a draft the
    tests corrupt (``findings`` checks it as the brief's item)."""
    facts = [f.as_payload() for f in analyze.extract_facts(report, brief_date.year)]
    return {
        "story_id": "st-zh",
        "title": report.title,
        "summary": write.short_summary(report.summary),
        "facts": factcheck.stated_facts(facts, brief_date),
        "citations": [{"article_id": report.article_id, "url": report.url}],
    }


def findings(draft: dict, report: Item, brief_date: date) -> list[tuple[str, str, str]]:
    item = brief_item(
        draft["story_id"],
        draft["title"],
        summary=draft["summary"],
        facts=[Fact.model_validate(f) for f in draft["facts"]],
        citations=[citation(c["article_id"], url=c["url"]) for c in draft["citations"]],
    )
    return [
        (f.kind, f.claim, f.reason)
        for f in factcheck.check_item(item, {report.article_id: report}, brief_date)
    ]


def model_findings(text: str, report: Item, brief_date: date) -> list[tuple[str, str, str]]:
    return [(f.kind, f.claim, f.reason) for f in llm.check_model_text(text, [report], set(), brief_date)]


@pytest.fixture(scope="module")
def reports(shared_data: Path) -> dict[str, Item]:
    return {
        **aibase(shared_data, "2026-03-04"),
        **aibase(shared_data, "2026-03-16"),
        **aibase(shared_data, "2026-03-25"),
    }


DAY = date(2026, 3, 25)


def test_the_real_reports_state_what_the_tests_rewrite(reports: dict[str, Item]) -> None:
    assert "曾获迪士尼10亿美元订单" in reports[DISNEY].summary
    assert "谷歌宣布将于3月9日停用" in reports[GEMINI].summary
    assert "1.4万个" in reports[DOUYIN].title


@pytest.mark.parametrize("url", [DISNEY, GEMINI, DOUYIN])
def test_a_faithful_item_raises_nothing(reports: dict[str, Item], url: str) -> None:
    report = reports[url]
    item = offline_item(report, DAY)
    assert findings(item, report, DAY) == []
    assert model_findings(f"{item['title']}。{item['summary']}", report, DAY) == []


@pytest.mark.parametrize(
    ("written", "claim"),
    [
        ("20亿美元", "USD 2000000000"),  # the number
        ("10万美元", "USD 100000"),  # 亿 → 万
        ("10亿元", "CNY 1000000000"),  # the currency
        ("$2 billion", "USD 2000000000"),
    ],
)
def test_a_corrupted_amount_is_caught(reports: dict[str, Item], written: str, claim: str) -> None:
    report = reports[DISNEY]
    item = offline_item(report, DAY)
    assert [f["text"] for f in item["facts"] if f["kind"] == "amount"] == ["10亿美元"]
    item["summary"] = item["summary"].replace("10亿美元", written)
    assert findings(item, report, DAY) == [("amount", claim, "NOT_IN_SOURCES")]
    assert model_findings(item["summary"], report, DAY) == [("amount", written, "NOT_IN_SOURCES")]


@pytest.mark.parametrize("written", ["$1 billion", "1 billion dollars", "$1B", "10 亿美元"])
def test_the_same_amount_written_otherwise_is_not_a_finding(reports: dict[str, Item], written: str) -> None:
    report = reports[DISNEY]
    item = offline_item(report, DAY)
    item["summary"] = item["summary"].replace("10亿美元", written)
    assert findings(item, report, DAY) == []
    assert model_findings(item["summary"], report, DAY) == []


def test_an_amount_corrupted_in_the_facts_and_the_text_is_one_finding(reports: dict[str, Item]) -> None:
    report = reports[DISNEY]
    item = offline_item(report, DAY)
    [fact] = [f for f in item["facts"] if f["kind"] == "amount"]
    fact.update(text="30亿美元", value="USD 3000000000")
    assert findings(item, report, DAY) == [("amount", "30亿美元", "NOT_IN_SOURCES")]
    item["summary"] = item["summary"].replace("10亿美元", "30亿美元")
    assert findings(item, report, DAY) == [("amount", "30亿美元", "NOT_IN_SOURCES")]


@pytest.mark.parametrize(
    ("written", "value"), [("3月10日", "2026-03-10"), ("2026年3月8日", "2026-03-08"), ("4月", "2026-04")]
)
def test_a_corrupted_date_is_caught(reports: dict[str, Item], written: str, value: str) -> None:
    report, day = reports[GEMINI], date(2026, 3, 4)
    item = offline_item(report, day)
    assert item["facts"] == []  # 3月9日 is after the brief date: the writer states it only in the text
    item["summary"] = item["summary"].replace("3月9日", written)
    assert findings(item, report, day) == [("date", written, "NOT_IN_SOURCES")]
    later = "AFTER_BRIEF_DATE" if value > day.isoformat() else "NOT_IN_SOURCES"
    assert model_findings(item["summary"], report, day) == [("date", written, later)]


@pytest.mark.parametrize("written", ["2026年3月9日", "3月9号", "3月"])
def test_the_same_date_written_otherwise_is_not_a_finding(reports: dict[str, Item], written: str) -> None:
    report, day = reports[GEMINI], date(2026, 3, 4)
    item = offline_item(report, day)
    item["summary"] = item["summary"].replace("3月9日", written)
    assert findings(item, report, day) == []
    assert model_findings(item["summary"], report, day) == []


@pytest.mark.parametrize(
    ("written", "caught"), [("14万个", True), ("1.4亿个", True), ("14,000个", False), ("1.4万个", False)]
)
def test_a_count_with_a_chinese_scale_is_checked(
    reports: dict[str, Item], written: str, caught: bool
) -> None:
    report = reports[DOUYIN]
    item = offline_item(report, DAY)
    item["title"] = item["title"].replace("1.4万个", written)
    expected = [("number", written.removesuffix("个"), "NOT_IN_SOURCES")] if caught else []
    assert findings(item, report, DAY) == expected
    assert model_findings(item["title"], report, DAY) == expected


def test_a_real_aibase_brief_passes_and_its_amount_corrupted_is_caught(
    shared_data: Path, tmp_path: Path
) -> None:
    """The pipeline's own draft of 2026-03-25 (aibase and DeepSeek), then one amount changed."""
    document, outcome, day = draft(shared_data, tmp_path, "2026-03-25", list(AIWEB))
    assert factcheck.check_brief(document, outcome.items, day) == []
    corrupted = document.with_items(
        [
            i.model_copy(update={"summary": i.summary.replace("10亿美元", "30亿美元")})
            if "10亿美元" in i.summary
            else i
            for i in document.items
        ]
    )
    assert sum("30亿美元" in i.summary for i in corrupted.items) == 1
    assert [(f.kind, f.claim, f.reason) for f in factcheck.check_brief(corrupted, outcome.items, day)] == [
        ("amount", "USD 3000000000", "NOT_IN_SOURCES")
    ]

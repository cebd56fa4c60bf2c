"""A Chinese brief (``language = "zh"``): its own words are Chinese in every template and message."""

from __future__ import annotations

import re
import string
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from storage.brief import Brief, LeftOut
from tasks import deliver
from tasks.channels import Channel
from tasks.outlets import outlet_label
from tasks.render import render, view
from tasks.write import LABELS
from tests.factories import fact, kind_citation, sections_brief, story_item


def test_every_label_has_a_chinese_text_with_the_same_placeholders() -> None:
    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    assert set(LABELS["zh"]) == set(LABELS["en"])
    for key, english in LABELS["en"].items():
        chinese = LABELS["zh"][key]
        # Chinese words, or Chinese punctuation for a label that is only a mark (a sentence's stop)
        assert chinese.strip() and re.search(r"[\u4e00-\u9fff]|^[\u3000-\u303f\uff00-\uffef]+$", chinese), key
        # English alone needs a plural word ("1 story", "2 questions"): Chinese counts without one
        assert fields(chinese) <= fields(english) and fields(english) - fields(chinese) <= {
            "stories",
            "questions",
        }, key


def _chinese_day(**fields: Any) -> Brief:
    doc = sections_brief("zh")
    items = [i.model_copy(update={"title": f"新闻{i.story_id}", "summary": "内容。"}) for i in doc.items]
    items[0] = items[0].model_copy(update={"follow_up_of": "st-earlier"})
    items[1] = items[1].model_copy(
        update={
            "verified": False,
            "flags": ["instructions_to_ai"],
            "facts": [fact("date", "2026年3月18日", "2026-03-18")],
        }
    )
    discussed = kind_citation("hn", "community").model_copy(
        update={"discussion_url": "https://news.ycombinator.com/item?id=1"}
    )
    items[-1] = items[-1].model_copy(update={"citations": [discussed]})
    quick = story_item("quick", 0.1, kind_citation("hn", "community"), section="quick_link")
    items.append(quick.model_copy(update={"title": "快讯一"}))
    return doc.model_copy(update={"items": items, "left_out": LeftOut(off_topic=3), "topic": "AI", **fields})


@pytest.mark.parametrize("kind", ["markdown", "html", "text", "email", "entry"])
def test_a_chinese_brief_says_nothing_in_english(kind: str) -> None:
    doc = _chinese_day()
    question = {"id": "q-1", "prompt": "同一事件？", "default": "yes"}
    context = view(
        doc,
        {"models": "模型与发布"},
        note=LABELS["zh"]["unreviewed"].format(at="08:00"),
        questions=[question],
    )
    page = render(kind, context)  # type: ignore[arg-type]
    for key, english in LABELS["en"].items():
        fixed = max(re.split(r"\{[^}]*\}", english), key=len).strip(" .:'")
        # "AI brief" vs "AI 简报": the zh title keeps "AI"; a lone ";" (a list's separator) is no English
        if fixed.strip(";") and key not in ("title",):
            assert fixed not in page, (key, fixed)
    assert "新闻top" in page and "研究" in page


def test_a_chinese_brief_s_messages_have_chinese_subjects() -> None:
    zone = ZoneInfo("Asia/Shanghai")
    doc = _chinese_day(version=2)
    email = Channel(name="email", url="mailto://x")

    def subject(send: deliver.Send, **kw) -> str:
        return deliver.compose_message(send, doc, {}, zone=zone, **kw).subject

    at = datetime(2026, 3, 18, 8, tzinfo=zone)
    assert subject(deliver.Send(email, "update", "direct", previous=1)) == "更新：AI 简报 — 2026-03-18"
    q = [{"id": "q-1", "prompt": "同一事件？", "default": "yes"}]
    review = subject(
        deliver.Send(Channel(name="eds", url="json://x"), "review", "direct"), until=at, questions=q
    )
    assert review == "待审阅：AI 简报 — 2026-03-18（1 个待确认的问题）"
    assert subject(deliver.Send(email, "brief", "deadline"), until=at).endswith("（未经审阅）")


@pytest.mark.parametrize(
    ("kind", "outlet", "evidence", "label"),
    [
        ("community", "techcrunch.com", {"points": 643}, "techcrunch.com · Hacker News（643 分）"),
        ("repos", "GitHub", {"stars_today": 2330, "stars": 9}, "GitHub · 今日 2,330 星"),
        ("repos", "GitHub", {"stars": 94498}, "GitHub · 94,498 星"),
        ("papers", None, {"upvotes": 57}, "hf_papers · 57 赞"),
        ("digest", "aibase", {"digest_position": 3}, "aibase #3"),
    ],
)
def test_a_chinese_brief_counts_in_chinese(kind: str, outlet: str | None, evidence: dict, label: str) -> None:
    assert outlet_label(kind, "hf_papers", outlet, evidence, "zh") == label

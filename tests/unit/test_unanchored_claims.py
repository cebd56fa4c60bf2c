"""Amounts, scaled numbers and dates a text states that its sources do not, in either language."""

from __future__ import annotations

import pytest

from tasks.dedup import Item
from tasks.factcheck import unanchored


def source(text: str) -> Item:
    return Item("a1", "src", "", text, "https://x.example/a", "h", None)


@pytest.mark.parametrize(
    ("source_text", "written"),
    [
        ("Microsoft invests $2 billion in the lab.", "微软向该实验室投资20亿美元。"),
        ("微软向该实验室投资20亿美元。", "Microsoft invests $2 billion in the lab."),
        ("The model has 2 billion parameters.", "该模型有20亿参数。"),
        ("The app has 15,000 users.", "该应用有1.5万用户。"),
        ("该应用有1.5万用户。", "The app has 15 thousand users, 1.5万 of them paying."),
        ("融资20亿元人民币", "raised 2 billion yuan"),
        ("发布会于3月18日举行", "3月发布"),  # a month the sources state a day of
        ("发布会于2026年3月18日举行", "The launch was on March 18."),
    ],
)
def test_the_same_claim_in_another_language_or_form_is_anchored(source_text: str, written: str) -> None:
    assert unanchored(written, [source(source_text)], 2026) == []


@pytest.mark.parametrize(
    ("source_text", "written", "kind", "claim"),
    [
        ("微软投资20亿美元", "微软投资30亿美元", "amount", "30亿美元"),
        ("微软投资20亿美元", "微软投资20万美元", "amount", "20万美元"),
        ("微软投资20亿元", "Microsoft invests $2 billion", "amount", "$2 billion"),  # yuan, not dollars
        ("用户达1.5万", "用户达15万", "number", "15万"),
        ("The model has 2 billion parameters.", "该模型有200亿参数", "number", "200亿"),
        ("将于4月15日上线", "将于4月16日上线", "date", "4月16日"),
        ("将于4月15日上线", "将于5月上线", "date", "5月"),
        ("将于4月15日上线", "launches on April 16", "date", "April 16"),
    ],
)
def test_a_claim_the_sources_do_not_state_is_named(
    source_text: str, written: str, kind: str, claim: str
) -> None:
    assert [(c.kind, c.text) for c in unanchored(written, [source(source_text)], 2026)] == [(kind, claim)]


def test_a_claim_stated_twice_is_named_once() -> None:
    claims = unanchored(
        "投资30亿美元。再说一遍：30亿美元，于4月16日；4月16日。", [source("投资20亿美元")], 2026
    )
    assert [(c.kind, c.value) for c in claims] == [("amount", "USD 3000000000"), ("date", "2026-04-16")]

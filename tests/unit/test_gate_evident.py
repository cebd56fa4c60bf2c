"""An expectation said evidently met is one GX finds met: ``validations/evident.py`` against GX itself."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from validations import gate
from validations.evident import met

DAY = date(2026, 3, 18)
LIMIT = datetime(2026, 3, 20, tzinfo=UTC)  # article_suite's latest published_at for DAY
SOURCES = ["aibase_daily", "arstechnica"]
CATEGORIES = ["models", "research"]
EVENT_TYPES = ["article.collected", "story.clustered"]


def suites(articles: pd.DataFrame, items: pd.DataFrame, events: pd.DataFrame) -> dict[str, gate.Suite]:
    return {
        "articles": ("warning", articles, "url", gate.article_suite(SOURCES, DAY)),
        "items": ("blocking", items, "story_id", gate.item_suite(CATEGORIES)),
        "events": ("blocking", events, "event_id", gate.event_suite(EVENT_TYPES, DAY)),
    }


def plain() -> dict[str, gate.Suite]:
    """What a real day gives: every value plainly valid, an undated article among them."""
    articles = pd.DataFrame(
        {
            "article_id": ["art-1", "art-2", "art-3"],
            "url": ["https://news.aibase.com/zh/daily/26342#1", "http://x.example/a", "https://y.example/b"],
            "title": ["MiniMax发布M2.7模型", "A title", "Another"],
            "source": ["aibase_daily", "arstechnica", "arstechnica"],
            "published_at": [datetime(2026, 3, 18, 12, 3, tzinfo=UTC), None, LIMIT],
        }
    )
    items = pd.DataFrame(
        {
            "story_id": ["st-1", "st-2"],
            "category": ["models", "other"],
            "category_confidence": [0.0, 1.0],
            "importance": [0.45, 0.9],
            "citations": [1, 3],
            "title": ["MiniMax发布M2.7模型", "A title"],
        }
    )
    events = pd.DataFrame(
        {
            "event_id": ["e1", "e2", "e3"],
            "event_type": ["article.collected", "story.clustered", "story.clustered"],
            "brief_date": ["2026-03-18"] * 3,
            "run_id": ["run-1"] * 3,
            "derived_from": [1.0, 3.0, None],  # the last: written by another run, before lineage
        }
    )
    return suites(articles, items, events)


def failed_expectations(results: list[gate.SuiteResult]) -> set[tuple[str, str, str | None]]:
    return {(r.suite, f.expectation, f.column) for r in results for f in r.failures}


def snake(kind: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", kind).lower()


def test_a_plainly_valid_day_is_met_without_gx_and_gx_agrees() -> None:
    for _, frame, _, expectations in plain().values():
        assert all(met(frame, e) for e in expectations)
    with_gx = gate.validate(plain(), evident=False)
    assert failed_expectations(with_gx) == set()
    assert repr(gate.validate(plain())) == repr(with_gx)


def test_suites_evidently_met_do_not_import_gx() -> None:
    code = (
        "import sys; from tests.unit.test_gate_evident import plain; from validations import gate; "
        "print(len(gate.validate(plain())), 'great_expectations' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["3", "False"]


@pytest.mark.parametrize(
    ("column", "value", "expectation"),
    [
        ("url", "ftp://x.example/a", "ExpectColumnValuesToMatchRegex"),
        ("url", None, "ExpectColumnValuesToNotBeNull"),
        ("title", "", "ExpectColumnValueLengthsToBeBetween"),
        ("source", "elsewhere", "ExpectColumnValuesToBeInSet"),
        ("published_at", LIMIT + timedelta(microseconds=1), "ExpectColumnValuesToBeBetween"),
        ("article_id", "art-1", "ExpectColumnValuesToBeUnique"),
    ],
)
def test_a_value_in_question_leaves_the_suite_to_gx_which_names_it(
    column: str, value: object, expectation: str
) -> None:
    articles = plain()["articles"][1].copy()
    articles.loc[2, column] = value
    ruled = dict(plain()["articles"][3])
    assert not met(articles, (expectation, ruled[expectation]))
    [result] = gate.validate({"articles": ("warning", articles, "url", gate.article_suite(SOURCES, DAY))})
    assert (snake(expectation), column) in {(f.expectation, f.column) for f in result.failures}


def test_a_derived_event_without_sources_fails_the_events_suite() -> None:
    events = plain()["events"][1].copy()
    events.loc[1, "derived_from"] = 0.0
    assert not met(events, ("ExpectColumnValuesToBeBetween", {"column": "derived_from", "min_value": 1}))
    [result] = gate.validate({"events": ("blocking", events, "event_id", gate.event_suite(EVENT_TYPES, DAY))})
    assert [(f.expectation, f.column, f.rows) for f in result.failures] == [
        ("expect_column_values_to_be_between", "derived_from", ("e2",))
    ]
    assert "derived_from" in (gate.blocking_message([result]) or "")


def test_what_evident_does_not_know_is_not_evident() -> None:
    frame = pd.DataFrame(
        {"x": ["a", 1], "s": ["a", "ab"], "n": [1, 2], "d": [datetime(2026, 3, 1), datetime(2026, 3, 2)]}
    )
    assert not met(
        frame, ("ExpectColumnValuesToBeInSet", {"column": "x", "value_set": ["a", 1]})
    )  # not strings
    assert met(frame, ("ExpectColumnValuesToMatchRegex", {"column": "s", "regex": "^a"}))
    assert not met(frame, ("ExpectColumnValuesToMatchRegex", {"column": "s", "regex": "a"}))  # not anchored
    assert not met(frame, ("ExpectColumnMeanToBeBetween", {"column": "n", "min_value": 0}))  # unknown
    assert not met(
        frame, ("ExpectColumnValuesToBeBetween", {"column": "n", "min_value": 0, "strict_min": True})
    )
    assert not met(
        frame, ("ExpectColumnValuesToBeBetween", {"column": "d", "max_value": LIMIT})
    )  # naive dates
    assert not met(frame, ("ExpectColumnValuesToNotBeNull", {"column": "missing"}))


# -- any frame: what is said evidently met, GX finds met --------------------------------------

IDS = st.one_of(st.sampled_from(["a", "b", "c", "d", "e"]), st.none())
TEXT = st.one_of(st.sampled_from(["x", "", " ", "标题", "A title"]), st.none())
URLS = st.one_of(
    st.sampled_from(
        ["https://x.example/1", "http://y.example/2", "ftp://z/3", "", " https://x", "HTTPS://x"]
    ),
    st.none(),
)
WHEN = st.one_of(
    st.sampled_from([LIMIT, LIMIT - timedelta(days=3), LIMIT + timedelta(seconds=1)]),
    st.none(),
)
SHARES = st.one_of(st.sampled_from([0.0, 0.5, 1.0, -0.01, 1.01, float("nan")]), st.none())


@st.composite
def frames(draw: st.DrawFn) -> dict[str, gate.Suite]:
    def column(values: st.SearchStrategy, n: int) -> list:
        return [draw(values) for _ in range(n)]

    n, m, k = (draw(st.integers(1, 5)) for _ in range(3))
    articles = pd.DataFrame(
        {
            "article_id": column(IDS, n),
            "url": column(URLS, n),
            "title": column(TEXT, n),
            "source": column(st.one_of(st.sampled_from([*SOURCES, "elsewhere"]), st.none()), n),
            "published_at": column(WHEN, n),
        }
    )
    items = pd.DataFrame(
        {
            "story_id": column(IDS, m),
            "category": column(st.one_of(st.sampled_from([*CATEGORIES, "other", "sports"]), st.none()), m),
            "category_confidence": column(SHARES, m),
            "importance": column(SHARES, m),
            "citations": column(st.integers(0, 3), m),
            "title": column(TEXT, m),
        }
    )
    events = pd.DataFrame(
        {
            "event_id": column(IDS, k),
            "event_type": column(st.one_of(st.sampled_from([*EVENT_TYPES, "nope"]), st.none()), k),
            "brief_date": column(st.sampled_from(["2026-03-18", "2026-03-17"]), k),
            "run_id": column(st.one_of(st.just("run-1"), st.none()), k),
            "derived_from": column(st.one_of(st.sampled_from([0.0, 1.0, 4.0]), st.none()), k),
        }
    )
    return suites(articles, items, events)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames())
def test_an_expectation_evidently_met_is_met_by_gx(suites_: dict[str, gate.Suite]) -> None:
    with_gx = gate.validate(suites_, evident=False)
    failed = failed_expectations(with_gx)
    for name, (_, frame, _, expectations) in suites_.items():
        for kind, arguments in expectations:
            if met(frame, (kind, arguments)):
                assert (name, snake(kind), arguments["column"]) not in failed, (name, kind, frame.to_dict())
    # the suites met without GX get GX's result; the others go to GX either way
    evident = {n: s for n, s in suites_.items() if s[1].empty or all(met(s[1], e) for e in s[3])}
    by_gx = {r.suite: repr(r) for r in with_gx}
    assert {r.suite: repr(r) for r in gate.validate(evident)} == {n: by_gx[n] for n in evident if n in by_gx}

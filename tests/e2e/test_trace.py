"""``brief trace`` on the session's real days (2025-08-05..07, five outlets, run through Prefect):
every item of every brief traces back through its analysis, score and clustering to the articles
it cites and the feed fetches they were read from, and the command prints that in 80 columns."""

from __future__ import annotations

import json
import unicodedata
from datetime import date
from pathlib import Path

import pytest

from ops.trace import Node, trace
from tasks.settings import load_settings
from tests.cli import brief
from tests.real_days import REAL_DAYS, copy_real_days


@pytest.fixture(scope="module")
def days(real_days: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    config, _ = copy_real_days(real_days, tmp_path_factory.mktemp("trace") / "days")
    return config


def brief_of(config: Path, day: str) -> dict:
    return json.loads((config.parent / "store" / "briefs" / f"{day}.json").read_text())


def only(nodes: tuple[Node, ...], event_type: str) -> Node:
    [node] = [n for n in nodes if n.event.event_type == event_type]
    return node


def test_every_item_of_the_real_days_traces_back_to_its_feed_fetches(days: Path) -> None:
    settings = load_settings(str(days))
    store = settings.storage.event_store()
    traced = 0
    for day in REAL_DAYS:
        document = brief_of(days, day)
        assert document["items"], day
        for position, item in enumerate(document["items"], 1):
            chain = trace(store, settings, date.fromisoformat(day), item["story_id"])
            assert (chain.position, chain.version, chain.missing) == (position, document["version"], ())
            analyzed = only(chain.sources, "story.analyzed")
            assert analyzed.event.payload["category"] == item["category"]
            scored = only(analyzed.sources, "story.scored")
            assert scored.event.payload["story_id"] == item["story_id"]
            clustered = only(scored.sources, "story.clustered")
            articles = {n.event.subject_id: n for n in clustered.sources}
            assert set(articles) == set(clustered.event.payload["members"])
            assert {c["article_id"] for c in item["citations"]} <= set(articles)
            for citation in item["citations"]:
                article = articles[citation["article_id"]]
                assert article.event.event_type == "article.collected"
                assert article.event.payload["source"] == citation["source"]
                fetch = only(article.sources, "feed.fetched").event
                # read from the dated archive of the day it was collected for, whose bytes it hashed
                assert fetch.payload["source"] == citation["source"]
                assert fetch.payload["url"].endswith(f"/{citation['source']}/{article.event.brief_date}.xml")
                assert fetch.payload["bytes"] > 0 and len(fetch.payload["content_hash"]) == 32
            traced += 1
    assert traced >= 20


def cells(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_brief_trace_prints_the_chain_in_80_columns(days: Path) -> None:
    day = "2025-08-06"
    item = max(brief_of(days, day)["items"], key=lambda i: len(i["citations"]))
    assert len(item["citations"]) >= 2  # a story several outlets reported
    done = brief("trace", "--date", day, "--story", item["story_id"][:10], "--config", str(days))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    others = [line for line in lines if "://" not in line]  # a link is whole on its line, to be copied
    assert max(map(cells, others)) <= 80, max(others, key=cells)
    for cited in item["citations"]:  # each link whole on one line: copied, it opens
        assert any(cited["url"] in line for line in lines), cited["url"]
    text = " ".join(w for line in lines for w in line.lstrip("│├└─ ").split())  # the tree's lines, unwrapped
    assert (
        lines[0].startswith(f"Brief of {day}, v") and f" of {len(brief_of(days, day)['items'])}" in lines[0]
    )
    assert " ".join(item["title"].split()) in text
    # the tree goes down the chain, item first, fetches last
    heads = [
        t
        for line in lines
        for t in ("story.analyzed", "story.scored", "story.clustered", "article.collected", "feed.fetched")
        if f"─ {t} " in line
    ]
    assert heads[:3] == ["story.analyzed", "story.scored", "story.clustered"]
    assert heads.count("article.collected") >= len(item["citations"])
    assert heads.count("feed.fetched") == heads.count("article.collected")
    settings = load_settings(str(days))
    chain = trace(settings.storage.event_store(), settings, date.fromisoformat(day), item["story_id"])
    analyzed = only(chain.sources, "story.analyzed")
    clustered = only(only(analyzed.sources, "story.scored").sources, "story.clustered")
    for article in clustered.sources:
        assert f"“{' '.join(article.event.payload['title'].split())}”" in text
        fetch = article.sources[0].event
        assert f"content hash {fetch.payload['content_hash']}" in text
        assert f"{fetch.payload['bytes']:,} bytes" in text
        # and its raw bytes, kept under the root: still the bytes fetched, the article's link in them
        assert fetch.payload["body"] == f"raw/date={fetch.brief_date}/{fetch.payload['content_hash']}.zst"
        raw = article.sources[0].raw  # the trace's reading of them, beside the fetch's payload
        assert isinstance(raw, dict)
        assert raw["kept at"] in text and raw["check"] == "the bytes fetched", raw
        assert raw["size"] == f"{fetch.payload['bytes']:,} bytes" and raw["item"].startswith("link at byte")
    assert "raw body: kept at: raw/date=" in text


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--date", "2025-07-01", "--story", "st-anything"], "no events for 2025-07-01"),
        (["--date", "2025-08-06", "--story", "st-nowhere"], "is not an item of the brief of 2025-08-06"),
        (["--date", "2025-08-6", "--story", "st-anything"], "is not a date"),
    ],
)
def test_an_unknown_date_or_story_is_one_line_and_exit_2(days: Path, args: list[str], said: str) -> None:
    done = brief("trace", *args, "--config", str(days))
    assert done.returncode == 2, done.stdout
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""


def test_a_corrected_item_traces_to_the_person_s_correction(real_days: Path, tmp_path: Path) -> None:
    """The brief names the corrections and retractions it applied: the chain shows who changed what."""
    config, _ = copy_real_days(real_days, tmp_path / "days")
    day = "2025-08-05"
    first, *_, last = brief_of(config, day)["items"]
    done = brief(
        "correct", first["story_id"], "--title", "A headline an editor wrote", "--note", "clearer",
        "--date", day, "--by", "ed", "--config", str(config),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = brief("retract", last["story_id"], "--note", "not news", "--date", day, "--config", str(config))
    assert done.returncode == 0, done.stderr
    settings = load_settings(str(config))
    store = settings.storage.event_store()
    published = store.read([date.fromisoformat(day)], event_types=["brief.published"])[-1]
    acts = store.read([date.fromisoformat(day)], event_types=["brief.corrected", "story.retracted"])
    assert {a.event_id for a in acts} <= set(published.source_event_ids)
    shown = brief("trace", "--date", day, "--story", first["story_id"], "--config", str(config))
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "brief.corrected" in text and "title corrected by ed" in text
    assert "A headline an editor wrote" in text and "note: clearer" in text

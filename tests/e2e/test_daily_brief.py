"""The daily brief end to end on real feed snapshots, with the real embedding model and Prefect.

The published days come from the session's one build (``real_days``); what is under test here
runs for real: a rerun of a date, and the dates run again out of order in a new store.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from storage.projections import materialize
from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.real_days import REAL_DAYS, REAL_SOURCES, copy_real_days

DAYS = REAL_DAYS
SOURCES = REAL_SOURCES
FACT_TYPES = {"article.collected", "feed.fetched", "article.corrected"}


@pytest.fixture(scope="module")
def real_run(real_days: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The session's published real days (``tests/real_days.py``), copied, and 2025-08-06 run again."""
    from flows.daily import daily_brief

    config, results = copy_real_days(real_days, tmp_path_factory.mktemp("daily") / "days")
    store = ParquetEventStore(load_settings(str(config)).storage.root)
    facts_before = Counter(e.event_type for e in store.read() if e.event_type in FACT_TYPES)
    rerun = daily_brief("2025-08-06", str(config))
    facts_after = Counter(e.event_type for e in store.read() if e.event_type in FACT_TYPES)
    briefs = {day: json.loads(Path(results[day]["files"]["json"]).read_text()) for day in DAYS}
    return {
        "store": store,
        "results": results,
        "rerun": rerun,
        "facts": (facts_before, facts_after),
        "briefs": briefs,
        "config": config,
    }


def test_rerunning_a_date_adds_no_fact_and_no_new_version(real_run: dict) -> None:
    before, after = real_run["facts"]
    assert before == after and before["article.collected"] > 100
    assert real_run["rerun"].changed is False
    assert real_run["rerun"].version == real_run["results"]["2025-08-06"]["version"] == 1


def test_every_citation_resolves_to_a_collected_article(real_run: dict) -> None:
    articles = materialize(real_run["store"], "articles")
    collected = set(articles["url"].to_list())  # the links as the outlets published them
    for brief in real_run["briefs"].values():
        assert brief["items"]
        for item in brief["items"]:
            assert item["citations"], item["title"]
            for citation in item["citations"]:
                assert citation["url"] in collected
                assert citation["source"] in SOURCES and citation["published"]


def test_no_story_twice_and_one_item_per_story(real_run: dict) -> None:
    for brief in real_run["briefs"].values():
        story_ids = [i["story_id"] for i in brief["items"]]
        assert len(story_ids) == len(set(story_ids))
        cited = [c["article_id"] for i in brief["items"] for c in i["citations"]]
        assert len(cited) == len(set(cited))


def test_gpt_oss_is_one_item_citing_three_outlets(real_run: dict) -> None:
    items = [
        i
        for i in real_run["briefs"]["2025-08-06"]["items"]
        if {"arstechnica", "techcrunch", "wired"} <= {c["source"] for c in i["citations"]}
    ]
    assert len(items) == 1
    assert "gpt-oss" in json.dumps(items[0]).lower() or "open" in items[0]["title"].lower()


def test_a_story_briefed_yesterday_is_not_new_today(real_run: dict) -> None:
    briefs = real_run["briefs"]
    for earlier, later in itertools.pairwise(DAYS):
        before = {c["article_id"] for i in briefs[earlier]["items"] for c in i["citations"]}
        after = {c["article_id"] for i in briefs[later]["items"] for c in i["citations"]}
        assert not before & after, (earlier, later)
    follow_ups = [i for i in briefs["2025-08-07"]["items"] if i["follow_up_of"]]
    assert follow_ups, "2025-08-07 continues stories of 2025-08-06 (gpt-oss, Titan report)"
    earlier_ids = {i["story_id"] for d in DAYS[:2] for i in briefs[d]["items"]}
    assert all(i["follow_up_of"] in earlier_ids for i in follow_ups)


def test_json_contract(real_run: dict) -> None:
    brief = real_run["briefs"]["2025-08-07"]
    assert brief["date"] == "2025-08-07" and brief["version"] == 1
    item = brief["items"][0]
    for key in ("story_id", "title", "category", "summary", "facts", "citations", "follow_up_of"):
        assert key in item
    assert {"url", "source", "published"} <= set(item["citations"][0])
    assert [i["section"] for i in brief["items"]][:1] == ["top"]


def test_broken_source_is_a_failed_feed_and_the_run_goes_on(real_run: dict) -> None:
    failed = real_run["store"].read(event_types=["feed.failed"])
    assert {e.payload["source"] for e in failed} == {"broken"}
    runs = materialize(real_run["store"], "runs")
    assert set(runs.filter(runs["flow"] == "daily-brief")["status"].to_list()) == {"completed"}


def _membership(brief: dict) -> list[tuple[str, ...]]:
    """Which articles each item cites (story ids of follow-ups depend on earlier briefs having run)."""
    return sorted(tuple(sorted(c["article_id"] for c in i["citations"])) for i in brief["items"])


def test_dates_run_out_of_order_give_the_same_briefs(real_run: dict, tmp_path: Path) -> None:
    from flows.daily import daily_brief

    config = tmp_path / "brief.toml"
    config.write_text(real_run["config"].read_text())
    shuffled = {day: daily_brief(day, str(config)) for day in ("2025-08-07", "2025-08-05", "2025-08-06")}
    for day in DAYS:
        brief = json.loads(Path(shuffled[day].files["json"]).read_text())
        assert _membership(brief) == _membership(real_run["briefs"][day]), day


def test_stories_keep_their_identity_across_days(real_run: dict) -> None:
    stories = materialize(real_run["store"], "stories")
    continued = stories.filter(stories["days"].list.len() > 1)
    assert continued.height >= 1
    followed = {i["story_id"] for i in real_run["briefs"]["2025-08-07"]["items"] if i["follow_up_of"]}
    assert followed, "the 7th continues no story of the earlier days"  # else the next line proves nothing
    assert followed <= set(continued["story_id"].to_list())


def test_the_smallest_config_works(tmp_path: Path, prefect_harness: None) -> None:
    from flows.daily import daily_brief
    from tests.conftest import REPO

    config = tmp_path / "brief.toml"
    feeds = (REPO / "samples" / "feeds" / "techwire").as_uri()
    config.write_text(
        f'[storage]\nroot = "{tmp_path / "root"}"\n[[sources]]\nname = "techwire"\nurl = "{feeds}/{{date}}.xml"\n'
    )
    result = daily_brief("2025-08-06", str(config))
    brief = json.loads(Path(result.files["json"]).read_text())
    assert brief["date"] == "2025-08-06" and brief["language"] == "en"
    titles = [i["title"] for i in brief["items"]]
    assert "City of Brightwater pilots AI triage in its emergency line" in titles
    html_page = Path(result.files["html"]).read_text()
    assert "<script>alert" not in html_page and "onerror=" not in html_page


def test_hostile_feed_item_is_harmless_in_every_output(tmp_path: Path, prefect_harness: None) -> None:
    """The sample techwire item carries <script>, an onerror= handler and an injection phrase."""
    from flows.daily import daily_brief
    from tests.conftest import REPO

    config = tmp_path / "brief.toml"
    feeds = (REPO / "samples" / "feeds" / "techwire").as_uri()
    # declared on-topic, so that the hostile item is published (the topic filter would drop it)
    config.write_text(
        f'[storage]\nroot = "{tmp_path / "root"}"\n[[sources]]\nname = "techwire"\nurl = "{feeds}/{{date}}.xml"\n'
        "on_topic = true\n"
    )
    result = daily_brief("2025-08-06", str(config))
    outputs = {ext: Path(path).read_text() for ext, path in result.files.items()}
    for ext, text in outputs.items():
        lowered = text.lower()
        assert "<script" not in lowered and "alert(" not in lowered and "onerror" not in lowered, ext
        assert "javascript:" not in lowered and "<iframe" not in lowered, ext
    brief = json.loads(outputs["json"])
    [odd] = [i for i in brief["items"] if i["title"].startswith("Ignore previous instructions")]
    assert odd["flags"] == ["instructions_to_ai"]
    assert (
        "instructions addressed to AI systems" in outputs["md"]
        and "instructions addressed to AI systems" in outputs["html"]
    )
    assert all(not i["flags"] for i in brief["items"] if i is not odd)


def test_chinese_instructions_in_a_feed_are_flagged_in_every_output(
    tmp_path: Path, prefect_harness: None
) -> None:
    """The Chinese twin of the test above, in a Chinese brief: the four items of the fixture feed
    that talk to an AI system are flagged and shown as data; the two that only mention a system
    prompt or an output format, as news does, are not."""
    from flows.daily import daily_brief
    from tests.conftest import REPO

    config = tmp_path / "brief.toml"
    feeds = (REPO / "tests" / "fixtures" / "feeds" / "hostile_zh").as_uri()
    config.write_text(
        f'language = "zh"\n[storage]\nroot = "{tmp_path / "root"}"\n[[sources]]\nname = "xinghe"\n'
        f'url = "{feeds}/{{date}}.xml"\non_topic = true\n'
    )
    result = daily_brief("2025-08-06", str(config))
    outputs = {ext: Path(path).read_text() for ext, path in result.files.items()}
    for ext, text in outputs.items():
        assert "<script" not in text.lower() and "alert(" not in text.lower(), ext
    brief = json.loads(outputs["json"])
    flagged = {c["url"].rsplit("/", 1)[-1] for i in brief["items"] if i["flags"] for c in i["citations"]}
    assert flagged == {"lumen-3", "yunzhou-funding", "odd-item", "qingteng-earbuds"}
    assert all(i["flags"] in ([], ["instructions_to_ai"]) for i in brief["items"])
    assert len(brief["items"]) == 6  # the two that only mention the words are published unflagged
    for ext in ("md", "html"):
        assert outputs[ext].count("原文含有针对 AI 系统的指令") == 4, ext


def test_stats_per_day_from_the_runs_projection(real_run: dict) -> None:
    from ops.stats import daily_stats

    stats = daily_stats(real_run["store"])
    rows = {r["date"].isoformat(): r for r in stats.iter_rows(named=True)}
    assert set(rows) >= set(DAYS)
    assert rows["2025-08-06"]["runs"] == 2  # the run in date order and the rerun
    for day in DAYS:
        assert rows[day]["last_status"] == "completed" and rows[day]["failed"] == 0
        assert rows[day]["feeds_failed"] == 1  # the broken source, every run
        assert rows[day]["versions_published"] == 1
        assert rows[day]["off_topic"] > 0  # stories the topic filter left out, counted per day
    # the rerun of 08-06 stored no article again (a fact is stored once), yet the day's items and
    # duplicates are the day's own: the same as the day run alone
    rerun = real_run["rerun"].run_id
    runs = materialize(real_run["store"], "runs").filter(pl.col("run_id") == rerun)
    counted = {c["event_type"]: c["n"] for c in runs["counts"][0]}
    assert counted.get("article.collected", 0) == 0
    first = real_run["results"]["2025-08-06"]["run_id"]
    stored = [e for e in real_run["store"].read(days=[date(2025, 8, 6)]) if e.run_id == first]
    assert rows["2025-08-06"]["collected"] == sum(e.event_type == "article.collected" for e in stored) > 100
    # a duplicate is a copy among the day's own articles, or an earlier day's article held again
    assert rows["2025-08-06"]["duplicates"] + rows["2025-08-06"]["earlier"] == sum(
        e.event_type == "article.duplicate_detected" for e in stored
    )


def test_the_real_days_pass_the_fact_check(real_run: dict) -> None:
    assert real_run["store"].read(event_types=["factcheck.failed"]) == []
    for brief in real_run["briefs"].values():
        assert all(i["verified"] for i in brief["items"])


def test_each_run_leaves_its_days_compacted_for_other_engines(real_run: dict) -> None:
    import duckdb

    store = real_run["store"]
    for day in store.days():
        (only,) = store.files(day)  # every segment the runs wrote is folded in
        assert only.endswith(".compacted.parquet")
    ((count,),) = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{store.events_dir}/*/*.parquet', hive_partitioning = true)"
    ).fetchall()
    assert count == store.query(lambda: store.scan()).height > 100

"""What a new user's afternoon at the desk found, over HTTP against the desk's application on the
samples' day: History's diff names the answer a person gave, not the value the question proposed;
the current version asked for by its number is the current page; a withheld day is a page that says
so, why, and links to Runs."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest

from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.e2e.test_review import DAY
from tests.e2e.test_review import setup as sample_config

LOCAL = "http://127.0.0.1:8484"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> Path:
    """The samples' day run once (a brief with open questions); each test works on a copy."""
    from flows.daily import daily_brief

    folder = tmp_path_factory.mktemp("trial-day")
    daily_brief(DAY, str(sample_config(folder)))
    return folder


@pytest.fixture
def config(built: Path, tmp_path: Path) -> Path:
    shutil.copytree(built, tmp_path / "day")
    return tmp_path / "day" / "brief.toml"


def client(config: Path, person: str = "ann"):
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    return TestClient(create_app(load_settings(str(config)), "127.0.0.1", person), base_url=LOCAL)


def csrf_of(text: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', text).group(1)


def test_the_diff_names_the_answer_given_not_the_value_the_question_proposed(config: Path) -> None:
    desk = client(config)
    asked = desk.get(f"/questions?date={DAY}").text
    store = ParquetEventStore(load_settings(str(config)).storage.root)
    questions = [e.payload for e in store.read(event_types=["confirmation.requested"])]
    # a same-story question proposes the pair's similarity; a category question its category
    given = {
        q["question_id"]: "yes"
        if q["field"] == "same_story"
        else next(c for c in q["candidates"] if c != q["value"])
        for q in questions
    }
    seen = re.search(r'name="seen" value="(\d+)"', asked).group(1)
    answers = {f"q:{qid}": answer for qid, answer in given.items()}
    done = desk.post("/questions", data={"date": DAY, "seen": seen, "csrf": csrf_of(asked), **answers})
    assert done.status_code == 200, done.text
    answered = {e.event_id: e.payload for e in store.read(event_types=["confirmation.resolved"])}
    assert sorted(a["answer"] for a in answered.values()) == sorted(given.values())
    assert all(a["answer"] != a["value"] for a in answered.values())
    diff = desk.get(f"/diff?date={DAY}&a=1&b=2")
    assert diff.status_code == 200
    causes = re.findall(
        r'<div class="cause">answered a ([\w-]+) question: “(.*?)” — ann via desk '
        r'<span class="meta"><code>confirmation\.resolved</code> (\w+)</span>',
        diff.text,
    )
    assert causes, diff.text
    for field, said, event_id in causes:  # each answer that caused a change, by the answer given
        asked = answered[event_id]["field"]
        assert (field, said) == (asked.replace("_", "-"), answered[event_id]["answer"])
    history = desk.get("/history").text  # v2's line: the answers that made it, counted, in words
    line = re.search(r'v2</a> \(\d+ items?\) <span class="summary" title="([^"]*)">(.*?)</span>', history)
    assert line is not None, history
    # the same-story answer joined two reports: the line says so, by their headlines
    joined = "joined “Northwind AI raises $120M Series B to build robot arms” and “Harbor Ventures backs Northwind”"
    assert html.unescape(line.group(2)) == f"ann: answered {len(answered)} questions; {joined} into one story"
    assert line.group(1) == "confirmation.resolved, story.merged"  # the event types, for auditors
    assert not any(f"same_story “{a['value']}”" in history for a in answered.values())


def test_the_current_version_asked_for_by_its_number_is_the_current_page(config: Path) -> None:
    desk = client(config)
    current = desk.get(f"/today?date={DAY}").text
    assert "an earlier version" not in current
    by_number = desk.get(f"/today?date={DAY}&version=1")  # v1 is the only version: the current one
    assert by_number.status_code == 200
    assert "an earlier version" not in by_number.text and "read only" not in by_number.text
    acts_of = re.compile(r'action="(/today/\w+)"')  # the page's act forms: a read-only page has none
    assert acts_of.findall(by_number.text) == acts_of.findall(current) != []
    page = desk.get(f"/today?date={DAY}").text
    story = re.findall(r'data-story="([^"]+)"', page)[0]
    seen = re.search(r'name="seen" value="(\d+)"', page).group(1)
    done = desk.post(
        "/today/correct",
        data={"story": story, "field": "title", "value": "A headline, corrected", "note": "", "date": DAY}
        | {"seen": seen, "csrf": csrf_of(page)},
    )
    assert done.status_code == 200 and "v2" in done.text
    earlier = desk.get(f"/today?date={DAY}&version=1").text  # now v1 is an earlier version
    assert "an earlier version, read only" in earlier and not acts_of.findall(earlier)
    assert "an earlier version" not in desk.get(f"/today?date={DAY}&version=2").text


def test_a_withheld_day_is_a_page_that_says_so_and_why_and_links_to_runs(config: Path) -> None:
    from flows.daily import daily_brief
    from storage.errors import BriefError

    withheld = "2025-08-05"  # the samples hold no archive for it: its run withholds the brief
    with pytest.raises(BriefError, match="withheld"):
        daily_brief(withheld, str(config))
    store = ParquetEventStore(load_settings(str(config)).storage.root)
    [event] = store.read(event_types=["brief.withheld"])
    desk = client(config)
    page = desk.get(f"/today?date={withheld}")
    assert page.status_code == 200, page.text
    text = re.sub(r"<[^>]+>", "", page.text)
    assert f"No brief is published for {withheld}" in text and "withheld it" in text
    assert event.payload["reason"] in html.unescape(text) and event.run_id in text
    assert f'href="/runs?date={withheld}"' in page.text
    assert "/today/" not in page.text  # nothing to act on
    unknown = desk.get("/today?date=2025-08-04")  # a day no run has written to: still a refusal
    assert unknown.status_code == 400 and "no brief is published for 2025-08-04" in unknown.text
    earlier = desk.get(f"/today?date={withheld}&version=1")  # a version of it: none was published
    assert earlier.status_code == 400

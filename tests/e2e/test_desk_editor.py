"""A new editor's pages at the desk: a story left out of the brief can be brought back, and the
questions about it reach it."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest

from tasks.settings import load_settings
from tests.e2e.test_desk_consistency import built, client, config, csrf_of, current, seen_of
from tests.e2e.test_review import DAY

__all__ = ["built", "config"]  # fixtures


def test_a_story_marked_off_topic_can_be_marked_back_from_todays_left_out_line(config: Path) -> None:
    desk = client(config, "ann")
    page = desk.get(f"/today?date={DAY}").text
    story = current(config)["items"][0]["story_id"]
    form = {"story": story, "mark": "off-topic", "date": DAY, "seen": seen_of(page), "csrf": csrf_of(page)}
    assert desk.post("/today/mark", data=form).status_code == 200
    assert story not in {i["story_id"] for i in current(config)["items"]}

    today = desk.get(f"/today?date={DAY}").text
    line = re.search(r'<p class="meta left-out"><a href="([^"]+)">([^<]+)</a>', today)
    assert line and "left out" in line.group(2), today[-600:]
    listed = desk.get(line.group(1).replace("&amp;", "&")).text
    forms = dict(
        re.findall(r'data-left-out="([^"]+)".*?<form method="post" action="(/today/mark)"', listed, re.S)
    )
    assert forms.get(story) == "/today/mark"
    n = int(re.match(r"\d+", line.group(2)).group(0))
    assert len(re.findall(r"data-left-out=", listed)) == n  # the line counts what the list shows

    timeline = desk.get(f"/story?id={story}").text  # its story page leads to the marks too
    assert f'href="/today/left-out?date={DAY}#{story}" class="left-out"' in timeline

    back = {**form, "mark": "core", "seen": seen_of(listed), "csrf": csrf_of(listed)}
    assert desk.post("/today/mark", data=back).status_code == 200
    assert story in {i["story_id"] for i in current(config)["items"]}
    assert story not in re.findall(r'data-left-out="([^"]+)"', desk.get(f"/today/left-out?date={DAY}").text)


def test_a_question_about_a_story_not_in_the_brief_links_to_its_story_page(config: Path) -> None:
    desk = client(config, "ann")
    asked = desk.get(f"/questions?date={DAY}").text
    pair = re.search(
        r'<fieldset class="question"[^>]*>(?:(?!</fieldset>).)*same story.*?</fieldset>', asked, re.S
    )
    assert pair, asked
    [first, second] = re.findall(r'data-about="([^"]+)"', pair.group(0))
    page = desk.get(f"/today?date={DAY}").text
    form = {"story": second, "mark": "off-topic", "date": DAY, "seen": seen_of(page), "csrf": csrf_of(page)}
    assert desk.post("/today/mark", data=form).status_code == 200
    assert second not in {i["story_id"] for i in current(config)["items"]}

    asked = desk.get(f"/questions?date={DAY}").text
    [pair] = [
        f for f in re.findall(r'<fieldset class="question".*?</fieldset>', asked, re.S) if "same story" in f
    ]
    assert f'href="/today?date={DAY}&amp;open={first}#{first}"' in pair
    assert f'href="/story?id={second}"' in pair, pair  # out of the brief: its story page, not a dead anchor


# a date, a moment's date, a story id, an event or run id: each one word that must not break
UNBROKEN = (
    r"\d{4}-\d{2}-\d{2}|\b(?:st|ev)-[0-9a-f]{8,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)
BROKEN_WORDS = """(pattern) => {
  const broken = [];
  for (const cell of document.querySelectorAll('main td, main th')) {
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      for (const m of node.data.matchAll(new RegExp(pattern, 'g'))) {
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""


@pytest.mark.skipif(
    shutil.which("chromium") is None and shutil.which("chromium-browser") is None,
    reason="Debian's chromium is not installed (.ci/run installs it)",
)
def test_wide_tables_scroll_inside_themselves_at_390_px_and_keep_dates_and_ids_whole(config: Path) -> None:
    import threading
    import time

    import uvicorn
    from playwright.sync_api import sync_playwright

    from flows.desk.app import create_app
    from tests.e2e.test_desk import CHROMIUM, free_port

    desk = client(config, "ann")
    page = desk.get(f"/today?date={DAY}").text
    story = current(config)["items"][0]["story_id"]
    form = {"story": story, "field": "title", "value": "A corrected headline", "note": "", "date": DAY}
    desk.post("/today/correct", data={**form, "seen": seen_of(page), "csrf": csrf_of(page)})
    port = free_port()
    app = create_app(load_settings(str(config)), "127.0.0.1", "ann")
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    pages = ["/history", f"/diff?date={DAY}&a=1&b=2", f"/story?id={story}", "/runs"]
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            phone = browser.new_page(viewport={"width": 390, "height": 844})
            for url in pages:
                phone.goto(f"http://127.0.0.1:{port}{url}")
                assert phone.evaluate("document.documentElement.scrollWidth") <= 390, url
                assert phone.evaluate(BROKEN_WORDS, UNBROKEN) == [], url
            # the diff at 1000 px and on the phone: every change's headline wraps at words, and no
            # cell (the "caused by" above all) is cut off at the right edge
            for width in (1000, 390):
                view = browser.new_page(viewport={"width": width, "height": 844})
                view.goto(f"http://127.0.0.1:{port}/diff?date={DAY}&a=1&b=2")
                assert view.evaluate(BROKEN_WORDS, r"[A-Za-z0-9$]{2,}") == [], width
                cut = "[...document.querySelectorAll('table.diff td')].filter(c => c.scrollWidth > c.clientWidth + 1)"
                assert view.evaluate(f"{cut}.length") == 0, width
                assert view.evaluate("document.documentElement.scrollWidth") <= width, width
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_a_reversed_diff_says_so_and_reads_from_the_older_version(config: Path) -> None:
    desk = client(config, "ann")
    page = desk.get(f"/today?date={DAY}").text
    story = current(config)["items"][0]["story_id"]
    form = {"story": story, "field": "title", "value": "A corrected headline", "note": "", "date": DAY}
    desk.post("/today/correct", data={**form, "seen": seen_of(page), "csrf": csrf_of(page)})
    forwards, backwards = (desk.get(f"/diff?date={DAY}&a={a}&b={b}").text for a, b in ((1, 2), (2, 1)))
    assert f"{DAY}: v1 → v2</h1>" in backwards and "You asked for v2 → v1, from a newer version" in backwards
    rows = re.compile(r'<tr class="[a-z]+">.*?</tr>', re.S)
    assert rows.findall(backwards) == rows.findall(forwards) != []  # the same changes, credited as they ran


def test_history_names_runs_by_a_short_id(config: Path) -> None:
    from storage.store import ParquetEventStore

    store = ParquetEventStore(load_settings(str(config)).storage.root)
    [run] = {e.run_id for e in store.read(event_types=["brief.published"])}
    shown = client(config, "ann").get("/history").text
    assert f"the run {run[:8]}" in shown and run not in shown


def test_the_two_stories_form_lists_every_article_its_answer_counts_each_with_its_headline(
    config: Path,
) -> None:
    desk = client(config, "ann")
    page = desk.get(f"/today?date={DAY}").text
    forms = re.findall(r'<form method="post" action="/today/split".*?</form>', page, re.S)
    assert forms
    for form in forms:
        story = re.search(r'name="story" value="([^"]+)"', form).group(1)
        boxes = re.findall(r'<input type="checkbox" name="apart" value="([^"]+)"> ([^<]+)</label>', form)
        sent = {"story": story, "date": DAY, "seen": seen_of(page), "csrf": csrf_of(page)}
        refused = desk.post("/today/split", data={**sent, "apart": [a for a, _ in boxes]})
        assert refused.status_code == 400
        said = re.search(r"(\d+) articles", refused.text)
        assert said and int(said.group(1)) == len(boxes), (refused.text[-400:], boxes)
        for _, label in boxes:
            source, title = label.split(" — ", 1)
            assert source and title.strip() and not title.startswith("http"), label


def test_history_says_what_a_version_counts(config: Path) -> None:
    shown = client(config, "ann").get("/history").text
    n = len(current(config)["items"])
    assert re.search(rf">v1</a> \({n} items\)", shown), shown


def test_a_page_that_cannot_be_shown_says_what_is_wrong_and_not_that_nothing_was_written(
    config: Path,
) -> None:
    desk = client(config, "ann")
    shown = desk.get("/story?id=st-nowhere")
    assert shown.status_code == 400 and "st-nowhere" in shown.text and "in the log" in shown.text
    assert "Nothing was written" not in shown.text and "Not done" not in shown.text
    page = desk.get(f"/today?date={DAY}").text
    act = {"story": "st-nowhere", "mark": "core", "date": DAY, "seen": seen_of(page), "csrf": csrf_of(page)}
    refused = desk.post("/today/mark", data=act)
    assert refused.status_code == 400 and "Nothing was written." in refused.text  # an act still says it


def test_a_lead_mark_is_said_as_marked_lead_not_as_a_relevance(config: Path) -> None:
    desk = client(config, "ann")
    page = desk.get(f"/today?date={DAY}").text
    story, title = current(config)["items"][-1]["story_id"], current(config)["items"][-1]["title"]
    form = {"story": story, "mark": "lead", "date": DAY, "seen": seen_of(page), "csrf": csrf_of(page)}
    assert desk.post("/today/mark", data=form).status_code == 200
    history = desk.get("/history").text
    assert f"ann: marked “{html.escape(title)}” lead" in history and "relevance “lead”" not in history
    diff = desk.get(f"/diff?date={DAY}&a=1&b=2").text
    causes = re.findall(r'<div class="cause">(.*?)</div>', diff, re.S)
    assert causes and all("marked lead" in c and "relevance" not in c for c in causes), causes
    decisions = desk.get(f"/story?id={story}").text.split('<table class="decisions">')[1]
    assert ">marked lead" in decisions and "relevance → lead" not in decisions
    assert f"{story}:" not in decisions and "art-" not in re.sub(r'title="[^"]*"', "", decisions)
    # the event types stay for auditors: in the line's title, in small monospace beside the ids
    assert (
        f'<span class="summary" title="article.corrected">ann: marked “{html.escape(title)}” lead</span>'
        in history
    )
    assert all("<code>article.corrected</code>" in c for c in causes)
    assert '<td title="article.corrected ' in decisions  # the story page keeps them in a title


def visible(page: str) -> str:
    """What a person reads of a page: its text without tags, attributes and the auditors' codes."""
    return re.sub(r"<[^>]+>", " ", re.sub(r"<code>.*?</code>", " ", page, flags=re.S))


def test_history_the_diff_and_a_story_say_what_people_did_in_words_not_event_types(config: Path) -> None:
    from ops.changes import EVENT_WORDS

    desk = client(config, "ann")
    items = current(config)["items"]
    first, gone = items[0]["story_id"], items[1]["story_id"]
    headline, gone_headline = items[0]["title"], items[1]["title"]

    def act(path: str, **form: str) -> None:
        page = desk.get(f"/today?date={DAY}").text
        sent = {"date": DAY, "csrf": csrf_of(page), "seen": seen_of(page), **form}
        assert desk.post(path, data=sent).status_code == 200

    act("/today/mark", story=first, mark="lead")
    act("/today/correct", story=first, field="title", value="A headline, corrected", note="")
    act("/today/retract", story=gone, note="the report was withdrawn", sure="1")
    act("/today/restore", story=gone, note="")
    version = current(config)["version"]
    pages = {
        "history": desk.get("/history").text,
        "diff": desk.get(f"/diff?date={DAY}&a=1&b={version}").text,
        "first": desk.get(f"/story?id={first}").text,
        "gone": desk.get(f"/story?id={gone}").text,
    }
    for name, page in pages.items():
        shown = visible(page)
        assert not [kind for kind in EVENT_WORDS if kind in shown], (name, shown[-2000:])
    said = visible(pages["history"])
    for words in (
        f"ann: corrected the headline of “{headline}” to “A headline, corrected”",
        f"ann: retracted “{gone_headline}” (note: “the report was withdrawn”)",
        f"ann: undid the retraction of “{gone_headline}”",
    ):
        assert words in said, said
    assert "undid the retraction: back in the brief" in visible(pages["gone"])
    assert "corrected the headline to “A headline, corrected” — ann via desk" in visible(pages["diff"])
    assert "corrected the headline to “A headline, corrected”" in visible(pages["first"])

"""The desk in an editor's words, over HTTP against its application on the samples' day: History's
line for a version names the story an act was about by its headline."""

from __future__ import annotations

import html
import re
from datetime import date
from pathlib import Path

from tests.e2e.test_desk_consistency import built, client, config, csrf_of, current, hook, seen_of
from tests.e2e.test_review import DAY
from tests.factories import far_hold_until

__all__ = ["built", "config", "hook"]  # fixtures


def act(desk, path: str, **fields: str):
    page = desk.get(f"/today?date={DAY}").text
    return desk.post(path, data={"date": DAY, "seen": seen_of(page), "csrf": csrf_of(page), **fields})


def test_history_names_the_story_a_mark_a_correction_and_a_retraction_were_about(config: Path) -> None:
    desk = client(config, "ann")
    first, second = current(config)["items"][:2]
    assert act(desk, "/today/mark", story=second["story_id"], mark="lead").status_code == 200
    fixed = act(desk, "/today/correct", story=first["story_id"], field="title", value="A plainer headline")
    assert fixed.status_code == 200, fixed.text
    assert (
        act(desk, "/today/retract", story=second["story_id"], note="withdrawn", sure="1").status_code == 200
    )
    history = html.unescape(desk.get("/history").text)
    assert f"ann: marked “{second['title']}” lead" in history
    assert f"ann: corrected the headline of “{first['title']}” to “A plainer headline”" in history
    assert f"ann: retracted “{second['title']}” (note: “withdrawn”)" in history


def test_a_refused_correction_or_undo_names_the_headline_not_the_story_id(config: Path) -> None:
    desk = client(config, "ann")
    item = current(config)["items"][0]
    same = act(desk, "/today/correct", story=item["story_id"], field="title", value=item["title"])
    said = html.unescape(same.text)
    assert same.status_code == 400
    assert f"the headline of “{item['title']}” already reads so" in said and item["story_id"] not in said
    empty = html.unescape(act(desk, "/today/correct", story=item["story_id"], field="title", value=" ").text)
    assert "the new headline is empty" in empty
    undo = act(desk, "/today/restore", story=item["story_id"])
    said = html.unescape(undo.text)
    assert undo.status_code == 400
    assert f"“{item['title']}” is not retracted" in said and item["story_id"] not in said


def test_hold_says_in_words_why_each_message_went_and_how_long_acts_are_gathered(config: Path, hook) -> None:
    config.write_text(
        config.read_text()
        + '[delivery]\nhold = true\nreview_channel = "editors"\nupdate_after = 1\n'
        + f'hold_until = "{far_hold_until()}"\n'
        f'[[delivery.channels]]\nname = "editors"\nurl = "{hook.url("/editors")}"\n'
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\nupdates = true\n'
    )
    from flows.commands.options import open_resources
    from flows.deliver import resend

    resend(*open_resources(str(config)), date.fromisoformat(DAY))  # held: the editors get a copy
    desk = client(config, "ann")
    page = desk.get(f"/hold?date={DAY}").text
    approved = desk.post("/hold/approve", data={"date": DAY, "seen": seen_of(page), "csrf": csrf_of(page)})
    assert approved.status_code == 200, approved.text
    story = current(config)["items"][0]["story_id"]
    assert act(desk, "/today/retract", story=story, note="withdrawn", sure="1").status_code == 200
    act(desk, "/today/mark", story=current(config)["items"][0]["story_id"], mark="lead")
    shown = html.unescape(desk.get(f"/hold?date={DAY}").text)
    rows = re.findall(r"<tr><td>(\w+)</td><td>v(\d+)</td><td>(\w+)</td><td[^>]*>([^<]+)</td>", shown)
    assert ("readers", "1", "brief", "approved by ann") in rows, rows
    assert any(
        kind == "update" and why == "after ann approved the day's brief" for _, _, kind, why in rows
    ), rows
    assert ("editors", "1", "review", "a copy for the editors to review") in rows, rows
    assert "direct" not in re.sub(r'title="[^"]*"', "", shown)
    assert "update_after" not in shown and "acts are gathered for 1 minute before an update goes out" in shown


def test_a_stale_form_reads_back_what_the_editor_asked_for_in_plain_words(config: Path) -> None:
    ann, bo = client(config, "ann"), client(config, "bo")
    ann_page = ann.get(f"/today?date={DAY}").text
    story = current(config)["items"][0]["story_id"]
    assert act(bo, "/today/correct", story=story, field="title", value="Bo's headline").status_code == 200
    form = {"story": story, "field": "title", "value": "Ann's headline", "date": DAY, "seen": "1"}
    stale = ann.post("/today/correct", data={**form, "csrf": csrf_of(ann_page)})
    assert stale.status_code == 409
    asked = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", stale.text))
    assert asked == {"item": "Bo&#39;s headline", "what": "headline", "new text": "Ann&#39;s headline"}, asked
    assert "Your act" not in stale.text and "What you asked for" in stale.text


def test_a_stale_mark_reads_back_the_mark_only_not_the_same_story_choice_its_form_also_holds(
    config: Path,
) -> None:
    """An item's marks share one form with "same story as": a mark button sends the form's select
    too. Refused as stale, the page lists the mark and the item, by headline, and not "the same
    story as"; applied again, it sends the mark's fields only."""
    ann, bo = client(config, "ann"), client(config, "bo")
    ann_page = ann.get(f"/today?date={DAY}").text
    items = current(config)["items"]
    story = next(
        i
        for i in items
        if re.search(rf'name="story" value="{i["story_id"]}">\s*<label>Same story as', ann_page)
    )
    block = ann_page.split(f'<section class="item" id="{story["story_id"]}"', 1)[1]
    other = re.search(r'<select name="other"><option value="([^"]+)"', block).group(1)
    assert act(bo, "/today/mark", story=story["story_id"], mark="related").status_code == 200
    # what a browser sends for the "lead" button of that form: its fields, the select's first option
    sent = {"csrf": csrf_of(ann_page), "date": DAY, "seen": seen_of(ann_page), "story": story["story_id"]}
    stale = ann.post("/today/mark", data={**sent, "other": other, "other_id": "", "mark": "lead"})
    assert stale.status_code == 409, stale.text
    asked = [(k, html.unescape(v)) for k, v in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", stale.text)]
    assert asked == [("item", story["title"]), ("mark", "lead")], asked
    assert "the same story as" not in stale.text and other not in stale.text.split("What you asked for")[1]
    again = re.search(
        r'<form method="post" action="/today/mark" class="again">(.*?)</form>', stale.text, re.S
    )
    assert again is not None and 'name="other"' not in again.group(1), stale.text


def test_a_storys_decisions_say_who_in_words_and_keep_event_types_and_models_in_titles(config: Path) -> None:
    desk = client(config, "ann")
    story = current(config)["items"][0]["story_id"]
    page = desk.get(f"/story?id={story}").text
    decisions = page.split('<table class="decisions">')[1]
    shown = re.sub(r'title="[^"]*"', "", decisions)
    assert "the daily run" in shown and "(model" not in shown
    assert "story.scored" not in re.sub(r"<[^>]+>", "", shown)
    assert re.search(r'<td title="story\.scored [0-9a-f]+[^"]*; model \w+">the daily run</td>', decisions), (
        decisions
    )


def test_the_runs_page_counts_events_in_words_with_the_type_in_a_title(config: Path) -> None:
    page = client(config, "ann").get(f"/runs?date={DAY}").text
    assert '<div class="meta" title="brief.published">versions published: 1</div>' in page, page
    assert '<div class="meta" title="article.collected">articles collected: ' in page
    assert "story.clustered:" not in page and "feed.fetched:" not in page


def test_the_edit_forms_are_labelled_in_plain_words(config: Path) -> None:
    page = client(config, "ann").get(f"/today?date={DAY}").text
    assert "regression case" not in page and "keep it as an example later scoring is checked against" in page
    assert "another story's id" not in page and "st-…" not in page


def test_each_answer_has_one_radio_and_questions_about_a_retracted_story_are_not_asked(config: Path) -> None:
    desk = client(config, "ann")
    asked = desk.get(f"/questions?date={DAY}").text
    assert "brief review" not in asked
    fieldsets = re.findall(r'<fieldset class="question" data-question="([^"]+)".*?</fieldset>', asked, re.S)
    blocks = re.findall(r'<fieldset class="question".*?</fieldset>', asked, re.S)
    assert blocks and len(blocks) == len(fieldsets)
    for block in blocks:
        answers = re.findall(r'<label><input type="radio"[^>]*>(.*?)</label>', block, re.S)
        said = [re.sub(r"<[^>]+>|\d+\) | \(default\)", "", a).strip() for a in answers]
        assert len(said) == len(set(said)), said  # no answer offered twice
        assert len(re.findall(r"\(default\)", block)) == 1 and len(re.findall(r" checked", block)) == 1
    today = desk.get(f"/today?date={DAY}").text
    assert f">{len(blocks)} open question" in today
    # a question about a story, once that story is retracted, is asked no more, nor counted
    about = re.findall(r'data-about="([^"]+)"', blocks[0])
    assert about, blocks[0]
    assert act(desk, "/today/retract", story=about[0], note="withdrawn", sure="1").status_code == 200
    again = desk.get(f"/questions?date={DAY}").text
    left = re.findall(r'<fieldset class="question" data-question="([^"]+)"', again)
    assert fieldsets[0] not in left and "about a retracted story" in again
    shown = desk.get(f"/today?date={DAY}").text
    assert (f">{len(left)} open question" in shown) if left else "open question" not in shown
    # brief review asks what the desk asks: one function of the service decides which are moot
    from ops import acts
    from ops.workspace import resources_of
    from tasks.settings import load_settings

    settings = load_settings(str(config))
    cli = acts.open_questions(settings, resources_of(settings), date.fromisoformat(DAY))
    assert sorted(cli["question_id"].to_list()) == sorted(left)


def test_version_0_a_story_without_an_id_and_an_earlier_version_say_what_they_are(config: Path) -> None:
    desk = client(config, "ann")
    act(desk, "/today/mark", story=current(config)["items"][-1]["story_id"], mark="lead")  # v2
    zero = desk.get(f"/today?date={DAY}&version=0")
    assert (
        zero.status_code == 400
        and "numbered from 1" in zero.text
        and "no brief is published" not in zero.text
    )
    gone = desk.get(f"/today?date={DAY}&version=7")
    assert gone.status_code == 400 and "it has v1 to v2" in gone.text
    nameless = desk.get("/story")
    assert (
        nameless.status_code == 400 and "name a story" in nameless.text and "no story ''" not in nameless.text
    )
    earlier = desk.get(f"/today?date={DAY}&version=1").text
    assert "(an earlier version, read only: " in earlier and "go to the current version</a>" in earlier
    assert "read only; " not in earlier


def test_an_unknown_page_asked_for_by_a_browser_is_a_page_of_the_desk_and_one_line_otherwise(
    config: Path,
) -> None:
    desk = client(config, "ann")
    shown = desk.get("/nowhere", headers={"Accept": "text/html,application/xhtml+xml"})
    assert shown.status_code == 404 and shown.headers["content-type"].startswith("text/html")
    assert '<a href="/today">Today</a>' in shown.text and "the desk has no page /nowhere" in shown.text
    plain = desk.get("/nowhere", headers={"Accept": "*/*"})
    assert plain.status_code == 404 and plain.text.strip() == "not found: the desk has no page /nowhere"
    posted = desk.post("/nowhere", data={}, headers={"Accept": "text/html"})
    assert posted.status_code in (403, 404) and "<nav" not in posted.text


def test_questions_for_a_day_without_a_brief_are_refused_as_today_is(config: Path) -> None:
    desk = client(config, "ann")
    today, asked = desk.get("/today?date=2025-08-16"), desk.get("/questions?date=2025-08-16")
    assert today.status_code == asked.status_code == 400
    assert (
        "no brief is published for 2025-08-16" in today.text
        and "no brief is published for 2025-08-16" in asked.text
    )


def test_an_undone_retraction_says_its_note_as_a_note_in_the_diff(config: Path) -> None:
    """The undo's note is said as its note, "undid the retraction (note: “…”)", not as if it were
    what was retracted."""
    desk = client(config, "ann")
    story = current(config)["items"][0]["story_id"]
    assert act(desk, "/today/retract", story=story, note="council says no", sure="1").status_code == 200
    page = desk.get(f"/today?date={DAY}").text
    retraction = re.search(
        rf'name="story" value="{story}"><input type="hidden" name="retraction" value="([^"]+)"', page
    )
    assert retraction is not None, page
    undone = act(
        desk, "/today/restore", story=story, retraction=retraction.group(1), note="pilot confirmed after all"
    )
    assert undone.status_code == 200, undone.text
    version = current(config)["version"]
    diff = desk.get(f"/diff?date={DAY}&a={version - 1}&b={version}")  # the undo's version: the item back
    assert diff.status_code == 200, diff.text
    said = html.unescape(diff.text)
    assert "undid the retraction (note: “pilot confirmed after all”)" in said, said
    assert "undid the retraction “pilot confirmed after all”" not in said


def test_the_diff_says_a_same_story_link_as_one_item_joining_another(config: Path) -> None:
    """Two items said to be the same story: the diff says the one that left went into the other,
    and the other was joined by it, not "marked … sources 1 -> 2" and "removed … #5"."""
    desk = client(config, "ann")
    items = {i["title"]: i["story_id"] for i in current(config)["items"]}
    kept = next(t for t in items if t.startswith("Northwind AI raises"))
    gone = next(t for t in items if t.startswith("Harbor Ventures backs"))
    linked = act(desk, "/today/same", story=items[kept], other=items[gone])
    assert linked.status_code == 200, linked.text
    version = current(config)["version"]
    assert [i["title"] for i in current(config)["items"]].count(gone) == 0
    diff = desk.get(f"/diff?date={DAY}&a={version - 1}&b={version}")
    assert diff.status_code == 200, diff.text
    rows = {
        html.unescape(title): (html.unescape(label), html.unescape(detail))
        for label, title, detail in re.findall(
            r'<tr class="\w+"><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td>', diff.text
        )
    }
    assert rows[kept] == ("joined", f"sources 1 -> 2: “{gone}” joined it as the same story"), rows
    label, detail = rows[gone]
    assert label == "went into" and detail.startswith(f"“{kept}”, as the same story (it was "), rows

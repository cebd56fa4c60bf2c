"""The desk honest under concurrent use, over HTTP against the desk's application on a real day's
store: a form made from an earlier version is refused when its item changed since (409, naming what
changed and who changed it) and can be applied again on purpose; history credits a change to the
acts between its two versions; Hold names the version it approves."""

from __future__ import annotations

import html
import json
import re
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest

from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.e2e.test_review import DAY
from tests.e2e.test_review import setup as sample_config
from tests.factories import far_hold_until

LOCAL = "http://127.0.0.1:8484"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> Path:
    """The samples' day run once (a brief with open questions); each test works on a copy."""
    from flows.daily import daily_brief

    folder = tmp_path_factory.mktemp("consistency-day")
    daily_brief(DAY, str(sample_config(folder)))
    return folder


@pytest.fixture
def config(built: Path, tmp_path: Path) -> Path:
    shutil.copytree(built, tmp_path / "day")
    return tmp_path / "day" / "brief.toml"


@pytest.fixture
def hook():
    from tests.delivery_servers import Webhook

    server = Webhook().start()
    yield server
    server.stop()


def store_of(config: Path) -> ParquetEventStore:
    return ParquetEventStore(load_settings(str(config)).storage.root)


def current(config: Path) -> dict:
    return json.loads((Path(store_of(config).base) / "briefs" / f"{DAY}.json").read_text())


def client(config: Path, person: str):
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    return TestClient(create_app(load_settings(str(config)), "127.0.0.1", person), base_url=LOCAL)


def csrf_of(text: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', text).group(1)


def seen_of(text: str) -> str:
    """The version the page's forms were made from."""
    found = set(re.findall(r'name="seen" value="(\d+)"', text))
    assert len(found) == 1, found
    return found.pop()


def again_form(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The refusal page's form that applies the act again: its action and fields."""
    form = re.search(r'<form method="post" action="([^"]+)" class="again">(.*?)</form>', text, re.S)
    assert form is not None, text
    fields = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(2))
    return form.group(1), [(k, html.unescape(v)) for k, v in fields]


def test_a_stale_form_is_refused_with_what_changed_and_by_whom_and_is_applied_again_on_purpose(
    config: Path,
) -> None:
    ann, bo = client(config, "ann"), client(config, "bo")
    ann_page = ann.get(f"/today?date={DAY}").text  # ann's tab, opened at v1
    bo_page = bo.get(f"/today?date={DAY}").text
    assert seen_of(ann_page) == seen_of(bo_page) == "1"
    story, other, third = [i["story_id"] for i in current(config)["items"]][:3]

    form = {"story": story, "field": "title", "note": "", "date": DAY, "seen": "1"}
    first = bo.post("/today/correct", data={**form, "value": "Bo's headline", "csrf": csrf_of(bo_page)})
    assert first.status_code == 200 and "correction recorded: v2" in first.text

    # ann's tab still shows v1: her headline would silently replace bo's
    stale = ann.post("/today/correct", data={**form, "value": "Ann's headline", "csrf": csrf_of(ann_page)})
    assert stale.status_code == 409, stale.text
    assert "made from <b>v1</b>" in stale.text and "at <b>v2</b> now" in stale.text
    assert "its headline" in stale.text
    # what the editor's act was is said before the button that applies it again
    assert stale.text.index('<dl class="form-sent">') < stale.text.index("anyway</button>")
    [by] = re.findall(r'<ul class="changed-by"><li>(.*?)</li></ul>', stale.text)
    [bos] = store_of(config).read(event_types=["brief.corrected"])
    assert "corrected the headline to" in by and "bo via desk" in by and "(v2)" in by
    assert "brief.corrected" not in by  # the act in words, not its event type
    assert html.unescape(by).count("Bo's headline") == 1
    assert current(config)["version"] == 2 and current(config)["items"][0]["title"] == "Bo's headline"
    assert [e.event_id for e in store_of(config).read(event_types=["brief.corrected"])] == [bos.event_id]

    # applied again on purpose: the same act, made from the version it now sees
    action, fields = again_form(stale.text)
    assert action == "/today/correct" and ("seen", "2") in fields and ("value", "Ann's headline") in fields
    done = ann.post(action, data=dict(fields))
    assert done.status_code == 200 and "correction recorded: v3" in done.text
    assert current(config)["items"][0]["title"] == "Ann's headline"

    # a mark on a story another tab retracted is refused the same way, not "recorded"
    ann_page = ann.get(f"/today?date={DAY}").text
    assert seen_of(ann_page) == "3"
    retracted = bo.post(
        "/today/retract",
        data={
            "story": other,
            "note": "withdrawn",
            "sure": "1",
            "date": DAY,
            "seen": "3",
            "csrf": csrf_of(bo_page),
        },
    )
    assert retracted.status_code == 200 and "retraction recorded: v4" in retracted.text
    marked = ann.post(
        "/today/mark",
        data={"story": other, "mark": "lead", "date": DAY, "seen": "3", "csrf": csrf_of(ann_page)},
    )
    assert marked.status_code == 409 and "it was retracted" in marked.text
    assert "retracted (note: “" in marked.text and "bo via desk" in marked.text
    assert not [
        e for e in store_of(config).read(event_types=["article.corrected"]) if e.payload.get("by") == "ann"
    ]

    # a form made from v3 about an item nobody touched since is not stale: recorded
    kept = ann.post(
        "/today/mark",
        data={"story": third, "mark": "related", "date": DAY, "seen": "3", "csrf": csrf_of(ann_page)},
    )
    assert kept.status_code == 200 and "mark recorded: v5" in kept.text
    # a version that does not exist yet is one line, not a 500
    ahead = ann.post(
        "/today/mark",
        data={"story": third, "mark": "core", "date": DAY, "seen": "99", "csrf": csrf_of(ann_page)},
    )
    assert ahead.status_code == 409 and "v99" in ahead.text
    assert (
        ann.post("/today/mark", data={"story": third, "seen": "²", "csrf": csrf_of(ann_page)}).status_code
        == 400
    )


def test_the_command_line_acts_on_the_current_version_and_ops_refuses_a_stale_one(config: Path) -> None:
    from ops import acts
    from ops.workspace import resources_of
    from storage.errors import StaleAct

    settings = load_settings(str(config))
    resources = resources_of(settings)
    day = date.fromisoformat(DAY)
    story = current(config)["items"][0]["story_id"]
    acts.correct(settings, resources, acts.Act(day, "bo"), story, {"title": "From the command line"})
    with pytest.raises(StaleAct) as refused:
        acts.correct(settings, resources, acts.Act(day, "ann", "desk", seen=1), story, {"title": "From v1"})
    assert (refused.value.seen, refused.value.current) == (1, 2)
    assert any("corrected the headline to" in line and "— bo at" in line for line in refused.value.acts)
    done = acts.correct(
        settings, resources, acts.Act(day, "ann", "desk", seen=2), story, {"title": "From v2"}
    )
    assert done.version == 3 and current(config)["items"][0]["title"] == "From v2"


def test_the_diff_credits_the_acts_between_its_versions_and_a_retraction_with_the_items_it_moved(
    config: Path,
) -> None:
    desk = client(config, "ann")
    items = current(config)["items"]
    # a retraction that moves items up: one with another item after it in its section
    gone = next(
        i for k, i in enumerate(items) if any(j.get("section") == i.get("section") for j in items[k + 1 :])
    )
    first = next(i for i in items if i["story_id"] != gone["story_id"])

    def act(path: str, **form: str) -> None:
        page = desk.get(f"/today?date={DAY}").text
        done = desk.post(path, data={"date": DAY, "csrf": csrf_of(page), "seen": seen_of(page), **form})
        assert done.status_code == 200, done.text

    act("/today/correct", story=first["story_id"], field="title", value="Corrected first", note="")  # v2
    act("/today/retract", story=gone["story_id"], note="the report was withdrawn", sure="1")  # v3
    act("/today/correct", story=first["story_id"], field="summary", value="Corrected later", note="")  # v4
    store = store_of(config)
    [title, summary] = store.read(event_types=["brief.corrected"])
    [retraction] = store.read(event_types=["story.retracted"])

    diff = desk.get(f"/diff?date={DAY}&a=2&b=3").text
    rows = re.findall(r'<tr class="([a-z]+)">(.*?)</tr>', diff, re.S)
    assert title.event_id not in diff and summary.event_id not in diff  # not between v2 and v3
    [removed] = [row for kind, row in rows if kind == "removed"]
    assert retraction.event_id in removed
    moved = [row for kind, row in rows if kind == "moved"]
    assert moved and all(retraction.event_id in row and "the run" not in row for row in moved)
    assert all("moved as other items changed" in row for row in moved)

    # history says in a line what made each version
    lines = dict(
        re.findall(
            r'version=(\d+)"[^>]*>v\d+</a> \(\d+ items?\) <span class="summary"[^>]*>(.*?)</span>',
            desk.get("/history").text,
        )
    )
    assert lines["1"].startswith("the run ")
    named = "“[^”]+”"  # the story's headline as it read before the act
    assert re.fullmatch(
        f"ann: corrected the headline of {named} to “Corrected first”", html.unescape(lines["2"])
    )
    assert re.fullmatch(
        rf"ann: retracted {named} \(note: “the report was withdrawn”\)", html.unescape(lines["3"])
    )
    assert re.fullmatch(
        f"ann: corrected the summary of {named} to “Corrected later”", html.unescape(lines["4"])
    )
    whole = desk.get(f"/diff?date={DAY}&a=1&b=4").text
    assert all(e.event_id in whole for e in (title, summary, retraction))
    assert desk.get(f"/diff?date={DAY}&a=1&b=²").status_code == 400


def test_an_item_that_only_moved_is_credited_to_what_moved_it_not_to_its_own_acts(config: Path) -> None:
    desk = client(config, "ann")
    items = current(config)["items"]
    k, gone = next(
        (k, i)
        for k, i in enumerate(items)
        if any(j.get("section") == i.get("section") for j in items[k + 1 :])
    )
    below = next(j for j in items[k + 1 :] if j.get("section") == gone.get("section"))

    def act(path: str, **form: str) -> None:
        page = desk.get(f"/today?date={DAY}").text
        done = desk.post(path, data={"date": DAY, "csrf": csrf_of(page), "seen": seen_of(page), **form})
        assert done.status_code == 200, done.text

    act("/today/correct", story=below["story_id"], field="title", value="Reworded below", note="")  # v2
    act("/today/retract", story=gone["story_id"], note="the report was withdrawn", sure="1")  # v3
    store = store_of(config)
    [title] = store.read(event_types=["brief.corrected"])
    [retraction] = store.read(event_types=["story.retracted"])
    rows = re.findall(r'<tr class="([a-z]+)">(.*?)</tr>', desk.get(f"/diff?date={DAY}&a=1&b=3").text, re.S)
    [moved] = [row for kind, row in rows if kind == "moved" and "<td>Reworded below</td>" in row]
    assert retraction.event_id in moved and title.event_id not in moved
    assert f"moved as other items changed: {html.escape(gone['title'], quote=True)} left" in moved
    [reworded] = [row for kind, row in rows if kind == "reworded"]
    assert title.event_id in reworded


def test_hold_names_the_current_held_version_and_approves_only_the_version_it_showed(
    config: Path, hook
) -> None:
    from flows.commands.options import open_resources
    from flows.deliver import resend

    config.write_text(
        config.read_text()
        + '[delivery]\nhold = true\nreview_channel = "editors"\n'
        + f'hold_until = "{far_hold_until()}"\n'
        f'[[delivery.channels]]\nname = "editors"\nurl = "{hook.url("/editors")}"\n'
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\n'
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    desk = client(config, "ann")
    hold_page = desk.get(f"/hold?date={DAY}").text
    assert "<b>v1</b> is held" in hold_page and "Approve v1 as ann" in hold_page

    today = desk.get(f"/today?date={DAY}").text
    story = current(config)["items"][0]["story_id"]
    done = desk.post(
        "/today/correct",
        data={
            "story": story,
            "field": "title",
            "value": "Held, corrected",
            "note": "",
            "date": DAY,
            "seen": "1",
            "csrf": csrf_of(today),
        },
    )
    assert done.status_code == 200 and "v2" in done.text

    # the page opened before the correction approves v1: refused, nothing approved or sent
    refused = desk.post(
        "/hold/approve", data={"date": DAY, "seen": seen_of(hold_page), "csrf": csrf_of(hold_page)}
    )
    assert (
        refused.status_code == 409
        and "corrected the headline" in refused.text
        and "ann via desk" in refused.text
    )
    assert f'<a href="/hold?date={DAY}">Look at v2 again</a>' in refused.text  # back to Hold, not Today
    assert store_of(config).read(event_types=["brief.approved"]) == []
    assert "/readers" not in [path for path, _ in hook.posts]

    hold_page = desk.get(f"/hold?date={DAY}").text
    assert "<b>v2</b> is held for review (held since v1" in hold_page and "Approve v2 as ann" in hold_page
    approved = desk.post(
        "/hold/approve", data={"date": DAY, "seen": seen_of(hold_page), "csrf": csrf_of(hold_page)}
    )
    assert approved.status_code == 200 and "approved v2; sent to readers" in approved.text
    [event] = store_of(config).read(event_types=["brief.approved"])
    assert event.payload["version"] == 2
    [(_, sent)] = [(p, b) for p, b in hook.posts if p == "/readers"]
    assert "Held, corrected" in sent["message"]


def coalescing(config: Path, hook, minutes: float) -> Path:
    config.write_text(
        config.read_text() + f"[delivery]\nupdate_after = {minutes}\n"
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\nupdates = true\n'
        "backoff_s = 0.05\n"
    )
    return config


def readers_got(config: Path) -> list[tuple[int, str]]:
    return [
        (e.payload["version"], e.payload["kind"])
        for e in store_of(config).read(event_types=["brief.delivered"])
        if e.payload["channel"] == "readers"
    ]


def test_acts_within_the_update_window_reach_readers_as_one_update_with_the_last_version(
    config: Path, hook
) -> None:
    from flows.commands.options import open_resources
    from flows.deliver import resend
    from storage.events import utcnow
    from tests.cli import brief

    coalescing(config, hook, 10)
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    assert readers_got(config) == [(1, "brief")]
    desk = client(config, "ann")
    story, other = [i["story_id"] for i in current(config)["items"]][:2]
    start = utcnow()

    acts = [
        ("/today/correct", {"story": story, "field": "title", "value": "First fix", "note": ""}),
        ("/today/correct", {"story": story, "field": "title", "value": "Second fix", "note": ""}),
        ("/today/mark", {"story": other, "mark": "related"}),
        ("/today/correct", {"story": story, "field": "summary", "value": "The summary, fixed", "note": ""}),
    ]
    for path, form in acts:  # four acts within ten minutes: readers get nothing yet
        page = desk.get(f"/today?date={DAY}").text
        done = desk.post(path, data={**form, "date": DAY, "seen": seen_of(page), "csrf": csrf_of(page)})
        assert done.status_code == 200 and "the update to readers goes out at" in done.text, done.text
    assert current(config)["version"] == 5 and len(hook.posts) == 1
    assert 'class="note pending"' in desk.get(f"/today?date={DAY}").text
    assert "Send the pending update now" in desk.get(f"/hold?date={DAY}").text

    # with the desk closed, 'brief deliver --due' (the deliver-held deployment's act) sends it once
    # the window has closed, and not before
    def due(minutes: int) -> str:
        moment = (start + timedelta(minutes=minutes)).isoformat()
        done = brief("deliver", "--due", "--now", moment, "--config", str(config))
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "no update is due" in due(5) and len(hook.posts) == 1
    assert "v5 sent to readers" in due(11)
    assert readers_got(config) == [(1, "brief"), (5, "update")]
    [(_, update)] = [(p, b) for p, b in hook.posts[1:]]
    assert update["title"] == f"Updated: AI brief — {DAY}"  # no version number for readers
    assert all(words in update["message"] for words in ("Second fix", "The summary, fixed"))
    assert "no update is due" in due(30) and len(hook.posts) == 2  # nothing twice

    # a retraction goes out at once, with the correction pending before it
    page = desk.get(f"/today?date={DAY}").text
    form = {"story": story, "field": "title", "value": "Third fix", "note": "", "date": DAY}
    desk.post("/today/correct", data={**form, "seen": seen_of(page), "csrf": csrf_of(page)})
    assert len(hook.posts) == 2
    page = desk.get(f"/today?date={DAY}").text
    gone = desk.post(
        "/today/retract",
        data={
            "story": other,
            "note": "withdrawn",
            "sure": "1",
            "date": DAY,
            "seen": seen_of(page),
            "csrf": csrf_of(page),
        },
    )
    assert gone.status_code == 200 and "sent to readers" in gone.text
    assert readers_got(config) == [(1, "brief"), (5, "update"), (7, "update")]
    assert "Third fix" in hook.posts[2][1]["message"] and "withdrawn" in hook.posts[2][1]["message"]


def test_the_desk_sends_the_update_when_its_window_closes_on_its_own_timer(config: Path, hook) -> None:
    import time

    from fastapi.testclient import TestClient

    from flows.commands.options import open_resources
    from flows.deliver import resend
    from flows.desk.app import create_app

    coalescing(config, hook, 0.1)  # a window of 6 s
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    story = current(config)["items"][0]["story_id"]
    app = create_app(load_settings(str(config)), "127.0.0.1", "ann", flush_every=0.2)
    with TestClient(app, base_url=LOCAL) as desk:  # serving: the timer runs
        page = desk.get(f"/today?date={DAY}").text
        form = {"story": story, "field": "title", "note": "", "date": DAY, "csrf": csrf_of(page)}
        desk.post("/today/correct", data={**form, "value": "One"})
        desk.post("/today/correct", data={**form, "value": "Two"})
        assert readers_got(config) == [(1, "brief")]  # within the window
        deadline = time.monotonic() + 30
        while len(readers_got(config)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert readers_got(config) == [(1, "brief"), (3, "update")]
    assert "Two" in hook.posts[-1][1]["message"]


def test_after_an_act_the_page_returns_to_the_item_its_panel_open_and_today_says_where_the_brief_stands(
    config: Path, hook
) -> None:
    from flows.commands.options import open_resources
    from flows.deliver import resend

    config.write_text(
        config.read_text()
        + '[delivery]\nhold = true\nreview_channel = "editors"\n'
        + f'hold_until = "{far_hold_until()}"\n'
        f'[[delivery.channels]]\nname = "editors"\nurl = "{hook.url("/editors")}"\n'
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\n'
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    desk = client(config, "ann")
    page = desk.get(f"/today?date={DAY}").text
    status = re.search(r'<p class="meta status">(.*?)</p>', page).group(1)
    assert "Held for review" in status and f'href="/hold?date={DAY}"' in status

    items = current(config)["items"]
    leads = {i["story_id"] for i in items if i.get("lead")}
    shown = re.findall(r'<section class="item" id="([^"]+)".*?<h3.*?</h3>', page, re.S)
    assert len(shown) == len(items)
    for story in shown:
        head = re.search(rf'id="{story}".*?(<h3.*?</h3>)', page, re.S).group(1)
        assert ('class="tag lead"' in head) == (story in leads)

    # "same story as" offers a few likely items, not every other one; the Northwind pair first
    northwind = [i["story_id"] for i in items if "Northwind" in i["title"]]
    for story in shown:
        form = re.search(rf'id="{story}".*?<form method="post" action="/today/same".*?</form>', page, re.S)
        options = re.findall(r'<option value="([^"]+)">', form.group(0))
        assert len(options) == min(5, len(items) - 1) and story not in options
        if story in northwind:
            assert options[0] == next(p for p in northwind if p != story)

    story = items[-1]["story_id"]
    done = desk.post(
        "/today/correct",
        data={
            "story": story,
            "field": "summary",
            "value": "A summary, fixed",
            "note": "",
            "date": DAY,
            "seen": seen_of(page),
            "csrf": csrf_of(page),
        },
        follow_redirects=False,
    )
    assert done.status_code == 303 and done.headers["location"].endswith(f"&open={story}#{story}")
    back = desk.get(done.headers["location"]).text
    assert re.findall(r'<details class="actions" open>', back) == ['<details class="actions" open>']
    assert re.search(rf'id="{story}"[^>]*>.*?<details class="actions" open>', back, re.S)

    # a story id typed instead of a candidate picked
    first, second = northwind
    joined = desk.post(
        "/today/same",
        data={
            "story": first,
            "other": "",
            "other_id": f" {second} ",
            "date": DAY,
            "seen": seen_of(back),
            "csrf": csrf_of(back),
        },
    )
    assert joined.status_code == 200 and "same story recorded" in joined.text
    [merged] = store_of(config).read(event_types=["story.merged"])
    assert merged.payload["person"] == "ann"


def test_the_story_page_is_headed_by_its_headline_and_shows_a_repeated_decision_once(config: Path) -> None:
    desk = client(config, "ann")
    story, other = [i["story_id"] for i in current(config)["items"]][:2]
    for k in range(3):  # each act re-renders the day: the story is scored again, the same way
        page = desk.get(f"/today?date={DAY}").text
        form = {"story": other, "field": "title", "value": f"Take {k}", "note": "", "date": DAY}
        assert (
            desk.post(
                "/today/correct", data={**form, "seen": seen_of(page), "csrf": csrf_of(page)}
            ).status_code
            == 200
        )
    scored = [e for e in store_of(config).read(event_types=["story.scored"]) if e.subject_id == story]
    assert len(scored) >= 4 and len({json.dumps(e.payload, sort_keys=True) for e in scored}) < len(scored)

    shown = desk.get(f"/story?id={story}").text
    title = next(i["title"] for i in current(config)["items"] if i["story_id"] == story)
    assert re.search(r"<h1>(.*?)</h1>", shown).group(1) == html.escape(title, quote=True).replace(
        "&#x27;", "&#39;"
    )
    table = re.search(r'<table class="decisions">(.*?)</table>', shown, re.S).group(1)
    rows = re.findall(r"<tr[^>]*><td>.*?</tr>", table, re.S)
    scored_rows = [r for r in rows if "story.scored" in r]
    assert len(scored_rows) < len(scored)  # repeats folded
    assert all(e.event_id in table for e in scored)  # every event still named
    assert any("×" in r for r in scored_rows)


def test_a_same_story_act_at_the_desk_settles_the_open_question_about_that_pair(
    config: Path,
) -> None:
    desk = client(config, "ann")
    asked = desk.get(f"/questions?date={DAY}").text
    assert "Are these the same story?" in asked
    first, second = [i["story_id"] for i in current(config)["items"] if "Northwind" in i["title"]]
    page = desk.get(f"/today?date={DAY}").text
    done = desk.post(
        "/today/same",
        data={"story": first, "other": second, "date": DAY, "seen": seen_of(page), "csrf": csrf_of(page)},
    )
    assert done.status_code == 200 and "same story recorded: v2" in done.text
    assert "Are these the same story?" not in desk.get(f"/questions?date={DAY}").text
    [merged] = store_of(config).read(event_types=["story.merged"])
    [settled] = store_of(config).read(event_types=["confirmation.resolved"])
    assert settled.payload["field"] == "same_story" and settled.payload["answer"] == "yes"
    assert (settled.payload["person"], settled.payload["via"]) == ("ann", "desk")
    assert settled.source_event_ids == (merged.event_id,)
    assert len(store_of(config).read(event_types=["story.merged"])) == 1  # the answer adds no second link
    others = [p for p in re.findall(r"<legend>(.*?)</legend>", asked, re.S) if "same story" not in p]
    assert len(re.findall(r"<legend>", desk.get(f"/questions?date={DAY}").text)) == len(others)


def test_a_two_stories_act_at_the_desk_answers_the_open_question_about_a_pair_it_parts(config: Path) -> None:
    from ops import acts
    from ops.workspace import resources_of
    from tasks import steps

    first, second = [i for i in current(config)["items"] if "Northwind" in i["title"]]
    (own,) = [c["article_id"] for c in second["citations"]]
    # the two joined by a link recorded without answering the question (as an older desk did)
    settings = load_settings(str(config))
    ctx = acts.context(settings, resources_of(settings), date.fromisoformat(DAY), "test-link")
    ctx.store.append(steps.same_story(ctx, [first["story_id"], second["story_id"]], "bo"))
    steps.rebrief(ctx)
    desk = client(config, "ann")
    assert "Are these the same story?" in desk.get(f"/questions?date={DAY}").text
    [together] = [i for i in current(config)["items"] if "Northwind" in i["title"]]
    page = desk.get(f"/today?date={DAY}").text
    done = desk.post(
        "/today/split",
        data={
            "story": together["story_id"],
            "apart": own,
            "date": DAY,
            "seen": seen_of(page),
            "csrf": csrf_of(page),
        },
    )
    assert done.status_code == 200 and "two stories recorded" in done.text
    assert "Are these the same story?" not in desk.get(f"/questions?date={DAY}").text
    [settled] = store_of(config).read(event_types=["confirmation.resolved"])
    assert settled.payload["answer"] == "no" and settled.payload["person"] == "ann"
    assert own in settled.payload["subject"].split("|")


def test_each_question_links_to_the_items_it_asks_about(config: Path) -> None:
    desk = client(config, "ann")
    asked = desk.get(f"/questions?date={DAY}").text
    items = {i["story_id"]: i["title"] for i in current(config)["items"]}
    fieldsets = re.findall(r'<fieldset class="question".*?</fieldset>', asked, re.S)
    assert len(fieldsets) >= 2
    for fieldset in fieldsets:
        linked = re.findall(rf'href="/today\?date={DAY}&amp;open=([^"#]+)#\1"', fieldset)
        assert linked and set(linked) <= set(items), fieldset
        if "same story" in fieldset:
            assert len(linked) == 2 and all("Northwind" in items[s] for s in linked)
        else:
            assert len(linked) == 1 and html.escape(items[linked[0]], quote=False) in fieldset


@pytest.mark.skipif(
    shutil.which("chromium") is None and shutil.which("chromium-browser") is None,
    reason="Debian's chromium is not installed (.ci/run installs it)",
)
def test_every_page_fits_a_390_px_phone_screen(config: Path) -> None:
    import threading
    import time

    import uvicorn
    from playwright.sync_api import sync_playwright

    from flows.desk.app import create_app
    from tests.e2e.test_desk import CHROMIUM, free_port

    desk = client(config, "ann")
    page = desk.get(f"/today?date={DAY}").text
    story = current(config)["items"][0]["story_id"]
    form = {"story": story, "field": "title", "value": "A headline " + "long" * 30, "note": "", "date": DAY}
    desk.post("/today/correct", data={**form, "seen": seen_of(page), "csrf": csrf_of(page)})
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(load_settings(str(config)), "127.0.0.1", "ann"), port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    pages = [
        f"/today?date={DAY}",
        f"/questions?date={DAY}",
        f"/hold?date={DAY}",
        "/history",
        f"/diff?date={DAY}&a=1&b=2",
        f"/story?id={story}",
        "/search?q=Pippin",
        "/sources",
        "/runs",
    ]
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            phone = browser.new_page(viewport={"width": 390, "height": 844})
            for url in pages:
                phone.goto(base + url)
                phone.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
                assert phone.evaluate("document.documentElement.scrollWidth") <= 390, url
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_answers_from_a_page_older_than_the_brief_approve_nothing_and_an_approval_names_its_version(
    config: Path, hook
) -> None:
    """Answering a held brief's questions approves it: the version the questions page showed, never
    one corrected since by someone else; an approval that names no version is refused."""
    from flows.commands.options import open_resources
    from flows.deliver import resend

    config.write_text(
        config.read_text()
        + '[delivery]\nhold = true\nreview_channel = "editors"\n'
        + f'hold_until = "{far_hold_until()}"\n'
        f'[[delivery.channels]]\nname = "editors"\nurl = "{hook.url("/editors")}"\n'
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\n'
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    bob, ann = client(config, "bob"), client(config, "ann")
    asked = bob.get(f"/questions?date={DAY}").text
    assert seen_of(asked) == "1"
    today = ann.get(f"/today?date={DAY}").text
    story = current(config)["items"][0]["story_id"]
    corrected = ann.post(
        "/today/correct",
        data={"story": story, "field": "title", "value": "Headline bob never saw", "note": "", "date": DAY}
        | {"seen": seen_of(today), "csrf": csrf_of(today)},
    )
    assert corrected.status_code == 200 and "v2" in corrected.text

    answers = dict(re.findall(r'name="(q:[^"]+)" value="([^"]*)"', asked)) or {
        name: "" for name in re.findall(r'name="(q:[^"]+)"', asked)
    }
    assert answers, asked
    refused = bob.post("/questions", data={"date": DAY, "seen": "1", "csrf": csrf_of(asked), **answers})
    assert refused.status_code == 409 and "ann via desk" in refused.text
    assert store_of(config).read(event_types=["brief.approved", "confirmation.resolved"]) == []
    assert "/readers" not in [path for path, _ in hook.posts]

    hold_page = ann.get(f"/hold?date={DAY}").text
    unnamed = ann.post("/hold/approve", data={"date": DAY, "csrf": csrf_of(hold_page)})
    assert unnamed.status_code == 400 and "names no version" in unnamed.text
    assert store_of(config).read(event_types=["brief.approved"]) == []


def test_x_forwarded_for_is_believed_only_behind_a_configured_proxy(config: Path) -> None:
    from flows.desk.app import create_app
    from flows.desk.server import server_config

    plain = load_settings(str(config))
    assert server_config(create_app(plain, "127.0.0.1", "ann"), plain).proxy_headers is False
    config.write_text(config.read_text() + '[desk]\nhosts = ["https://desk.example.org"]\n')
    proxied = load_settings(str(config))
    assert server_config(create_app(proxied, "127.0.0.1", "ann"), proxied).proxy_headers is True


def test_a_retraction_is_undone_by_an_event_of_its_own_and_the_item_comes_back(config: Path) -> None:
    desk = client(config, "ann")
    items = current(config)["items"]
    story = items[1]["story_id"]

    def act(path: str, expect: int = 200, **form: str):
        page = desk.get(f"/today?date={DAY}").text
        answer = desk.post(path, data={"date": DAY, "csrf": csrf_of(page), "seen": seen_of(page), **form})
        assert answer.status_code == expect, answer.text
        return answer

    unsure = act("/today/retract", expect=400, story=story, note="the report was withdrawn")  # no "yes" tick
    assert 'tick "yes" to retract' in html.unescape(unsure.text) and current(config)["version"] == 1
    act("/today/retract", story=story, note="the report was withdrawn", sure="1")  # v2: the item leaves
    assert story not in [i["story_id"] for i in current(config)["items"]]
    page = desk.get(f"/today?date={DAY}").text
    undo = re.search(rf'<div class="retracted-item" id="{story}".*?</div>', page, re.S)
    assert undo is not None and 'action="/today/restore"' in undo.group(0) and "Undo the retraction" in page
    back = act("/today/restore", story=story, note="the outlet stands by it")  # v3: it comes back
    assert "retraction undone: v3" in back.text and f'id="{story}"' in back.text
    brief = current(config)
    assert brief["version"] == 3 and story in [i["story_id"] for i in brief["items"]]
    assert not brief.get("retracted") and "Undo the retraction" not in back.text
    [item] = [i for i in brief["items"] if i["story_id"] == story]
    before = next(i for i in items if i["story_id"] == story)
    assert (item["title"], item["citations"]) == (before["title"], before["citations"])

    store = store_of(config)
    [retraction] = store.read(event_types=["story.retracted"])
    [undone] = store.read(event_types=["story.restored"])
    assert retraction.schema_version == 2 and "follows" not in retraction.payload  # a first one, as in v1
    assert undone.payload == {
        "story_id": story,
        "retraction": retraction.event_id,
        "note": "the outlet stands by it",
        "by": "ann",
        "via": "desk",
    }
    # history: the version that brought it back says so, and the diff credits the undo
    assert re.search(
        r"ann: undid the retraction of “[^”]+” \(note: “the outlet stands by it”\)",
        html.unescape(desk.get("/history").text),
    )
    diff = desk.get(f"/diff?date={DAY}&a=2&b=3").text
    added = [
        row for kind, row in re.findall(r'<tr class="([a-z]+)">(.*?)</tr>', diff, re.S) if kind == "added"
    ]
    assert len(added) == 1 and undone.event_id in added[0]
    assert "undid the retraction: back in the brief" in desk.get(f"/story?id={story}").text

    # retracted again (the same note, the same person): a fact of its own, and it leaves again
    act("/today/retract", story=story, note="the report was withdrawn", sure="1")  # v4
    again = [
        e for e in store_of(config).read(event_types=["story.retracted"]) if e.event_id != retraction.event_id
    ]
    assert [e.payload.get("follows") for e in again] == [undone.event_id]
    assert story not in [i["story_id"] for i in current(config)["items"]]
    # the undo form names the retraction it undoes; one naming the first, undone since, is refused
    assert f'name="retraction" value="{again[0].event_id}"' in desk.get(f"/today?date={DAY}").text
    written = {e.event_id for e in store_of(config).read()}
    refused = act("/today/restore", expect=409, story=story, retraction=retraction.event_id)
    said = html.unescape(refused.text)
    assert "you meant to undo no longer stands" in said and retraction.event_id not in said
    assert {e.event_id for e in store_of(config).read()} == written and current(config)["version"] == 4
    older = desk.get(f"/today?date={DAY}").text  # the v4 page, its undo form kept
    act("/today/restore", story=story, retraction=again[0].event_id)  # v5: undoing the second retraction
    assert [e.payload["retraction"] for e in store_of(config).read(event_types=["story.restored"])][-1] == (
        again[0].event_id
    )
    assert story in [i["story_id"] for i in current(config)["items"]]
    # nothing to undo: one line, nothing written
    refused = act("/today/restore", expect=400, story=story)
    assert "no retraction to undo" in refused.text and current(config)["version"] == 5
    # the v4 page's undo sent again: the same one line, no offer to apply it anyway
    form = {"story": story, "retraction": again[0].event_id, "note": ""}
    resent = desk.post("/today/restore", data={"date": DAY, "csrf": csrf_of(older), "seen": "4", **form})
    assert resent.status_code == 400 and "no retraction to undo" in resent.text
    assert 'class="again"' not in resent.text and current(config)["version"] == 5


def test_while_a_brief_is_held_the_editors_get_one_review_copy_for_several_acts(config: Path, hook) -> None:
    from flows.commands.options import open_resources
    from flows.deliver import resend
    from storage.events import utcnow
    from tests.cli import brief

    config.write_text(
        config.read_text()
        + '[delivery]\nhold = true\nreview_channel = "editors"\n'
        + f'hold_until = "{far_hold_until()}"\n'
        f'[[delivery.channels]]\nname = "editors"\nurl = "{hook.url("/editors")}"\nbackoff_s = 0.05\n'
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\nbackoff_s = 0.05\n'
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    assert [p for p, _ in hook.posts] == ["/editors"]  # held: v1 to the editors at once
    desk = client(config, "ann")
    story, other = [i["story_id"] for i in current(config)["items"]][:2]
    start = utcnow()
    for path, form in (
        ("/today/correct", {"story": story, "field": "title", "value": "Held, fixed once", "note": ""}),
        ("/today/mark", {"story": other, "mark": "related"}),
        ("/today/correct", {"story": story, "field": "title", "value": "Held, fixed twice", "note": ""}),
    ):  # three acts while held, within the window: the editors get nothing more yet
        page = desk.get(f"/today?date={DAY}").text
        done = desk.post(path, data={**form, "date": DAY, "seen": seen_of(page), "csrf": csrf_of(page)})
        assert done.status_code == 200 and "the review copy to the editors goes out at" in done.text, (
            done.text
        )
    assert current(config)["version"] == 4 and [p for p, _ in hook.posts] == ["/editors"]
    assert "A review copy to the editors is pending" in desk.get(f"/today?date={DAY}").text
    assert "A review copy is pending" in desk.get(f"/hold?date={DAY}").text

    def due(minutes: int) -> None:
        moment = (start + timedelta(minutes=minutes)).isoformat()
        done = brief("deliver", "--due", "--now", moment, "--config", str(config))
        assert done.returncode == 0, done.stderr

    due(5)
    assert [p for p, _ in hook.posts] == ["/editors"]
    due(11)  # the window closed: one review copy, of the version current then, for the three acts
    assert [p for p, _ in hook.posts] == ["/editors", "/editors"]
    assert "Held, fixed twice" in hook.posts[1][1]["message"]
    reviewed = [
        e.payload["version"]
        for e in store_of(config).read(event_types=["brief.delivered"])
        if e.payload["kind"] == "review"
    ]
    assert reviewed == [1, 4]
    due(30)
    assert len(hook.posts) == 2  # nothing twice, and the readers still wait for an approval


def test_an_act_that_would_leave_the_brief_unpublishable_is_refused_and_nothing_is_recorded(
    config: Path,
) -> None:
    """min_core at the day's core count: retracting a core item would withhold the next version, so
    the retraction is refused before it is written, at the desk and through ops.acts alike; an act
    the brief survives (a correction) is recorded with its version."""
    from ops import acts

    brief = current(config)
    core = [i["story_id"] for i in brief["items"] if i.get("relevance") == "core"]
    assert core, brief["items"]
    config.write_text(config.read_text() + f"[delivery]\nmin_core = {len(core)}\n")
    before = {e.event_id for e in store_of(config).read()}
    desk = client(config, "ann")
    page = desk.get(f"/today?date={DAY}").text
    refused = desk.post(
        "/today/retract",
        data={
            "date": DAY,
            "csrf": csrf_of(page),
            "seen": seen_of(page),
            "story": core[0],
            "note": "withdrawn",
            "sure": "1",
        },
    )
    assert refused.status_code == 400, refused.text
    said = html.unescape(refused.text)
    assert f"after this retract the brief of {DAY} would have {len(core) - 1} core stor" in said
    assert f"fewer than min_core = {len(core)}" in said and f"the brief stays at v{brief['version']}" in said
    assert "Nothing was written." in said
    assert {e.event_id for e in store_of(config).read()} == before  # the page's words are true
    assert current(config)["version"] == brief["version"]

    from flows.commands.options import open_resources

    settings, resources = open_resources(str(config))
    with pytest.raises(acts.UnfitAct, match="min_core"):
        acts.retract(settings, resources, acts.Act(date.fromisoformat(DAY), "bo"), core[0], "withdrawn")
    assert {e.event_id for e in store_of(config).read()} == before
    # an act the brief survives: recorded, and its version published
    done = acts.correct(
        settings, resources, acts.Act(date.fromisoformat(DAY), "bo"), core[0], {"title": "Fixed"}
    )
    assert done.version == brief["version"] + 1 and [
        i["title"] for i in current(config)["items"] if i["story_id"] == core[0]
    ] == ["Fixed"]
    assert len(store_of(config).read(event_types=["brief.corrected"])) == 1


def test_a_brief_released_at_its_deadline_is_no_longer_held_after_a_later_act(config: Path, hook) -> None:
    """Held a day ago until the midnight since passed: released to readers at its deadline; a
    correction then makes v2, which readers get as one update when its window closes. The day is then
    due for nothing more, Today says it was released, not held, and Hold offers no approval."""
    from flows.commands.options import open_resources
    from ops import acts
    from storage.events import utcnow
    from tasks import steps

    config.write_text(
        config.read_text() + '[delivery]\nhold = true\nreview_channel = "editors"\nhold_until = "00:00"\n'
        "update_after = 10\n"
        f'[[delivery.channels]]\nname = "editors"\nurl = "{hook.url("/editors")}"\nbackoff_s = 0.05\n'
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\nbackoff_s = 0.05\n'
    )
    settings, resources = open_resources(str(config))
    day = date.fromisoformat(DAY)
    start = utcnow()
    steps.deliver_day(
        acts.context(settings, resources, day, "deliver"), now=start - timedelta(hours=25)
    )  # held
    acts.release_due(settings, resources, start, say=lambda line: None)  # its deadline passed: v1 to readers
    assert [p for p, _ in hook.posts] == ["/editors", "/readers"]
    desk = client(config, "ann")
    story = current(config)["items"][0]["story_id"]
    page = desk.get(f"/today?date={DAY}").text
    done = desk.post(
        "/today/correct",
        data={
            "story": story,
            "field": "title",
            "value": "Fixed after the deadline",
            "note": "",
            "date": DAY,
            "seen": seen_of(page),
            "csrf": csrf_of(page),
        },
    )
    assert done.status_code == 200 and "the update to readers goes out at" in done.text, done.text
    today = html.unescape(desk.get(f"/today?date={DAY}").text)
    assert "Held for review" not in today and "readers have nothing yet" not in today
    assert "Released at its deadline, unapproved (v1) · readers have v1" in today
    assert "An update to readers is pending" in today and "review copy" not in today
    on_hold = html.unescape(desk.get(f"/hold?date={DAY}").text)
    assert "v1 went to readers at its deadline" in on_hold and "Approve v2" not in on_hold
    assert "An update is pending" in on_hold
    store = store_of(config)
    [due] = steps.updates_due(store, settings.delivery, start, [day]).values()
    later = due + timedelta(minutes=1)
    acts.release_updates(
        settings, resources, later, say=lambda line: None
    )  # the window closed: v2 as an update
    assert [p for p, _ in hook.posts] == ["/editors", "/readers", "/readers"]
    assert "Fixed after the deadline" in hook.posts[-1][1]["message"]
    assert steps.updates_due(store, settings.delivery, later, [day]) == {}  # nothing due, ever again
    assert steps.updates_due(store, settings.delivery, later + timedelta(days=1), [day]) == {}


def test_a_send_that_fails_names_its_channels_and_reasons_on_the_page(config: Path) -> None:
    """The readers' channel listens nowhere: "send now" and an act's banner say which channel was not
    reached and why, not "nothing to send"."""
    from tests.delivery_servers import free_port

    nowhere = f"json://127.0.0.1:{free_port()}/readers"
    config.write_text(
        config.read_text() + f'[[delivery.channels]]\nname = "readers"\nurl = "{nowhere}"\nretries = 0\n'
    )
    desk = client(config, "ann")
    page = desk.get(f"/today?date={DAY}").text  # Hold shows no form: nothing is pending yet
    sent = desk.post("/hold/send", data={"date": DAY, "csrf": csrf_of(page)})
    said = html.unescape(sent.text)
    assert sent.status_code == 200 and "nothing to send" not in said, said
    assert re.search(r"not sent: v1; FAILED to reach readers \([^)]+\)", said), said
    story = current(config)["items"][0]["story_id"]
    page = desk.get(f"/today?date={DAY}").text
    done = desk.post(
        "/today/correct",
        data={"story": story, "field": "title", "value": "Fixed", "note": "", "date": DAY}
        | {"seen": seen_of(page), "csrf": csrf_of(page)},
    )
    said = html.unescape(done.text)
    assert re.search(r"correction recorded: v2; FAILED to reach readers \([^)]+\)", said), said


def test_an_act_that_changes_nothing_says_unchanged_as_the_command_line_does(config: Path) -> None:
    """A core story marked core again: the mark is recorded, the brief reads as it did, and the
    line says "nothing changed: v1 already reads so", not a version it did not make."""
    desk = client(config, "ann")
    [core] = [i["story_id"] for i in current(config)["items"] if i.get("relevance") == "core"][:1]
    page = desk.get(f"/today?date={DAY}").text
    done = desk.post(
        "/today/mark",
        data={"story": core, "mark": "core", "date": DAY, "seen": seen_of(page), "csrf": csrf_of(page)},
    )
    assert done.status_code == 200 and "mark recorded; nothing changed: v1 already reads so" in done.text, (
        done.text
    )
    assert current(config)["version"] == 1


def test_an_act_that_changed_nothing_is_no_cause_of_the_next_version(config: Path) -> None:
    """A core story marked core again changes nothing ("nothing changed: v1 already reads so"); its headline corrected next
    makes v2. The diff v1 → v2 credits the correction alone, and history's line for v2 names it."""
    desk = client(config, "ann")
    [core] = [i["story_id"] for i in current(config)["items"] if i.get("relevance") == "core"][:1]

    def act(path: str, said: str, **form: str) -> None:
        page = desk.get(f"/today?date={DAY}").text
        done = desk.post(path, data={"date": DAY, "csrf": csrf_of(page), "seen": seen_of(page), **form})
        assert done.status_code == 200 and said in done.text, done.text

    act("/today/mark", "mark recorded; nothing changed: v1 already reads so", story=core, mark="core")
    act("/today/correct", "recorded: v2", story=core, field="title", value="A headline of its own", note="")
    store = store_of(config)
    marks = [e for e in store.read(event_types=["article.corrected"]) if e.payload.get("by") == "ann"]
    [correction] = store.read(event_types=["brief.corrected"])
    assert marks, "the mark was recorded"

    diff = desk.get(f"/diff?date={DAY}&a=1&b=2").text
    causes = re.findall(r'<div class="cause">(.*?)</div>', diff, re.S)
    assert [c for c in causes if correction.event_id in c], diff
    assert not [c for c in causes if any(m.event_id in c for m in marks)], causes
    line = re.search(
        r'version=2"[^>]*>v2</a> \(\d+ items?\) <span class="summary"[^>]*>(.*?)</span>',
        desk.get("/history").text,
    )
    assert line is not None
    said = html.unescape(line.group(1))
    assert re.fullmatch(r"ann: corrected the headline of “[^”]+” to “A headline of its own”", said), said


def test_an_act_whose_rebrief_failed_after_it_was_recorded_is_a_cause_of_the_next_version(
    config: Path,
) -> None:
    """A correction is recorded, then its run fails writing the new version's files (a folder stands
    where v2.md goes): no version, and no record that the brief was unchanged. The next act makes v2:
    the diff v1 → v2, and history's line for v2, credit both, the failed one first."""
    desk = client(config, "ann")
    [first, second] = [i["story_id"] for i in current(config)["items"]][:2]
    blocker = Path(store_of(config).base) / "briefs" / DAY / "v2.md"
    blocker.mkdir(parents=True)

    def act(story: str, value: str) -> None:
        page = desk.get(f"/today?date={DAY}").text
        form = {"date": DAY, "csrf": csrf_of(page), "seen": seen_of(page), "story": story}
        desk.post("/today/correct", data={**form, "field": "title", "value": value, "note": ""})

    with pytest.raises(OSError):
        act(first, "A headline its run never published")
    assert current(config)["version"] == 1
    blocker.rmdir()
    act(second, "A headline published in v2")
    assert current(config)["version"] == 2
    corrections = {
        e.payload["value"]: e.event_id for e in store_of(config).read(event_types=["brief.corrected"])
    }
    assert set(corrections) == {"A headline its run never published", "A headline published in v2"}

    diff = desk.get(f"/diff?date={DAY}&a=1&b=2").text
    causes = re.findall(r'<div class="cause">(.*?)</div>', diff, re.S)
    for event_id in corrections.values():
        assert [c for c in causes if event_id in c], (event_id, causes)
    line = re.search(
        r'version=2"[^>]*>v2</a> \(\d+ items?\) <span class="summary"[^>]*>(.*?)</span>',
        desk.get("/history").text,
    )
    assert line is not None
    said = html.unescape(line.group(1))
    assert said == "ann: made 2 corrections", said


def test_a_mark_on_a_story_not_in_the_brief_is_credited_to_the_version_that_brings_it_in(
    config: Path,
) -> None:
    """A story retracted (v2) is marked core: the brief reads as before ("nothing changed: v2 already reads so"), the mark
    binds the versions after it. The retraction undone brings the story back in v3: the diff v2 → v3
    credits the story's return to the undo and to the mark, and history's line for v3 counts both;
    the mark is no cause of v2, made before it."""
    desk = client(config, "ann")
    [story] = [i["story_id"] for i in current(config)["items"] if not i.get("lead")][:1]

    def act(path: str, said: str, **form: str) -> None:
        page = desk.get(f"/today?date={DAY}").text
        sent = {"date": DAY, "csrf": csrf_of(page), "seen": seen_of(page), "story": story, **form}
        done = desk.post(path, data=sent)
        assert done.status_code == 200 and said in done.text, done.text

    act("/today/retract", "retraction recorded: v2", note="withdrawn by the outlet", sure="1")
    act("/today/mark", "mark recorded; nothing changed: v2 already reads so", mark="core")
    act("/today/restore", "retraction undone: v3", note="")
    store = store_of(config)
    [mark] = [e for e in store.read(event_types=["article.corrected"]) if e.payload.get("by") == "ann"]
    [undo] = store.read(event_types=["story.restored"])
    assert story in {i["story_id"] for i in current(config)["items"]}

    diff = desk.get(f"/diff?date={DAY}&a=2&b=3").text
    causes = " ".join(re.findall(r'<div class="cause">(.*?)</div>', diff, re.S))
    assert mark.event_id in causes and undo.event_id in causes, diff
    assert mark.event_id not in desk.get(f"/diff?date={DAY}&a=1&b=2").text
    line = re.search(
        r'version=3"[^>]*>v3</a> \(\d+ items?\) <span class="summary"[^>]*>(.*?)</span>',
        desk.get("/history").text,
    )
    assert line is not None
    said = html.unescape(line.group(1))
    assert re.fullmatch(r"ann: marked “[^”]+” core \(and 1 more\)", said), said


def feed_titles(config: Path) -> list[str]:
    """The entries' titles of the readers' feed (``briefs/feed.xml``)."""
    feed = (Path(store_of(config).base) / "briefs" / "feed.xml").read_text()
    return [html.unescape(t) for t in re.findall(r"<entry>.*?<title>(.*?)</title>", feed, re.S)]


def test_the_feed_leaves_out_a_held_brief_until_it_is_approved(config: Path, hook) -> None:
    from flows.commands.options import open_resources
    from flows.deliver import resend

    config.write_text(
        config.read_text()
        + '[delivery]\nhold = true\nreview_channel = "editors"\n'
        + f'hold_until = "{far_hold_until()}"\n'
        f'[[delivery.channels]]\nname = "editors"\nurl = "{hook.url("/editors")}"\n'
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\n'
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    desk = client(config, "ann")
    today = desk.get(f"/today?date={DAY}").text
    story = current(config)["items"][0]["story_id"]
    form = {"story": story, "field": "title", "value": "Held, corrected", "note": ""}
    done = desk.post("/today/correct", data={**form, "date": DAY, "seen": "1", "csrf": csrf_of(today)})
    assert done.status_code == 200 and current(config)["version"] == 2
    assert not [t for t in feed_titles(config) if DAY in t]  # held, unapproved: not in the readers' feed

    hold_page = desk.get(f"/hold?date={DAY}").text
    approved = desk.post(
        "/hold/approve", data={"date": DAY, "seen": seen_of(hold_page), "csrf": csrf_of(hold_page)}
    )
    assert approved.status_code == 200 and "approved v2; sent to readers" in approved.text
    [entry] = [t for t in feed_titles(config) if DAY in t]
    assert entry.startswith(f"AI brief — {DAY}: ")  # no "(v2)": the first version readers get


def test_a_correction_made_while_held_is_no_public_correction_but_one_made_after_is(
    config: Path, hook
) -> None:
    from flows.commands.options import open_resources
    from flows.deliver import resend

    config.write_text(
        config.read_text()
        + '[delivery]\nhold = true\nreview_channel = "editors"\n'
        + f'hold_until = "{far_hold_until()}"\nupdate_after = 0\n'
        f'[[delivery.channels]]\nname = "editors"\nurl = "{hook.url("/editors")}"\n'
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\n'
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    desk = client(config, "ann")
    story = current(config)["items"][0]["story_id"]

    def correct(value: str) -> None:
        page = desk.get(f"/today?date={DAY}").text
        form = {"story": story, "field": "title", "value": value, "note": "", "date": DAY}
        done = desk.post("/today/correct", data={**form, "seen": seen_of(page), "csrf": csrf_of(page)})
        assert done.status_code == 200, done.text

    correct("Held, corrected")
    assert current(config)["items"][0]["title"] == "Held, corrected"
    assert not current(config)["items"][0].get("correction")  # no reader saw the headline it replaced
    hold_page = desk.get(f"/hold?date={DAY}").text
    approved = desk.post(
        "/hold/approve", data={"date": DAY, "seen": seen_of(hold_page), "csrf": csrf_of(hold_page)}
    )
    assert approved.status_code == 200 and "sent to readers" in approved.text
    [first] = [b["message"] for p, b in hook.posts if p == "/readers"]
    assert "Held, corrected" in first and "Correction" not in first
    assert "Correction" not in "".join(t for t in feed_titles(config))
    assert "Correction" not in (Path(store_of(config).base) / "briefs" / "feed.xml").read_text()

    correct("Released, corrected")  # readers had "Held, corrected": the line names it
    line = current(config)["items"][0]["correction"]
    assert line == "Correction: the headline read “Held, corrected”.", line
    [_, update] = [b["message"] for p, b in hook.posts if p == "/readers"]
    assert "the headline read “Held, corrected”" in update
    assert [t for t in feed_titles(config) if DAY in t] == [f"AI brief — {DAY}: Released, corrected"]


def test_send_now_on_a_stale_hold_page_sends_the_current_version_and_its_button_names_none(
    config: Path, hook
) -> None:
    """ "Send now" is about when, not what: the pending update is the version current when it goes
    out, whatever page the button was on; so the button names no version, and the line says which went."""
    from flows.commands.options import open_resources
    from flows.deliver import resend

    coalescing(config, hook, 10)
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    desk = client(config, "ann")
    story = current(config)["items"][0]["story_id"]

    def correct(value: str) -> None:
        page = desk.get(f"/today?date={DAY}").text
        form = {"story": story, "field": "title", "value": value, "note": "", "date": DAY}
        done = desk.post("/today/correct", data={**form, "seen": seen_of(page), "csrf": csrf_of(page)})
        assert done.status_code == 200 and "the update to readers goes out at" in done.text, done.text

    correct("First fix")
    stale = desk.get(f"/hold?date={DAY}").text  # opened at v2
    assert "Send the pending update now" in stale and not re.search(r"Send v\d", stale)
    correct("Second fix")  # v3, after the page was opened
    sent = desk.post("/hold/send", data={"date": DAY, "csrf": csrf_of(stale)})
    assert sent.status_code == 200 and "update sent: v3; sent to readers" in html.unescape(sent.text)
    assert readers_got(config) == [(1, "brief"), (3, "update")]
    assert "Second fix" in hook.posts[-1][1]["message"]

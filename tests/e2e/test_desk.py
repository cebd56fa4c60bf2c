"""The editor's desk over a real day's store: its HTTP rules (TestClient), and an editor's acts in
Debian's Chromium driven by playwright against a real ``brief desk`` server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.cli import brief
from tests.e2e.test_review import DAY
from tests.e2e.test_review import setup as sample_config
from tests.factories import far_hold_until

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> Path:
    """The samples' day run once (a brief with open questions); each test works on a copy."""
    from flows.daily import daily_brief

    folder = tmp_path_factory.mktemp("desk-day")
    daily_brief(DAY, str(sample_config(folder)))
    return folder


@pytest.fixture
def config(built: Path, tmp_path: Path) -> Path:
    shutil.copytree(built, tmp_path / "day")
    return tmp_path / "day" / "brief.toml"


LOCAL = "http://127.0.0.1:8484"  # how a person on this machine names the desk


def store_of(config: Path) -> ParquetEventStore:
    return ParquetEventStore(load_settings(str(config)).storage.root)


def client(config: Path, person: str = "ann"):
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    return TestClient(create_app(load_settings(str(config)), "127.0.0.1", person), base_url=LOCAL)


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def stories_of(html: str) -> list[str]:
    return re.findall(r'data-story="([^"]+)"', html)


def test_the_http_rules_csrf_headers_cookies_and_escaping(config: Path) -> None:
    desk = client(config)
    page = desk.get(f"/today?date={DAY}")
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    cookie = page.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert "<script>" not in page.text.replace('<script src="/static/desk.js" defer></script>', "")
    # Today waits for no script (its load is its HTML and the stylesheet); the one script is the
    # Questions page's; the desk's own static files may be kept by the browser, pages never
    assert "<script" not in page.text and "no-store" in page.headers["cache-control"]
    assert '<script src="/static/desk.js" defer></script>' in desk.get(f"/questions?date={DAY}").text
    for name in ("desk.css", "desk.js"):
        static = desk.get(f"/static/{name}")
        assert static.status_code == 200 and static.headers["cache-control"] == "max-age=600"
        assert static.headers["content-security-policy"] == csp
    story = stories_of(page.text)[0]
    store = store_of(config)
    before = len(list(store.read()))

    refused = desk.post("/today/mark", data={"story": story, "mark": "off-topic", "date": DAY})
    assert refused.status_code == 403 and "CSRF" in refused.text
    forged = desk.post("/today/mark", data={"story": story, "mark": "lead", "date": DAY, "csrf": "0" * 64})
    assert forged.status_code == 403
    assert len(list(store_of(config).read())) == before  # nothing written

    hostile = '<script>window.owned=1</script><img src=x onerror="window.owned=2">'
    done = desk.post(
        "/today/correct",
        data={
            "story": story,
            "field": "title",
            "value": hostile,
            "note": "",
            "csrf": csrf_of(page.text),
            "date": DAY,
        },
        follow_redirects=False,
    )
    assert done.status_code == 303
    shown = desk.get(f"/today?date={DAY}").text
    assert "&lt;script&gt;window.owned=1&lt;/script&gt;" in shown and "<img src=x" not in shown
    corrected = [e.payload for e in store_of(config).read(event_types=["brief.corrected"])]
    assert corrected == [
        {**corrected[0], "story_id": story, "field": "title", "by": "ann", "via": "desk", "value": hostile}
    ]

    # the story's page, reached from the item: its day, articles, outlets and every decision, escaped
    assert f'href="/story?id={story}"' in shown
    timeline = desk.get(f"/story?id={story}").text
    assert "&lt;script&gt;window.owned=1&lt;/script&gt;" in timeline and "<img src=x" not in timeline
    scored = [e for e in store_of(config).read(event_types=["story.scored"]) if e.subject_id == story]
    decisions = re.search(r'<table class="decisions">(.*?)</table>', timeline, re.S).group(1)
    assert scored and all(e.event_id in decisions for e in scored)  # each run's decision (v1's, v2's)
    assert "brief.corrected" in decisions and "ann via desk" in decisions
    document = json.loads((Path(store_of(config).base) / "briefs" / f"{DAY}.json").read_text())
    [item] = [i for i in document["items"] if i["story_id"] == story]
    for cited in item["citations"]:
        assert cited["source"] in timeline.split("<h2>Articles</h2>")[1]
    assert f'data-day="{DAY}"' in timeline and "In the brief (v1, v2)" in timeline
    assert desk.get("/story?id=st-nowhere").status_code == 400


def test_a_wrong_token_gets_401_and_a_known_person_signs_in(config: Path, monkeypatch) -> None:
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    text = config.read_text() + '\n[desk.people]\nann = "DESK_TOKEN_ANN"\n'
    config.write_text(text)
    monkeypatch.setenv("DESK_TOKEN_ANN", "a-long-random-token-for-ann")
    desk = TestClient(create_app(load_settings(str(config)), "0.0.0.0"), base_url=LOCAL)
    assert desk.get("/today", follow_redirects=False).headers["location"] == "/signin"
    form = desk.get("/signin").text
    wrong = desk.post("/signin", data={"name": "ann", "token": "guess", "csrf": csrf_of(form)})
    assert wrong.status_code == 401
    assert desk.post("/today/mark", data={"csrf": csrf_of(form)}).status_code == 401
    right = desk.post(
        "/signin",
        data={"name": "ann", "token": "a-long-random-token-for-ann", "csrf": csrf_of(form)},
        follow_redirects=False,
    )
    assert right.status_code == 303
    assert ">ann <form" in desk.get(f"/today?date={DAY}").text


def test_a_non_loopback_desk_without_people_refuses_to_start_with_one_line(config: Path) -> None:
    result = brief("desk", "--host", "0.0.0.0", "--config", str(config))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "[desk.people]" in result.stderr


def test_a_desk_on_a_busy_port_says_so_in_one_line_before_announcing_anything(config: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = brief("desk", "--port", str(port), "--config", str(config))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert f"port {port} on 127.0.0.1 is already in use" in result.stderr and "--port" in result.stderr
    assert "The desk of" not in result.stdout  # never announced at an address another program answers


def test_the_cli_correct_records_the_same_event_as_the_desk(config: Path) -> None:
    document = json.loads((Path(store_of(config).base) / "briefs" / f"{DAY}.json").read_text())
    story = document["items"][0]["story_id"]
    result = brief(
        "correct", story, "--title", "A better headline", "--date", DAY, "--by", "bo", "--config", str(config)
    )
    assert result.returncode == 0, result.stderr
    (event,) = store_of(config).read(event_types=["brief.corrected"])
    assert event.payload["by"] == "bo" and "via" not in event.payload
    assert (
        "Correction: the headline read" in (Path(store_of(config).base) / "briefs" / f"{DAY}.md").read_text()
    )


def test_a_mark_at_the_command_line_and_at_the_desk_are_the_same_event_but_for_where(
    config: Path, tmp_path: Path
) -> None:
    document = json.loads((Path(store_of(config).base) / "briefs" / f"{DAY}.json").read_text())
    story = document["items"][-1]["story_id"]
    other = tmp_path / "cli"
    shutil.copytree(config.parent, other)
    cli_config = other / config.name
    result = brief("review", "--mark", f"{story}=off-topic", "--date", DAY, "--config", str(cli_config))
    assert result.returncode == 0, result.stderr
    desk = client(config)
    page = desk.get(f"/today?date={DAY}").text
    done = desk.post(
        "/today/mark", data={"story": story, "mark": "off-topic", "date": DAY, "csrf": csrf_of(page)}
    )
    assert done.status_code == 200
    (by_cli,) = store_of(cli_config).read(event_types=["article.corrected"])
    (by_desk,) = store_of(config).read(event_types=["article.corrected"])
    same = ("article_id", "field", "value")
    assert {k: by_cli.payload[k] for k in same} == {k: by_desk.payload[k] for k in same}
    assert by_cli.payload["value"] == "off-topic" and "via" not in by_cli.payload
    assert by_desk.payload["by"] == "ann" and by_desk.payload["via"] == "desk"
    assert (by_cli.event_type, by_cli.subject_id) == (by_desk.event_type, by_desk.subject_id)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def hook():
    from tests.delivery_servers import Webhook

    server = Webhook().start()
    yield server
    server.stop()


def with_channels(config: Path, text: str) -> Path:
    config.write_text(config.read_text() + text)
    return config


HOSTILE = '<script>window.owned=1</script><img src=x onerror="window.owned=2"><a href="javascript:window.owned=3">x</a>'


def screenshots() -> Path | None:
    """Where the browser test keeps a picture of each page (``BRIEF_TEST_SCREENSHOTS``), if anywhere."""
    from tests.conftest import REPO

    folder = os.environ.get("BRIEF_TEST_SCREENSHOTS")
    if not folder:
        return None
    path = Path(folder) if Path(folder).is_absolute() else REPO / folder
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_an_editors_day_in_chromium_answers_approving_a_held_brief_marks_corrects_and_retracts(
    config: Path, hook
) -> None:
    import uvicorn
    from playwright.sync_api import sync_playwright

    from flows.commands.options import open_resources
    from flows.deliver import resend
    from flows.desk.app import create_app

    with_channels(
        config,
        '[delivery]\nhold = true\nreview_channel = "editors"\n' + f'hold_until = "{far_hold_until()}"\n'
        f'[[delivery.channels]]\nname = "editors"\nurl = "{hook.url("/editors")}"\n'
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\nupdates = true\n'
        "backoff_s = 0.05\n",
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    assert [path for path, _ in hook.posts] == ["/editors"]  # held: v1 to the editors only
    folder = Path(store_of(config).base) / "briefs" / DAY
    kept: dict[str, bytes] = {}

    def keep() -> None:  # each version's file as it was when published
        for f in folder.glob("v*.json"):
            kept.setdefault(f.name, f.read_bytes())

    keep()
    shots = screenshots()
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
    assert store_of(config).read(event_types=["confirmation.requested"]), "the sample day asks questions"
    versions: dict[str, int] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1000, "height": 760})
            dialogs: list[str] = []
            errors: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("pageerror", lambda e: errors.append(str(e)))

            def shot(name: str) -> None:
                if shots is not None:
                    page.screenshot(path=str(shots / f"desk-{name}.png"))

            def recorded(what: str) -> int:
                page.wait_for_url(re.compile(rf"\?.*done={what}(&|$)"))
                said = page.locator(".done[role=status]").inner_text()
                found = re.search(rf"{what} recorded: v(\d+)", said)
                assert found, said
                keep()
                return int(found.group(1))

            # 1. Today, as readers get it, with an Edit panel under each item
            page.goto(f"{base}/today?date={DAY}")
            items = page.locator("section.item")
            assert items.count() >= 4 and " · v1" in page.locator("article.brief > p.meta").first.inner_text()
            items.first.locator("summary").click()
            shot("today")

            # 2. the questions, answered from the keyboard
            page.goto(f"{base}/questions?date={DAY}")
            asked = page.locator("fieldset.question").count()
            assert asked >= 2
            shot("questions")
            prompts = page.locator("fieldset.question legend").all_inner_texts()
            fieldsets = page.locator("fieldset.question")
            for k, prompt in enumerate(prompts):  # "yes" to the two reports of Northwind's round; Enter else
                pair = "same story" in prompt.lower() and prompt.count("Northwind") == 2
                yes = (
                    fieldsets.nth(k).locator('input[value="yes"]').get_attribute("data-key") if pair else None
                )
                page.keyboard.press(yes or "Enter")  # each key moves on; the last one sends
            assert sum("Northwind" in p for p in prompts) >= 1
            versions["answers"] = recorded("answers")

            # 3. one story marked off-topic: it leaves the brief
            page.goto(f"{base}/today?date={DAY}")
            item = page.locator("section.item").last
            off_topic = item.get_attribute("data-story")
            item.locator("summary").click()
            item.locator("button.mark-off-topic").click()
            versions["mark"] = recorded("mark")
            assert off_topic not in [
                s.get_attribute("data-story") for s in page.locator("section.item").all()
            ]

            # 4. a headline corrected, with hostile text typed in: it shows as text, and nothing runs
            item = page.locator("section.item").first
            corrected = item.get_attribute("data-story")
            item.locator("summary").click()
            form = item.locator("form.correct-title")
            form.locator("textarea").fill(f"A headline, corrected {HOSTILE}")
            form.locator("input[name=note]").fill("the name was wrong")
            form.locator("button").click()
            versions["correction"] = recorded("correction")
            item = page.locator(f'section.item[data-story="{corrected}"]')
            assert f"A headline, corrected {HOSTILE}" in item.locator("h3").inner_text()
            assert "Correction: the headline read" in item.locator("p.correction").inner_text()
            assert item.locator("h3 img, h3 script, h3 a[href^='javascript']").count() == 0

            # 5. an item retracted with a note: it leaves, and the note shows where it was
            item = page.locator("section.item").nth(1)
            retracted = item.get_attribute("data-story")
            item.locator("summary").click()
            item.locator("form[action='/today/retract'] input[name=note]").fill("the report was withdrawn")
            before = page.url
            item.locator("button.danger").click()  # not yet: the page asks to be sure first
            page.wait_for_timeout(300)
            assert page.url == before and len(list(folder.glob("v*.json"))) == versions["correction"]
            item.locator("input.sure").check()
            item.locator("button.danger").click()
            versions["retraction"] = recorded("retraction")
            assert retracted not in [
                s.get_attribute("data-story") for s in page.locator("section.item").all()
            ]
            assert "the report was withdrawn" in page.locator("p.retracted").inner_text()

            # 6. answering the held brief's questions approved it (as 'brief review' does): Hold
            # says who approved which version, and offers no second approval
            page.goto(f"{base}/hold?date={DAY}")
            shot("hold")
            assert f"v{versions['answers']} approved by ann (desk)" in page.content()
            assert page.get_by_role("button", name=re.compile(r"^Approve v\d+ as ann$")).count() == 0

            # after the approval, a correction waits for its update window ([delivery] update_after,
            # 10 minutes): Today and Hold say an update is pending, and "send now" sends it at once
            page.goto(f"{base}/today?date={DAY}")
            item = page.locator(f'section.item[data-story="{corrected}"]')
            item.locator("summary").click()
            item.locator("form.correct-summary textarea").fill(
                "A summary, corrected after the brief went out."
            )
            item.locator("form.correct-summary button").click()
            versions["late correction"] = recorded("correction")
            assert "the update to readers goes out at" in page.locator(".done[role=status]").inner_text()
            assert page.locator("p.pending").count() == 1
            page.goto(f"{base}/hold?date={DAY}")
            assert "An update is pending" in page.locator("section.pending").inner_text()
            page.get_by_role("button", name="Send the pending update now").click()
            page.wait_for_url(re.compile(r"/hold\?.*done="))
            assert "sent to readers" in page.locator(".done[role=status]").inner_text()
            assert page.locator("section.pending").count() == 0

            # a stale tab: opened before another tab corrected the same item, its correction is
            # refused with what changed and who changed it, and applied again on purpose
            stale = browser.new_page(viewport={"width": 1000, "height": 760})
            stale.on("pageerror", lambda e: errors.append(str(e)))
            stale.goto(f"{base}/today?date={DAY}")
            page.goto(f"{base}/today?date={DAY}")
            item = page.locator(f'section.item[data-story="{corrected}"]')
            item.locator("summary").click()
            item.locator("form.correct-summary textarea").fill("A summary, from the first tab.")
            item.locator("form.correct-summary button").click()
            versions["first tab"] = recorded("correction")
            item = stale.locator(f'section.item[data-story="{corrected}"]')
            item.locator("summary").click()
            item.locator("form.correct-summary textarea").fill("A summary, from the stale tab.")
            item.locator("form.correct-summary button").click()
            stale.locator("h1", has_text="Changed since you opened it").wait_for()
            assert "its summary changed" in stale.locator("ul.changes").inner_text()
            assert "ann via desk" in stale.locator("ul.changed-by").inner_text()
            assert len(list(folder.glob("v*.json"))) == versions["first tab"]  # nothing written
            stale.get_by_role("button", name=f"Apply it to v{versions['first tab']} anyway").click()
            stale.wait_for_url(re.compile(r"\?.*done=correction(&|$)"))
            keep()
            versions["stale tab, on purpose"] = len(list(folder.glob("v*.json")))
            shown = stale.locator(f'section.item[data-story="{corrected}"] p.summary').inner_text()
            assert shown == "A summary, from the stale tab."
            stale.close()

            # the retraction undone (an event of its own): the item comes back, its panel open
            page.goto(f"{base}/today?date={DAY}")
            undo = page.locator(f'div.retracted-item[data-retracted="{retracted}"]')
            undo.locator("input[name=note]").fill("the outlet stands by it")
            undo.locator("button.undo").click()
            page.wait_for_url(re.compile(r"\?.*done=restored(&|$)"))
            said = page.locator(".done[role=status]").inner_text()
            versions["undone"] = int(re.search(r"retraction undone: v(\d+)", said).group(1))
            keep()
            back = page.locator(f'section.item[data-story="{retracted}"]')
            assert back.count() == 1 and back.locator("details.actions[open]").count() == 1
            assert page.locator("p.retracted").count() == 0

            # the other pages, each reached and drawn without a script error
            page.goto(f"{base}/history")
            assert page.locator(f'a[href="/today?date={DAY}&version=1"]').count() >= 1
            shot("history")
            page.goto(f"{base}/diff?date={DAY}&a=1&b={versions['retraction']}")
            assert page.locator("tr.removed").count() >= 2 and page.locator("tr.reworded").count() >= 1
            shot("diff")
            page.goto(f"{base}/today?date={DAY}")
            page.locator("section.item").nth(1).locator("a.story-link").click()
            page.wait_for_url(re.compile(r"/story\?id=st-"))
            assert page.locator("table.decisions tr").count() > 1
            shot("story")
            page.goto(f"{base}/search?q=Pippin")
            assert page.locator("section.brief-hit").count() >= 1
            shot("search")
            page.goto(f"{base}/search?q=smuggle")  # the feed's own hostile item (script, onerror)
            assert page.locator("tr.article-hit").count() == 1
            page.goto(f"{base}/sources")
            assert page.locator("svg.spark rect").count() == 28  # two sources, 14 days each
            shot("sources")
            page.goto(f"{base}/runs")
            assert page.locator("tr.run").count() >= 1
            shot("runs")
            for url in (f"/today?date={DAY}", f"/story?id={corrected}", f"/diff?date={DAY}&a=1&b=4"):
                page.goto(base + url)  # every page that shows the hostile text: inert
                assert page.evaluate("typeof window.owned") == "undefined", url
                assert page.locator("a[href^='javascript'], [onerror]").count() == 0, url
            assert errors == [] and dialogs == []
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)

    # each act gave the expected new version
    assert versions == {
        "answers": 2,
        "mark": 3,
        "correction": 4,
        "retraction": 5,
        "late correction": 6,
        "first tab": 7,
        "stale tab, on purpose": 8,
        "undone": 9,
    }
    # the events carry the person's name
    store = store_of(config)
    answers = [e.payload for e in store.read(event_types=["confirmation.resolved"])]
    assert len(answers) == asked
    assert all(a["person"] == "ann" and a["via"] == "desk" for a in answers)
    assert sorted(a["by"] for a in answers) == ["default"] * (asked - 1) + ["human"]
    marks = [
        e.payload for e in store.read(event_types=["article.corrected"]) if e.payload.get("via") == "desk"
    ]
    assert [(m["field"], m["value"], m["by"]) for m in marks][-1] == ("relevance", "off-topic", "ann")
    said = [e.payload for e in store.read(event_types=["brief.corrected"])]
    assert [(c["story_id"], c["field"], c["by"], c["via"]) for c in said] == [
        (corrected, "title", "ann", "desk"),
        (corrected, "summary", "ann", "desk"),
        (corrected, "summary", "ann", "desk"),
        (corrected, "summary", "ann", "desk"),
    ]
    assert said[0]["value"] == f"A headline, corrected {HOSTILE}"
    [gone] = [e.payload for e in store.read(event_types=["story.retracted"])]
    assert (gone["story_id"], gone["by"], gone["via"]) == (retracted, "ann", "desk")
    [back] = store.read(event_types=["story.restored"])
    assert (back.payload["story_id"], back.payload["by"], back.payload["note"]) == (
        retracted,
        "ann",
        "the outlet stands by it",
    )
    [approved] = [e.payload for e in store.read(event_types=["brief.approved"])]
    assert (approved["by"], approved["via"], approved["version"]) == ("ann", "desk", 2)

    # the editors saw v1 while it was held; the answers approved v2, which the readers got; the
    # mark and the correction waited in their update window, and the retraction sent them at once
    # with it, as one update (v5); the late correction went out when "send now" was pressed (v6)
    assert [path for path, _ in hook.posts].count("/editors") == 1
    readers = [body for path, body in hook.posts if path == "/readers"]
    assert len(readers) == 3, readers
    assert readers[1]["title"].startswith("Updated: ") and "A headline, corrected" in readers[1]["message"]
    assert "Updated since the version sent earlier: retracted “" in readers[1]["message"]  # what changed
    assert "the report was withdrawn" in readers[1]["message"]
    assert "A summary, corrected after" in readers[2]["message"]
    assert "Updated since the version sent earlier: corrected the summary of “" in readers[2]["message"]
    delivered = [
        (e.payload["channel"], e.payload["version"], e.payload["kind"])
        for e in store.read(event_types=["brief.delivered"])
    ]
    assert [d for d in delivered if d[0] == "readers"] == [
        ("readers", 2, "brief"),
        ("readers", 5, "update"),
        ("readers", 6, "update"),
    ]
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    assert len(hook.posts) == 4  # nothing is sent twice

    # the earlier versions are intact
    assert sorted(kept) == sorted(f"v{n}.json" for n in range(1, 10))
    assert all((folder / name).read_bytes() == content for name, content in kept.items())
    assert "A headline, corrected" not in kept["v3.json"].decode()
    assert json.loads(kept["v1.json"])["version"] == 1


def test_a_correction_reaches_an_updates_channel_once_and_history_shows_why_it_changed(
    config: Path, hook
) -> None:
    from flows.commands.options import open_resources
    from flows.deliver import resend

    with_channels(
        config,
        "[delivery]\nupdate_after = 0\n"
        f'[[delivery.channels]]\nname = "hook"\nurl = "{hook.url()}"\nupdates = true\nbackoff_s = 0.05\n',
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    assert [p["title"] for _, p in hook.posts] and len(hook.posts) == 1  # v1, before any correction
    desk = client(config)
    page = desk.get(f"/today?date={DAY}")
    story = stories_of(page.text)[0]
    done = desk.post(
        "/today/correct",
        data={
            "story": story,
            "field": "title",
            "value": "A headline, corrected",
            "note": "the name was wrong",
            "csrf": csrf_of(page.text),
            "date": DAY,
        },
    )
    assert done.status_code == 200 and "correction recorded: v2" in done.text
    assert len(hook.posts) == 2  # the update, once
    update = hook.posts[1][1]
    assert update["title"] == f"Updated: AI brief — {DAY}" and "A headline, corrected" in update["message"]
    assert (
        "Updated since the version sent earlier: corrected the headline of “A headline, corrected”"
        in (update["message"])
    )
    assert "Correction: the headline read" in update["message"]
    assert desk.post("/today/correct", data={}).status_code == 403  # refused: nothing more is sent
    assert len(hook.posts) == 2

    history = desk.get("/history").text
    assert f'href="/today?date={DAY}&amp;version=1"' in history and "v2" in history
    diff = desk.get(f"/diff?date={DAY}&a=1&b=2")
    assert diff.status_code == 200
    [event] = store_of(config).read(event_types=["brief.corrected"])
    row = re.search(r'<tr class="reworded">(.*?)</tr>', diff.text, re.S)
    assert row is not None, diff.text
    assert "A headline, corrected" in row.group(1) and event.event_id in row.group(1)
    assert "ann via desk" in row.group(1)
    assert "hook: v2 (update" in diff.text  # who received which version


def test_a_held_brief_is_approved_at_the_desk_by_the_person_signed_in(config: Path, hook) -> None:
    from flows.commands.options import open_resources
    from flows.deliver import resend

    with_channels(
        config,
        '[delivery]\nhold = true\nreview_channel = "editors"\n' + f'hold_until = "{far_hold_until()}"\n'
        f'[[delivery.channels]]\nname = "editors"\nurl = "{hook.url("/editors")}"\n'
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\n',
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    assert [path for path, _ in hook.posts] == ["/editors"]  # held: only the editors have it
    desk = client(config)
    page = desk.get(f"/hold?date={DAY}")
    assert 'class="deadline"' in page.text and "Approve v1 as ann" in page.text
    [held] = [e.payload for e in store_of(config).read(event_types=["brief.held"])]
    until = datetime.fromisoformat(held["until"]).astimezone(UTC)
    assert f'<b class="deadline">{until:%Y-%m-%d %H:%M} UTC</b>' in page.text  # the deadline, in UTC
    seen = re.search(r'name="seen" value="(\d+)"', page.text).group(1)  # the version it shows
    done = desk.post("/hold/approve", data={"date": DAY, "seen": seen, "csrf": csrf_of(page.text)})
    assert done.status_code == 200 and "approved v1; sent to readers" in done.text
    assert [path for path, _ in hook.posts] == ["/editors", "/readers"]
    [approved] = [e.payload for e in store_of(config).read(event_types=["brief.approved"])]
    assert (approved["by"], approved["via"], approved["version"]) == ("ann", "desk", 1)
    again = desk.get(f"/hold?date={DAY}").text
    assert "v1 approved by ann (desk)" in again and "Approve v" not in again


def test_two_items_said_to_be_one_story_become_one_and_split_again(config: Path) -> None:
    desk = client(config)
    page = desk.get(f"/today?date={DAY}").text
    items = stories_of(page)
    document = json.loads((Path(store_of(config).base) / "briefs" / f"{DAY}.json").read_text())
    northwind = [i for i in document["items"] if "Northwind" in i["title"]]
    assert len(northwind) == 2 and len(items) == len(document["items"])
    (own,) = [c["article_id"] for c in northwind[1]["citations"]]
    done = desk.post(
        "/today/same",
        data={
            "story": northwind[0]["story_id"],
            "other": northwind[1]["story_id"],
            "date": DAY,
            "csrf": csrf_of(page),
        },
    )
    assert done.status_code == 200 and "same story recorded: v2" in done.text
    merged = [
        i for i in json.loads((Path(store_of(config).base) / "briefs" / f"{DAY}.json").read_text())["items"]
    ]
    [together] = [i for i in merged if "Northwind" in i["title"]]
    cited = {c["article_id"] for c in together["citations"]}
    assert cited == {c["article_id"] for c in northwind[0]["citations"]} | {own}
    [merged] = store_of(config).read(event_types=["story.merged"])
    said = merged.payload
    assert said["person"] == "ann" and said["via"] == "desk" and len(said["article_ids"]) == 2
    diff = desk.get(f"/diff?date={DAY}&a=1&b=2").text  # the change names the act that caused it
    removed = re.search(r'<tr class="removed">(.*?)</tr>', diff, re.S).group(1)
    assert merged.event_id in removed and "ann via desk" in removed

    # the exact copies (one page) cannot be parted: refused, nothing written. Pippin-2's story holds the
    # lab's page and techwire's syndicated copy of it (cited once, as the lab's)
    brief_now = json.loads((Path(store_of(config).base) / "briefs" / f"{DAY}.json").read_text())
    [pippin] = [i for i in brief_now["items"] if "Pippin" in i["title"]]
    [copied] = [c["article_id"] for c in pippin["citations"] if c["source"] == "labnotes"]
    refused = desk.post(
        "/today/split",
        data={"story": pippin["story_id"], "apart": copied, "date": DAY, "csrf": csrf_of(done.text)},
    )
    assert refused.status_code == 400 and "one page" in refused.text
    assert store_of(config).read(event_types=["story.split"]) == []

    page = desk.get(f"/today?date={DAY}").text
    assert 'name="apart" value="' + own + '"' in page
    done = desk.post(
        "/today/split",
        data={"story": together["story_id"], "apart": own, "date": DAY, "csrf": csrf_of(page)},
    )
    assert done.status_code == 200 and "two stories recorded: v3" in done.text
    again = json.loads((Path(store_of(config).base) / "briefs" / f"{DAY}.json").read_text())["items"]
    parted = {frozenset(c["article_id"] for c in i["citations"]) for i in again if "Northwind" in i["title"]}
    assert parted == {frozenset({own}), frozenset(c["article_id"] for c in northwind[0]["citations"])}
    assert all(e.payload["via"] == "desk" for e in store_of(config).read(event_types=["story.split"]))


def test_search_finds_what_the_briefs_said_and_the_articles_by_words_within_dates(config: Path) -> None:
    desk = client(config)
    found = desk.get("/search", params={"q": "pippin ORCHARD", "start": "2025-08-01", "end": DAY})
    assert found.status_code == 200
    document = json.loads((Path(store_of(config).base) / "briefs" / f"{DAY}.json").read_text())
    pippin = {i["story_id"] for i in document["items"] if "Pippin" in i["title"]}
    briefs = re.findall(r'<section class="hit brief-hit">(.*?)</section>', found.text, re.S)
    assert len(briefs) == len(pippin) == 1  # Pippin-2's three articles (a copy among them) are one story
    assert {re.search(r'href="/story\?id=([^"]+)"', b).group(1) for b in briefs} == pippin
    assert all(f"/today?date={DAY}#" in b for b in briefs)
    articles = re.findall(r'<tr class="article-hit">(.*?)</tr>', found.text, re.S)
    assert len(articles) == 3 and all("/story?id=st-" in a for a in articles)
    assert "Northwind" not in found.text  # an item without the words

    elsewhere = desk.get("/search", params={"q": "pippin", "start": "2025-07-01", "end": "2025-07-31"})
    assert "No brief item holds these words" in elsewhere.text and "article-hit" not in elsewhere.text
    assert desk.get("/search", params={"q": "pippin", "start": "2025-08-07", "end": DAY}).status_code == 400
    assert desk.get("/search", params={"q": "pippin", "end": "August"}).status_code == 400
    hostile = desk.get("/search", params={"q": '<script>"'}).text
    assert "<script>&#34;" not in hostile and 'value="&lt;script&gt;&#34;"' in hostile


def test_sources_show_last_good_fetch_new_articles_a_day_as_a_chart_and_failures(config: Path) -> None:
    from storage.events import new_event, utcnow

    store = store_of(config)
    store.append(
        [
            new_event(
                "feed.failed",
                {
                    "source": "techwire",
                    "url": "https://techwire.example/feed",
                    "error": "HTTP_STATUS",
                    "retryable": True,
                    "message": "503 from <b onmouseover=alert(1)>upstream</b>",
                    "attempts": 3,
                },
                brief_date=date.fromisoformat(DAY),
                run_id="test-failure",
                subject_id="techwire",
                produced_by="collect@1",
                occurred_at=utcnow(),
            )
        ]
    )
    page = client(config).get("/sources")
    assert page.status_code == 200
    rows = dict(re.findall(r'<tr class="source[^"]*" data-source="([^"]+)">(.*?)</tr>', page.text, re.S))
    assert set(rows) == {"labnotes", "techwire"}
    for name, sources in (("labnotes", "labnotes"), ("techwire", "techwire")):
        bars = re.findall(
            r'<rect x="\d+" y="\d+" width="8" height="(\d+)"[^>]*><title>([\d-]+): (\d+)</title>', rows[name]
        )
        assert len(bars) == 14 and bars[-1][1] == DAY
        collected = {
            e.subject_id
            for e in store.read(event_types=["article.collected"])
            if e.payload["source"] == sources
        }
        assert int(bars[-1][2]) == len(collected) > 0 and all(b[2] == "0" for b in bars[:-1])
        assert f"(for {DAY}," in rows[name] and "news" in rows[name]
    assert "none" in rows["labnotes"] and "HTTP_STATUS" not in rows["labnotes"]
    assert "HTTP_STATUS" in rows["techwire"] and "(3 attempts)" in rows["techwire"]
    assert "&lt;b onmouseover=alert(1)&gt;upstream&lt;/b&gt;" in rows["techwire"]
    assert "<script" not in page.text.replace('<script src="/static/desk.js" defer></script>', "")
    # the chart's axis names its first, middle and last days; at the latest day there is no later
    day = date.fromisoformat(DAY)
    named = [(day - timedelta(days=k)).strftime("%m-%d") for k in (13, 6, 0)]
    for row in rows.values():
        assert re.findall(r'<g class="axis"[^>]*>(?:<text [^>]*>([\d-]+)</text>)+', row) != []
        assert re.findall(r"<text [^>]*>([\d-]+)</text>", row) == named
    assert (
        'class="later"' not in page.text and f'href="/sources?date={day - timedelta(days=14)}"' in page.text
    )
    earlier = client(config).get("/sources", params={"date": str(day - timedelta(days=20))}).text
    assert re.search(r'<a href="/sources\?date=([\d-]+)" class="later">later', earlier).group(1) == str(
        day - timedelta(days=6)
    )
    nearer = client(config).get("/sources", params={"date": str(day - timedelta(days=3))}).text
    assert f'<a href="/sources?date={DAY}" class="later">' in nearer  # never past the latest day


def test_runs_show_status_counts_and_seconds_per_step_and_a_failed_run_links_to_prefect(config: Path) -> None:
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app
    from storage.events import new_event, utcnow

    failed_run = "0b7c2a52-5d0e-4c1e-9f3a-2d8e4f6a1b9c"
    store = store_of(config)
    common = {"brief_date": date.fromisoformat(DAY), "run_id": failed_run, "subject_id": failed_run}
    store.append(
        [
            new_event(
                "run.started", {"flow": "daily-brief"}, produced_by="flow@1", occurred_at=utcnow(), **common
            ),
            new_event(
                "run.failed",
                {"step": "gate", "error": "GATE_FAILED", "message": "suite <i>articles</i> failed"},
                produced_by="flow@1",
                occurred_at=utcnow(),
                **common,
            ),
        ]
    )
    desk = TestClient(
        create_app(load_settings(str(config)), "127.0.0.1", "ann", ui_url="http://127.0.0.1:4200"),
        base_url=LOCAL,
    )
    page = desk.get("/runs")
    assert page.status_code == 200
    rows = dict(re.findall(r'<tr class="run [a-z]+" data-run="([^"]+)">(.*?)</tr>', page.text, re.S))
    [(daily, row)] = [(r, v) for r, v in rows.items() if r != failed_run]
    assert "<b>completed</b>" in row and "daily-brief" in row
    assert re.search(r"dedup: \d+\.\d\d", row) and "versions published: 1" in row
    assert f'href="http://127.0.0.1:4200/runs/flow-run/{daily}"' in row
    failed = rows[failed_run]
    assert "<b>failed</b>" in failed and "suite &lt;i&gt;articles&lt;/i&gt; failed" in failed
    assert f'href="http://127.0.0.1:4200/runs/flow-run/{failed_run}"' in failed
    assert next(iter(rows)) == failed_run  # newest first


def test_brief_serve_runs_the_desk_in_a_thread_and_refuses_a_shared_address_without_people(
    config: Path,
) -> None:
    import httpx

    from flows.serve import start_desk
    from storage.errors import InputError

    refused = brief("serve", "--desk-host", "0.0.0.0", "--config", str(config))
    assert refused.returncode == 2 and "[desk.people]" in refused.stderr
    assert refused.stderr.strip().count("\n") == 0 and "Prefect" not in refused.stdout  # nothing started

    port = free_port()
    desk = start_desk(str(config), "127.0.0.1", port)
    try:
        answer = httpx.get(f"http://127.0.0.1:{port}/today?date={DAY}")
        assert answer.status_code == 200 and 'data-story="' in answer.text
        with pytest.raises(InputError, match=f"port {port} on 127.0.0.1 is already in use.*--desk-port"):
            start_desk(str(config), "127.0.0.1", port, timeout_s=10)
    finally:
        desk.stop()
    assert not desk.thread.is_alive()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/", timeout=2)

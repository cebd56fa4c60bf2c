"""What every page of the desk shows, over HTTP against the desk's application on the samples' day:
dates as dates and moments in one style (never ISO text such as ``2025-08-05T00:00``), and an
icon, so that no page load asks for a file the desk does not have."""

from __future__ import annotations

import contextlib
import json
import re
from datetime import date, datetime, timedelta
from pathlib import Path

from tests.e2e.test_desk import built as built  # the samples' day, run once per module
from tests.e2e.test_desk import client, config, csrf_of, hook, with_channels
from tests.e2e.test_review import DAY
from tests.factories import far_hold_until

__all__ = ["built", "config", "hook"]  # fixtures
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d|\d\d:\d\d:\d\d|[+-]\d\d:\d\d\b|\d\d:\d\dZ")
MOMENT = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
HEADERS = ("content-security-policy", "x-frame-options", "x-content-type-options")


def brief_of(config: Path) -> dict:
    from tasks.settings import load_settings

    return json.loads((Path(load_settings(str(config)).storage.root) / "briefs" / f"{DAY}.json").read_text())


def held_desk(config: Path, hook):
    """The day held for review (a deadline on Hold) and corrected once at the desk (two versions)."""
    from flows.commands.options import open_resources
    from flows.deliver import resend

    with_channels(
        config,
        '[delivery]\nhold = true\nreview_channel = "editors"\n' + f'hold_until = "{far_hold_until()}"\n'
        f'[[delivery.channels]]\nname = "editors"\nurl = "{hook.url("/editors")}"\n'
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\n',
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    desk = client(config)
    page = desk.get(f"/today?date={DAY}").text
    story = brief_of(config)["items"][0]["story_id"]
    seen = re.search(r'name="seen" value="(\d+)"', page).group(1)
    form = {"date": DAY, "csrf": csrf_of(page), "seen": seen, "story": story, "field": "title"}
    done = desk.post("/today/correct", data={**form, "value": "A headline corrected", "note": ""})
    assert done.status_code == 200 and "v2" in done.text, done.text
    return desk, story


def test_every_page_shows_dates_as_dates_and_moments_in_one_style(config: Path, hook) -> None:
    desk, story = held_desk(config, hook)
    window = brief_of(config)["window"]
    start = datetime.fromisoformat(window["start"])
    end = datetime.fromisoformat(window["end"])
    assert start.time() == end.time() and start.hour == start.minute == 0  # the samples' window: whole days
    pages = {
        path: desk.get(path)
        for path in (
            f"/today?date={DAY}",
            f"/today?date={DAY}&version=1",
            f"/questions?date={DAY}",
            f"/hold?date={DAY}",
            "/history",
            f"/diff?date={DAY}&a=1&b=2",
            f"/story?id={story}",
            f"/search?q=the&start={DAY}&end={DAY}",
            f"/sources?date={DAY}",
            f"/runs?date={DAY}",
        )
    }
    for path, answer in pages.items():
        assert answer.status_code == 200, (path, answer.text[:300])
        assert not ISO.findall(answer.text), (path, ISO.findall(answer.text)[:5])
    today = pages[f"/today?date={DAY}"].text
    last = (end - timedelta(days=1)).date()
    days = start.date().isoformat() if last == start.date() else f"{start.date()} – {last}"
    header = re.search(r'<p class="meta">.*?</p>', today).group(0)
    assert re.search(rf"· [^<·]* {days} ·", header), header
    hold = pages[f"/hold?date={DAY}"].text
    deadline = re.search(r'<b class="deadline">(.*?)</b>', hold).group(1)
    assert MOMENT.fullmatch(deadline), deadline  # a moment: its time matters
    runs = pages[f"/runs?date={DAY}"].text
    assert MOMENT.search(runs) and "run" in runs
    history = pages["/history"].text
    assert re.search(r'title="published \d{4}-\d\d-\d\d \d\d:\d\d UTC"', history), history


def test_the_desk_has_an_icon_with_its_headers_and_every_page_links_it(config: Path) -> None:
    desk = client(config)
    icon = desk.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.content.startswith(b"<svg") and len(icon.content) < 1024
    for name in HEADERS:
        assert name in icon.headers, name
    linked = re.search(r'<link rel="icon" href="([^"]+)"', desk.get(f"/today?date={DAY}").text)
    assert linked is not None
    assert desk.get(linked.group(1)).content == icon.content


def test_the_icon_is_served_before_anyone_signs_in(tmp_path: Path, monkeypatch) -> None:
    """A desk with people: the sign-in page links the icon, and the icon needs no session."""
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app
    from tasks.settings import load_settings

    config = tmp_path / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n\n[desk.people]\nann = "DESK_TOKEN_ANN"\n')
    monkeypatch.setenv("DESK_TOKEN_ANN", "a-long-random-token-for-ann")
    stranger = TestClient(
        create_app(load_settings(str(config)), "127.0.0.1"), base_url="http://127.0.0.1:8484"
    )
    assert stranger.get("/runs", follow_redirects=False).headers["location"] == "/signin?next=%2Fruns"
    assert '<link rel="icon" href="/static/favicon.svg"' in stranger.get("/signin").text
    for path in ("/favicon.ico", "/static/favicon.svg"):
        icon = stranger.get(path, follow_redirects=False)
        assert icon.status_code == 200 and icon.content.startswith(b"<svg"), path
        assert icon.headers["x-frame-options"] == "DENY"


FIRST_LOADS = """
import json, sys, time
from fastapi.testclient import TestClient
from flows.desk.app import create_app
from tasks.settings import load_settings

desk = TestClient(create_app(load_settings(sys.argv[1]), "127.0.0.1", "ann", flush_every=None), base_url=sys.argv[2])
desk.get("/static/desk.css")  # the client's and the framework's own first request
out = {}
for path in sys.argv[3:]:
    before = set(sys.modules)
    t0 = time.perf_counter()
    first = desk.get(path)
    t1 = time.perf_counter()
    desk.get(path)
    t2 = time.perf_counter()
    imported = sorted(set(sys.modules) - before)
    out[path] = {"status": first.status_code, "imported": imported, "ms": [(t1 - t0) * 1000, (t2 - t1) * 1000],
                 "text": first.text}
print(json.dumps(out))
"""


def test_a_pages_first_load_does_no_work_the_next_does_not_and_runs_read_no_prefect(
    config: Path, tmp_path: Path
) -> None:
    """In a desk process of its own: the first load of Runs, Story, Search and Sources imports
    nothing (Prefect least of all: its import took seconds), and Runs links the Prefect UI named by
    Prefect's active profile, read without Prefect."""
    import os
    import subprocess
    import sys

    home = tmp_path / "prefect-home"
    home.mkdir()
    (home / "profiles.toml").write_text(
        'active = "desk"\n[profiles.desk]\nPREFECT_API_URL = "http://127.0.0.1:4299/api"\n'
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PREFECT_API_URL", "PREFECT_UI_URL", "PREFECT_PROFILE")
    }
    env.update(PREFECT_HOME=str(home), PYTHONPATH=str(Path.cwd()))
    story = brief_of(config)["items"][0]["story_id"]
    paths = [f"/runs?date={DAY}", f"/story?id={story}", f"/search?q=the&end={DAY}", f"/sources?date={DAY}"]
    done = subprocess.run(
        [sys.executable, "-c", FIRST_LOADS, str(config), "http://127.0.0.1:8484", *paths],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loads = json.loads(done.stdout.splitlines()[-1])
    for path, load in loads.items():
        assert load["status"] == 200, (path, load["text"][:300])
        assert not [
            m for m in load["imported"] if m.split(".")[0] in ("prefect", "flows", "ops", "storage", "tasks")
        ], (
            path,
            load["imported"],
        )
        print(f"{path}: first {load['ms'][0]:.0f} ms, next {load['ms'][1]:.0f} ms")
    links = re.findall(r'<a href="([^"]+)" rel="noopener" class="prefect run-id"', loads[paths[0]]["text"])
    assert links and all(link.startswith("http://127.0.0.1:4299/runs/flow-run/") for link in links), links


def test_ctrl_c_stops_a_real_brief_desk_at_once(config: Path) -> None:
    """``brief desk`` in a process of its own, a browser's keep-alive connection open after three
    pages: Ctrl-C ends it in well under two seconds (it took 5 to 14), exit 130, one line."""
    import http.client
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.e2e.test_desk import free_port

    port = free_port()
    desk = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "desk", "--port", str(port), "--config", str(config)],
        env={**os.environ, "PYTHONPATH": str(Path.cwd()), "COLUMNS": "160"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                browser = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                browser.request("GET", "/static/desk.css")
                browser.getresponse().read()
                break
            except OSError:
                assert time.monotonic() < deadline and desk.poll() is None, "the desk did not start"
                time.sleep(0.2)
        story = brief_of(config)["items"][0]["story_id"]
        for path in (f"/today?date={DAY}", f"/runs?date={DAY}", f"/story?id={story}"):
            browser.request("GET", path)
            answer = browser.getresponse()
            assert answer.status == 200 and answer.read()
        started = time.monotonic()
        desk.send_signal(signal.SIGINT)
        _, err = desk.communicate(timeout=60)
        took = time.monotonic() - started
    finally:
        if desk.poll() is None:
            desk.kill()
            desk.wait()
    print(f"brief desk stopped {took:.2f} s after Ctrl-C")
    assert desk.returncode == 130, (desk.returncode, err)
    assert took < 2.0, f"brief desk took {took:.2f} s to stop after Ctrl-C"
    assert err.strip().splitlines() == [
        "the desk stopped (Ctrl-C); nothing is lost: every act was recorded when made"
    ], err


def started_desk(config: Path, port: int):
    """``brief desk`` in a process of its own, once it answers."""
    import http.client
    import os
    import subprocess
    import sys
    import time

    desk = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "desk", "--port", str(port), "--config", str(config)],
        env={**os.environ, "PYTHONPATH": str(Path.cwd()), "COLUMNS": "160"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            probe = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            probe.request("GET", "/static/desk.css")
            probe.getresponse().read()
            probe.close()
            return desk
        except OSError:
            if time.monotonic() > deadline or desk.poll() is not None:
                desk.kill()
                raise AssertionError(f"the desk did not start: {desk.communicate()[1]}") from None
            time.sleep(0.2)


def test_ctrl_c_waits_for_an_act_under_way_and_a_second_is_not_needed(config: Path, hook) -> None:
    """Ctrl-C while a correction's update is being sent to a channel that answers after 3 s: the
    desk says once that it waits, lets the act finish, then exits 130. The correction, the version
    it made, the brief's three files and the delivery's record agree."""
    import http.client
    import signal
    import threading
    from urllib.parse import urlencode

    from flows.commands.options import open_resources
    from flows.deliver import resend
    from tests.e2e.test_desk import free_port, store_of

    with_channels(
        config,
        "[delivery]\nupdate_after = 0\n"
        f'[[delivery.channels]]\nname = "hook"\nurl = "{hook.url()}"\nupdates = true\nbackoff_s = 0.05\n',
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))  # v1 sent
    assert len(hook.posts) == 1
    hook.arrived.clear()
    hook.delay_s = 3.0
    port = free_port()
    desk = started_desk(config, port)
    answered: dict = {}
    try:
        browser = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        browser.request("GET", f"/today?date={DAY}")
        page = browser.getresponse()
        html = page.read().decode()
        cookie = page.getheader("set-cookie").split(";")[0]
        story = brief_of(config)["items"][0]["story_id"]
        seen = re.search(r'name="seen" value="(\d+)"', html).group(1)
        form = {"date": DAY, "csrf": csrf_of(html), "seen": seen, "story": story, "field": "title"}
        form |= {"value": "A headline corrected as the desk stops", "note": ""}
        headers = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}

        def act() -> None:
            browser.request("POST", "/today/correct", body=urlencode(form), headers=headers)
            answer = browser.getresponse()
            answered.update(status=answer.status, text=answer.read().decode())

        acting = threading.Thread(target=act)
        acting.start()
        assert hook.arrived.wait(120), "the correction's update never reached the channel"
        desk.send_signal(signal.SIGINT)  # the update is being sent: 3 s to go
        _, err = desk.communicate(timeout=120)
        acting.join(timeout=10)
    finally:
        if desk.poll() is None:
            desk.kill()
            desk.wait()
    assert desk.returncode == 130, (desk.returncode, err)
    assert err.count("waiting for an act to finish… (Ctrl-C again to stop now)") == 1, err
    assert err.strip().splitlines()[-1] == (
        "the desk stopped (Ctrl-C); nothing is lost: every act was recorded when made"
    ), err
    assert answered.get("status") == 303, answered  # the act's answer: back to its item
    store = store_of(config)
    [corrected] = store.read(event_types=["brief.corrected"])
    assert corrected.payload["value"] == "A headline corrected as the desk stops"
    published = [e.payload["version"] for e in store.read(event_types=["brief.published"])]
    assert max(published) == 2
    delivered = {
        (e.payload["channel"], e.payload["version"]) for e in store.read(event_types=["brief.delivered"])
    }
    assert ("hook", 2) in delivered and len(hook.posts) == 2  # sent once, and recorded
    folder = Path(load_root(config)) / "briefs"
    assert brief_of(config)["version"] == 2
    for suffix in ("md", "html", "json"):
        assert "A headline corrected as the desk stops" in (folder / f"{DAY}.{suffix}").read_text(), suffix


def load_root(config: Path) -> str:
    from tasks.settings import load_settings

    return load_settings(str(config)).storage.root


def test_brief_serves_desk_stops_after_the_act_under_way(config: Path, hook) -> None:
    """The desk ``brief serve`` runs in a thread stops as ``brief desk`` does: a correction whose
    update a channel answers after 3 s is finished, sent and recorded before the desk is gone, and a
    form posted meanwhile is refused (503), nothing recorded."""
    import threading

    import httpx

    from flows.commands.options import open_resources
    from flows.deliver import resend
    from flows.serve import start_desk
    from tests.e2e.test_desk import free_port, store_of

    with_channels(
        config,
        "[delivery]\nupdate_after = 0\n"
        f'[[delivery.channels]]\nname = "hook"\nurl = "{hook.url()}"\nupdates = true\nbackoff_s = 0.05\n',
    )
    resend(*open_resources(str(config)), date.fromisoformat(DAY))
    hook.arrived.clear()
    hook.delay_s = 3.0
    port = free_port()
    desk = start_desk(str(config), "127.0.0.1", port)
    base = f"http://127.0.0.1:{port}"
    answered: dict = {}
    try:
        browser = httpx.Client(base_url=base, timeout=60)
        html = browser.get(f"/today?date={DAY}").text
        story = brief_of(config)["items"][0]["story_id"]
        seen = re.search(r'name="seen" value="(\d+)"', html).group(1)
        form = {"date": DAY, "csrf": csrf_of(html), "seen": seen, "story": story, "field": "title"}
        form |= {"value": "A headline corrected as the scheduler stops", "note": ""}
        acting = threading.Thread(
            target=lambda: answered.update(answer=browser.post("/today/correct", data=form))
        )
        acting.start()
        assert hook.arrived.wait(120), "the correction's update never reached the channel"
        stopping = threading.Thread(target=desk.stop)
        stopping.start()
        while not desk.server.acts.closing:
            pass
        late = httpx.Client(base_url=base, timeout=60, cookies=browser.cookies)
        with contextlib.suppress(httpx.TransportError):  # the listener may be closed already
            refused = late.post("/today/mark", data={**form, "mark": "core"})
            assert refused.status_code == 503 and "the desk is stopping" in refused.text
        stopping.join(timeout=120)
        acting.join(timeout=10)
    finally:
        desk.stop()
    assert not desk.thread.is_alive()
    assert answered["answer"].status_code == 303
    store = store_of(config)
    assert {
        (e.payload["channel"], e.payload["version"]) for e in store.read(event_types=["brief.delivered"])
    } >= {("hook", 2)}
    assert len(hook.posts) == 2 and brief_of(config)["version"] == 2
    assert not [e for e in store.read(event_types=["article.corrected"]) if e.payload.get("by") == "ann"]

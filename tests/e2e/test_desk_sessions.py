"""The desk's sessions: signing out ends a session for good, and a cookie or a token holding any
text is refused as wrong, never a 500."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tasks.settings import load_settings
from tests.desk_csrf import session_csrf

LOCAL = "http://127.0.0.1:8484"


@pytest.fixture
def desk(tmp_path: Path):
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    config = tmp_path / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n')
    app = create_app(load_settings(str(config)), "127.0.0.1", "ann", ui_url="http://127.0.0.1:4200")
    return TestClient(app, base_url=LOCAL)


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, html
    return match.group(1)


def test_a_copy_of_a_signed_out_cookie_is_refused(desk) -> None:
    csrf = session_csrf(desk)
    old_cookie = desk.cookies["desk_session"]
    assert desk.post("/signout", data={"csrf": csrf}, follow_redirects=False).status_code == 303
    desk.cookies.clear()
    desk.cookies.set("desk_session", old_cookie)
    # the old session's own token no longer opens anything: the act is refused before it is read
    replayed = desk.post("/today/mark", data={"csrf": csrf, "story": "st-x", "mark": "core"})
    assert replayed.status_code == 403 and "CSRF" not in replayed.text
    assert "your session ended (signed out, or signed in elsewhere); sign in again" in replayed.text


@pytest.mark.parametrize("where", ["cookie", "csrf"])
def test_text_that_is_not_ascii_in_a_cookie_or_token_is_a_refusal(desk, where: str) -> None:
    csrf = session_csrf(desk)
    cookie = desk.cookies["desk_session"]
    headers = {}
    if where == "cookie":
        body, _, signature = cookie.rpartition(".")
        desk.cookies.clear()
        headers["cookie"] = f"desk_session={body}.{'é' * len(signature)}".encode()
    else:
        csrf = "²" * len(csrf)
    answer = desk.post("/signout", data={"csrf": csrf}, headers=headers)
    assert answer.status_code == 403
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")


def test_a_local_person_of_any_name_gets_a_session(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    config = tmp_path / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n')
    app = create_app(load_settings(str(config)), "127.0.0.1", "李雷", ui_url="http://127.0.0.1:4200")
    desk = TestClient(app, base_url=LOCAL)
    page = desk.get("/signin")
    assert page.status_code == 200 and "李雷" in page.text
    csrf = session_csrf(desk)
    assert desk.post("/signout", data={"csrf": csrf}, follow_redirects=False).status_code == 303


def test_signing_in_again_ends_the_persons_earlier_session(tmp_path: Path, monkeypatch) -> None:
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n\n[desk.people]\nann = "DESK_TOKEN_ANN"\nbo = "DESK_TOKEN_BO"\n'
    )
    tokens = {"ann": "a-long-random-token-for-ann", "bo": "a-long-random-token-for-bo"}
    monkeypatch.setenv("DESK_TOKEN_ANN", tokens["ann"])
    monkeypatch.setenv("DESK_TOKEN_BO", tokens["bo"])
    app = create_app(load_settings(str(config)), "127.0.0.1", ui_url="http://127.0.0.1:4200")

    def signed_in(name: str) -> TestClient:
        browser = TestClient(app, base_url=LOCAL)
        csrf = csrf_of(browser.get("/signin").text)
        answer = browser.post(
            "/signin", data={"name": name, "token": tokens[name], "csrf": csrf}, follow_redirects=False
        )
        assert answer.status_code == 303 and f">{name} <form" in browser.get("/runs").text
        return browser

    laptop, bo = signed_in("ann"), signed_in("bo")
    stolen = laptop.cookies["desk_session"]
    phone = signed_in("ann")  # ann signs in again elsewhere: her laptop's session ends
    assert laptop.get("/runs", follow_redirects=False).headers["location"] == "/signin?next=%2Fruns"
    copy = TestClient(app, base_url=LOCAL)
    copy.cookies.set("desk_session", stolen)
    assert copy.get("/runs", follow_redirects=False).status_code == 303  # a copy of it opens nothing
    assert phone.get("/runs").status_code == 200
    assert bo.get("/runs").status_code == 200  # another person's session is not touched
    # signing out of the latest session ends it too, and a new sign-in starts afresh
    csrf = csrf_of(phone.get("/runs").text)
    assert phone.post("/signout", data={"csrf": csrf}, follow_redirects=False).status_code == 303
    assert phone.get("/runs", follow_redirects=False).status_code == 303
    assert signed_in("ann").get("/runs").status_code == 200

    # ann signs in on the browser holding bo's live session: bo's session ends there, and a copy of
    # its cookie opens nothing
    bos = bo.cookies["desk_session"]
    csrf = csrf_of(bo.get("/runs").text)
    answer = bo.post(
        "/signin", data={"name": "ann", "token": tokens["ann"], "csrf": csrf}, follow_redirects=False
    )
    assert answer.status_code == 303 and ">ann <form" in bo.get("/runs").text
    copy = TestClient(app, base_url=LOCAL)
    copy.cookies.set("desk_session", bos)
    assert copy.get("/runs", follow_redirects=False).status_code == 303


@dataclass
class Turning:
    """A clock a test turns forward."""

    at: datetime

    def now(self) -> datetime:
        return self.at


def test_a_session_ends_by_the_clock_the_desk_was_given(tmp_path: Path, monkeypatch) -> None:
    """The desk's sessions are timed by the clock of its resources, as its acts are: a session opened
    at 09:00 by that clock still opens pages a minute before its end, and none after it."""
    from fastapi.testclient import TestClient

    from flows.desk.access import SESSION_SECONDS
    from flows.desk.app import create_app
    from ops.workspace import resources_of

    config = tmp_path / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n\n[desk.people]\nann = "DESK_TOKEN_ANN"\n')
    token = "a-long-random-token-for-ann"
    monkeypatch.setenv("DESK_TOKEN_ANN", token)
    settings = load_settings(str(config))
    clock = Turning(datetime(2025, 8, 6, 9, 0, tzinfo=UTC))
    resources = resources_of(settings, must_exist=False, clock=clock)
    app = create_app(settings, "127.0.0.1", ui_url="http://127.0.0.1:4200", resources=resources)
    browser = TestClient(app, base_url=LOCAL)
    csrf = csrf_of(browser.get("/signin").text)
    signed = browser.post(
        "/signin", data={"name": "ann", "token": token, "csrf": csrf}, follow_redirects=False
    )
    assert signed.status_code == 303 and browser.get("/runs").status_code == 200
    clock.at += timedelta(seconds=SESSION_SECONDS - 60)
    assert browser.get("/runs", follow_redirects=False).status_code == 200
    clock.at += timedelta(seconds=120)  # past its end by the desk's clock, whatever the system's says
    ended = browser.get("/runs", follow_redirects=False)
    assert ended.status_code == 303 and ended.headers["location"] == "/signin?next=%2Fruns"


def test_a_desk_without_people_says_no_sign_in_is_needed(desk) -> None:
    """Without ``[desk.people]`` nobody signs in: /signin says so and leads on (to Today, or to the
    page asked for), with no Name/Token form that would accept anything and do nothing."""
    page = desk.get("/signin")
    assert page.status_code == 200
    assert "<form" not in page.text.split("</nav>", 1)[1]  # no form in the page, past the bar
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page.text.split("</nav>", 1)[1]))
    assert "No sign-in is needed on this desk" in text, text
    assert "ann" in text  # who the desk records acts as
    assert 'href="/today"' in page.text
    asked = desk.get("/signin", params={"next": "/runs?date=2025-08-06"})
    assert 'href="/runs?date=2025-08-06"' in asked.text
    elsewhere = desk.get("/signin", params={"next": "//example.com/"})
    assert "example.com" not in elsewhere.text and 'href="/today"' in elsewhere.text

"""The desk under bad input, over a real day's store: every page's query parameters fuzzed (a 400 of
one line, never a 500), every answer with the security headers, HEAD, the banner of an act, the
sign-in page and its limit, the Secure cookie, a correction's control characters and search's
words as typed."""

from __future__ import annotations

import base64
import json
import re
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.desk_csrf import session_csrf
from tests.e2e.test_desk import LOCAL, client, csrf_of, store_of, stories_of
from tests.e2e.test_desk import built as built  # the samples' day, run once per module
from tests.e2e.test_desk import config as config
from tests.e2e.test_desk_gate import desk_url as desk_url
from tests.e2e.test_review import DAY

# each page and the query parameters it reads
PAGES = {
    "/today": ("date", "version", "done", "v", "sent", "cases", "refused"),
    "/questions": ("date", "done", "v"),
    "/hold": ("date", "done", "v", "sent"),
    "/history": ("date",),
    "/diff": ("date", "a", "b"),
    "/story": ("id",),
    "/search": ("q", "start", "end"),
    "/sources": ("date",),
    "/runs": ("date",),
    "/signin": ("next",),
}
BAD = (
    "²",  # a digit to str.isdigit, not to int
    "٣",  # an Arabic-Indic three
    "0001-01-01",
    "0001-01-05",
    "9999-12-31",
    "9999-12-20",
    "2025-02-30",
    "-1",
    "99999999999999999999999",
    "1e3",
    " ",
    "\x00",
    "é" * 3,
    "%",
    "<script>alert(1)</script>",
    "a" * 3000,
)
HEADERS = ("content-security-policy", "x-frame-options", "x-content-type-options")


def assert_guarded(answer, what: str) -> None:
    """Never a 500; a 400 says what was wrong in one line; every answer carries the headers."""
    assert answer.status_code in (200, 303, 400), (what, answer.status_code, answer.text[:300])
    for name in HEADERS:
        assert name in answer.headers, (what, name)
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")
    assert answer.headers["x-frame-options"] == "DENY"
    if answer.status_code == 400:
        said = re.search(r'<p class="problem" role="alert">(.*?)</p>', answer.text, re.S)
        assert said and "\n" not in said.group(1).strip() and said.group(1).strip(), (what, answer.text)


@pytest.fixture(scope="module")
def day_desk(built: Path, tmp_path_factory: pytest.TempPathFactory):
    """One desk over a copy of the samples' day, for the read-only pages (no act is sent)."""
    import shutil

    folder = tmp_path_factory.mktemp("fuzzed") / "day"
    shutil.copytree(built, folder)
    return client(folder / "brief.toml")


@pytest.mark.parametrize("path", sorted(PAGES))
def test_every_query_parameter_of_every_page_given_bad_text_is_a_400_of_one_line_never_a_500(
    day_desk, path: str
) -> None:
    for name in PAGES[path]:
        for value in BAD:
            assert_guarded(day_desk.get(path, params={name: value}), f"{path}?{name}={value[:20]!r}")
    # the values the issue found: a version of superscript two, dates near year 1 and year 9999
    assert day_desk.get("/today", params={"date": DAY, "version": "²"}).status_code == 400
    assert day_desk.get("/diff", params={"date": DAY, "a": "²", "b": "1"}).status_code == 400
    # a day with no brief says so in plain words
    missing = day_desk.get("/today", params={"date": "2024-01-01"})
    assert "no brief is published for 2024-01-01" in missing.text, missing.text
    missing = day_desk.get("/today", params={"date": DAY, "version": "99"})
    assert f"no version 99 of the brief of {DAY} is published; it has v1 to v" in missing.text, missing.text


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/search", {"q": "model", "end": "0001-01-05"}),
        ("/search", {"q": "model", "start": "0001-01-01", "end": "0001-01-02"}),
        ("/search", {"q": "model", "start": "9999-12-01", "end": "9999-12-31"}),
        ("/sources", {"date": "0001-01-03"}),
        ("/sources", {"date": "9999-12-31"}),
        ("/runs", {"date": "0001-01-10"}),
        ("/runs", {"date": "9999-12-31"}),
    ],
)
def test_a_date_near_year_one_or_year_9999_is_a_400_naming_the_range(
    day_desk, path: str, params: dict
) -> None:
    answer = day_desk.get(path, params=params)
    assert_guarded(answer, f"{path} {params}")
    assert answer.status_code == 400 and "from 1900-01-01 to 2999-12-31" in answer.text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    where=st.sampled_from([(p, n) for p, names in PAGES.items() for n in names]),
    value=st.text(min_size=1, max_size=40),
)
def test_any_text_in_any_query_parameter_is_answered_without_a_500(day_desk, where, value: str) -> None:
    path, name = where
    assert_guarded(day_desk.get(path, params={name: value}), f"{path}?{name}={value!r}")


# each act's form and its fields besides the token
FORMS = {
    "/today/mark": ("story", "mark", "date", "as_case"),
    "/today/correct": ("story", "field", "value", "note", "date"),
    "/today/retract": ("story", "note", "sure", "date"),
    "/today/same": ("story", "other", "date"),
    "/today/split": ("story", "apart", "date"),
    "/questions": ("date",),
    "/hold/approve": ("date",),
    "/signin": ("name", "token"),
}
BAD_FORM = ("", " ", "²", "0001-01-01", "9999-12-31", "\x00", "\u202e", "é", "a" * 3000)


def test_every_field_of_every_act_given_bad_text_is_answered_without_a_500(config: Path) -> None:
    desk = client(config)
    page = desk.get(f"/today?date={DAY}")
    first, second = stories_of(page.text)[:2]
    good = {"story": first, "other": second, "mark": "core", "field": "title", "value": "New", "note": "n"}
    for action, names in FORMS.items():
        for name in names:
            for value in BAD_FORM:
                form = {**{n: good.get(n, DAY if n == "date" else "") for n in names}, name: value}
                answer = desk.post(action, data={**form, "csrf": csrf_of(page.text)}, follow_redirects=False)
                assert_guarded(answer, f"{action} {name}={value[:20]!r}")


def test_every_refusal_and_a_failure_carry_the_security_headers(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    config_file = tmp_path / "brief.toml"
    config_file.write_text('[storage]\nroot = "store"\n')
    app = create_app(load_settings(str(config_file)), "127.0.0.1", "ann", ui_url="http://127.0.0.1:4200")
    desk = TestClient(app, base_url=LOCAL, raise_server_exceptions=False)
    csrf = session_csrf(desk)
    answers = {
        404: desk.get("/nowhere"),
        405: desk.get("/today/mark"),
        413: desk.post(
            "/today/mark", content=b"csrf=" + b"a" * 70_000, headers={"content-type": "text/plain"}
        ),
        421: desk.get("/today", headers={"host": "evil.example"}),
        400: desk.post("/signout", content=b"csrf=" + csrf.encode(), headers={"content-length": "12abc"}),
    }
    # a store that cannot be read: the sources page meets an error no one expected
    broken = Path(load_settings(str(config_file)).storage.root) / "events" / f"date={DAY}"
    broken.mkdir(parents=True)
    (broken / "part-0.parquet").write_bytes(b"not parquet at all")
    answers[500] = desk.get("/sources", params={"date": DAY})
    for status, answer in answers.items():
        assert answer.status_code == status, (status, answer.text[:200])
        for name in HEADERS:
            assert name in answer.headers, (status, name)
        assert answer.headers["x-frame-options"] == "DENY"
    assert answers[400].text == "refused: the Content-Length header is not a number\n"
    assert answers[404].text == "not found: the desk has no page /nowhere\n"  # one line, not JSON
    assert answers[405].text.startswith("refused: this page does not take GET")
    assert "Traceback" not in answers[500].text


def test_head_answers_as_get_without_a_body_over_real_http(desk_url: str) -> None:
    import httpx

    with httpx.Client() as http:
        got = http.get(f"{desk_url}/signin")
        head = http.head(f"{desk_url}/signin")
        assert head.status_code == got.status_code == 200
        assert head.content == b"" and int(head.headers["content-length"]) == len(got.content)
        assert head.headers["content-type"] == got.headers["content-type"]
        assert head.headers["content-security-policy"] == got.headers["content-security-policy"]
        assert http.head(f"{desk_url}/static/desk.css").status_code == 200
        assert http.head(f"{desk_url}/nowhere").status_code == 404


def test_an_acts_banner_is_one_of_the_desks_own_never_the_querys_text(config: Path) -> None:
    desk = client(config)
    forged = desk.get("/today", params={"date": DAY, "done": "Your account is locked: call +1 555 0100"})
    assert forged.status_code == 200 and "555 0100" not in forged.text and 'class="done"' not in forged.text
    # a link with the desk's own key and false numbers: no banner, its numbers are not the desk's
    crafted = {"date": DAY, "done": "mark", "v": "3", "sent": ["readers", "<b>evil</b>"], "pending": "09:00"}
    said = desk.get("/today", params=crafted).text
    assert 'class="done"' not in said

    page = desk.get(f"/today?date={DAY}")
    story = stories_of(page.text)[0]
    done = desk.post(
        "/today/mark",
        data={"story": story, "mark": "core", "date": DAY, "csrf": csrf_of(page.text)},
        follow_redirects=False,
    )
    # back to the item acted on, its panel open: the story's id as the query's "open" and the anchor;
    # the query names the desk's key to what the act said, and no number
    location = done.headers["location"]
    assert re.fullmatch(rf"/today\?date={DAY}&done=mark&said=[\w-]+&open=(\S+)#(\S+)", location)
    version = store_of(config).tree.briefs.current_document(date.fromisoformat(DAY)).version
    banner = re.search(r'<p class="done" role="status">(.*?)</p>', desk.get(location).text).group(1)
    # a mark that changed nothing (the story was core already) says so, as the command line does
    assert banner in (
        f"mark recorded: v{version}",
        f"mark recorded; nothing changed: v{version} already reads so",
    )
    # the numbers are the desk's record of the act: the query cannot change them
    altered = desk.get(location.replace("done=mark", "done=mark&v=99&sent=readers&pending=23:00")).text
    assert f"{banner}</p>" in altered and "v99" not in altered and "23:00" not in altered
    # the key is this session's: the same link opened by another browser shows nothing
    other = client(config)
    assert 'class="done"' not in other.get(location).text


def test_control_characters_typed_in_a_correction_never_reach_the_published_brief(config: Path) -> None:
    desk = client(config)
    page = desk.get(f"/today?date={DAY}")
    first, second = stories_of(page.text)[:2]
    typed = "Orchard \u202eknil siht kcilc\u202c update \u2066now\u2069\u200b out"
    for data in (
        {"story": first, "field": "title", "value": typed, "note": "a \u202efix\u202c"},
        {"story": second, "note": "withdrawn \u2067at source\u2069", "sure": "1"},
    ):
        action = "/today/correct" if "field" in data else "/today/retract"
        answer = desk.post(
            action, data={**data, "date": DAY, "csrf": csrf_of(page.text)}, follow_redirects=False
        )
        assert answer.status_code == 303, answer.text
    store = ParquetEventStore(load_settings(str(config)).storage.root)
    [corrected] = [e.payload for e in store.read(event_types=["brief.corrected"])]
    assert corrected["value"] == "Orchard knil siht kcilc update now out" and corrected["note"] == "a fix"
    [retracted] = [e.payload for e in store.read(event_types=["story.retracted"])]
    assert retracted["note"] == "withdrawn at source"
    briefs = Path(store_of(config).base) / "briefs"
    published = [p for p in briefs.rglob("*") if p.is_file() and p.suffix in (".json", ".md", ".html")]
    assert published
    for path in published:
        text = path.read_text()
        assert not re.search("[\u202a-\u202e\u2066-\u2069\u200b]", text), path
    document = json.loads((briefs / f"{DAY}.json").read_text())
    assert any(i["title"] == "Orchard knil siht kcilc update now out" for i in document["items"])


def test_search_says_the_words_as_typed_not_as_json_escapes(config: Path) -> None:
    found = client(config).get("/search", params={"q": "人工智能 pippin", "start": "2025-08-01", "end": DAY})
    assert found.status_code == 200
    assert "“人工智能” and “pippin”" in found.text and "\\u4eba" not in found.text


def desk_of(tmp_path: Path, desk_section: str, host: str = "127.0.0.1", base_url: str = LOCAL):
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    config_file = tmp_path / "brief.toml"
    config_file.write_text(f'[storage]\nroot = "store"\n\n[desk]\n{desk_section}\n')
    app = create_app(load_settings(str(config_file)), host, "ann", ui_url="http://127.0.0.1:4200")
    return TestClient(app, base_url=base_url)


@pytest.mark.parametrize(
    ("section", "secure"),
    [
        ("", False),
        ("tls = true", True),
        ('hosts = ["https://desk.example.org"]', True),
        ('hosts = ["desk.example.org"]', False),
        ('tls = false\nhosts = ["https://desk.example.org"]', False),
    ],
)
def test_the_session_cookie_is_secure_when_the_desk_is_reached_through_tls(
    tmp_path: Path, section: str, secure: bool
) -> None:
    cookie = (
        desk_of(tmp_path, section, base_url="https://127.0.0.1:8484").get("/signin").headers["set-cookie"]
    )
    flags = [part.strip().lower() for part in cookie.split(";")]
    assert ("secure" in flags) is secure
    assert "httponly" in flags and "samesite=strict" in flags


def test_the_sign_in_page_lists_no_one_and_wrong_tries_wait(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DESK_TOKEN_ANN", "a-long-random-token-for-ann")
    monkeypatch.setenv("DESK_TOKEN_BOTHWELL", "a-long-random-token-for-bothwell")
    desk = desk_of(tmp_path, '[desk.people]\nann = "DESK_TOKEN_ANN"\nbothwell = "DESK_TOKEN_BOTHWELL"')
    form = desk.get("/signin").text
    assert "bothwell" not in form and "<option" not in form and 'name="name"' in form
    csrf = csrf_of(form)
    limit = desk.app.state.desk.access.sign_ins  # its clock, moved by hand below
    now = [1000.0]
    limit.clock = lambda: now[0]
    for _ in range(5):
        wrong = desk.post("/signin", data={"name": "ann", "token": "guess-guess-guess", "csrf": csrf})
        assert wrong.status_code == 401
    # the sixth try waits, even with the right token: it is not looked at
    waiting = desk.post("/signin", data={"name": "ann", "token": "a-long-random-token-for-ann", "csrf": csrf})
    assert waiting.status_code == 429 and waiting.text.count("\n") == 1
    assert 0 < int(waiting.headers["retry-after"]) <= 300
    assert waiting.headers["content-security-policy"].startswith("default-src 'none'")
    now[0] += 301
    right = desk.post(
        "/signin",
        data={"name": "ann", "token": "a-long-random-token-for-ann", "csrf": csrf},
        follow_redirects=False,
    )
    assert right.status_code == 303
    assert ">ann <form" in desk.get("/history").text


def test_the_session_is_starlettes_signed_cookie_and_an_altered_one_is_a_new_anonymous_session(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("DESK_TOKEN_ANN", "a-long-random-token-for-ann")
    monkeypatch.setenv("DESK_TOKEN_BO", "a-long-random-token-for-bo")
    desk = desk_of(tmp_path, '[desk.people]\nann = "DESK_TOKEN_ANN"\nbo = "DESK_TOKEN_BO"')
    csrf = csrf_of(desk.get("/signin").text)
    signed_in = desk.post(
        "/signin",
        data={"name": "bo", "token": "a-long-random-token-for-bo", "csrf": csrf},
        follow_redirects=False,
    )
    assert signed_in.status_code == 303
    cookie = desk.cookies["desk_session"]
    data, stamp, signature = cookie.split(".")
    session = json.loads(base64.b64decode(data))
    assert set(session) == {"sid", "until", "person"} and session["person"] == "bo"
    # the same signature over a session that names ann instead: not the desk's, so a visitor's
    altered = base64.b64encode(json.dumps({**session, "person": "ann"}).encode()).decode()
    desk.cookies.clear()
    desk.cookies.set("desk_session", f"{altered}.{stamp}.{signature}")
    assert desk.get("/today", follow_redirects=False).headers["location"] == "/signin"


def test_a_host_that_only_starts_like_loopback_needs_people_to_start(tmp_path: Path) -> None:
    from storage.errors import ConfigError

    with pytest.raises(ConfigError, match=r"127\.evil\.example is reachable from other machines"):
        desk_of(tmp_path, "", host="127.evil.example")


def test_the_sign_in_limit_forgets_old_addresses_when_it_holds_many() -> None:
    from flows.desk.access import KEPT_ADDRESSES, SignInLimit

    now = [0.0]
    limit = SignInLimit(clock=lambda: now[0])
    for k in range(KEPT_ADDRESSES):
        limit.failure(f"10.0.{k // 256}.{k % 256}")
    assert len(limit.failed) == KEPT_ADDRESSES
    now[0] += limit.window + 1
    limit.failure("192.0.2.1")
    assert list(limit.failed) == ["192.0.2.1"]  # the old tries are forgotten; the new one counts
    for _ in range(limit.tries - 1):
        limit.failure("192.0.2.1")
    assert limit.wait("192.0.2.1") == limit.window and limit.wait("192.0.2.2") == 0


def test_wrong_tries_for_one_name_wait_whatever_address_they_come_from(tmp_path: Path, monkeypatch) -> None:
    """Behind a proxy the address is the one ``X-Forwarded-For`` names, which any local program can
    forge: the count is per name too, so a new address per guess gains nothing."""
    from fastapi.testclient import TestClient

    monkeypatch.setenv("DESK_TOKEN_ANN", "a-long-random-token-for-ann")
    monkeypatch.setenv("DESK_TOKEN_BO", "a-long-random-token-for-bo")
    desk = desk_of(tmp_path, '[desk.people]\nann = "DESK_TOKEN_ANN"\nbo = "DESK_TOKEN_BO"')

    def guess(address: str, name: str, token: str) -> int:
        client = TestClient(desk.app, base_url=LOCAL, client=(address, 50000))
        csrf = csrf_of(client.get("/signin").text)
        answer = client.post(
            "/signin", data={"name": name, "token": token, "csrf": csrf}, follow_redirects=False
        )
        return answer.status_code

    assert [guess(f"10.0.0.{i}", "ann", f"guess-{i}") for i in range(7)] == [401] * 5 + [429] * 2
    assert guess("10.0.1.1", "ANN ", "a-long-random-token-for-ann") == 429  # the same name, spelt loosely
    assert guess("10.0.1.2", "bo", "a-long-random-token-for-bo") == 303  # another name is not held up

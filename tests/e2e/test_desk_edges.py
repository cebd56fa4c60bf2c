"""The desk at the edge of the dates it takes: no link leads to a day it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.settings import load_settings

LOCAL = "http://127.0.0.1:8484"


@pytest.fixture
def desk(tmp_path: Path):
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    config = tmp_path / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n')
    app = create_app(load_settings(str(config)), "127.0.0.1", "ann", ui_url="http://127.0.0.1:4200")
    return TestClient(app, base_url=LOCAL)


@pytest.mark.parametrize("page", ["/sources", "/runs"])
def test_the_earlier_link_is_shown_only_when_the_earlier_window_is_a_day_the_desk_takes(
    desk, page: str
) -> None:
    first = desk.get(page, params={"date": "1900-01-05"})
    assert first.status_code == 200 and 'class="earlier"' not in first.text
    assert desk.get(page, params={"date": "1899-12-31"}).status_code == 400  # the day the link would name
    later = desk.get(page, params={"date": "1900-03-01"})
    assert later.status_code == 200 and 'class="earlier"' in later.text
    target = later.text.split('class="earlier"')[0].rsplit('href="', 1)[1].split('"')[0]
    assert desk.get(target).status_code == 200


def test_a_failure_that_is_not_a_refusal_is_a_500_of_one_line_and_is_written_to_the_desks_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A store error met while a page is made (a BriefError, not the person's mistake): the page says
    it may not be true that nothing was written, and the desk's log has what failed and where."""
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app
    from storage.errors import StoreError

    config = tmp_path / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n')
    app = create_app(load_settings(str(config)), "127.0.0.1", "ann", ui_url="http://127.0.0.1:4200")

    def broken() -> None:
        raise StoreError("the events of 2025-08-06 could not be read: disk gone")

    app.add_api_route("/broken", broken)
    with caplog.at_level("ERROR", logger="flows.desk"):
        answer = TestClient(app, base_url=LOCAL).get("/broken")
    assert (
        answer.status_code == 500 and "disk gone" in answer.text and "Nothing was written" not in answer.text
    )
    [logged] = [r for r in caplog.records if r.name == "flows.desk"]
    assert "GET /broken failed: the events of 2025-08-06 could not be read" in logged.getMessage()
    assert logged.exc_info is not None


def test_send_now_without_channels_says_so_as_the_command_line_does(desk) -> None:
    """Not a silent "nothing to send": the same refusal as ``brief deliver`` (one function says it)."""
    import base64
    import json

    desk.get("/hold", params={"date": "2025-08-06"})  # a session (no page without a brief has a form)
    signed = desk.cookies["desk_session"]
    session = json.loads(base64.b64decode(signed.split(".")[0] + "=="))
    csrf = desk.app.state.desk.access.csrf_token(session)
    answer = desk.post("/hold/send", data={"date": "2025-08-06", "csrf": csrf})
    assert answer.status_code == 400
    assert "the config has no [[delivery]] channels; add one with name = … and url = …" in answer.text

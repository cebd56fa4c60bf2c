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

"""A live feed (a URL without ``{date}``) run for a past date is skipped out loud: an event and a line."""

from __future__ import annotations

import shutil
from pathlib import Path

from tasks.settings import load_settings
from tests.cli import brief
from tests.conftest import REPO

DAY = "2025-08-06"
REASON = "a live feed cannot be replayed for a past date"


def test_a_live_feed_for_a_past_date_is_a_feed_skipped_event_and_one_line(
    tmp_path: Path, prefect_harness: None
) -> None:
    shutil.copytree(REPO / "samples" / "feeds", tmp_path / "feeds")
    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n'
        '[[sources]]\nname = "labnotes"\nurl = "file://feeds/labnotes/{date}.xml"\n'
        f'[[sources]]\nname = "techwire"\nurl = "file://feeds/techwire/{DAY}.xml"\n'  # live: no {{date}}
    )
    done = brief("run", "--date", DAY, "--config", str(config))
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if "techwire" in line]
    assert lines == [f"  not fetched: techwire ({REASON})"], done.stdout
    store = load_settings(str(config)).storage.event_store()
    [skipped] = store.read(event_types=["feed.skipped"])
    assert skipped.payload["source"] == "techwire" and skipped.payload["reason"] == REASON
    assert skipped.payload["url"].endswith(f"feeds/techwire/{DAY}.xml")
    assert str(skipped.brief_date) == DAY
    assert not store.read(event_types=["feed.failed"])
    assert {e.payload["source"] for e in store.read(event_types=["feed.fetched"])} == {"labnotes"}

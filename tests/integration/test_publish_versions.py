"""Publishing keeps the brief files and the log in agreement: every change of the files is a version."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from storage.brief import Brief
from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import parse_settings
from tests.factories import brief, brief_item
from tests.runs import hashing_run

DAY = date(2025, 8, 6)


def story_brief(story: str) -> Brief:
    return brief(brief_item(story, f"Story {story}", section="top"), day=DAY)


def test_content_that_returns_to_an_earlier_version_is_a_new_version_in_the_log(tmp_path: Path) -> None:
    root = str(tmp_path / "store")
    store = ParquetEventStore(root)
    ctx = hashing_run(store, parse_settings({"storage": {"root": root}}), DAY, "r")
    outcomes = [steps.publish(ctx, story_brief(story)) for story in ("st-a", "st-b", "st-a", "st-a")]

    assert [(o.version, o.changed) for o in outcomes] == [(1, True), (2, True), (3, True), (3, False)]
    published = [e.payload for e in store.read(event_types=["brief.published"])]
    assert sorted(p["version"] for p in published) == [1, 2, 3]  # the rerun of A recorded nothing
    latest = max(published, key=lambda p: p["version"])
    folder = Path(root) / "briefs"
    on_disk = json.loads((folder / f"{DAY}.json").read_text())
    # what readers find is what the log says was published last
    assert on_disk["version"] == latest["version"] == 3
    assert [i["story_id"] for i in on_disk["items"]] == latest["stories"] == ["st-a"]
    assert json.loads((folder / DAY.isoformat() / "v3.json").read_text()) == on_disk
    # every version file on disk has its event, and the earlier ones stay as they were
    assert sorted(p.name for p in (folder / DAY.isoformat()).glob("v*.json")) == [
        "v1.json",
        "v2.json",
        "v3.json",
    ]
    stories = {p["version"]: p["stories"] for p in published}
    for version, expected in stories.items():
        document = json.loads((folder / DAY.isoformat() / f"v{version}.json").read_text())
        assert document["version"] == version and [i["story_id"] for i in document["items"]] == expected
    feed = (folder / "feed.xml").read_text()
    assert "(v3)" not in feed and "· v3" not in feed  # readers see no version number
